// SPDX-License-Identifier: LGPL-2.1-only
/*
 * CR3 resolution: normalisation of PTI/PCID/flag/encryption variants, task
 * lookup by lifetime when a root is reused, process labels, user and
 * kernel IP resolution, and lookups that take sealed bundles only.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmctx.h"
#include "check.h"
#include "rss.h"

#define R	0x12346000ULL	/* a page-table root: bit 12 clear, 8 KiB aligned */
#define SME	(1ULL << 47)

static void pti_pcid_variants_normalise_to_the_root(void)
{
	static const uint64_t variants[] = {
		R,
		R | 0x1000,			/* PTI user half */
		R | 0x7,			/* PCID 7 */
		R | 0x18,			/* PWT|PCD */
		R | 0x1000 | 0x805 | (1ULL << 63),	/* user half, PCID, no-flush */
	};
	size_t i;

	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
		CHECK_EQ(vmctx_cr3_normalize(variants[i], 0), R, "normalised variant");
	CHECK_EQ(vmctx_cr3_normalize(R | SME, SME), R, "SME C-bit masked when declared");
	CHECK(vmctx_cr3_normalize(R | SME, 0) != R, "SME bit kept unless declared");
	CHECK_EQ(vmctx_cr3_normalize(R | (0x7ffULL << 52), 0), R, "reserved bits 62:52 dropped");
	CHECK(vmctx_cr3_normalize(R + 0x2000, 0) != R, "the next root stays distinct");
}

static void reused_root_resolves_by_lifetime(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int old, new, solo, t;

	old = vmctx_bundle_add_task(b, R, 100, 100, "old", 1000, 2000);
	new = vmctx_bundle_add_task(b, R | 0x1000, 300, 300, "new", 3000, VMCTX_TIME_NONE);
	solo = vmctx_bundle_add_task(b, R + 0x4000, 400, 400, "solo", 5000, 6000);
	CHECK(old >= 0 && new >= 0 && solo >= 0, "tasks added");
	CHECK(!vmctx_bundle_seal(b), "sealed");
	CHECK_EQ(vmctx_bundle_find_task(b, R | 0x1000 | 3, 1500), old, "old sample -> old owner");
	CHECK_EQ(vmctx_bundle_find_task(b, R, 1000), old, "start is inclusive");
	CHECK_EQ(vmctx_bundle_find_task(b, R, 3500), new, "new sample -> new owner");
	CHECK_EQ(vmctx_bundle_find_task(b, R, 3000), new, "new owner from its start");
	t = vmctx_bundle_find_task(b, R, 2000);
	CHECK(t == -ENOENT, "exit is exclusive: root unowned at 2000 (got %d)", t);
	t = vmctx_bundle_find_task(b, R, 2500);
	CHECK(t == -ENOENT, "freed root between owners resolves to nobody (got %d)", t);
	t = vmctx_bundle_find_task(b, R, 999);
	CHECK(t == -ENOENT, "before the first owner resolves to nobody (got %d)", t);
	t = vmctx_bundle_find_task(b, R, VMCTX_TIME_NONE);
	CHECK(t == -ENOENT, "time unknown: a reused root is ambiguous (got %d)", t);
	CHECK_EQ(vmctx_bundle_find_task(b, R + 0x4000, VMCTX_TIME_NONE), solo,
		 "time unknown: a root one process owned resolves");
	t = vmctx_bundle_find_task(b, R + 0x2000, 1500);
	CHECK(t == -ENOENT, "unknown root resolves to nobody (got %d)", t);
	vmctx_bundle_free(b);
}

/*
 * A bundle with a window [10000, 20000] knows owners only within it: a task
 * alive at its end (no exit) is not its root's owner after it, nor is a
 * task alive at its start before it.  Time unknown still resolves a root
 * one process ever owned.
 */
static void outside_the_window_nobody_owns_a_root(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	uint64_t s = 1, e = 1;
	int early, late, t;

	CHECK_EQ(vmctx_bundle_window(b, &s, &e), -ENOENT, "no window before it is set");
	CHECK(s == 1 && e == 1, "nothing set without a window");
	early = vmctx_bundle_add_task(b, R, 100, 100, "early", 5000, 15000);
	late = vmctx_bundle_add_task(b, R + 0x2000, 200, 200, "late", 12000, VMCTX_TIME_NONE);
	CHECK(early >= 0 && late >= 0, "tasks added");
	CHECK_EQ(vmctx_bundle_set_window(b, 20001, 20000), -EINVAL, "a window ending first");
	CHECK_EQ(vmctx_bundle_set_window(b, 0, VMCTX_TIME_NONE), -EINVAL, "an open window");
	CHECK_EQ(vmctx_bundle_set_window(b, 10000, 20000), 0, "window set");
	CHECK(!vmctx_bundle_seal(b), "sealed");
	CHECK_EQ(vmctx_bundle_set_window(b, 0, 1), -VMCTX_E_SEALED, "sealed: no new window");
	CHECK(!vmctx_bundle_window(b, &s, &e) && s == 10000 && e == 20000, "window read back");
	CHECK_EQ(vmctx_bundle_find_task(b, R, 10000), early, "window start is inside");
	CHECK_EQ(vmctx_bundle_find_task(b, R, 14999), early, "inside: the owner");
	t = vmctx_bundle_find_task(b, R, 9999);
	CHECK(t == -ENOENT, "before the window: nobody, though early lived (got %d)", t);
	CHECK_EQ(vmctx_bundle_find_task(b, R + 0x2000, 20000), late, "window end is inside");
	t = vmctx_bundle_find_task(b, R + 0x2000, 20001);
	CHECK(t == -ENOENT, "after the window: nobody, though late had not exited (got %d)", t);
	CHECK_EQ(vmctx_bundle_find_task(b, R + 0x2000, VMCTX_TIME_NONE), late,
		 "time unknown: a root one process owned resolves");
	vmctx_bundle_free(b);
}

