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
#include <string.h>
#include <sys/types.h>

#include "bundle.h"
#include "clock.h"

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
		err = util_grow((void **)&f->spans, &f->spans_cap, f->nspans + 1,
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
	struct run r;		/* the run, its times on the fitted rate */
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
		c->w = -(int64_t)c->r.n;
		return true;
	}
	for (; c->j < c->to; c->j++) {
		const struct vmctx_task *t = &b->tasks[b->by_root[c->j]];
		__int128 at = (__int128)t->start - c->r.first;
		__int128 end = t->exit == VMCTX_TIME_NONE ? INF : (__int128)t->exit - c->r.last;

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
	c->w = c->r.n;
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

/*
 * The runs whose middle lies in [@lo, @hi), their times stretched by
 * @rate_ppb about @ref: guest = host' + offset, host' = host + (host - ref) * rate.
 */
struct sweep {
	uint64_t lo, hi, ref;
	int64_t rate_ppb;
	/* out */
	__int128 offset;
	uint64_t agree;
	uint64_t weight;	/* samples in the runs taken */
	__int128 mid;		/* their sample-weighted middle host time */
};

static uint64_t stretch(const struct sweep *sw, uint64_t t)
{
	__int128 v = (__int128)t + ((__int128)t - sw->ref) * sw->rate_ppb / 1000000000;

	return v < 0 ? 0 : v > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

/* Fill @cur and @heap with the runs @sw takes; their number. */
static size_t sweep_start(const struct vmctx_clock_fit *f, struct sweep *sw, struct cursor *cur,
			  struct cursor **heap)
{
	__int128 wsum = 0;
	size_t i, n = 0;

	sw->weight = 0;
	for (i = 0; i < f->nspans; i++) {
		const struct span *sp = &f->spans[i];
		size_t to = bundle_root_first(f->b, bundle_root_at(f->b, sp->pos) + 1);
		uint32_t k;

		/* A run belongs to one of the root's owners: it agrees with their union. */
		for (k = 0; k < sp->nruns; k++) {
			const struct run *r = &sp->runs[k];
			uint64_t mid = r->first + (r->last - r->first) / 2;
			struct cursor *c = &cur[n];

			if (mid < sw->lo || mid >= sw->hi)
				continue;
			sw->weight += r->n;
			wsum += (__int128)mid * r->n;
			c->r.first = stretch(sw, r->first);
			c->r.last = stretch(sw, r->last);
			c->r.n = r->n;
			c->j = sp->pos;
			c->to = to;
			if (cursor_next(f->b, c))
				heap[n++] = c;
		}
	}
	sw->mid = sw->weight ? wsum / sw->weight : 0;
	return n;
}

/* The offset the most of @sw's runs agree with. */
static int sweep(const struct vmctx_clock_fit *f, struct sweep *sw)
{
	__int128 best_lo = 0, best_hi = 0;
	struct cursor *cur, **heap;
	size_t i, n = 0, nruns = 0;
	int64_t w = 0, best = 0;

	for (i = 0; i < f->nspans; i++)
		nruns += f->spans[i].nruns;
	cur = calloc(nruns + 1, sizeof(*cur));
	heap = calloc(nruns + 1, sizeof(*heap));
	if (!cur || !heap) {
		free(cur);
		free(heap);
		return -ENOMEM;
	}
	n = sweep_start(f, sw, cur, heap);
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
	sw->offset = best_lo;
	sw->agree = best;
	return 0;
}

int vmctx_clock_fit_offset(const struct vmctx_clock_fit *f, int64_t *offset, uint64_t *agree,
			   uint64_t *used)
{
	struct sweep sw = { .hi = UINT64_MAX };
	int err;

	if (!f || !offset)
		return -EINVAL;
	err = sweep(f, &sw);
	if (err)
		return err;
	*offset = (int64_t)sw.offset;
	if (agree)
		*agree = sw.agree;
	if (used)
		*used = f->used;
	return 0;
}

/* The host times of the first and the last sample offered. */
static void time_range(const struct vmctx_clock_fit *f, uint64_t *lo, uint64_t *hi)
{
	size_t i;
	uint32_t k;

	*lo = UINT64_MAX;
	*hi = 0;
	for (i = 0; i < f->nspans; i++) {
		for (k = 0; k < f->spans[i].nruns; k++) {
			if (f->spans[i].runs[k].first < *lo)
				*lo = f->spans[i].runs[k].first;
			if (f->spans[i].runs[k].last > *hi)
				*hi = f->spans[i].runs[k].last;
		}
	}
}

static int cmp_i128(const void *a, const void *b)
{
	__int128 x = *(const __int128 *)a, y = *(const __int128 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The rate, in ppb: the offset is fitted in each of WINDOWS slices of the
 * recording, and the rate is the median of the slopes between the slices
 * that most of their samples agree with (Theil-Sen: a slice fitted wrong
 * moves the median little).  -ENODATA when fewer than two slices fit.
 */
#define WINDOWS		8
#define MAX_RATE_PPB	10000000LL	/* 1%: beyond, not a clock's drift but a bad fit */

static int fit_rate(const struct vmctx_clock_fit *f, __int128 *rate)
{
	__int128 slopes[WINDOWS * (WINDOWS - 1) / 2];
	struct sweep w[WINDOWS];
	size_t i, j, n = 0, nslopes = 0;
	uint64_t lo, hi, step;

	time_range(f, &lo, &hi);
	if (hi <= lo)
		return -ENODATA;
	step = (hi - lo) / WINDOWS + 1;
	for (i = 0; i < WINDOWS; i++) {
		struct sweep *sw = &w[n];

		memset(sw, 0, sizeof(*sw));
		sw->lo = lo + i * step;
		sw->hi = sw->lo + step;
		if (!sweep(f, sw) && sw->agree * 2 > sw->weight)
			n++;
	}
	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++) {
			if (w[j].mid <= w[i].mid)
				continue;
			slopes[nslopes++] = (w[j].offset - w[i].offset) * 1000000000 /
					    (w[j].mid - w[i].mid);
		}
	}
	if (!nslopes)
		return -ENODATA;
	qsort(slopes, nslopes, sizeof(*slopes), cmp_i128);
	*rate = slopes[nslopes / 2];
	return *rate > -MAX_RATE_PPB && *rate < MAX_RATE_PPB ? 0 : -ERANGE;
}

int vmctx_clock_fit_solve(const struct vmctx_clock_fit *f, struct vmctx_clock *c,
			  uint64_t *agree, uint64_t *used)
{
	struct sweep all = { .hi = UINT64_MAX }, rated;
	__int128 rate;
	int err;

	if (!f || !c)
		return -EINVAL;
	err = sweep(f, &all);
	if (err)
		return err;
	rated = all;
	rated.ref = (uint64_t)all.mid;
	if (!fit_rate(f, &rate)) {
		struct sweep s = { .hi = UINT64_MAX, .ref = (uint64_t)all.mid,
				   .rate_ppb = (int64_t)rate };

		/* keep the rate only if at least as many samples agree */
		if (!sweep(f, &s) && s.agree >= all.agree)
			rated = s;
	}
	err = vmctx_clock_set_linear(c, rated.ref, (int64_t)rated.offset, rated.rate_ppb);
	if (err)
		return err;
	if (agree)
		*agree = rated.agree;
	if (used)
		*used = f->used;
	return 0;
}
