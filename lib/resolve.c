// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Resolution: a raw guest CR3 to the task that owned the root at that
 * time, and a guest IP to a symbol through the task's maps or the guest
 * kernel's symbols.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

static int cmp_root(const void *a, const void *b, void *arg)
{
	const struct vmctx_bundle *bundle = arg;
	const struct vmctx_task *x = &bundle->tasks[*(const uint32_t *)a];
	const struct vmctx_task *y = &bundle->tasks[*(const uint32_t *)b];
	uint64_t m = bundle->cr3_mask;
	uint64_t rx = vmctx_cr3_normalize(x->root, m), ry = vmctx_cr3_normalize(y->root, m);

	if (rx != ry)
		return rx < ry ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int cmp_map(const void *a, const void *b)
{
	const struct vmctx_map *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* By start, and the longest first so that it wins over aliases. */
static int cmp_sym(const void *a, const void *b)
{
	const struct vmctx_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct vmctx_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * ELF symbol tables hold aliases, zero-sized labels and overlaps.  Keep one
 * symbol per address, give zero-sized ones the room up to the next symbol,
 * and clip overlaps, so that lookups are one binary search.
 */
static void normalise_syms(struct vmctx_object *o)
{
	size_t i, n = 0;

	if (!o->nsyms)
		return;
	qsort(o->syms, o->nsyms, sizeof(*o->syms), cmp_sym);
	for (i = 0; i < o->nsyms; i++) {
		if (n && o->syms[n - 1].start == o->syms[i].start) {
			free(o->syms[i].name);
			continue;
		}
		o->syms[n++] = o->syms[i];
	}
	o->nsyms = n;
	for (i = 0; i < n; i++) {
		struct vmctx_sym *s = &o->syms[i];
		uint64_t next = i + 1 < n ? o->syms[i + 1].start : UINT64_MAX;

		if (s->end <= s->start)
			s->end = i + 1 < n ? next : s->start < UINT64_MAX ? s->start + 1 : UINT64_MAX;
		if (s->end > next)
			s->end = next;
	}
}

static int check_maps(struct vmctx_task *t)
{
	size_t i;

	if (t->nmaps > 1)
		qsort(t->maps, t->nmaps, sizeof(*t->maps), cmp_map);
	for (i = 0; i < t->nmaps; i++) {
		if (t->maps[i].end <= t->maps[i].start)
			return -VMCTX_E_RANGE;
		if (i && t->maps[i].start < t->maps[i - 1].end)
			return -VMCTX_E_RANGE;
	}
	return 0;
}

static int cmp_process(const void *a, const void *b, void *arg)
{
	const struct vmctx_bundle *bundle = arg;
	const struct vmctx_task *x = &bundle->tasks[*(const uint32_t *)a];
	const struct vmctx_task *y = &bundle->tasks[*(const uint32_t *)b];
	uint64_t rx = vmctx_cr3_normalize(x->root, bundle->cr3_mask);
	uint64_t ry = vmctx_cr3_normalize(y->root, bundle->cr3_mask);

	if (rx != ry)
		return rx < ry ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	/* the leader (pid == tgid) first */
	if ((x->pid == x->tgid) != (y->pid == y->tgid))
		return x->pid == x->tgid ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/*
 * leader[i]: the task that stands for task i's process, the one with
 * pid == tgid sharing its root and tgid, or i itself.  O(n log n): a hostile
 * bundle may hold millions of tasks.
 */
static void find_leaders(const struct vmctx_bundle *b, uint32_t *order, uint32_t *leader)
{
	size_t i, j;

	for (i = 0; i < b->ntasks; i++)
		order[i] = i;
	if (b->ntasks > 1)
		qsort_r(order, b->ntasks, sizeof(*order), cmp_process, (void *)b);
	for (i = 0; i < b->ntasks; i = j) {
		const struct vmctx_task *first = &b->tasks[order[i]];
		uint64_t root = vmctx_cr3_normalize(first->root, b->cr3_mask);

		for (j = i; j < b->ntasks; j++) {
			const struct vmctx_task *t = &b->tasks[order[j]];

			if (t->tgid != first->tgid ||
			    vmctx_cr3_normalize(t->root, b->cr3_mask) != root)
				break;
			leader[order[j]] = first->pid == first->tgid ? order[i] : order[j];
		}
	}
}

static int cmp_leader(const void *a, const void *b, void *arg)
{
	const struct vmctx_bundle *bundle = arg;
	const struct vmctx_task *x = &bundle->tasks[*(const uint32_t *)a];
	const struct vmctx_task *y = &bundle->tasks[*(const uint32_t *)b];
	int c = strcmp(x->comm, y->comm);

	if (c)
		return c;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* "comm" for a unique comm, else "comm(N)" numbered in start order. */
static int make_labels(struct vmctx_bundle *b, uint32_t *order, uint32_t *leader)
{
	size_t i, j, n = 0;

	find_leaders(b, order, leader);
	for (i = 0; i < b->ntasks; i++)
		if (leader[i] == i)
			order[n++] = i;
	if (n > 1)
		qsort_r(order, n, sizeof(*order), cmp_leader, b);
	for (i = 0; i < n; i = j) {
		size_t k;

		for (j = i + 1; j < n; j++)
			if (strcmp(b->tasks[order[i]].comm, b->tasks[order[j]].comm))
				break;
		for (k = i; k < j; k++) {
			struct vmctx_task *t = &b->tasks[order[k]];

			free(t->label);
			if (j - i == 1)
				t->label = strdup(t->comm);
			else if (asprintf(&t->label, "%s(%zu)", t->comm, k - i + 1) < 0)
				t->label = NULL;
			if (!t->label)
				return -ENOMEM;
		}
	}
	for (i = 0; i < b->ntasks; i++) {
		size_t l = leader[i];
		struct vmctx_task *t = &b->tasks[i];

		if (l != i) {
			free(t->label);
			t->label = strdup(b->tasks[l].label);
			if (!t->label)
				return -ENOMEM;
		}
		t->maps_from = t->nmaps || !b->tasks[l].nmaps ? (int)i : (int)l;
	}
	return 0;
}

int vmctx_bundle_index(struct vmctx_bundle *b)
{
	uint32_t *by_root, *order, *leader;
	size_t i;
	int err;

	if (!b)
		return -EINVAL;
	if (b->indexed)
		return 0;
	for (i = 0; i < b->ntasks; i++) {
		err = check_maps(&b->tasks[i]);
		if (err) {
			vmctx_log(VMCTX_LOG_WARN, "task %zu (pid %d): overlapping or empty maps",
				  i, b->tasks[i].pid);
			return err;
		}
	}
	for (i = 0; i < b->nobjects; i++)
		normalise_syms(&b->objects[i]);
	if (b->nksyms > 1)
		qsort(b->ksyms, b->nksyms, sizeof(*b->ksyms), cmp_ksym);

	by_root = calloc(b->ntasks + 1, sizeof(*by_root));
	order = calloc(b->ntasks + 1, sizeof(*order));
	leader = calloc(b->ntasks + 1, sizeof(*leader));
	if (!by_root || !order || !leader) {
		free(by_root);
		free(order);
		free(leader);
		return -ENOMEM;
	}
	for (i = 0; i < b->ntasks; i++)
		by_root[i] = i;
	if (b->ntasks > 1)
		qsort_r(by_root, b->ntasks, sizeof(*by_root), cmp_root, b);
	err = make_labels(b, order, leader);
	free(order);
	free(leader);
	if (err) {
		free(by_root);
		return err;
	}
	free(b->by_root);
	b->by_root = by_root;
	b->indexed = true;
	return 0;
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

int vmctx_bundle_find_task(struct vmctx_bundle *b, uint64_t cr3, uint64_t guest_ns)
{
	uint64_t root;
	size_t lo;
	int best = -ENOENT, err;

	err = vmctx_bundle_index(b);
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

const char *vmctx_bundle_task_label(struct vmctx_bundle *b, int task)
{
	int err = vmctx_bundle_index(b);

	if (err) {
		errno = err < 0 ? -err : err;
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

int vmctx_bundle_resolve_user(struct vmctx_bundle *b, int task, uint64_t ip, const char **sym,
			      const char **dso)
{
	const struct vmctx_task *t;
	const struct vmctx_map *m;
	size_t lo;
	int err;

	err = vmctx_bundle_index(b);
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

int vmctx_bundle_resolve_kernel(struct vmctx_bundle *b, uint64_t ip, const char **sym,
				const char **module)
{
	const struct vmctx_kmod *km = NULL;
	const struct vmctx_ksym *ks = NULL;
	size_t lo;
	int err;

	err = vmctx_bundle_index(b);
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
