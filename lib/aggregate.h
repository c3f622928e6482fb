/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * Aggregation (aggregate.c): sample counts by key, in a table the session
 * owns.  The hinted add is inline: the timeline counts every sample.
 */
#ifndef VMCTX_AGGREGATE_H
#define VMCTX_AGGREGATE_H

#include <stdint.h>
#include <stddef.h>

#include "util.h"

/* Where a vCPU's latest rows are in the session's table (aggregate.c). */
#define AGG_HINTS	8
struct agg_hint {
	size_t size;			/* the table's size when noted */
	uint32_t at[AGG_HINTS];		/* entry index + 1, 0 if none */
};

/*
 * Aggregation scopes: a vCPU's virtual stream, or the physical CPUs.  The
 * physical view's rows of guest code (AGG_HOST, VMCTX_CLASS_VM) are not
 * stored: they are the vCPU rows of guest code, summed (report.c).
 */
enum agg_scope {
	AGG_VCPU,
	AGG_HOST,
	AGG_STEAL_EXIT,
};

struct agg_key {
	uint8_t scope;
	uint8_t cls;			/* enum vmctx_class */
	int16_t sub;			/* AGG_HOST guest rows: guest OS or USER;
					   AGG_STEAL_EXIT: the vCPU's ISA */
	int32_t vm_idx;			/* index into session->vms, -1 for host work */
	int32_t vcpu;			/* vCPU id, -1 in the host scope */
	int32_t by;			/* steal: owner that ran instead; guest: task */
	uint64_t exit;			/* AGG_STEAL_EXIT: exit reason */
	const char *function;
	const char *module;
};

struct agg_entry {
	struct agg_key key;
	uint64_t count;			/* 0: empty slot */
};

/*
 * The counts, by key: open addressing, at most half full.  A table @off
 * (VMCTX_SESSION_NO_TABLE) counts nothing and stays empty.
 */
struct agg_table {
	struct agg_entry *e;
	size_t size, used;
	bool off;
};

__hidden int agg_add(struct agg_table *t, const struct agg_key *key, uint64_t n);
__hidden void agg_free(struct agg_table *t);

/*
 * Field by field: callers have just stored the fields one by one, and a
 * wide load over several narrow stores stalls store forwarding (it cost a
 * third of a sample's time in bench-timeline).
 */
static inline bool agg_key_eq(const struct agg_key *a, const struct agg_key *b)
{
	return a->function == b->function && a->vm_idx == b->vm_idx &&
	       a->vcpu == b->vcpu && a->by == b->by && a->scope == b->scope &&
	       a->cls == b->cls && a->sub == b->sub && a->exit == b->exit &&
	       a->module == b->module;
}

/* The place in a hint that @key uses: by function and owner. */
static inline size_t agg_hint_slot(const struct agg_key *k)
{
	return ((uintptr_t)k->function >> 4 ^ (uint32_t)k->by ^ k->cls) % AGG_HINTS;
}

/* agg_add_hinted() when @h's place @i does not hold @key: count it, and note where. */
__hidden int agg_add_noting(struct agg_table *t, struct agg_hint *h, size_t i,
			    const struct agg_key *key, uint64_t n);

/*
 * agg_add() that first looks where @h says @key was: a vCPU's rows recur,
 * and a row found there costs no hash.  Inline: a call for every sample.
 */
static inline int agg_add_hinted(struct agg_table *t, struct agg_hint *h,
				 const struct agg_key *k, uint64_t n)
{
	size_t i = agg_hint_slot(k);

	if (!n || t->off)
		return 0;
	if (h->size == t->size && h->at[i] && agg_key_eq(&t->e[h->at[i] - 1].key, k)) {
		t->e[h->at[i] - 1].count = util_sat_add(t->e[h->at[i] - 1].count, n);
		return 0;
	}
	return agg_add_noting(t, h, i, k, n);
}

#endif /* VMCTX_AGGREGATE_H */
