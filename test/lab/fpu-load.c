// SPDX-License-Identifier: GPL-2.0
/*
 * lab-fpu-load: restore the x87 environment (FLDENV) in a loop on one
 * CPU, for the lab's check of its L1 emulator (test/lab/README, "L1
 * emulator").
 *
 * usage: lab-fpu-load -c CPU -t SECONDS
 *
 * QEMU 7.2's TCG clears IGNNE# in the *first* CPU's hflags2 from every
 * FLDENV, FRSTOR, FXRSTOR and XRSTOR that any vCPU runs, with a plain
 * read-modify-write from that vCPU's thread.  When the first CPU's
 * #VMEXIT clears HF2_NPT_MASK in between, the stale word is written
 * back: the L1 host then runs with nested paging on outside its guest,
 * its next code fetch raises a nested page fault #VMEXIT that writes the
 * host's own registers into the guest's VMCB, and the guest's vCPU
 * resumes at the host's RIP after VMRUN (lab-vmm: "its state was lost").
 * Run on a CPU other than 0 beside a VMM pinned to CPU 0, this makes that
 * window thousands of times more likely than an L1 kernel's own XRSTORs
 * do.
 *
 * Prints the number of FLDENVs and exits 0; 2 on a usage or setup error.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int cpu = -1, c;
	double secs = 0, end;
	unsigned long long n = 0;
	unsigned char env[28];
	cpu_set_t set;

	while ((c = getopt(argc, argv, "c:t:")) != -1) {
		switch (c) {
		case 'c': cpu = atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		default: goto usage;
		}
	}
	if (optind != argc || cpu < 0 || cpu >= CPU_SETSIZE || !(secs > 0))
		goto usage;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("lab-fpu-load: sched_setaffinity");
		return 2;
	}
	__asm__ volatile("fnstenv %0" : "=m"(env));
	end = now() + secs;
	do {
		for (int i = 0; i < 4096; i++)
			__asm__ volatile("fldenv %0" : : "m"(env));
		n += 4096;
	} while (now() < end);
	printf("lab-fpu-load: %llu FLDENVs on CPU %d in %.1f s\n", n, cpu, secs);
	return 0;
usage:
	fprintf(stderr, "usage: lab-fpu-load -c CPU -t SECONDS\n");
	return 2;
}
