// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Sealing: the bundle's whole-bundle rules.  A bundle is built (bundle.c)
 * or read (bundle-read.c) record by record, and both check each record as
 * it comes with bundle.c's predicates.  What only the whole bundle shows is
 * checked once, when it is sealed: maps in order and apart, symbols in
 * order, build-ids and module names unique, the switch log in order and
 * within the window (switch-log.c).  Sealing also sorts and prunes
 * what a builder may add in any order, and has bundle-index.c build the
 * index that resolution needs.  A sealed bundle never changes again, so the writer
 * and the lookups take it as const and check nothing.
 *
 * A file holds a sealed bundle, so the reader seals strictly: ranges that
 * the builder's bundles get sorted must come sorted already.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"

/*
 * qsort(), but only if @base is not in order already: a bundle written by
 * vmctx-agent is, and a check is linear where the sort is not.
 */
static void sort_unless_sorted(void *base, size_t n, size_t size,
			       int (*cmp)(const void *, const void *))
{
	const char *p = base;
	size_t i;

	for (i = 1; i < n; i++)
		if (cmp(p + (i - 1) * size, p + i * size) > 0)
			break;
	if (i < n)
		qsort(base, n, size, cmp);
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
			util_log(VMCTX_LOG_WARN,
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
			util_log(VMCTX_LOG_WARN,
				  "bundle: object %zu (%s): symbol %zu is out of order or overlaps the one before",
				  i, o->path, j);
			return -VMCTX_E_RANGE;
		}
	}
	if (!o->nsyms)
		return 0;
	sort_unless_sorted(o->syms, o->nsyms, sizeof(*o->syms), cmp_sym);
	for (j = 0; j < o->nsyms; j++) {
		if (n && o->syms[n - 1].start == o->syms[j].start)
			continue;	/* its name stays in the bundle's pool */
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
	key_index_free(&o->sym_index);
	if (n < SYM_INDEX_MIN)
		return 0;
	return key_index_build(&o->sym_index, o->syms, n, sizeof(*o->syms),
			       offsetof(struct vmctx_sym, start), 1);
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
			util_log(VMCTX_LOG_WARN, "bundle: kernel symbol %zu is out of order", j);
			return -VMCTX_E_RANGE;
		}
	}
	sort_unless_sorted(b->ksyms, b->nksyms, sizeof(*b->ksyms), cmp_ksym);
	key_index_free(&b->ksym_index);
	return key_index_build(&b->ksym_index, b->ksyms, b->nksyms, sizeof(*b->ksyms),
			       offsetof(struct vmctx_ksym, addr), 1);
}

/* ---- clock pairs --------------------------------------------------------- */

static int cmp_pair(const void *a, const void *b)
{
	const struct vmctx_clock_pair *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* Guest TSC and guest ns both strictly increase: the pairs map one onto the other. */
static int seal_pairs(struct vmctx_bundle *b, bool strict)
{
	size_t j;

	if (!strict && b->npairs > 1)
		qsort(b->pairs, b->npairs, sizeof(*b->pairs), cmp_pair);
	for (j = 1; j < b->npairs; j++) {
		if (b->pairs[j].tsc <= b->pairs[j - 1].tsc ||
		    b->pairs[j].ns <= b->pairs[j - 1].ns) {
			util_log(VMCTX_LOG_WARN,
				  "bundle: clock pair %zu does not follow pair %zu in both TSC and ns",
				  j, j - 1);
			return -VMCTX_E_RANGE;
		}
	}
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
	util_log(VMCTX_LOG_WARN, "bundle: %s", why);
	return -VMCTX_E_SYNTAX;
}

int bundle_seal(struct vmctx_bundle *b, bool strict)
{
	const uint64_t window[2] = { b->window_start, b->window_end };
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
		err = seal_pairs(b, strict);
	if (!err)
		err = switch_log_seal(&b->switches, strict, b->has_window ? window : NULL);
	if (!err)
		err = check_unique(b);
	if (!err)
		err = bundle_index(b);
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