static void labels_tell_same_comm_processes_apart(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int a, c, d, th;
	const char *l;

	/* added out of start order: numbering follows start time */
	a = vmctx_bundle_add_task(b, R, 20, 20, "libquantum", 500, VMCTX_TIME_NONE);
	c = vmctx_bundle_add_task(b, R + 0x4000, 10, 10, "libquantum", 100, VMCTX_TIME_NONE);
	d = vmctx_bundle_add_task(b, R + 0x8000, 30, 30, "init", 0, VMCTX_TIME_NONE);
	th = vmctx_bundle_add_task(b, R, 21, 20, "worker", 600, VMCTX_TIME_NONE);
	CHECK(!vmctx_bundle_seal(b), "sealed");
	l = vmctx_bundle_task_label(b, c);
	CHECK(l && !strcmp(l, "libquantum(1)"), "first started is (1), got %s", l ? l : "NULL");
	l = vmctx_bundle_task_label(b, a);
	CHECK(l && !strcmp(l, "libquantum(2)"), "second started is (2), got %s", l ? l : "NULL");
	l = vmctx_bundle_task_label(b, d);
	CHECK(l && !strcmp(l, "init"), "a unique comm has no number, got %s", l ? l : "NULL");
	l = vmctx_bundle_task_label(b, th);
	CHECK(l && !strcmp(l, "libquantum(2)"), "a thread carries its process label, got %s",
	      l ? l : "NULL");
	CHECK_EQ(vmctx_bundle_find_task(b, R, 700), a, "shared root prefers the process leader");
	vmctx_bundle_free(b);
}

static void user_and_kernel_ips_resolve(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	const char *sym, *dso;
	int exe, lib, t, th, kvm;

	exe = vmctx_bundle_add_object(b, "/usr/bin/app", "0123abcd");
	lib = vmctx_bundle_add_object(b, "/lib/libm.so.6", "feed");
	CHECK(vmctx_bundle_add_object(b, "/other/path/app", "0123abcd") == exe,
	      "objects deduplicate by build-id");
	vmctx_bundle_add_symbol(b, exe, 0x1000, 0x100, "main");
	vmctx_bundle_add_symbol(b, exe, 0x1100, 0x0, "label");	/* zero size: up to next */
	vmctx_bundle_add_symbol(b, exe, 0x1200, 0x50, "short");
	vmctx_bundle_add_symbol(b, exe, 0x1200, 0x80, "long_alias");	/* longest alias wins */
	vmctx_bundle_add_symbol(b, lib, 0x3000, 0x40, "sin");
	t = vmctx_bundle_add_task(b, R, 7, 7, "app", 0, VMCTX_TIME_NONE);
	th = vmctx_bundle_add_task(b, R, 8, 7, "app", 0, VMCTX_TIME_NONE);
	/* PIE at 0x5555...: ELF vaddr = ip - bias */
	vmctx_bundle_add_map(b, t, 0x555555554000ULL, 0x555555556000ULL, 0, 0x555555554000ULL,
			     exe, "/usr/bin/app");
	vmctx_bundle_add_map(b, t, 0x7f0000000000ULL, 0x7f0000010000ULL, 0, 0x7f0000000000ULL,
			     lib, "/lib/libm.so.6");
	vmctx_bundle_add_map(b, t, 0x7ffff0000000ULL, 0x7ffff0001000ULL, 0, 0, -1, "[stack]");
	vmctx_bundle_add_ksym(b, 0xffffffff81000000ULL, "_stext", NULL);
	vmctx_bundle_add_ksym(b, 0xffffffff81001000ULL, "schedule", NULL);
	kvm = vmctx_bundle_add_kmodule(b, "virtio_net", 0xffffffffc0000000ULL, 0x10000);
	CHECK(kvm >= 0, "module added");
	vmctx_bundle_add_ksym(b, 0xffffffffc0001000ULL, "virtnet_poll", "virtio_net");
	CHECK(!vmctx_bundle_seal(b), "sealed");

	CHECK(!vmctx_bundle_resolve_user(b, t, 0x555555555010ULL, &sym, &dso) &&
	      sym && !strcmp(sym, "main") && !strcmp(dso, "app"), "exe IP -> main in app");
	CHECK(!vmctx_bundle_resolve_user(b, t, 0x5555555551f0ULL, &sym, &dso) &&
	      sym && !strcmp(sym, "label"), "zero-sized symbol covers up to the next");
	CHECK(!vmctx_bundle_resolve_user(b, t, 0x555555555260ULL, &sym, &dso) &&
	      sym && !strcmp(sym, "long_alias"), "alias: the longest symbol wins");
	CHECK(!vmctx_bundle_resolve_user(b, t, 0x555555555290ULL, &sym, &dso) && !sym,
	      "past a symbol's end: mapped, no symbol");
	CHECK(!vmctx_bundle_resolve_user(b, th, 0x7f0000003010ULL, &sym, &dso) &&
	      sym && !strcmp(sym, "sin") && !strcmp(dso, "libm.so.6"),
	      "a thread resolves through its process's maps");
	CHECK(!vmctx_bundle_resolve_user(b, t, 0x7ffff0000100ULL, &sym, &dso) && !sym &&
	      !strcmp(dso, "[stack]"), "anonymous map: no symbol");
	CHECK(vmctx_bundle_resolve_user(b, t, 0x1000, &sym, &dso) == -ENOENT,
	      "unmapped IP is -ENOENT");

	CHECK(!vmctx_bundle_resolve_kernel(b, 0xffffffff81001234ULL, &sym, &dso) &&
	      sym && !strcmp(sym, "schedule") && !strcmp(dso, "vmlinux"), "kernel IP -> schedule");
	CHECK(!vmctx_bundle_resolve_kernel(b, 0xffffffffc0001010ULL, &sym, &dso) &&
	      sym && !strcmp(sym, "virtnet_poll") && !strcmp(dso, "virtio_net"),
	      "module IP -> module symbol");
	CHECK(!vmctx_bundle_resolve_kernel(b, 0xffffffffc0000010ULL, &sym, &dso) && !sym &&
	      !strcmp(dso, "virtio_net"), "module IP below its first symbol: module, no symbol");
	CHECK(!vmctx_bundle_resolve_kernel(b, 0xffffffffc0020000ULL, &sym, &dso) && !sym,
	      "IP past the module is not credited to the module's last symbol");
	/* where a guest's kernel decompresses itself: identity-mapped, below vmlinux */
	CHECK(!vmctx_bundle_resolve_kernel(b, 0x4f3a568ULL, &sym, &dso) && !sym &&
	      !strcmp(dso, VMCTX_EARLY_BOOT),
	      "an IP below the kernel's first symbol is the guest's early boot, not vmlinux");
	vmctx_bundle_free(b);
}

