// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The index of a sealed bundle: tasks by (normalised root, start), the
 * trees that find a root's owner at a time in O(log n), each task's label,
 * and the guest kernel's modules as disjoint segments.  bundle-seal.c
 * builds it once the records are checked and sorted; resolve.c and the
 * clock fit read it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"

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
	return b->keys[pos].root;
}

size_t bundle_root_first(const struct vmctx_bundle *b, uint64_t root)
{
	return root ? key_index_upper(&b->root_index, root - 1, UINT64_MAX) : 0;
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

/* Tasks by root, for lookups, and each task's label and maps. */
static int build_index(struct vmctx_bundle *b)
{
	uint32_t *by_root, *order, *leader;
	size_t i;
	int err;

	by_root = util_calloc_big(b->ntasks + 1, sizeof(*by_root));
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
	return 0;
}

/*
 * What a root resolves to when the time is unknown, for the positions
 * [g, e) of one root: the process that alone owned it (its leader, the
 * last in start order if several, else its first task), or -ENOENT.
 */
static int32_t untimed_owner(const struct vmctx_bundle *b, size_t g, size_t e)
{
	int32_t best = -ENOENT;
	size_t i;

	for (i = g; i < e; i++) {
		const struct vmctx_task *t = &b->tasks[b->by_root[i]];

		if (best >= 0 && b->tasks[best].tgid != t->tgid)
			return -ENOENT;
		if (best < 0 || t->pid == t->tgid)
			best = b->by_root[i];
	}
	return best;
}

/*
 * find_task's structures (see struct vmctx_bundle): a task is alive at t
 * when start <= t < exit, so over the positions of a root that started by
 * t, the first alive one and the last alive leader are the first and last
 * leaves above t in the max-trees.
 */
static int build_lookup(struct vmctx_bundle *b)
{
	size_t i, g, base = 1;

	while (base < b->ntasks)
		base <<= 1;
	struct root_key *keys;
	int err;

	key_index_free(&b->root_index);
	free(b->live_all);
	free(b->live_leader);
	free(b->untimed);
	keys = calloc(b->ntasks + 1, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < b->ntasks; i++) {
		const struct vmctx_task *t = &b->tasks[b->by_root[i]];

		keys[i].root = vmctx_cr3_normalize(t->root, b->cr3_mask);
		keys[i].start = t->start;
	}
	err = key_index_build(&b->root_index, keys, b->ntasks, sizeof(*keys), 0, 2);
	free(keys);
	if (err)
		return err;
	b->keys = (struct root_key *)b->root_index.level[0];
	b->live_all = util_calloc_big(2 * base, sizeof(*b->live_all));
	b->live_leader = util_calloc_big(2 * base, sizeof(*b->live_leader));
	b->untimed = util_calloc_big(b->ntasks + 1, sizeof(*b->untimed));
	if (!b->live_all || !b->live_leader || !b->untimed)
		return -ENOMEM;
	b->live_base = base;
	for (i = 0; i < b->ntasks; i++) {
		const struct vmctx_task *t = &b->tasks[b->by_root[i]];

		b->live_all[base + i] = t->exit;
		b->live_leader[base + i] = t->pid == t->tgid ? t->exit : 0;
	}
	for (i = base - 1; i > 0; i--) {
		b->live_all[i] = b->live_all[2 * i] > b->live_all[2 * i + 1] ?
				 b->live_all[2 * i] : b->live_all[2 * i + 1];
		b->live_leader[i] = b->live_leader[2 * i] > b->live_leader[2 * i + 1] ?
				    b->live_leader[2 * i] : b->live_leader[2 * i + 1];
	}
	for (g = 0; g < b->ntasks; g = i) {
		uint64_t root = bundle_root_at(b, g);
		int32_t owner;

		for (i = g + 1; i < b->ntasks && bundle_root_at(b, i) == root; i++)
			;
		owner = untimed_owner(b, g, i);
		while (g < i)
			b->untimed[g++] = owner;
	}
	return 0;
}

/* ---- modules as segments -------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A min-heap of module numbers: the active modules of the sweep. */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;

	for (; i && h[(i - 1) / 2] > v; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	uint32_t v = h[--*n];
	size_t i = 0, c;

	for (; (c = 2 * i + 1) < *n; i = c) {
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= v)
			break;
		h[i] = h[c];
	}
	h[i] = v;
}

static int cmp_kmod_start(const void *a, const void *b, void *arg)
{
	const struct vmctx_kmod *k = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (k[x].start != k[y].start)
		return k[x].start < k[y].start ? -1 : 1;
	return x < y ? -1 : 1;
}

/*
 * Modules may overlap, and the lowest-numbered one covering an address
 * names it.  Cut the address space at every module's start and end and
 * give each piece that module: a sweep over the starts with a heap of the
 * modules still open, O(n log n) once.
 */
static int build_kseg(struct vmctx_bundle *b)
{
	size_t n = b->nkmods, np = 0, i, j = 0, nh = 0, ns = 0;
	uint32_t *order, *heap;
	uint64_t *pts;
	int err = -ENOMEM;

	free(b->kseg_start);
	free(b->kseg_mod);
	pts = malloc((2 * n + 1) * sizeof(*pts));
	order = malloc((n + 1) * sizeof(*order));
	heap = malloc((n + 1) * sizeof(*heap));
	b->kseg_start = malloc((2 * n + 1) * sizeof(*b->kseg_start));
	b->kseg_mod = malloc((2 * n + 1) * sizeof(*b->kseg_mod));
	if (!pts || !order || !heap || !b->kseg_start || !b->kseg_mod)
		goto out;
	for (i = 0; i < n; i++) {
		order[i] = i;
		pts[np++] = b->kmods[i].start;
		pts[np++] = b->kmods[i].end;
	}
	if (n > 1)
		qsort_r(order, n, sizeof(*order), cmp_kmod_start, b->kmods);
	qsort(pts, np, sizeof(*pts), cmp_u64);
	for (i = 0; i < np; i++) {
		int32_t mod;

		if (i && pts[i] == pts[i - 1])
			continue;
		for (; j < n && b->kmods[order[j]].start <= pts[i]; j++)
			heap_push(heap, &nh, order[j]);
		while (nh && b->kmods[heap[0]].end <= pts[i])
			heap_pop(heap, &nh);
		mod = nh ? (int32_t)heap[0] : -1;
		if (ns && b->kseg_mod[ns - 1] == mod)
			continue;
		b->kseg_start[ns] = pts[i];
		b->kseg_mod[ns++] = mod;
	}
	b->nkseg = ns;
	key_index_free(&b->kseg_index);
	err = key_index_build(&b->kseg_index, b->kseg_start, ns, sizeof(*b->kseg_start), 0, 1);
out:
	free(pts);
	free(order);
	free(heap);
	return err;
}

int bundle_index(struct vmctx_bundle *b)
{
	int err = build_index(b);

	if (!err)
		err = build_lookup(b);
	if (!err)
		err = build_kseg(b);
	return err;
}
