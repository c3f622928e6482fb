// SPDX-License-Identifier: LGPL-2.1-only
/*
 * CR3 resolution: normalisation of PTI/PCID/flag/encryption variants, task
 * lookup by lifetime when a root is reused, process labels, user and
 * kernel IP resolution, and lookups that take sealed bundles only.
 */
#include <errno.h>
#include <string.h>

#include "vmctx.h"
#include "tap.h"

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

int main(void)
{
	lookups_need_a_sealed_bundle();
	clock_fit_finds_the_offset();
	guest_tsc_maps_to_guest_time();
	pti_pcid_variants_normalise_to_the_root();
	reused_root_resolves_by_lifetime();
	labels_tell_same_comm_processes_apart();
	user_and_kernel_ips_resolve();
	return tap_result("test-resolve");
}
