// SPDX-License-Identifier: LGPL-2.1-only
/*
 * bench-lookup: the cost of a bundle's lookups, small against large.
 * A small bundle (16 tasks, 1,000 symbols, 8 modules) against a large one
 * (1 M tasks on 4 roots, 1 M symbols, 65,536 modules); then the clock fit
 * over 850,000 tasks on one root and 8 samples.  Prints ns per lookup,
 * at random and in a recording's order (runs of one task's lookups in a
 * few hot functions), the large/small ratio, what one load from memory
 * costs here and the large lookups in that unit, and the clock fit's
 * time and peak RSS.
 *
 *   bench-lookup [--small-only]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmctx.h"
#include "../rss.h"

#define ROOT(i)		(0x10000000ULL + 0x2000ULL * (i))
#define KBASE		0xffffffffc0000000ULL
#define NLOOKUPS	1000000

struct shape {
	const char *name;
	size_t tasks, roots, syms, kmods;
};

struct figures {
	double find_ns, user_ns, kernel_ns;
	/* in a recording's order: see measure_runs() */
	double find_run_ns, user_run_ns, kernel_run_ns;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Tasks take turns on the roots, 10 ns lives 10 ns apart; one object, one map each. */
static struct vmctx_bundle *build(const struct shape *sh)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	char name[32];
	int obj;
	size_t i;

	if (!b)
		return NULL;
	obj = vmctx_bundle_add_object(b, "/usr/bin/app", "00ff");
	for (i = 0; i < sh->syms; i++) {
		snprintf(name, sizeof(name), "f%zu", i);
		vmctx_bundle_add_symbol(b, obj, 0x1000 + 0x10 * i, 0x10, name);
	}
	for (i = 0; i < sh->tasks; i++) {
		int t = vmctx_bundle_add_task(b, ROOT(i % sh->roots), (int)i + 1, (int)i + 1, "t",
					      20 * (i / sh->roots), 20 * (i / sh->roots) + 10);

		vmctx_bundle_add_map(b, t, 0x400000, 0x400000 + 0x10 * sh->syms + 0x1000, 0,
				     0x400000 - 0x1000, obj, "/usr/bin/app");
	}
	for (i = 0; i < sh->kmods; i++) {
		snprintf(name, sizeof(name), "m%zu", i);
		vmctx_bundle_add_kmodule(b, name, KBASE + 0x10000 * i, 0x8000);
		vmctx_bundle_add_ksym(b, KBASE + 0x10000 * i, name, name);
	}
	if (vmctx_bundle_seal(b)) {
		vmctx_bundle_free(b);
		return NULL;
	}
	return b;
}

/* Spread the lookups over the bundle with a multiplicative hash. */
static size_t pick(size_t i, size_t n)
{
	return (size_t)((i * 2654435761ULL) % n);
}

/*
 * The lookups of measure() in a recording's order: a profiler's samples come in
 * runs, a process a while on its vCPU, most of them in a few hot
 * functions.  Here each run is RUN lookups of one task (picked at random,
 * as above), at one of HOT functions that lie together, and in one of HOT
 * modules for the kernel.  What a run reads stays in cache, so the
 * large bundle's figures show its lookups' O(log n) work, not memory's
 * latency.
 */
#define RUN	64
#define HOT	16

static int measure_runs(const struct shape *sh, struct vmctx_bundle *b, struct figures *fig)
{
	const char *sym, *dso;
	size_t i, miss = 0;
	double t0;

	t0 = now();
	for (i = 0; i < NLOOKUPS; i++) {
		size_t k = pick(i / RUN, sh->tasks);

		miss += vmctx_bundle_find_task(b, ROOT(k % sh->roots),
					       20 * (k / sh->roots) + 5) < 0;
	}
	fig->find_run_ns = (now() - t0) * 1e9 / NLOOKUPS;
	t0 = now();
	for (i = 0; i < NLOOKUPS; i++) {
		size_t f = (pick(i / RUN, sh->syms) + i % HOT) % sh->syms;

		miss += vmctx_bundle_resolve_user(b, (int)pick(i / RUN, sh->tasks),
						  0x400000 + 0x10 * f + 4, &sym, &dso) != 0 || !sym;
	}
	fig->user_run_ns = (now() - t0) * 1e9 / NLOOKUPS;
	t0 = now();
	for (i = 0; i < NLOOKUPS; i++) {
		size_t m = (pick(i / RUN, sh->kmods) + i % HOT) % sh->kmods;

		miss += vmctx_bundle_resolve_kernel(b, KBASE + 0x10000 * m + 4, &sym, &dso) != 0 ||
			!sym;
	}
	fig->kernel_run_ns = (now() - t0) * 1e9 / NLOOKUPS;
	return miss ? -EINVAL : 0;
}

