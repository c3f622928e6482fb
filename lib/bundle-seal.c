// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Sealing: the bundle's rules, in one place.  A bundle is built (bundle.c)
 * or read (bundle-read.c) record by record, and both check each record as
 * it comes with the predicates here.  What only the whole bundle shows is
 * checked once, when it is sealed: maps in order and apart, symbols in
 * order, build-ids and module names unique.  Sealing also sorts and prunes
 * what a builder may add in any order, and builds the index that
 * resolution needs.  A sealed bundle never changes again, so the writer
 * and the lookups take it as const and check nothing.
 *
 * A file holds a sealed bundle, so the reader seals strictly: ranges that
 * the builder's bundles get sorted must come sorted already.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmctx-local.h"

bool bundle_build_id_valid(const char *id)
{
	size_t n;

	for (n = 0; id[n]; n++) {
		if (n >= BUNDLE_MAX_BUILD_ID)
			return false;
		if (!((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f')))
			return false;
	}
	return n >= 2 && !(n & 1);
}

bool bundle_lifetime_valid(uint64_t start, uint64_t exit)
{
	return exit == VMCTX_TIME_NONE || exit >= start;
}

bool bundle_extent_valid(uint64_t start, uint64_t size)
{
	return size <= UINT64_MAX - start;
}

bool bundle_map_valid(uint64_t start, uint64_t end)
{
	return start < end;
}

int bundle_check_sealed(const struct vmctx_bundle *b)
{
	if (!b)
		return -EINVAL;
	return b->sealed ? 0 : -VMCTX_E_UNSEALED;
}

/* ---- ranges ------------------------------------------------------------- */

static int cmp_map(const void *a, const void *b)
{
	const struct vmctx_map *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* A task's maps (none empty): sorted (strict: already) and apart. */
static int seal_maps(struct vmctx_task *t, size_t i, bool strict)
{
	size_t j;

	if (!strict && t->nmaps > 1)
		qsort(t->maps, t->nmaps, sizeof(*t->maps), cmp_map);
	for (j = 1; j < t->nmaps; j++) {
		if (t->maps[j].start < t->maps[j - 1].end) {
			vmctx_log(VMCTX_LOG_WARN,
				  "bundle: task %zu (pid %d): map %zu is out of order or overlaps the one before",
				  i, t->pid, j);
			return -VMCTX_E_RANGE;
		}
	}
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

/*
 * ELF symbol tables hold aliases, zero-sized labels and overlaps.  Keep one
 * symbol per address, give zero-sized ones the room up to the next symbol,
 * and clip overlaps, so that lookups are one binary search.  Strict: the
 * symbols must be sorted and apart already (zero-sized ones may share an
 * address with the next).
 */
static int seal_syms(struct vmctx_bundle *b, struct vmctx_object *o, size_t i, bool strict)
{
	size_t j, n = 0;

	for (j = 1; strict && j < o->nsyms; j++) {
		if (o->syms[j].start < o->syms[j - 1].end) {
			vmctx_log(VMCTX_LOG_WARN,
				  "bundle: object %zu (%s): symbol %zu is out of order or overlaps the one before",
				  i, o->path, j);
			return -VMCTX_E_RANGE;
		}
	}
	if (!o->nsyms)
		return 0;
	qsort(o->syms, o->nsyms, sizeof(*o->syms), cmp_sym);
	for (j = 0; j < o->nsyms; j++) {
		if (n && o->syms[n - 1].start == o->syms[j].start) {
			free(o->syms[j].name);
			continue;
		}
		o->syms[n++] = o->syms[j];
	}
	b->syms_total -= o->nsyms - n;
	o->nsyms = n;
	for (j = 0; j < n; j++) {
		struct vmctx_sym *s = &o->syms[j];
		uint64_t next = j + 1 < n ? o->syms[j + 1].start : UINT64_MAX;

		if (s->end <= s->start)
			s->end = j + 1 < n ? next : s->start < UINT64_MAX ? s->start + 1 : UINT64_MAX;
		if (s->end > next)
			s->end = next;
	}
	return 0;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct vmctx_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int seal_ksyms(struct vmctx_bundle *b, bool strict)
{
	size_t j;

	for (j = 1; strict && j < b->nksyms; j++) {
		if (b->ksyms[j].addr < b->ksyms[j - 1].addr) {
			vmctx_log(VMCTX_LOG_WARN, "bundle: kernel symbol %zu is out of order", j);
			return -VMCTX_E_RANGE;
		}
	}
	if (b->nksyms > 1)
		qsort(b->ksyms, b->nksyms, sizeof(*b->ksyms), cmp_ksym);
	return 0;
}

/* ---- names that must be unique -------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* True if two of the @n strings are equal. */
static bool has_dup(char **v, size_t n)
{
	size_t i;

	qsort(v, n, sizeof(*v), cmp_str);
	for (i = 1; i < n; i++)
		if (!strcmp(v[i - 1], v[i]))
			return true;
	return false;
}

/* Build-ids and module names name one record each: the builder looks them up. */
static int check_unique(const struct vmctx_bundle *b)
{
	size_t i, n = b->nobjects > b->nkmods ? b->nobjects : b->nkmods;
	const char *why = NULL;
	char **v;

	if (!n)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0, n = 0; i < b->nobjects; i++)
		if (b->objects[i].build_id)
			v[n++] = b->objects[i].build_id;
	if (has_dup(v, n))
		why = "two objects share a build-id";
	for (i = 0; !why && i < b->nkmods; i++)
		v[i] = b->kmods[i].name;
	if (!why && has_dup(v, b->nkmods))
		why = "two modules share a name";
	free(v);
	if (!why)
		return 0;
	vmctx_log(VMCTX_LOG_WARN, "bundle: %s", why);
	return -VMCTX_E_SYNTAX;
}

/* ---- the index ------------------------------------------------------------ */

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
	b->by_root = by_root;
	return 0;
}

int bundle_seal(struct vmctx_bundle *b, bool strict)
{
	size_t i;
	int err;

	for (i = 0; i < b->ntasks; i++) {
		err = seal_maps(&b->tasks[i], i, strict);
		if (err)
			return err;
	}
	for (i = 0; i < b->nobjects; i++) {
		err = seal_syms(b, &b->objects[i], i, strict);
		if (err)
			return err;
	}
	err = seal_ksyms(b, strict);
	if (!err)
		err = check_unique(b);
	if (!err)
		err = build_index(b);
	if (err)
		return err;
	b->sealed = true;
	return 0;
}

int vmctx_bundle_seal(struct vmctx_bundle *b)
{
	if (!b)
		return -EINVAL;
	if (b->sealed)
		return 0;
	return bundle_seal(b, false);
}
