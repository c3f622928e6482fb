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
 * started) form a run of their own and are outvoted.  Memory is O(tasks).
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
};

struct vmctx_clock_fit {
	const struct vmctx_bundle *b;	/* sealed: its index never changes */
	struct span *spans;	/* by task index */
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
	f->spans = calloc(b->ntasks + 1, sizeof(*f->spans));
	if (!f->spans) {
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

	if (!f)
		return -EINVAL;
	f->total++;
	pos = root_pos(f->b, cr3);
	if (pos < 0)
		return 0;
	span_add(&f->spans[pos], host_ns);
	f->used++;
	return 0;
}

/* An endpoint of the sweep: at @at, @w samples start (w > 0) or stop agreeing. */
struct edge {
	__int128 at;
	int64_t w;
};

/* An owner's lifetime shifted by a run: offsets in [at, end) agree. */
struct interval {
	__int128 at, end;
};

static int cmp_interval(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	/* closing before opening at the same point: intervals are half-open */
	return (x->w > 0) - (y->w > 0);
}

int vmctx_clock_fit_offset(const struct vmctx_clock_fit *f, int64_t *offset, uint64_t *agree,
			   uint64_t *used)
{
	const __int128 inf = (__int128)1 << 100;
	__int128 best_lo = 0, best_hi = 0;
	struct interval *iv;
	struct edge *e;
	size_t i, n = 0;
	int64_t w = 0, best = 0;

	if (!f || !offset)
		return -EINVAL;
	e = calloc(2 * RUNS_PER_TASK * f->b->ntasks + 1, sizeof(*e));
	iv = calloc(f->b->ntasks + 1, sizeof(*iv));
	if (!e || !iv) {
		free(e);
		free(iv);
		return -ENOMEM;
	}
	for (i = 0; i < f->b->ntasks; i++) {
		const struct span *sp = &f->spans[i];
		size_t j, end;
		uint32_t k;

		if (!sp->nruns)
			continue;
		for (end = i + 1; end < f->b->ntasks && bundle_root_at(f->b, end) == bundle_root_at(f->b, i); end++)
			;
		/*
		 * A run belongs to one of the root's owners: it agrees with the
		 * union of their lifetimes, each shifted by the run's span.
		 */
		for (k = 0; k < sp->nruns; k++) {
			const struct run *r = &sp->runs[k];
			size_t m = 0, u;

			for (j = i; j < end; j++) {
				const struct vmctx_task *t = &f->b->tasks[f->b->by_root[j]];

				iv[m].at = (__int128)t->start - r->first;
				iv[m].end = t->exit == VMCTX_TIME_NONE ? inf :
					    (__int128)t->exit - r->last;
				if (iv[m].at < iv[m].end)
					m++;
			}
			qsort(iv, m, sizeof(*iv), cmp_interval);
			for (u = 0; u < m; u++) {
				__int128 lo = iv[u].at, hi = iv[u].end;

				while (u + 1 < m && iv[u + 1].at <= hi) {
					if (iv[u + 1].end > hi)
						hi = iv[u + 1].end;
					u++;
				}
				e[n].at = lo;
				e[n++].w = r->n;
				e[n].at = hi;
				e[n++].w = -(int64_t)r->n;
			}
		}
	}
	free(iv);
	if (!n) {
		free(e);
		return -ENODATA;
	}
	qsort(e, n, sizeof(*e), cmp_edge);
	for (i = 0; i < n; i++) {
		w += e[i].w;
		if (w > best) {
			best = w;
			best_lo = e[i].at;
			best_hi = i + 1 < n ? e[i + 1].at : inf;
		}
	}
	free(e);
	/* the middle of the best span; an open span takes its closed end */
	if (best_hi < inf)
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