static int measure(const struct shape *sh, struct figures *fig)
{
	struct vmctx_bundle *b = build(sh);
	const char *sym, *dso;
	size_t i, miss = 0;
	double t0;

	if (!b)
		return -ENOMEM;
	t0 = now();
	for (i = 0; i < NLOOKUPS; i++) {
		size_t k = pick(i, sh->tasks);

		miss += vmctx_bundle_find_task(b, ROOT(k % sh->roots),
					       20 * (k / sh->roots) + 5) < 0;
	}
	fig->find_ns = (now() - t0) * 1e9 / NLOOKUPS;
	t0 = now();
	for (i = 0; i < NLOOKUPS; i++)
		miss += vmctx_bundle_resolve_user(b, (int)pick(i, sh->tasks),
						  0x400000 + 0x10 * pick(i, sh->syms) + 4, &sym,
						  &dso) != 0 || !sym;
	fig->user_ns = (now() - t0) * 1e9 / NLOOKUPS;
	t0 = now();
	for (i = 0; i < NLOOKUPS; i++)
		miss += vmctx_bundle_resolve_kernel(b, KBASE + 0x10000 * pick(i, sh->kmods) + 4,
						    &sym, &dso) != 0 || !sym;
	fig->kernel_ns = (now() - t0) * 1e9 / NLOOKUPS;
	if (measure_runs(sh, b, fig))
		miss++;
	vmctx_bundle_free(b);
	if (miss)
		fprintf(stderr, "bench-lookup: %zu lookups in the %s bundle missed\n", miss,
			sh->name);
	return miss ? -EINVAL : 0;
}

/*
 * What one lookup that misses every cache costs here at least: a chase
 * of dependent loads through a random cycle over 64 MiB (beyond any
 * cache), each load one miss to memory, and most a TLB miss too.  A
 * large bundle's lookup at random places cannot beat this floor, where
 * the small bundle sits in the L1 cache: its ratios are given in it too.
 */
static double memory_miss_ns(void)
{
	const size_t n = (64u << 20) / sizeof(size_t), steps = 4000000;
	size_t *next = malloc(n * sizeof(*next)), i, j, at = 0;
	double t0, ns;

	if (!next)
		return 0;
	/* Sattolo's shuffle: one cycle through every slot */
	for (i = 0; i < n; i++)
		next[i] = i;
	for (i = n - 1; i > 0; i--) {
		size_t t;

		j = pick(i + 1, i);
		t = next[i];
		next[i] = next[j];
		next[j] = t;
	}
	t0 = now();
	for (i = 0; i < steps; i++)
		at = next[at];
	ns = (now() - t0) * 1e9 / steps;
	free(next);
	return at == SIZE_MAX ? 0 : ns;	/* (at: so that the chase is not optimised away) */
}

/* 850,000 tasks took turns on one root; 8 samples, 1 s apart. */
static int clock_fit(void)
{
	const struct shape sh = { "clock", 850000, 1, 1, 0 };
	struct vmctx_bundle *b = build(&sh);
	struct vmctx_clock_fit *f;
	int64_t off = 0;
	long rss0;
	double t0;
	int i, err;

	if (!b)
		return -ENOMEM;
	reset_peak_rss();
	rss0 = peak_rss_kib();
	t0 = now();
	f = vmctx_clock_fit_new(b);
	for (i = 0; f && i < 8; i++)
		vmctx_clock_fit_add(f, 1000000000ULL * (i + 1), ROOT(0));
	err = f ? vmctx_clock_fit_offset(f, &off, NULL, NULL) : -errno;
	printf("clock fit, 850,000 tasks on one root, 8 samples: %.2f s, peak RSS above the bundle's %ld MiB (%s)\n",
	       now() - t0, (peak_rss_kib() - rss0) / 1024, err ? vmctx_strerror(err) : "fitted");
	vmctx_clock_fit_free(f);
	vmctx_bundle_free(b);
	return err;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "small-only", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct shape small = { "small", 16, 4, 1000, 8 };
	const struct shape large = { "large", 1000000, 4, 1000000, 65536 };
	struct figures fs, fl;
	bool small_only = false;
	double miss;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 's') {
			small_only = true;
			continue;
		}
		fprintf(c == 'h' ? stdout : stderr, "Usage: bench-lookup [--small-only]\n");
		return c == 'h' ? 0 : 2;
	}
	if (measure(&small, &fs))
		return 1;
	printf("small bundle (16 tasks on 4 roots, 1,000 symbols, 8 modules): find_task %.1f ns, resolve_user %.1f ns, resolve_kernel %.1f ns; in a recording's order %.1f, %.1f, %.1f ns\n",
	       fs.find_ns, fs.user_ns, fs.kernel_ns, fs.find_run_ns, fs.user_run_ns,
	       fs.kernel_run_ns);
	if (small_only)
		return 0;
	if (measure(&large, &fl))
		return 1;
	printf("large bundle (1 M tasks on 4 roots, 1 M symbols, 65,536 modules): find_task %.1f ns (%.2fx), resolve_user %.1f ns (%.2fx), resolve_kernel %.1f ns (%.2fx)\n",
	       fl.find_ns, fl.find_ns / fs.find_ns, fl.user_ns, fl.user_ns / fs.user_ns,
	       fl.kernel_ns, fl.kernel_ns / fs.kernel_ns);
	printf("large bundle in a recording's order (runs of %d lookups of one task, %d hot functions or modules): find_task %.1f ns (%.2fx), resolve_user %.1f ns (%.2fx), resolve_kernel %.1f ns (%.2fx)\n",
	       RUN, HOT, fl.find_run_ns, fl.find_run_ns / fs.find_run_ns, fl.user_run_ns,
	       fl.user_run_ns / fs.user_run_ns, fl.kernel_run_ns,
	       fl.kernel_run_ns / fs.kernel_run_ns);
	miss = memory_miss_ns();
	if (miss > 0)
		printf("one dependent load from memory: %.1f ns; the large bundle's lookups in those: find_task %.1f, resolve_user %.1f, resolve_kernel %.1f\n",
		       miss, fl.find_ns / miss, fl.user_ns / miss, fl.kernel_ns / miss);
	return clock_fit() ? 1 : 0;
}
