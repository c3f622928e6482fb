// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Clock fit: find the offset between host time and a guest's clock from
 * the samples themselves.  A sample whose root only one process ever owned
 * must fall inside that process's lifetime, so each such process bounds the
 * offset: guest = host + offset puts its first sample after its start and
 * its last before its exit.  A reused root's samples agree with any of its
 * owners' lifetimes.  The offset that satisfies the most samples wins.
 * A task's samples are kept as a few runs split at gaps, so that samples
 * of an owner the bundle never saw (a process gone before the agent
 * started) form a run of their own and are outvoted.  Memory is 4 bytes
 * per task and O(runs) besides: the sweep never holds every owner's edge.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>

#include "vmctx-local.h"

/*
 * A task's samples as runs separated by gaps: a root that served an
 * unknown earlier process (one the bundle never saw) shows up as a run of
 * its own, whose constraint is outvoted instead of widening the task's.
 */
#define RUNS_PER_TASK	8
#define RUN_GAP_NS	100000000ULL	/* 100 ms */

struct run {
	uint64_t first, last;	/* host times */
	uint64_t n;
};

struct span {
	struct run runs[RUNS_PER_TASK];	/* sorted by time */
	uint32_t nruns;
	uint32_t pos;		/* the root's first position in by_root */
};

struct vmctx_clock_fit {
	const struct vmctx_bundle *b;	/* sealed: its index never changes */
	uint32_t *span_of;	/* by by_root position: index + 1 into spans, or 0 */
	struct span *spans;	/* of the sampled roots only */
	size_t nspans, spans_cap;
	uint64_t total;		/* samples offered */
	uint64_t used;		/* samples of unambiguous roots */
};

/* Put @t into @sp: extend a run within the gap, or start one (merging the closest two when full). */
static void span_add(struct span *sp, uint64_t t)
{
	uint32_t i, best = 0;
	uint64_t gap = UINT64_MAX;

	for (i = 0; i < sp->nruns; i++) {
		struct run *r = &sp->runs[i];

		if (t + RUN_GAP_NS >= r->first && t <= r->last + RUN_GAP_NS) {
			if (t < r->first)
				r->first = t;
			if (t > r->last)
				r->last = t;
			r->n++;
			return;
		}
	}
	if (sp->nruns == RUNS_PER_TASK) {
		for (i = 0; i + 1 < sp->nruns; i++) {
			if (sp->runs[i + 1].first - sp->runs[i].last < gap) {
				gap = sp->runs[i + 1].first - sp->runs[i].last;
				best = i;
			}
		}
		sp->runs[best].last = sp->runs[best + 1].last;
		sp->runs[best].n += sp->runs[best + 1].n;
		for (i = best + 1; i + 1 < sp->nruns; i++)
			sp->runs[i] = sp->runs[i + 1];
		sp->nruns--;
	}
	for (i = sp->nruns; i > 0 && sp->runs[i - 1].first > t; i--)
		sp->runs[i] = sp->runs[i - 1];
	sp->runs[i].first = t;
	sp->runs[i].last = t;
	sp->runs[i].n = 1;
	sp->nruns++;
}

struct vmctx_clock_fit *vmctx_clock_fit_new(const struct vmctx_bundle *b)
{
	struct vmctx_clock_fit *f;
	int err;

