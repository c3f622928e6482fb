// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Aggregation: sample counts keyed by scope, class, VM, vCPU, attribution
 * and symbol.  Keys hold pointers into bundles and caller strings, so a
 * key costs a few words and the table grows with distinct symbols only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"

/*
 * One multiply per word.  The words are built from the fields, not copied
 * from the key as a whole: callers have just stored those fields one by
 * one, and a wide load over several narrow stores stalls store forwarding
 * (it cost a third of a sample's time in bench-timeline).
 */
static inline uint64_t key_hash(const struct agg_key *k)
{
	uint64_t w0 = (uint64_t)k->scope | (uint64_t)k->cls << 8 |
		      (uint64_t)(uint16_t)k->sub << 16 | (uint64_t)(uint32_t)k->vm_idx << 32;
	uint64_t w1 = (uint64_t)(uint32_t)k->vcpu | (uint64_t)(uint32_t)k->by << 32;
	uint64_t h;

	h = w0 * 0x9e3779b97f4a7c15ULL ^ w1 * 0xc2b2ae3d27d4eb4fULL ^
	    k->exit * 0x165667b19e3779f9ULL ^
	    (uint64_t)(uintptr_t)k->function * 0xd6e8feb86659fd93ULL ^
	    (uint64_t)(uintptr_t)k->module * 0xff51afd7ed558ccdULL;
	/*
	 * The table indexes with the low bits: fold the high ones in, or keys
	 * that differ only in a high half (the owner in "by") cluster.
	 */
	h ^= h >> 32;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

_Static_assert(sizeof(struct agg_key) == 40, "struct agg_key must stay 5 words, no padding");

static inline struct agg_entry *slot(struct agg_entry *tab, size_t size, const struct agg_key *k)
{
	size_t i = key_hash(k) & (size - 1);

	while (tab[i].count && !agg_key_eq(&tab[i].key, k))
		i = (i + 1) & (size - 1);
	return &tab[i];
}

static int grow(struct agg_table *t)
{
	size_t size = t->size ? t->size * 2 : 1024, i;
	struct agg_entry *tab = calloc(size, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (i = 0; i < t->size; i++)
		if (t->e[i].count)
			*slot(tab, size, &t->e[i].key) = t->e[i];
	free(t->e);
	t->e = tab;
	t->size = size;
	return 0;
}

/* The entry of @k, made if new (count 0); NULL if out of memory. */
static struct agg_entry *entry(struct agg_table *t, const struct agg_key *k)
{
	struct agg_entry *e;

	/* at most half full: linear probing stays short */
	if ((t->used + 1) * 2 > t->size && grow(t))
		return NULL;
	e = slot(t->e, t->size, k);
	if (!e->count) {
		e->key = *k;
		t->used++;
	}
	return e;
}

int agg_add(struct agg_table *t, const struct agg_key *k, uint64_t n)
{
	struct agg_entry *e;

	if (!n || t->off)
		return 0;
	e = entry(t, k);
	if (!e)
		return -ENOMEM;
	e->count = util_sat_add(e->count, n);
	return 0;
}

/*
 * The hint remembers where a few of its keys were, by function and owner;
 * an entry stays where it is until the table grows, and the hint is then
 * forgotten.  A stale or shared place is caught by comparing the key.
 */
int agg_add_noting(struct agg_table *t, struct agg_hint *h, size_t i,
		   const struct agg_key *k, uint64_t n)
{
	struct agg_entry *e = entry(t, k);

	if (!e)
		return -ENOMEM;
	e->count = util_sat_add(e->count, n);
	if (h->size != t->size) {
		memset(h->at, 0, sizeof(h->at));
		h->size = t->size;
	}
	h->at[i] = e - t->e + 1;
	return 0;
}

void agg_free(struct agg_table *t)
{
	free(t->e);
	t->e = NULL;
	t->size = 0;
	t->used = 0;
}