static void guest_tsc_maps_to_guest_time(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	uint64_t ns = 0;

	CHECK(vmctx_bundle_guest_ns(b, 1000, &ns) == -ENODATA, "no clock data");
	/* 2 GHz TSC: 2e9 ticks per second; pair (tsc 4e9, 10 s) */
	vmctx_bundle_set_clock(b, 2000000, 4000000000ULL, 10000000000ULL);
	CHECK(!vmctx_bundle_guest_ns(b, 6000000000ULL, &ns) && ns == 11000000000ULL,
	      "one second of ticks later is 11 s (got %" PRIu64 ")", ns);
	CHECK(!vmctx_bundle_guest_ns(b, 2000000000ULL, &ns) && ns == 9000000000ULL,
	      "before the pair works too (got %" PRIu64 ")", ns);
	CHECK(vmctx_bundle_guest_ns(b, 0, &ns) == 0 && ns == 8000000000ULL, "tsc 0 is 8 s");
	vmctx_bundle_set_clock(b, 1, UINT64_MAX, 0);
	CHECK(vmctx_bundle_guest_ns(b, 0, &ns) == -ERANGE, "negative time is refused");
	vmctx_bundle_free(b);
}

/*
 * Clock fit: guest = host + 4.6 s.  Roots 1-3 have one owner each (two
 * exit while sampled); root 4 is reused (d, then e); one sample's root
 * nobody owned.
 */
static void clock_fit_finds_the_offset(void)
{
	const int64_t off = 4600000000LL;
	struct vmctx_bundle *b = vmctx_bundle_new();
	struct vmctx_clock_fit *f;
	uint64_t agree = 0, used = 0, t;
	int64_t got = 0;

	vmctx_bundle_add_task(b, R, 10, 10, "a", 5100000000ULL, 5900000000ULL);
	vmctx_bundle_add_task(b, R + 0x2000, 11, 11, "b", 5500000000ULL, 7000000000ULL);
	vmctx_bundle_add_task(b, R + 0x4000, 12, 12, "c", 1000, VMCTX_TIME_NONE);
	vmctx_bundle_add_task(b, R + 0x6000, 13, 13, "d", 5000000000ULL, 5200000000ULL);
	vmctx_bundle_add_task(b, R + 0x6000, 14, 14, "e", 6000000000ULL, VMCTX_TIME_NONE);
	CHECK(!vmctx_bundle_seal(b), "sealed");
	f = vmctx_clock_fit_new(b);
	CHECK(vmctx_clock_fit_offset(f, &got, NULL, NULL) == -ENODATA, "no samples, no offset");
	/*
	 * Before any of it, 300 ms of samples on b's root from a process the
	 * bundle never saw: they must be outvoted, not widen b's span.
	 */
	for (t = 0; t < 300000000ULL; t += 1000000)
		vmctx_clock_fit_add(f, t, R + 0x2000);

	/* samples every 1 ms of host time, each from the task alive then */
	for (t = 400000000ULL; t < 2900000000ULL; t += 1000000) {
		uint64_t g = t + off;

		if (g >= 5100000000ULL && g < 5900000000ULL)
			vmctx_clock_fit_add(f, t, R | 0x1000);
		if (g >= 5500000000ULL && g < 7000000000ULL)
			vmctx_clock_fit_add(f, t, R + 0x2000);
		vmctx_clock_fit_add(f, t, R + 0x4000);
		vmctx_clock_fit_add(f, t, (g < 5200000000ULL ? R : R + 0x4000) + 0x6000);
	}
	vmctx_clock_fit_add(f, 42, R + 0x8000);
	CHECK(!vmctx_clock_fit_offset(f, &got, &agree, &used), "an offset");
	CHECK(got > off - 2000000 && got < off + 2000000,
	      "offset within 2 ms of 4.6 s: got %" PRId64, got);
	CHECK(agree == used - 300, "all but the stranger's samples agree (%" PRIu64 " of %" PRIu64 ")",
	      agree, used);
	/* d's 200 samples count (a reused root agrees with one of its owners) */
	CHECK(used == 300 + 800 + 1500 + 2500 + 200, "unknown roots are not used (%" PRIu64 ")",
	      used);
	vmctx_clock_fit_free(f);
	vmctx_clock_fit_free(NULL);
	vmctx_bundle_free(b);
}

/* Lookups, the clock fit and sessions refuse a bundle still being built. */
static void lookups_need_a_sealed_bundle(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	struct vmctx_clock_fit *f;
	const char *sym = NULL, *l;
	int t;

	t = vmctx_bundle_add_task(b, R, 7, 7, "app", 0, VMCTX_TIME_NONE);
	vmctx_bundle_add_map(b, t, 0x1000, 0x2000, 0, 0, -1, "app");
	CHECK_EQ(vmctx_bundle_find_task(b, R, 1), -VMCTX_E_UNSEALED, "find_task");
	CHECK_EQ(vmctx_bundle_resolve_user(b, t, 0x1000, &sym, NULL), -VMCTX_E_UNSEALED,
		 "resolve_user");
	CHECK_EQ(vmctx_bundle_resolve_kernel(b, 0x1000, &sym, NULL), -VMCTX_E_UNSEALED,
		 "resolve_kernel");
	errno = 0;
	l = vmctx_bundle_task_label(b, t);
	CHECK(!l && errno == VMCTX_E_UNSEALED, "task_label: NULL, errno VMCTX_E_UNSEALED");
	errno = 0;
	f = vmctx_clock_fit_new(b);
	CHECK(!f && errno == VMCTX_E_UNSEALED, "clock_fit_new: NULL, errno VMCTX_E_UNSEALED");
	CHECK(!vmctx_bundle_seal(b), "sealed");
	CHECK_EQ(vmctx_bundle_find_task(b, R, 1), t, "find_task once sealed");
	CHECK_EQ(vmctx_bundle_find_task(NULL, R, 1), -EINVAL, "find_task on NULL");
	vmctx_bundle_free(b);
}

/* A small deterministic generator, so a failure reproduces. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(uint64_t n)
{
	return check_rnd(&rnd_state) % n;
}

struct oracle_task {
	uint64_t root;
	int pid, tgid, idx;
	uint64_t start, exit;
};

static int cmp_start(const void *a, const void *b)
{
	const struct oracle_task *x = *(const struct oracle_task *const *)a;
	const struct oracle_task *y = *(const struct oracle_task *const *)b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * find_task's meaning, as the scan it replaced: the root's tasks in
 * (start, index) order; of those owning it at @t (start <= t < exit), the
 * last process leader, else the first; with the time unknown, the one
 * process that ever owned the root.
 */
