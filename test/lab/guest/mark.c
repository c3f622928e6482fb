// SPDX-License-Identifier: GPL-2.0
/*
 * mark: ground truth for the lab's check of the guest clock.  Executes
 * CPUID -n N times (default 200), -i MS apart (default 10), always at the
 * same instruction, each time between two readings of CLOCK_MONOTONIC,
 * and then prints "mark rip ADDR" and one "mark T0 T1" line per CPUID, in
 * ns.  CPUID always exits to the hypervisor: the host's perf records that
 * exit (kvm:kvm_exit, with the guest RIP), and perf script --guest-maps
 * puts its time on the guest's clock, where it must fall in [T0, T1].
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

extern const char mark_cpuid_insn[];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The one CPUID, at a global label whose address is the exit's RIP. */
__attribute__((noinline)) static void mark_cpuid(void)
{
	unsigned int a = 0, b, c = 0, d;

	__asm__ volatile(".globl mark_cpuid_insn\nmark_cpuid_insn:\n\tcpuid"
			 : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
}

int main(int argc, char **argv)
{
	long n = 200, ms = 10, i;
	uint64_t *t;
	int opt;

	while ((opt = getopt(argc, argv, "n:i:")) != -1) {
		switch (opt) {
		case 'n':
			n = strtol(optarg, NULL, 10);
			break;
		case 'i':
			ms = strtol(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: mark [-n COUNT] [-i MS]\n");
			return 2;
		}
	}
	if (n < 1 || n > 100000 || ms < 0 || ms > 10000) {
		fprintf(stderr, "mark: -n 1..100000, -i 0..10000\n");
		return 2;
	}
	t = calloc(2 * n, sizeof(*t));
	if (!t)
		return 1;
	for (i = 0; i < n; i++) {
		t[2 * i] = now_ns();
		mark_cpuid();
		t[2 * i + 1] = now_ns();
		usleep(ms * 1000);
	}
	printf("mark rip %#lx\n", (unsigned long)mark_cpuid_insn);
	for (i = 0; i < n; i++)
		printf("mark %llu %llu\n", (unsigned long long)t[2 * i],
		       (unsigned long long)t[2 * i + 1]);
	free(t);
	return 0;
}
