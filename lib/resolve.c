// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Resolution: a raw guest CR3 to the task that owned the root at that
 * time, and a guest IP to a symbol through the task's maps or the guest
 * kernel's symbols.  Lookups read sealed bundles only: bundle-seal.c has
 * sorted them and built the index by root.
 */
#include <errno.h>
#include <string.h>

#include "vmctx-local.h"

/*
 * Bits 51:13 hold the root's frame (bit 12 is the PTI user half, 11:0 are
 * PCID or PWT/PCD flags, 63 is the no-flush hint, 62:52 are reserved).
 */
#define CR3_ROOT_MASK	0x000fffffffffe000ULL

uint64_t vmctx_cr3_normalize(uint64_t cr3, uint64_t ignore_mask)
{
	return cr3 & CR3_ROOT_MASK & ~ignore_mask;
}

uint64_t bundle_root_at(const struct vmctx_bundle *b, size_t pos)
{
	return vmctx_cr3_normalize(b->tasks[b->by_root[pos]].root, b->cr3_mask);
}

size_t bundle_root_first(const struct vmctx_bundle *b, uint64_t root)
{
	size_t lo = 0, hi = b->ntasks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bundle_root_at(b, mid) < root)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int vmctx_bundle_find_task(const struct vmctx_bundle *b, uint64_t cr3, uint64_t guest_ns)
{
	uint64_t root;
	size_t lo;
	int best = -ENOENT, err;

	err = bundle_check_sealed(b);
	if (err)
		return err;
	root = vmctx_cr3_normalize(cr3, b->cr3_mask);
	for (lo = bundle_root_first(b, root); lo < b->ntasks; lo++) {
		const struct vmctx_task *t = &b->tasks[b->by_root[lo]];

		if (bundle_root_at(b, lo) != root)
			break;
		if (guest_ns == VMCTX_TIME_NONE) {
			/* Time unknown: only a root that one process ever owned resolves. */
			if (best >= 0 && b->tasks[best].tgid != t->tgid)
				return -ENOENT;
			if (best < 0 || t->pid == t->tgid)
				best = b->by_root[lo];
			continue;
		}
		if (t->start > guest_ns)
			break;
		if (t->exit != VMCTX_TIME_NONE && t->exit <= guest_ns)
			continue;
		/* Threads share the root; prefer the process leader. */
		if (best < 0 || t->pid == t->tgid)
			best = b->by_root[lo];
	}
	return best;
}

const char *vmctx_bundle_task_label(const struct vmctx_bundle *b, int task)
{
	int err = bundle_check_sealed(b);

	if (err) {
		errno = -err;
		return NULL;
	}
	if (task < 0 || (size_t)task >= b->ntasks) {
		errno = ENOENT;
		return NULL;
	}
	return b->tasks[task].label;
}

/*
 * Number of elements of the sorted array @base (@n elements of @size bytes)
 * whose uint64_t key at offset @off is <= @key: the index after the last
 * candidate covering @key.
 */
static size_t upper_bound(const void *base, size_t n, size_t size, size_t off, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * size + off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct vmctx_sym *find_sym(const struct vmctx_sym *syms, size_t n, uint64_t addr)
{
	size_t lo = upper_bound(syms, n, sizeof(*syms), offsetof(struct vmctx_sym, start), addr);

	if (!lo || addr >= syms[lo - 1].end)
		return NULL;
	return &syms[lo - 1];
}

int vmctx_bundle_resolve_user(const struct vmctx_bundle *b, int task, uint64_t ip,
			      const char **sym, const char **dso)
{
	const struct vmctx_task *t;
	const struct vmctx_map *m;
	size_t lo;
	int err;

	err = bundle_check_sealed(b);
	if (err)
		return err;
	if (task < 0 || (size_t)task >= b->ntasks)
		return -ENOENT;
	t = &b->tasks[b->tasks[task].maps_from];
	lo = upper_bound(t->maps, t->nmaps, sizeof(*t->maps), offsetof(struct vmctx_map, start), ip);
	if (!lo || ip >= t->maps[lo - 1].end)
		return -ENOENT;
	m = &t->maps[lo - 1];
	if (dso)
		*dso = m->base;
	if (sym) {
		const struct vmctx_sym *s = NULL;

		if (m->object >= 0 && (size_t)m->object < b->nobjects) {
			const struct vmctx_object *o = &b->objects[m->object];

			s = find_sym(o->syms, o->nsyms, ip - m->bias);
		}
		*sym = s ? s->name : NULL;
	}
	return 0;
}

int vmctx_bundle_resolve_kernel(const struct vmctx_bundle *b, uint64_t ip, const char **sym,
				const char **module)
{
	const struct vmctx_kmod *km = NULL;
	const struct vmctx_ksym *ks = NULL;
	size_t lo;
	int err;

	err = bundle_check_sealed(b);
	if (err)
		return err;
	/* Few modules, and ksyms refer to them by index: a scan keeps both simple. */
	for (lo = 0; lo < b->nkmods; lo++) {
		if (ip >= b->kmods[lo].start && ip < b->kmods[lo].end) {
			km = &b->kmods[lo];
			break;
		}
	}

	lo = upper_bound(b->ksyms, b->nksyms, sizeof(*b->ksyms), offsetof(struct vmctx_ksym, addr),
			 ip);
	if (lo)
		ks = &b->ksyms[lo - 1];
	/* A symbol of another module, or of vmlinux below a module, does not cover ip. */
	if (ks && km && (ks->module < 0 || &b->kmods[ks->module] != km))
		ks = NULL;
	if (ks && !km && ks->module >= 0)
		ks = NULL;
	if (sym)
		*sym = ks ? ks->name : NULL;
	if (module)
		*module = km ? km->name : "vmlinux";
	return 0;
}

int vmctx_bundle_guest_ns(const struct vmctx_bundle *b, uint64_t guest_tsc, uint64_t *ns)
{
	__int128 d;

	if (!b || !ns)
		return -EINVAL;
	if (!b->tsc_khz)
		return -ENODATA;
	/* 1 kHz of TSC is 1e6 ns per 1000 ticks: ns = ticks * 1e6 / kHz */
	d = ((__int128)guest_tsc - (__int128)b->clock_tsc) * 1000000 / b->tsc_khz;
	d += b->clock_ns;
	if (d < 0 || d >= (__int128)VMCTX_TIME_NONE)
		return -ERANGE;
	*ns = (uint64_t)d;
	return 0;
}
