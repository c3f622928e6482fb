/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * The timeline (timeline.c): a session's samples and events in, each
 * vCPU's virtual stream out, counted and handed to the session's sink.
 * Its state is struct timeline, below, which a session holds; the common
 * sample's path is inline, for session.c.
 */
#ifndef VMCTX_TIMELINE_H
#define VMCTX_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include <stddef.h>

#include "aggregate.h"
#include "bundle.h"
#include "util.h"

/*
 * Owner 0 of a pCPU is "outside" (host work); owner i + 1 is vCPU i.
 * OWNER_OTHERS is steal whose owner the session no longer tells apart
 * (see timeline.c): "[steal] (others)".
 */
#define OWNER_OUTSIDE 0
#define OWNER_OTHERS (-2)
/* Runs of owners each pCPU remembers, and owners a vCPU's steal names. */
#define PCPU_RUNS	32
#define VCPU_STEAL_OWNERS 16	/* at most half of vmctx_vcpu.steal_at */

enum vcpu_state {
	VCPU_UNSEEN,
	VCPU_RUNNING,
	VCPU_WAITING,
};

struct pend_charge {
	int32_t owner;
	uint64_t n;
};

/* A cache line: the array of vCPUs is aligned to it (see struct vmctx_vcpu). */
#define VCPU_ALIGN	64

/*
 * What the usual sample reads (timeline_runs_on(), the resolution cache,
 * the hint) fills the first two cache lines, and the array of vCPUs is
 * aligned to them: with thousands of vCPUs their state leaves the cache,
 * and each line read is a miss.  Held waits and the steal counts follow.
 */
struct vmctx_vcpu {
	/* first line */
	int vm_idx;			/* index into session->vms */
	int id;
	enum vcpu_state state;
	bool halted;			/* the guest executed HLT and has not woken */
	bool blocked;			/* the current wait began with a blocking switch-out */
	bool held;			/* a held wait: npend, pend_lost or pend_fill */
	enum vmctx_isa isa;
	uint32_t home;			/* pCPU it last ran on */
	uint64_t last_exit;
	uint64_t last_time;		/* host time of its last real tick */
	uint64_t charged;		/* ticks charged in the current wait */
	uint64_t cache_cr3;		/* resolution cache: the task of this CR3 */
	int cache_task;
	/* second line */
	uint64_t cache_from, cache_to;	/* guest time range the cached task is valid */
	struct agg_hint hint;		/* its rows in the session's table */
	uint64_t exit_key;		/* last_exit, or VMCTX_EXIT_OTHER if unnamed */
	/* third line: a user sample's map and symbol, for cache_task */
	struct resolve_hint res_hint;
	/* read when a wait starts or ends */
	size_t npend;			/* held charges: see pend below */
	uint64_t pend_lost, pend_fill;
	uint64_t snap_ticks;		/* home pCPU's ticks when last charged */
	uint64_t snap_lost;
	/*
	 * A blocked wait that ended with a switch-in is held until the next
	 * event of the vCPU tells what it was: kvm_vcpu_wakeup (it fires
	 * after the switch-in) or a sample whose last exit is HLT makes it
	 * idle, anything else steal.
	 */
	uint64_t pend_time;		/* the switch-in */
	struct pend_charge *pend;	/* owner -> ticks, one entry per owner */
	size_t pend_cap;
	/*
	 * Steal by the first VCPU_STEAL_OWNERS owners it names, counted here
	 * (a vCPU's own cache lines) rather than in the session's table.
	 */
	uint32_t nsteal_by;
	uint8_t steal_at[32];		/* a hash of steal_by: index + 1 */
	int32_t steal_by[VCPU_STEAL_OWNERS];
	uint64_t steal_n[VCPU_STEAL_OWNERS];
	/* "(on vcpuN)": what a sibling's steal is charged to, made once */
	char on_label[sizeof("(on vcpu-2147483648)")];
} __attribute__((aligned(VCPU_ALIGN)));

_Static_assert(offsetof(struct vmctx_vcpu, cache_from) == VCPU_ALIGN &&
	       offsetof(struct vmctx_vcpu, exit_key) + sizeof(uint64_t) <= 2 * VCPU_ALIGN,
	       "what the usual sample reads of a vCPU fills its first two cache lines");

/* Ticks (start, end] of a pCPU's running total that one owner took in a row. */
struct owner_run {
	int32_t owner;
	uint64_t start, end;
};

/* Each sample reads the first line and the newest run. */
struct vmctx_pcpu {
	int cur;			/* owner of the last sample, -1 before any */
	uint32_t head, nruns;		/* runs[head] is the newest */
	bool restart;			/* none yet, or a loss: the next past @next weighs 1 */
	uint64_t ticks;			/* running total of sample weights */
	uint64_t lost;
	uint64_t last_sample;		/* time of its latest sample */
	/*
	 * By time (timeline_weight()): tick slots are counted from the
	 * sample at @origin, up to slot @slot; a sample from @next on, and
	 * before @next + tick_ns, falls in slot @slot + 1.
	 */
	uint64_t origin, slot, next;
	struct owner_run runs[PCPU_RUNS];	/* the latest runs, a ring */
};

struct timeline;
/* @count ticks of @v's stream, of @k (AGG_VCPU), up to @time. */
typedef void (*timeline_sink_fn)(const struct timeline *tl, const struct vmctx_vcpu *v,
				 const struct agg_key *k, uint64_t time, uint64_t count);

/*
 * The timeline's state: the vCPUs and pCPUs it runs over, the table it
 * counts into, and where each run goes besides.  A session holds one
 * (session.h); the timeline knows nothing else of it.
 */
