// SPDX-License-Identifier: LGPL-2.1-only
/*
 * bench-timeline: push N synthetic host samples from 64 vCPUs in 8 VMs,
 * scheduled round-robin on 16 pCPUs, through resolution, the timeline and
 * aggregation.  Prints samples per second, ns per sample and peak RSS.
 * --vcpus-per-vm and --pcpus change the shape (the vCPUs, 8 times the
 * first, must be a multiple of the pCPUs).  Each vCPU does the same work
 * in every shape: its guest changes process every 16 of its own samples.
 * --runs repeats the whole session (bundles aside), each from scratch, and
 * the figures cover all runs: a small shape can so be given as many
 * samples a vCPU as a large one, and still be timed over many samples.
 * --stream=all watches every run of the vCPUs' streams besides the table;
 * --stream=blank is the session as perf keeps it: no table
 * (VMCTX_SESSION_NO_TABLE), a stream of the blank runs alone
 * (VMCTX_SESSION_BLANK_STREAM).
 *
 *   bench-timeline [-n SAMPLES] [--no-resolve] [--vcpus-per-vm N] [--pcpus N] [--runs R]
 *                  [--stream=all|blank]
 */
#include <errno.h>
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

enum watch { WATCH_NONE, WATCH_ALL, WATCH_BLANK };

struct shape {
	unsigned int vcpus_per_vm, pcpus;
	unsigned long long n;
	enum watch watch;
	struct vmctx_bundle *b[NVMS];	/* NULL: no resolution */
};

/* A stream's watcher: it counts the ticks it is given. */
static void count_ticks(const struct vmctx_tick *t, void *ctx)
{
	*(unsigned long long *)ctx += t->count;
}