static int oracle_find(const struct oracle_task *v, size_t n, uint64_t root, uint64_t t)
{
	const struct oracle_task *own[n ? n : 1], *best = NULL;
	size_t i, m = 0;

	for (i = 0; i < n; i++)
		if (v[i].root == root)
			own[m++] = &v[i];
	qsort(own, m, sizeof(*own), cmp_start);
	for (i = 0; i < m; i++) {
		const struct oracle_task *x = own[i];

		if (t == VMCTX_TIME_NONE && best && best->tgid != x->tgid)
			return -ENOENT;
		if (t != VMCTX_TIME_NONE &&
		    (x->start > t || (x->exit != VMCTX_TIME_NONE && x->exit <= t)))
			continue;
		if (!best || x->pid == x->tgid)
			best = x;
	}
	return best ? best->idx : -ENOENT;
}

/* One lookup against the scan; the first five differences are reported. */
static void check_find(const struct vmctx_bundle *b, const struct oracle_task *v, size_t n,
		       uint64_t root, uint64_t t, size_t *bad)
{
	int want = oracle_find(v, n, root, t);
	int got = vmctx_bundle_find_task(b, root, t);

	if (got != want && (*bad)++ < 5)
		CHECK(0, "root %#" PRIx64 " at %" PRIu64 ": got %d, want %d", root, t, got, want);
}

/*
 * Overlapping and nested lifetimes, threads and leaders sharing a root,
 * zero-length and endless lives: the indexed lookup agrees with the scan.
 */
static void overlapping_lifetimes_resolve_as_a_scan_would(void)
{
	enum { NTASKS = 400, NROOTS = 4, NTIMES = 60 };
	struct oracle_task v[NTASKS];
	struct vmctx_bundle *b = vmctx_bundle_new();
	size_t i, bad = 0;
	uint64_t r, t;

	for (i = 0; i < NTASKS; i++) {
		struct oracle_task *x = &v[i];

		x->root = R + 0x2000 * rnd(NROOTS);
		x->tgid = 100 + (int)rnd(6);
		x->pid = rnd(3) ? x->tgid : x->tgid * 10 + (int)rnd(5);
		x->start = rnd(NTIMES);
		x->exit = rnd(4) ? x->start + rnd(NTIMES / 3) : VMCTX_TIME_NONE;
		x->idx = vmctx_bundle_add_task(b, x->root, x->pid, x->tgid, "t", x->start, x->exit);
		CHECK(x->idx == (int)i, "task %zu added", i);
	}
	CHECK(!vmctx_bundle_seal(b), "sealed");
	for (r = 0; r <= NROOTS; r++) {
		for (t = 0; t <= NTIMES + NTIMES / 3 + 1; t++) {
			uint64_t root = R + 0x2000 * r, tt = t == NTIMES + NTIMES / 3 + 1 ?
						       VMCTX_TIME_NONE : t;

			check_find(b, v, NTASKS, root, tt, &bad);
		}
	}
	CHECK(!bad, "%zu lookups differ from the scan", bad);
	vmctx_bundle_free(b);
}

/*
 * Thousands of symbols, kernel symbols and tasks on few roots, spread so
 * that the search index has several levels and padded blocks: every
 * lookup, at and around each boundary and at the ends of the address
 * space, agrees with a scan of what was added.
 */
struct oracle_sym {
	uint64_t start, end;
	char name[24];
};

/* The symbol covering @a, by a scan: they were added apart, so at most one. */
static const char *oracle_sym(const struct oracle_sym *v, size_t n, uint64_t a)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].start <= a && a < v[i].end)
			return v[i].name;
	return NULL;
}

/* The last kernel symbol at or below @a (the greatest name of equal ones), by a scan. */
static const char *oracle_ksym(const struct oracle_sym *v, size_t n, uint64_t a)
{
	const struct oracle_sym *best = NULL;
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].start <= a && (!best || v[i].start > best->start ||
					(v[i].start == best->start && strcmp(v[i].name, best->name) > 0)))
			best = &v[i];
	return best ? best->name : NULL;
}