struct timeline {
	uint64_t tick_ns;
	bool weight_by_time;		/* VMCTX_SESSION_WEIGHT_BY_TIME */
	uint32_t max_pcpus;
	struct vmctx_vcpu *vcpus;
	size_t nvcpus, vcpus_cap;
	struct vmctx_pcpu *pcpus;
	size_t npcpus;
	struct agg_table agg;		/* .off: VMCTX_SESSION_NO_TABLE */
	/*
	 * Where the timeline hands each run of a vCPU's stream besides
	 * counting it (NULL: nowhere): set with the caller's stream, to
	 * session.c's, which names the run.
	 */
	timeline_sink_fn sink;
	bool sink_blank_only;		/* VMCTX_SESSION_BLANK_STREAM */
	uint64_t last_time;		/* of the latest sample or event */
};


/* timeline.c */
/* Give the vCPU at tl->vcpus[tl->nvcpus], not counted yet, its timeline state. */
__hidden void timeline_add_vcpu(struct vmctx_vcpu *v);
/*
 * *@w: the ticks a sample stands for: 1, or with VMCTX_SESSION_WEIGHT_BY_TIME
 * the tick slots of its pCPU it is the first to reach (0 for one in a slot
 * already counted).  0, or -errno on a bad pCPU.
 */
__hidden int timeline_weight(struct timeline *tl, const struct vmctx_sample *smp, uint64_t *w);
/*
 * A sample of @owner (OWNER_OUTSIDE, or @v's).  @guest: the resolved guest
 * sample (its physical-view key), for guest samples.  @weight: ticks the
 * sample stands for (timeline_weight()).
 */
__hidden int timeline_sample(struct timeline *tl, const struct vmctx_sample *smp, int owner,
			     struct vmctx_vcpu *v, const struct agg_key *guest, uint64_t weight);
/*
 * The common sample, counted in short: guest code of @v, the vCPU of its
 * pCPU's last sample, still running there a tick later (no gap to fill,
 * weight 1), with nothing held, the same exit, and no sink that takes
 * runs of guest code.
 * timeline_runs_on() says whether @smp is one; timeline_run_on() counts
 * it under @k, an AGG_VCPU key, as timeline_weight() and
 * timeline_sample() would.
 */
static inline bool timeline_runs_on(const struct timeline *tl,
				    const struct vmctx_vcpu *v, const struct vmctx_sample *smp)
{
	const uint64_t late = tl->tick_ns + tl->tick_ns / 2;	/* ticks_between()'s bound */
	const struct vmctx_pcpu *p;

	if (smp->cpu >= tl->npcpus)
		return false;
	p = &tl->pcpus[smp->cpu];
	return p->cur > 0 && &tl->vcpus[p->cur - 1] == v && (!tl->sink || tl->sink_blank_only) &&
	       v->state == VCPU_RUNNING && v->home == smp->cpu &&
	       !v->held && !p->restart &&
	       smp->isa == v->isa && smp->exit_reason == v->last_exit &&
	       smp->time > p->last_sample && smp->time > v->last_time &&
	       (!tl->weight_by_time ||
		(smp->time >= p->next && smp->time - p->next < tl->tick_ns)) &&
	       (!tl->tick_ns || smp->time - v->last_time < late);
}

__hidden int timeline_switch(struct timeline *tl, uint64_t time, uint32_t cpu,
			     struct vmctx_vcpu *v, bool out, bool preempt);
__hidden int timeline_halt(struct timeline *tl, uint64_t time, struct vmctx_vcpu *v,
			   bool halted);
__hidden int timeline_vcpu_end(struct timeline *tl, uint64_t time, struct vmctx_vcpu *v);
__hidden int timeline_lost(struct timeline *tl, uint64_t time, uint32_t cpu, uint64_t count);
__hidden int timeline_finish(struct timeline *tl, uint64_t time);

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
static inline int timeline_run_on(struct timeline *tl, struct vmctx_vcpu *v,
				  const struct vmctx_sample *smp, const struct agg_key *k)
{
	struct vmctx_pcpu *p = &tl->pcpus[smp->cpu];

	p->last_sample = smp->time;
	p->slot++;			/* timeline_weight()'s, for weight 1 */
	p->next += tl->tick_ns;
	if (smp->time > tl->last_time)
		tl->last_time = smp->time;
	pcpu_add_ticks(p, p->cur, 1);
	v->charged = 0;
	v->last_time = smp->time;
	v->halted = false;
	/* timeline_emit()'s count: no sink takes a run of guest code */
	return agg_add_hinted(&tl->agg, &v->hint, k, 1);
}

/*
 * Where the timeline's output goes, a call for every sample, so inline.
 * One run of @v's virtual stream (@k, AGG_VCPU), @count ticks ending at
 * @time: counted unless @counted (the vCPU counted it), and handed to the
 * sink if there is one and it takes the run's class.
 */
static inline int timeline_emit(struct timeline *tl, struct vmctx_vcpu *v,
			       const struct agg_key *k, uint64_t time, uint64_t count,
			       bool counted)
{
	int err;

	if (!count)
		return 0;
	if (!counted) {
		err = agg_add_hinted(&tl->agg, &v->hint, k, count);
		if (err)
			return err;
	}
	if (tl->sink && (!tl->sink_blank_only || k->cls == VMCTX_CLASS_STEAL ||
			 k->cls == VMCTX_CLASS_IDLE || k->cls == VMCTX_CLASS_LOST))
		tl->sink(tl, v, k, time, count);
	return 0;
}

#endif /* VMCTX_TIMELINE_H */