/* One session over @sh's samples; its time in *@secs; 0 or a negative errno. */
static int run(const struct shape *sh, double *secs)
{
	struct vmctx_session_opts so = {
		.sz = sizeof(so), .tick_ns = SCEN_TICK_NS,
		.flags = sh->watch == WATCH_BLANK ?
			 VMCTX_SESSION_NO_TABLE | VMCTX_SESSION_BLANK_STREAM : 0,
	};
	const unsigned int share = NVMS * sh->vcpus_per_vm / sh->pcpus;	/* vCPUs a pCPU */
	struct vmctx_session *s = vmctx_session_new(&so);
	unsigned long long i, tick, turn = 0;	/* turn: tick / SLICE */
	unsigned long long watched = 0;
	unsigned int host = 96;			/* i % 97, from 96: i = 0 is host work */
	struct vmctx_table *t;
	int vm, err = 0;
	double t0;

	if (!s)
		return -errno;
	if (sh->watch != WATCH_NONE)
		vmctx_session_set_stream(s, count_ticks, &watched);
	for (vm = 0; vm < NVMS && !err; vm++) {
		char name[16];

		snprintf(name, sizeof(name), "guest%d", vm);
		err = vmctx_session_add_vm(s, VM_PID(vm), name);
		if (err >= 0 && sh->b[vm])
			err = vmctx_session_attach_bundle(s, VM_PID(vm), sh->b[vm], 0);
		err = err < 0 ? err : 0;
	}
	/*
	 * The samples come from counters kept up to date, not divisions:
	 * the generator's own cost is part of the time measured.
	 */
	t0 = now();
	for (i = 0, tick = 0; i < sh->n && !err; tick++) {
		/* @share vCPUs take turns on each pCPU, SLICE ticks each */
		unsigned int slot = turn % share;
		/* the vCPU's own ticks, whatever the number of vCPUs that share its pCPU */
		unsigned long long own = turn / share * SLICE + tick % SLICE;
		unsigned int mix = tick * 7 % MIX_LEN, cpu;

		/* vCPU g = cpu * share + slot is vCPU g % N of VM g / N, N vCPUs a VM */
		unsigned int g = slot, gvm = slot / sh->vcpus_per_vm,
			     gvcpu = slot % sh->vcpus_per_vm;

		for (cpu = 0; cpu < sh->pcpus && i < sh->n && !err; cpu++, i++) {
			struct vmctx_sample smp = {
				.sz = sizeof(smp),
				.time = tick * SCEN_TICK_NS + cpu,
				.cpu = cpu,
				.pid = VM_PID(gvm),
				.tid = VM_PID(gvm) + 1 + gvcpu,
				.vm_tgid = VM_PID(gvm),
				.vcpu = gvcpu,
				.flags = VMCTX_SAMPLE_GUEST,
				.cpl = mix ? 3 : 0,
				.isa = VMCTX_ISA_SVM,
				.cr3 = ROOT((own / 16 + g) % NPROCS) | 0x1000,
				.ip = mix ? 0x401000 + (mix % 4) * 0x100 + 0x10 :
					    0xffffffff81001040ULL,
				.exit_reason = 0x60,
			};

			if (++host == 97) {	/* some host work in the vCPU's thread */
				host = 0;
				smp.flags = VMCTX_SAMPLE_HOST_VCPU;
				smp.host_sym = "svm_vcpu_run";
				smp.host_dso = "kvm_amd";
			}
			err = vmctx_session_sample(s, &smp);
			mix = mix + 1 == MIX_LEN ? 0 : mix + 1;	/* (tick * 7 + cpu) % MIX_LEN */
			g += share;
			for (gvcpu += share; gvcpu >= sh->vcpus_per_vm; gvm++)
				gvcpu -= sh->vcpus_per_vm;
		}
		if (tick % SLICE == SLICE - 1)
			turn++;
	}
	if (!err)
		err = vmctx_session_finish(s, (sh->n / sh->pcpus) * SCEN_TICK_NS);
	*secs = now() - t0;
	if (!err && sh->watch == WATCH_BLANK) {
		/* vCPUs share pCPUs: each waits between its turns */
		err = watched ? 0 : -ENODATA;
	} else if (!err) {
		t = vmctx_table_new(s, VMCTX_VIEW_GUEST, VM_PID(0), -1);
		err = !t ? -errno : !vmctx_table_total(t) ? -ENODATA : 0;
		vmctx_table_free(t);
	}
	vmctx_session_free(s);
	return err;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "samples", required_argument, NULL, 'n' },
		{ "no-resolve", no_argument, NULL, 'r' },
		{ "vcpus-per-vm", required_argument, NULL, 'v' },
		{ "pcpus", required_argument, NULL, 'p' },
		{ "runs", required_argument, NULL, 'R' },
		{ "stream", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct shape sh = { .vcpus_per_vm = 8, .pcpus = 16, .n = 10000000 };
	unsigned long runs = 1, r;
	bool resolve = true;
	double total = 0, secs = 0;
	struct rusage ru;
	int c, vm, err = 0;

	while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			sh.n = strtoull(optarg, NULL, 10);
			break;
		case 'r':
			resolve = false;
			break;
		case 'v':
			sh.vcpus_per_vm = strtoul(optarg, NULL, 10);
			break;
		case 'p':
			sh.pcpus = strtoul(optarg, NULL, 10);
			break;
		case 'R':
			runs = strtoul(optarg, NULL, 10);
			break;
		case 's':
			if (!strcmp(optarg, "all")) {
				sh.watch = WATCH_ALL;
				break;
			}
			if (!strcmp(optarg, "blank")) {
				sh.watch = WATCH_BLANK;
				break;
			}
			fprintf(stderr, "bench-timeline: --stream takes all or blank\n");
			return 2;
		default:
			fprintf(c == 'h' ? stdout : stderr,
				"Usage: bench-timeline [-n SAMPLES] [--no-resolve] [--vcpus-per-vm N] [--pcpus N] [--runs R]\n"
				"                      [--stream=all|blank]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (!sh.vcpus_per_vm || !sh.pcpus || NVMS * sh.vcpus_per_vm % sh.pcpus ||
	    NVMS * sh.vcpus_per_vm > 4096 || sh.pcpus > 1024 || !sh.n || !runs) {
		fprintf(stderr, "bench-timeline: 8 x vCPUs per VM must be a multiple of the pCPUs, at most 4096; pCPUs at most 1024; samples and runs at least 1\n");
		return 2;
	}
	for (vm = 0; resolve && vm < NVMS; vm++) {
		char name[16];

		snprintf(name, sizeof(name), "guest%d", vm);
		sh.b[vm] = scen_guest_bundle(name, NPROCS);
		if (!sh.b[vm]) {
			fprintf(stderr, "bench-timeline: cannot build bundle\n");
			return 1;
		}
	}
	for (r = 0; r < runs && !err; r++) {
		err = run(&sh, &secs);
		total += secs;
	}
	if (err) {
		fprintf(stderr, "bench-timeline: %s\n", vmctx_strerror(err));
		return 1;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("samples=%llu%s vms=%d vcpus=%u pcpus=%u resolve=%s stream=%s seconds=%.3f "
	       "samples_per_sec=%.0f ns_per_sample=%.1f peak_rss_kib=%ld\n",
	       sh.n * runs, runs > 1 ? " (in runs)" : "", NVMS, NVMS * sh.vcpus_per_vm, sh.pcpus,
	       resolve ? "yes" : "no",
	       sh.watch == WATCH_ALL ? "all" : sh.watch == WATCH_BLANK ? "blank" : "none", total, sh.n * runs / total, total * 1e9 / (sh.n * runs),
	       ru.ru_maxrss);
	for (vm = 0; vm < NVMS; vm++)
		vmctx_bundle_free(sh.b[vm]);
	return 0;
}