static bool same_name(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static void indexed_lookups_agree_with_a_scan(void)
{
	enum { NSYMS = 3000, NKSYMS = 3001, NPROBES = 20000 };
	static struct oracle_sym us[NSYMS], ks[NKSYMS];
	struct vmctx_bundle *b = vmctx_bundle_new();
	size_t i, bad = 0, nprobe = 0;
	const char *sym, *dso;
	uint64_t at = 0x400, probe[4 * NSYMS + NPROBES + 2];
	int obj, t;

	obj = vmctx_bundle_add_object(b, "/usr/bin/big", "beef");
	for (i = 0; i < NSYMS; i++) {
		/* apart, with gaps of 0 to 3 and sizes of 1 to 8, added in reverse */
		us[i].start = at + rnd(4);
		us[i].end = us[i].start + 1 + rnd(8);
		at = us[i].end;
		snprintf(us[i].name, sizeof(us[i].name), "u%zu", i);
	}
	for (i = NSYMS; i--;)
		vmctx_bundle_add_symbol(b, obj, us[i].start, us[i].end - us[i].start, us[i].name);
	t = vmctx_bundle_add_task(b, R, 1, 1, "big", 0, VMCTX_TIME_NONE);
	vmctx_bundle_add_map(b, t, 0, UINT64_MAX, 0, 0, obj, "/usr/bin/big");
	for (i = 0; i < NKSYMS; i++) {
		/* equal addresses, and the first and last address there are */
		ks[i].start = i == 0 ? 0 : i == NKSYMS - 1 ? UINT64_MAX :
			      0xffffffff80000000ULL + 16 * rnd(NKSYMS / 2);
		snprintf(ks[i].name, sizeof(ks[i].name), "k%zu", i);
		vmctx_bundle_add_ksym(b, ks[i].start, ks[i].name, NULL);
	}
	CHECK(!vmctx_bundle_seal(b), "sealed");
	for (i = 0; i < NSYMS; i++) {
		probe[nprobe++] = us[i].start - 1;
		probe[nprobe++] = us[i].start;
		probe[nprobe++] = us[i].end - 1;
		probe[nprobe++] = us[i].end;
	}
	for (i = 0; i < NPROBES; i++)
		probe[nprobe++] = i % 2 ? rnd(at + 16) : 0xffffffff80000000ULL + rnd(16 * NKSYMS);
	probe[nprobe++] = 0;
	probe[nprobe++] = UINT64_MAX;
	for (i = 0; i < nprobe; i++) {
		const char *want = oracle_sym(us, NSYMS, probe[i]);
		int err = vmctx_bundle_resolve_user(b, t, probe[i], &sym, &dso);

		/* the map ends below the last address */
		if (probe[i] == UINT64_MAX ? err != -ENOENT : err || !same_name(sym, want)) {
			if (bad++ < 5)
				CHECK(0, "user %#" PRIx64 ": got %s, want %s", probe[i],
				      sym ? sym : "none", want ? want : "none");
		}
		want = oracle_ksym(ks, NKSYMS, probe[i]);
		if (vmctx_bundle_resolve_kernel(b, probe[i], &sym, &dso) || !same_name(sym, want)) {
			if (bad++ < 5)
				CHECK(0, "kernel %#" PRIx64 ": got %s, want %s", probe[i],
				      sym ? sym : "none", want ? want : "none");
		}
	}
	CHECK(!bad, "%zu of %zu lookups differ from the scan", bad, 2 * nprobe);
	vmctx_bundle_free(b);
}

/*
 * 5,000 tasks on three roots, some alive long, threads among them: every
 * root at every time agrees with the scan, past the index's first level.
 */
static void many_owners_resolve_as_a_scan_would(void)
{
	enum { NTASKS = 5000, NROOTS = 3, NTIMES = 4000 };
	static struct oracle_task v[NTASKS];
	struct vmctx_bundle *b = vmctx_bundle_new();
	size_t i, bad = 0;
	uint64_t r, t;

	for (i = 0; i < NTASKS; i++) {
		struct oracle_task *x = &v[i];

		x->root = rnd(NROOTS) ? R + 0x2000 * rnd(NROOTS) : 0;
		x->tgid = 100 + (int)rnd(50);
		x->pid = rnd(4) ? x->tgid : x->tgid * 10 + (int)rnd(5);
		x->start = rnd(NTIMES);
		x->exit = rnd(20) ? x->start + rnd(8) : VMCTX_TIME_NONE;
		x->idx = vmctx_bundle_add_task(b, x->root, x->pid, x->tgid, "t", x->start, x->exit);
	}
	CHECK(!vmctx_bundle_seal(b), "sealed");
	for (r = 0; r <= NROOTS; r++) {
		for (t = 0; t <= NTIMES + 10; t += 1 + rnd(3)) {
			uint64_t root = r == NROOTS ? 0 : R + 0x2000 * r;
			uint64_t tt = t > NTIMES + 8 ? VMCTX_TIME_NONE : t;

			check_find(b, v, NTASKS, root, tt, &bad);
		}
	}
	CHECK(!bad, "%zu lookups differ from the scan", bad);
	vmctx_bundle_free(b);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * 100,000 tasks took turns on one root: a lookup scanned them all, so
 * these 20,000 took 5 s here.  Indexed, they take milliseconds; the
 * bound leaves room for a sanitizer build on a loaded machine.
 */
static void lookups_on_a_much_reused_root_are_logarithmic(void)
{
	enum { NTASKS = 100000, NLOOKUPS = 20000 };
	struct vmctx_bundle *b = vmctx_bundle_new();
	size_t i, wrong = 0;
	double t0;

	for (i = 0; i < NTASKS; i++)
		vmctx_bundle_add_task(b, R, (int)i + 1, (int)i + 1, "t", 10 * i, 10 * i + 5);
	CHECK(!vmctx_bundle_seal(b), "sealed");
	t0 = now_s();
	for (i = 0; i < NLOOKUPS; i++) {
		size_t k = NTASKS - 1 - i % 97;

		if (vmctx_bundle_find_task(b, R, 10 * k + 2) != (int)k)
			wrong++;
	}
	CHECK(!wrong, "%zu lookups found the wrong task", wrong);
	CHECK(now_s() - t0 < 3.0, "%d lookups among %d owners of one root took %.2f s",
	      NLOOKUPS, NTASKS, now_s() - t0);
	vmctx_bundle_free(b);
}

/*
 * Overlapping modules: the lowest-numbered module covering an address
 * names it, as the scan over modules did; and 65,536 modules are added
 * and resolve about as fast as a few (the scans by name and by address
 * took 5 s each here).
 */
static void kernel_modules_resolve_by_index(void)
{
	enum { NMODS = 65536, NLOOKUPS = 200000 };
	struct vmctx_bundle *b = vmctx_bundle_new();
	const char *sym, *mod;
	size_t i, wrong = 0;
	double t0;
	char name[32];

	vmctx_bundle_add_kmodule(b, "big", 0x1000, 0x1000);	/* [0x1000, 0x2000) */
	vmctx_bundle_add_kmodule(b, "inner", 0x1400, 0x100);	/* inside big */
	vmctx_bundle_add_kmodule(b, "tail", 0x1800, 0x1000);	/* [0x1800, 0x2800) */
	vmctx_bundle_add_kmodule(b, "empty", 0x3000, 0);
	vmctx_bundle_add_ksym(b, 0x1800, "tail_fn", "tail");
	CHECK_EQ(vmctx_bundle_add_kmodule(b, "inner", 0, 1), -EEXIST, "a module name is unique");
	t0 = now_s();
	for (i = 4; i < NMODS; i++) {
		snprintf(name, sizeof(name), "m%zu", i);
		vmctx_bundle_add_kmodule(b, name, 0x100000 + 0x1000 * (NMODS - i), 0x800);
	}
	CHECK(now_s() - t0 < 3.0, "adding %d modules took %.2f s", NMODS, now_s() - t0);
	CHECK_EQ(vmctx_bundle_add_ksym(b, 0x100000 + 0x1000 * (NMODS - 77), "f77", "m77"), 0,
		 "a symbol finds its module by name");
	CHECK(!vmctx_bundle_seal(b), "sealed");
	CHECK(!vmctx_bundle_resolve_kernel(b, 0x1450, &sym, &mod) && !strcmp(mod, "big"),
	      "nested module: the lower-numbered one, got %s", mod);
	CHECK(!vmctx_bundle_resolve_kernel(b, 0x1900, &sym, &mod) && !strcmp(mod, "big") && !sym,
	      "overlap: the lower-numbered one, and not the other's symbol, got %s", mod);
	CHECK(!vmctx_bundle_resolve_kernel(b, 0x2000, &sym, &mod) && !strcmp(mod, "tail") &&
	      sym && !strcmp(sym, "tail_fn"), "past the first: the second, got %s", mod);
	CHECK(!vmctx_bundle_resolve_kernel(b, 0x2800, &sym, &mod) && !strcmp(mod, "vmlinux"),
	      "end is exclusive, got %s", mod);
	CHECK(!vmctx_bundle_resolve_kernel(b, 0x3000, &sym, &mod) && !strcmp(mod, "vmlinux"),
	      "an empty module covers nothing, got %s", mod);
	t0 = now_s();
	for (i = 0; i < NLOOKUPS; i++) {
		size_t k = 4 + i % (NMODS - 4);

		snprintf(name, sizeof(name), "m%zu", k);
		if (vmctx_bundle_resolve_kernel(b, 0x100000 + 0x1000 * (NMODS - k) + 0x7ff, &sym,
						&mod) || strcmp(mod, name))
			wrong++;
	}
	CHECK(!wrong, "%zu module lookups went wrong", wrong);
	CHECK(now_s() - t0 < 3.0, "%d lookups among %d modules took %.2f s", NLOOKUPS, NMODS,
	      now_s() - t0);
	vmctx_bundle_free(b);
}

/*
 * 300,000 tasks took turns on one root, 8 samples 200 ms apart: the fit
 * held an edge per owner and run (150 MiB here; 965 MiB at 850,000 tasks).
 * The sweep now streams them, and the fit still finds all 8 agreeing.
 */
static void clock_fit_of_a_much_reused_root_stays_small(void)
{
	enum { NTASKS = 300000 };
	struct vmctx_bundle *b = vmctx_bundle_new();
	struct vmctx_clock_fit *f;
	uint64_t agree = 0;
	int64_t off = 0;
	long rss0;
	size_t i;

	for (i = 0; i < NTASKS; i++)
		vmctx_bundle_add_task(b, R, (int)i + 1, (int)i + 1, "t", 5000 * i, 5000 * i + 2500);
	CHECK(!vmctx_bundle_seal(b), "sealed");
	f = vmctx_clock_fit_new(b);
	CHECK(f != NULL, "fit created");
	for (i = 0; i < 8; i++)
		vmctx_clock_fit_add(f, 200000000ULL * (i + 1), R);
	rss0 = reset_peak_rss() ? peak_rss_kib() : -1;
	CHECK(!vmctx_clock_fit_offset(f, &off, &agree, NULL) && agree == 8,
	      "the fit finds an offset all 8 samples agree with (got %" PRIu64 ")", agree);
	if (rss0 >= 0)
		CHECK(peak_rss_kib() - rss0 < 32 * 1024, "the fit took %ld MiB",
		      (peak_rss_kib() - rss0) / 1024);
	vmctx_clock_fit_free(f);
	vmctx_bundle_free(b);
}

/*
 * The owner step (vmctx_bundle_owner()): process A (root RA, threads 100
 * and 101) and B (root RB); guest CPU 0 runs A's thread 101, a kworker
 * that borrows A's page tables, the idle task, B, then loses switches in
 * [5000, 6000] and runs A again from 7000.  CPU 1 has no log.
 */
#define RA	0x20000000ULL
#define RB	0x30000000ULL

static void owner_follows_the_switch_log_then_the_root(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	VMCTX_OPTS(vmctx_owner, o);
	int a, a2, bt;

	a = vmctx_bundle_add_task(b, RA, 100, 100, "appa", 0, VMCTX_TIME_NONE);
	a2 = vmctx_bundle_add_task(b, RA, 101, 100, "appa-worker", 0, VMCTX_TIME_NONE);
	bt = vmctx_bundle_add_task(b, RB, 200, 200, "appb", 0, VMCTX_TIME_NONE);
	CHECK(a >= 0 && a2 >= 0 && bt >= 0, "tasks added");
	vmctx_bundle_add_switch(b, 0, 1000, 101, 100, VMCTX_TASK_USER, "appa-worker");
	vmctx_bundle_add_switch(b, 0, 2000, 50, 50, VMCTX_TASK_KTHREAD, "kworker/0:1");
	vmctx_bundle_add_switch(b, 0, 3000, 0, 0, VMCTX_TASK_IDLE, "swapper/0");
	vmctx_bundle_add_switch(b, 0, 4000, 200, 200, VMCTX_TASK_USER, "appb");
	vmctx_bundle_add_switch_gap(b, 0, 5000, 6000);
	/* A's leader ran as its parent's comm until it exec'd: the log's is stale */
	vmctx_bundle_add_switch(b, 0, 7000, 100, 100, VMCTX_TASK_USER, "sh");
	CHECK(vmctx_bundle_owner(b, 0, RA, 1500, true, &o) == -VMCTX_E_UNSEALED,
	      "an unsealed bundle is refused");
	CHECK(!vmctx_bundle_seal(b), "sealed");

	/* kernel mode: what ran, whatever page tables it borrowed */
	CHECK(!vmctx_bundle_owner(b, 0, RA, 2500, false, &o) && o.by == VMCTX_OWNER_SWITCH &&
	      o.pid == 50 && o.tgid == 50 && o.kind == VMCTX_TASK_KTHREAD &&
	      !strcmp(o.comm, "kworker/0:1") && o.task == -1 && !o.disagree,
	      "a kernel thread on A's page tables is the kernel thread (by %d pid %d)", o.by,
	      o.pid);
	CHECK(!vmctx_bundle_owner(b, 0, RA, 3500, false, &o) && o.by == VMCTX_OWNER_SWITCH &&
	      o.pid == 0 && o.tgid == 0 && o.kind == VMCTX_TASK_IDLE && o.task == -1,
	      "the idle loop is the idle task (pid %d)", o.pid);
	CHECK(!vmctx_bundle_owner(b, 0, RA, 1500, false, &o) && o.by == VMCTX_OWNER_SWITCH &&
	      o.pid == 101 && o.tgid == 100 && o.task >= 0,
	      "A's thread in the kernel: that thread, A's address space");
	CHECK(!vmctx_bundle_owner(b, 0, RB, 7500, false, &o) && o.by == VMCTX_OWNER_SWITCH &&
	      o.pid == 100 && o.task == -1,
	      "a root of another process in the kernel: the running task, no address space");
	CHECK(!vmctx_bundle_owner(b, 0, RA, 7500, true, &o) && o.by == VMCTX_OWNER_SWITCH &&
	      o.pid == 100 && o.task == a && !strcmp(o.comm, "appa"),
	      "the process's comm, not the log's from before its exec (%s)", o.comm);

	/* user mode: the root's process, the log's thread */
	CHECK(!vmctx_bundle_owner(b, 0, RA | 0x1000 | 5, 1500, true, &o) &&
	      o.by == VMCTX_OWNER_SWITCH && o.pid == 101 && o.tgid == 100 &&
	      (o.task == a || o.task == a2) && !o.disagree,
	      "user mode: the running thread of the root's process (pid %d task %d)", o.pid,
	      o.task);
	CHECK(!vmctx_bundle_owner(b, 0, RA, 4500, true, &o) && o.by == VMCTX_OWNER_ROOT &&
	      o.tgid == 100 && o.disagree && o.log_err == 0,
	      "user mode on A's root while the log says B: A, flagged");
	CHECK(!vmctx_bundle_owner(b, 0, RA, 2500, true, &o) && o.by == VMCTX_OWNER_ROOT &&
	      o.tgid == 100 && o.disagree, "user mode while a kernel thread ran: flagged");
	CHECK(!vmctx_bundle_owner(b, 0, RA, 3500, true, &o) && o.by == VMCTX_OWNER_ROOT &&
	      o.disagree, "user mode while the idle task ran: flagged");

	/* where the log does not know, the root decides */
	CHECK(!vmctx_bundle_owner(b, 0, RB, 5500, false, &o) && o.by == VMCTX_OWNER_ROOT &&
	      o.tgid == 200 && o.task == bt && o.log_err == -VMCTX_E_GAP,
	      "in a gap: the root's owner, and why (%d)", o.log_err);
	CHECK(!vmctx_bundle_owner(b, 0, RB, 6500, false, &o) && o.by == VMCTX_OWNER_ROOT &&
	      o.log_err == -VMCTX_E_GAP, "after a gap, until the next switch: still lost");
	CHECK(!vmctx_bundle_owner(b, 1, RA, 1500, false, &o) && o.by == VMCTX_OWNER_ROOT &&
	      o.tgid == 100 && o.log_err == -ENOENT, "a CPU without a log: the root");
	CHECK(!vmctx_bundle_owner(b, -1, RA, 2500, false, &o) && o.by == VMCTX_OWNER_ROOT &&
	      o.tgid == 100, "an unknown CPU: the root");
	CHECK(!vmctx_bundle_owner(b, 0, RB, 500, false, &o) && o.by == VMCTX_OWNER_ROOT &&
	      o.log_err == -ENOENT, "before the CPU's first switch: the root");
	CHECK(!vmctx_bundle_owner(b, 0, RB, VMCTX_TIME_NONE, false, &o) &&
	      o.by == VMCTX_OWNER_ROOT && o.tgid == 200, "an unknown time: the root");
	CHECK(!vmctx_bundle_owner(b, 1, 0, 1500, false, &o) && o.by == VMCTX_OWNER_NONE &&
	      o.task == -1, "no log and no root: nobody");
	CHECK(!vmctx_bundle_owner(b, 0, 0, 2500, false, &o) && o.by == VMCTX_OWNER_SWITCH &&
	      o.pid == 50, "no root (a nested guest's): the log alone");

	/* the times of the same answer, from how the log and tasks were built */
	CHECK(!vmctx_bundle_owner(b, 0, RA, 2500, false, &o) && o.valid_from >= 2000 &&
	      o.valid_from <= 2500 && o.valid_until == 3000,
	      "the kworker's answer holds until the next switch: [%" PRIu64 ", %" PRIu64 ")",
	      o.valid_from, o.valid_until);
	CHECK(!vmctx_bundle_owner(b, 0, RB, 7500, false, &o) && o.valid_from == 7000 &&
	      o.valid_until == UINT64_MAX,
	      "the last switch's answer holds from it on (B lives on): [%" PRIu64 ", %" PRIu64 ")",
	      o.valid_from, o.valid_until);
	CHECK(!vmctx_bundle_owner(b, 0, RB, 500, false, &o) && o.valid_from == 0 &&
	      o.valid_until == 1000, "before the first switch: until it, [%" PRIu64 ", %" PRIu64 ")",
	      o.valid_from, o.valid_until);
	CHECK(!vmctx_bundle_owner(b, 0, RB, 4500, false, &o) && o.valid_from == 4000 &&
	      o.valid_until == 5000, "B's run: until the gap starts, [%" PRIu64 ", %" PRIu64 ")",
	      o.valid_from, o.valid_until);
	CHECK(!vmctx_bundle_owner(b, 0, RB, 5500, false, &o) && o.valid_from == 5500 &&
	      o.valid_until == 5501, "in a gap: that time alone, [%" PRIu64 ", %" PRIu64 ")",
	      o.valid_from, o.valid_until);
	CHECK(!vmctx_bundle_owner(b, 1, RB, 5500, false, &o) && o.valid_from == 0 &&
	      o.valid_until == UINT64_MAX,
	      "a CPU without a log, a root owned for ever: always, [%" PRIu64 ", %" PRIu64 ")",
	      o.valid_from, o.valid_until);
	CHECK(!vmctx_bundle_owner(b, 0, RB, VMCTX_TIME_NONE, false, &o) && o.valid_from == 0 &&
	      o.valid_until == 0, "an unknown time: no range");

	/* callers that get it wrong, and an older caller's shorter struct */
	{
		struct vmctx_owner shortish = {
			.sz = offsetof(struct vmctx_owner, disagree) + sizeof(bool) - 1 };
		struct vmctx_owner older;

		CHECK(vmctx_bundle_owner(b, 0, RA, 1500, true, &shortish) == -EINVAL,
		      "a struct short of the first version is refused");
		memset(&older, 0xa5, sizeof(older));
		older.sz = offsetof(struct vmctx_owner, disagree) + sizeof(bool);
		CHECK(!vmctx_bundle_owner(b, 0, RA, 1500, true, &older) &&
		      older.by == VMCTX_OWNER_SWITCH && older.pid == 101 &&
		      ((unsigned char *)&older)[older.sz] == 0xa5 &&
		      ((unsigned char *)&older)[sizeof(older) - 1] == 0xa5,
		      "the first version's struct is filled, and not a byte past it");
	}
	CHECK(vmctx_bundle_owner(b, 0, RA, 1500, true, NULL) == -EINVAL, "NULL is refused");
	CHECK(vmctx_bundle_owner(NULL, 0, RA, 1500, true, &o) == -EINVAL,
	      "a NULL bundle is refused");
	vmctx_bundle_free(b);
}

/* The answers of two calls agree in every field but the range. */
static bool same_owner(const struct vmctx_owner *a, const struct vmctx_owner *b)
{
	return a->by == b->by && a->task == b->task && a->pid == b->pid && a->tgid == b->tgid &&
	       a->kind == b->kind && a->comm == b->comm && a->log_err == b->log_err &&
	       a->disagree == b->disagree;
}

/*
 * Random tasks on three roots, threads and leaders, short and endless
 * lives; a random switch log on three CPUs with gaps; with and without a
 * window: at every time in an answer's range, the same question gets the
 * same answer, and the range holds the time asked.
 */
static void owner_ranges_hold_their_answer(void)
{
	enum { NTASKS = 60, NROOTS = 3, NCPUS = 3, NTIMES = 6000, NQ = 4000 };
	uint64_t roots[NROOTS + 2];
	int pids[NTASKS][2];
	size_t round, i, bad = 0, probes = 0, wide = 0;

	for (i = 0; i < NROOTS; i++)
		roots[i] = R + 0x2000 * i;
	roots[NROOTS] = 0;			/* none: a nested guest's */
	roots[NROOTS + 1] = R + 0x100000;	/* nobody's */
	for (round = 0; round < 6; round++) {
		struct vmctx_bundle *b = vmctx_bundle_new();
		unsigned int cpu;
		uint64_t t;

		if (round & 1)
			vmctx_bundle_set_window(b, 500, NTIMES - 500);
		for (i = 0; i < NTASKS; i++) {
			int tgid = 100 + (int)rnd(8), pid = rnd(3) ? tgid : tgid * 10 + (int)rnd(4);
			uint64_t start = 500 + rnd(NTIMES - 1000);
			uint64_t exit = rnd(3) ? start + 1 + rnd(NTIMES / 4) : VMCTX_TIME_NONE;

			pids[i][0] = pid;
			pids[i][1] = tgid;
			vmctx_bundle_add_task(b, roots[rnd(NROOTS)], pid, tgid, "t", start,
					      exit > NTIMES - 500 && (round & 1) ? NTIMES - 500 : exit);
		}
		for (cpu = 0; cpu < NCPUS; cpu++) {
			/* a run of switches and now and then a gap, apart, in time order */
			for (t = 600 + rnd(200); t < NTIMES - 600; t += 1 + rnd(150)) {
				if (!rnd(12)) {
					uint64_t end = t + rnd(100);

					vmctx_bundle_add_switch_gap(b, cpu, t, end);
					t = end + 1;
					continue;
				}
				if (!rnd(5)) {
					vmctx_bundle_add_switch(b, cpu, t, 0, 0, VMCTX_TASK_IDLE,
								"swapper");
				} else if (!rnd(5)) {
					vmctx_bundle_add_switch(b, cpu, t, 7, 7, VMCTX_TASK_KTHREAD,
								"kworker");
				} else {
					i = rnd(NTASKS);
					vmctx_bundle_add_switch(b, cpu, t, pids[i][0], pids[i][1],
								VMCTX_TASK_USER, "t");
				}
			}
		}
		CHECK(!vmctx_bundle_seal(b), "round %zu sealed", round);
		for (i = 0; i < NQ; i++) {
			VMCTX_OPTS(vmctx_owner, o);
			VMCTX_OPTS(vmctx_owner, p);
			int c = (int)rnd(NCPUS + 2) - 1;	/* -1 to NCPUS: unknown, and no log */
			uint64_t cr3 = roots[rnd(NROOTS + 2)], ns = rnd(NTIMES + 200), probe[8];
			bool user = rnd(2);
			size_t k, np = 0;

			if (vmctx_bundle_owner(b, c, cr3, ns, user, &o) ||
			    o.valid_from > ns || o.valid_until <= ns) {
				bad++;
				continue;
			}
			if (o.valid_until - o.valid_from > 1)
				wide++;
			probe[np++] = o.valid_from;
			if (o.valid_until != UINT64_MAX)
				probe[np++] = o.valid_until - 1;
			for (k = 0; k < 4; k++) {
				uint64_t hi = o.valid_until < NTIMES + 1000 ? o.valid_until : NTIMES + 1000;

				if (hi > o.valid_from)
					probe[np++] = o.valid_from + rnd(hi - o.valid_from);
			}
			for (k = 0; k < np; k++) {
				probes++;
				if (vmctx_bundle_owner(b, c, cr3, probe[k], user, &p) ||
				    !same_owner(&o, &p)) {
					if (!bad)
						fprintf(stderr, "round %zu: CPU %d cr3 %#" PRIx64
							" user %d at %" PRIu64 ": range [%" PRIu64
							", %" PRIu64 "), but at %" PRIu64
							" by %d task %d pid %d (was by %d task %d pid %d)\n",
							round, c, cr3, user, ns, o.valid_from,
							o.valid_until, probe[k], p.by, p.task, p.pid,
							o.by, o.task, o.pid);
					bad++;
				}
			}
		}
		vmctx_bundle_free(b);
	}
	CHECK(!bad, "%zu of %zu probes in an answer's range answered otherwise", bad, probes);
	CHECK(wide > NQ, "ranges wider than their time: %zu of %d", wide, 6 * NQ);
}

int main(void)
{
	lookups_need_a_sealed_bundle();
	clock_fit_finds_the_offset();
	guest_tsc_maps_to_guest_time();
	pti_pcid_variants_normalise_to_the_root();
	reused_root_resolves_by_lifetime();
	outside_the_window_nobody_owns_a_root();
	labels_tell_same_comm_processes_apart();
	user_and_kernel_ips_resolve();
	overlapping_lifetimes_resolve_as_a_scan_would();
	many_owners_resolve_as_a_scan_would();
	indexed_lookups_agree_with_a_scan();
	lookups_on_a_much_reused_root_are_logarithmic();
	kernel_modules_resolve_by_index();
	owner_follows_the_switch_log_then_the_root();
	owner_ranges_hold_their_answer();
	clock_fit_of_a_much_reused_root_stays_small();
	return check_result("test-resolve");
}