	err = bundle_check_sealed(b);
	if (err) {
		errno = -err;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->span_of = calloc(b->ntasks + 1, sizeof(*f->span_of));
	if (!f->span_of) {
		free(f);
		return NULL;
	}
	f->b = b;
	return f;
}

void vmctx_clock_fit_free(struct vmctx_clock_fit *f)
{
	if (!f)
		return;
	free(f->span_of);
	free(f->spans);
	free(f);
}

/* Position in by_root of the first owner of @cr3's root, or -1. */
static ssize_t root_pos(const struct vmctx_bundle *b, uint64_t cr3)
{
	uint64_t root = vmctx_cr3_normalize(cr3, b->cr3_mask);
	size_t pos = bundle_root_first(b, root);

	return pos < b->ntasks && bundle_root_at(b, pos) == root ? (ssize_t)pos : -1;
}

int vmctx_clock_fit_add(struct vmctx_clock_fit *f, uint64_t host_ns, uint64_t cr3)
{
	ssize_t pos;
	int err;

	if (!f)
		return -EINVAL;
	f->total++;
	pos = root_pos(f->b, cr3);
	if (pos < 0)
		return 0;
	/* A span per sampled root, not per task: a bundle may hold millions. */
	if (!f->span_of[pos]) {
		err = vmctx_grow((void **)&f->spans, &f->spans_cap, f->nspans + 1,
				 sizeof(*f->spans));
		if (err)
			return err;
		f->spans[f->nspans].nruns = 0;
		f->spans[f->nspans].pos = pos;
		f->span_of[pos] = ++f->nspans;
	}
	span_add(&f->spans[f->span_of[pos] - 1], host_ns);
	f->used++;
	return 0;
}

/*
 * One run's edges, produced in order: the root's owners' lifetimes, each
 * shifted by the run's span (offsets in [start - first, exit - last)
 * agree), merged where they touch.  The owners come sorted by start, so
 * the intervals do too, and the sweep merges the runs' streams with a heap
 * instead of holding every edge: a root may have had a million owners.
 */
struct cursor {
	const struct run *r;
	size_t j, to;		/* the next owner's position; the root's end in by_root */
	__int128 at;		/* the current edge */
	int64_t w;		/* > 0: @r->n samples start agreeing at @at; < 0: stop */
	__int128 hi;		/* the open interval's end, once its start is out */
};

#define INF	((__int128)1 << 100)

/* Step @c to its next edge; false when it has none left. */
static bool cursor_next(const struct vmctx_bundle *b, struct cursor *c)
{
	__int128 lo = 0, hi = 0;
	bool open = false;

	if (c->w > 0) {
		c->at = c->hi;
		c->w = -(int64_t)c->r->n;
		return true;
	}
	for (; c->j < c->to; c->j++) {
		const struct vmctx_task *t = &b->tasks[b->by_root[c->j]];
		__int128 at = (__int128)t->start - c->r->first;
		__int128 end = t->exit == VMCTX_TIME_NONE ? INF : (__int128)t->exit - c->r->last;

		if (at >= end)
			continue;
		if (open && at > hi)
			break;
		if (!open)
			lo = at;
		if (!open || end > hi)
			hi = end;
		open = true;
	}
	if (!open)
		return false;
	c->at = lo;
	c->hi = hi;
	c->w = c->r->n;
	return true;
}

/* Edges by offset; closing before opening at the same point: intervals are half-open. */
static bool cursor_before(const struct cursor *x, const struct cursor *y)
{
	if (x->at != y->at)
		return x->at < y->at;
	return x->w < 0 && y->w > 0;
}

static void heap_down(struct cursor **h, size_t n, size_t i)
{
	struct cursor *v = h[i];
	size_t c;

	for (; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && cursor_before(h[c + 1], h[c]))
			c++;
		if (!cursor_before(h[c], v))
			break;
		h[i] = h[c];
	}
	h[i] = v;
}

int vmctx_clock_fit_offset(const struct vmctx_clock_fit *f, int64_t *offset, uint64_t *agree,
			   uint64_t *used)
{
	__int128 best_lo = 0, best_hi = 0;
	struct cursor *cur, **heap;
	size_t i, n = 0, nruns = 0;
	int64_t w = 0, best = 0;

	if (!f || !offset)
		return -EINVAL;
	for (i = 0; i < f->nspans; i++)
		nruns += f->spans[i].nruns;
	cur = calloc(nruns + 1, sizeof(*cur));
	heap = calloc(nruns + 1, sizeof(*heap));
	if (!cur || !heap) {
		free(cur);
		free(heap);
		return -ENOMEM;
	}
	for (i = 0; i < f->nspans; i++) {
		const struct span *sp = &f->spans[i];
		size_t to = bundle_root_first(f->b, bundle_root_at(f->b, sp->pos) + 1);
		uint32_t k;

		/* A run belongs to one of the root's owners: it agrees with their union. */
		for (k = 0; k < sp->nruns; k++) {
			struct cursor *c = &cur[n];

			c->r = &sp->runs[k];
			c->j = sp->pos;
			c->to = to;
			if (cursor_next(f->b, c))
				heap[n++] = c;
		}
	}
	if (!n) {
		free(cur);
		free(heap);
		return -ENODATA;
	}
	for (i = n / 2; i-- > 0;)
		heap_down(heap, n, i);
	while (n) {
		struct cursor *c = heap[0];
		bool better = false;

		w += c->w;
		if (w > best) {
			best = w;
			best_lo = c->at;
			better = true;
		}
		if (!cursor_next(f->b, c))
			heap[0] = heap[--n];
		if (n)
			heap_down(heap, n, 0);
		/* a new best span ends at the next edge */
		if (better)
			best_hi = n ? heap[0]->at : INF;
	}
	free(cur);
	free(heap);
	/* the middle of the best span; an open span takes its closed end */
	if (best_hi < INF)
		best_lo += (best_hi - best_lo) / 2;
	if (best_lo > INT64_MAX || best_lo <= INT64_MIN)
		return -ERANGE;
	*offset = (int64_t)best_lo;
	if (agree)
		*agree = best;
	if (used)
		*used = f->used;
	return 0;
}
