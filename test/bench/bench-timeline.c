// SPDX-License-Identifier: LGPL-2.1-only
/*
 * bench-timeline: push N synthetic host samples from 64 vCPUs in 8 VMs,
 * scheduled round-robin on 16 pCPUs, through resolution, the timeline and
 * aggregation.  Prints samples per second, ns per sample and peak RSS.
 * --vcpus-per-vm and --pcpus change the shape (the vCPUs, 8 times the
 * first, must be a multiple of the pCPUs).
 *
 *   bench-timeline [-n SAMPLES] [--no-resolve] [--vcpus-per-vm N] [--pcpus N]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "scenarios.h"

#define NVMS	8
#define SLICE	4	/* ticks a vCPU keeps its pCPU */
#define NPROCS	8	/* processes per guest */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "samples", required_argument, NULL, 'n' },
		{ "no-resolve", no_argument, NULL, 'r' },
		{ "vcpus-per-vm", required_argument, NULL, 'v' },
		{ "pcpus", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vmctx_session_opts so = { .sz = sizeof(so), .tick_ns = SCEN_TICK_NS };
	unsigned int NVCPUS = 8, NPCPUS = 16;	/* vCPUs per VM, pCPUs */
	struct vmctx_bundle *b[NVMS] = { NULL };
	struct vmctx_session *s;
	unsigned long long n = 10000000, i;
	bool resolve = true;
	struct rusage ru;
	double t0, t1;
	int c, vm, err = 0;

	while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			n = strtoull(optarg, NULL, 10);
			break;
		case 'r':
			resolve = false;
			break;
		case 'v':
			NVCPUS = strtoul(optarg, NULL, 10);
			break;
		case 'p':
			NPCPUS = strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(c == 'h' ? stdout : stderr,
				"Usage: bench-timeline [-n SAMPLES] [--no-resolve] [--vcpus-per-vm N] [--pcpus N]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (!NVCPUS || !NPCPUS || NVMS * NVCPUS % NPCPUS || NVMS * NVCPUS > 4096 ||
	    NPCPUS > 1024) {
		fprintf(stderr, "bench-timeline: 8 x vCPUs per VM must be a multiple of the pCPUs, at most 4096; pCPUs at most 1024\n");
		return 2;
	}
	s = vmctx_session_new(&so);
	for (vm = 0; vm < NVMS; vm++) {
		char name[16];

		snprintf(name, sizeof(name), "guest%d", vm);
		vmctx_session_add_vm(s, VM_PID(vm), name);
		if (!resolve)
			continue;
		b[vm] = scen_guest_bundle(name, NPROCS);
		if (!b[vm] || vmctx_session_attach_bundle(s, VM_PID(vm), b[vm], 0)) {
			fprintf(stderr, "bench-timeline: cannot build bundle\n");
			return 1;
		}
	}

	t0 = now();
	for (i = 0; i < n && !err; i++) {
		unsigned long long tick = i / NPCPUS;
		unsigned int cpu = i % NPCPUS;
		/* 4 vCPUs take turns on each pCPU */
		unsigned int slot = (tick / SLICE) % (NVMS * NVCPUS / NPCPUS);
		unsigned int g = cpu * (NVMS * NVCPUS / NPCPUS) + slot;
		unsigned int mix = (tick * 7 + cpu) % MIX_LEN;
		struct vmctx_sample smp = {
			.sz = sizeof(smp),
			.time = tick * SCEN_TICK_NS + cpu,
			.cpu = cpu,
			.pid = VM_PID(g / NVCPUS),
			.tid = VM_PID(g / NVCPUS) + 1 + g % NVCPUS,
			.vm_tgid = VM_PID(g / NVCPUS),
			.vcpu = g % NVCPUS,
			.flags = VMCTX_SAMPLE_GUEST,
			.cpl = mix ? 3 : 0,
			.isa = VMCTX_ISA_SVM,
			.cr3 = ROOT((tick / 64 + g) % NPROCS) | 0x1000,
			.ip = mix ? 0x401000 + (mix % 4) * 0x100 + 0x10 : 0xffffffff81001040ULL,
			.exit_reason = 0x60,
		};

		if (i % 97 == 0) {	/* some host work in the vCPU's thread */
			smp.flags = VMCTX_SAMPLE_HOST_VCPU;
			smp.host_sym = "svm_vcpu_run";
			smp.host_dso = "kvm_amd";
		}
		err = vmctx_session_sample(s, &smp);
	}
	if (!err)
		err = vmctx_session_finish(s, (n / NPCPUS) * SCEN_TICK_NS);
	t1 = now();
	if (err) {
		fprintf(stderr, "bench-timeline: %s\n", vmctx_strerror(err));
		return 1;
	}
	{
		struct vmctx_table *t = vmctx_table_new(s, VMCTX_VIEW_GUEST, VM_PID(0), -1);

		if (!t || !vmctx_table_total(t)) {
			fprintf(stderr, "bench-timeline: empty report\n");
			return 1;
		}
		vmctx_table_free(t);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("samples=%llu vms=%d vcpus=%u pcpus=%u resolve=%s seconds=%.3f "
	       "samples_per_sec=%.0f ns_per_sample=%.1f peak_rss_kib=%ld\n",
	       n, NVMS, NVMS * NVCPUS, NPCPUS, resolve ? "yes" : "no", t1 - t0, n / (t1 - t0),
	       (t1 - t0) * 1e9 / n, ru.ru_maxrss);
	vmctx_session_free(s);
	for (vm = 0; vm < NVMS; vm++)
		vmctx_bundle_free(b[vm]);
	return 0;
}
