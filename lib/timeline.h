/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * The timeline (timeline.c): a session's samples and events in, each
 * vCPU's virtual stream out, counted and handed to the session's sink.
 * The common sample's path is inline, for session.c.
 */
#ifndef VMCTX_TIMELINE_H
#define VMCTX_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "aggregate.h"
#include "session.h"

/* timeline.c */
/* Give the vCPU at s->vcpus[s->nvcpus], not counted yet, its timeline state. */
__hidden void timeline_add_vcpu(struct vmctx_vcpu *v);
/*
 * Ticks a sample stands for: 1, or with VMCTX_SESSION_WEIGHT_BY_TIME the
 * ticks since the previous sample on its pCPU.  0 (errno set) on a bad pCPU.
 */
__hidden uint64_t timeline_weight(struct vmctx_session *s, const struct vmctx_sample *smp);
/*
 * A sample of @owner (OWNER_OUTSIDE, or @v's).  @guest: the resolved guest
 * sample (its physical-view key), for guest samples.  @weight: ticks the
 * sample stands for (timeline_weight()).
 */
__hidden int timeline_sample(struct vmctx_session *s, const struct vmctx_sample *smp, int owner,
			     struct vmctx_vcpu *v, const struct agg_key *guest, uint64_t weight);
/*
 * The common sample, counted in short: guest code of @v, the vCPU of its
 * pCPU's last sample, still running there a tick later (no gap to fill,
 * weight 1), with nothing held, the same exit, and no sink.
 * timeline_runs_on() says whether @smp is one; timeline_run_on() counts
 * it under @k, an AGG_VCPU key, as timeline_weight() and
 * timeline_sample() would.
 */
static inline bool timeline_runs_on(const struct vmctx_session *s,
				    const struct vmctx_vcpu *v, const struct vmctx_sample *smp)
{
	const uint64_t late = s->tick_ns + s->tick_ns / 2;	/* ticks_between()'s bound */
	const struct vmctx_pcpu *p;

	if (smp->cpu >= s->npcpus)
		return false;
	p = &s->pcpus[smp->cpu];
	return p->cur > 0 && &s->vcpus[p->cur - 1] == v && !s->sink &&
	       v->state == VCPU_RUNNING && v->home == smp->cpu &&
	       !v->held && !p->restart &&
	       smp->isa == v->isa && smp->exit_reason == v->last_exit &&
	       smp->time > p->last_sample && smp->time > v->last_time &&
	       (!s->weight_by_time || smp->time - p->last_sample < late) &&
	       (!s->tick_ns || smp->time - v->last_time < late);
}

__hidden int timeline_switch(struct vmctx_session *s, uint64_t time, uint32_t cpu,
			     struct vmctx_vcpu *v, bool out, bool preempt);
__hidden int timeline_halt(struct vmctx_session *s, uint64_t time, struct vmctx_vcpu *v,
			   bool halted);
__hidden int timeline_lost(struct vmctx_session *s, uint64_t time, uint32_t cpu, uint64_t count);
__hidden int timeline_finish(struct vmctx_session *s, uint64_t time);

/* timeline.c's bookkeeping, inline for timeline_run_on(): @owner took @weight ticks of @p. */
static inline void pcpu_add_ticks(struct vmctx_pcpu *p, int owner, uint64_t weight)
{
	struct owner_run *r = &p->runs[p->head];

	if (p->nruns && r->owner == owner && r->end == p->ticks) {
		r->end += weight;
	} else {
		p->head = (p->head + 1) % PCPU_RUNS;
		if (p->nruns < PCPU_RUNS)
			p->nruns++;
		r = &p->runs[p->head];
		r->owner = owner;
		r->start = p->ticks;
		r->end = p->ticks + weight;
	}
	p->ticks += weight;
}

/* Count a sample that timeline_runs_on() (above) took, under @k. */
static inline int timeline_run_on(struct vmctx_session *s, struct vmctx_vcpu *v,
				  const struct vmctx_sample *smp, const struct agg_key *k)
{
	struct vmctx_pcpu *p = &s->pcpus[smp->cpu];

	p->last_sample = smp->time;
	if (smp->time > s->last_time)
		s->last_time = smp->time;
	pcpu_add_ticks(p, p->cur, 1);
	v->charged = 0;
	v->last_time = smp->time;
	v->halted = false;
	/* timeline_emit()'s count, as no sink takes this path */
	return agg_add_hinted(&s->agg, &v->hint, k, 1);
}

/*
 * Where the timeline's output goes, a call for every sample, so inline.
 * One run of @v's virtual stream (@k, AGG_VCPU), @count ticks ending at
 * @time: counted unless @counted (the vCPU counted it), and handed to the
 * sink if there is one.
 */
static inline int timeline_emit(struct vmctx_session *s, struct vmctx_vcpu *v,
			       const struct agg_key *k, uint64_t time, uint64_t count,
			       bool counted)
{
	int err;

	if (!count)
		return 0;
	if (!counted) {
		err = agg_add_hinted(&s->agg, &v->hint, k, count);
		if (err)
			return err;
	}
	if (s->sink)
		s->sink(s, v, k, time, count);
	return 0;
}

#endif /* VMCTX_TIMELINE_H */
