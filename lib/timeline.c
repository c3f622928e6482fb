// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Timeline: turn per-pCPU host samples into one virtual stream per vCPU on
 * host time (Yamamoto et al., section 3.5).  A vCPU that stops running
 * waits on its home pCPU; every sample taken there meanwhile is one tick
 * of the vCPU's blank time, [idle] if the guest halted, otherwise [steal]
 * charged to whoever ran instead.
 *
 * Charges are counted lazily, with no state per pCPU and vCPU pair: each
 * pCPU keeps a running total of its sample weights and a ring of its
 * latest PCPU_RUNS runs (an owner's ticks in a row, as a range of that
 * total), and a waiting vCPU remembers the total when it was last charged.
 * A wait's blank time is the difference of totals, exact whatever
 * happened; its owners come from the runs that overlap it, newest first.
 * What lies before the oldest run the ring still holds (the pCPU changed
 * hands more than PCPU_RUNS times during the wait) is "[steal] (others)",
 * and so is a vCPU's steal by owners beyond the first VCPU_STEAL_OWNERS it
 * names.  Naming every owner exactly would need O(vCPUs^2) rows when many
 * vCPUs share a pCPU (each one stolen from by every other); this way a
 * sample costs O(PCPU_RUNS) at most and memory is O(vCPUs + pCPUs).
 *
 * The output is runs of ticks of each vCPU's stream, which timeline_emit()
 * counts and hands to the session's sink, if any: the timeline never
 * names or shows them itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"

void timeline_add_vcpu(struct vmctx_vcpu *v)
{
	v->exit_key = VMCTX_EXIT_OTHER;	/* no exit seen yet */
}

/* A pCPU seen for the first time: state for it and those below; NULL with errno. */
static struct vmctx_pcpu *new_pcpu(struct timeline *tl, uint32_t cpu)
{
	struct vmctx_pcpu *p;
	size_t i;

	if (cpu >= tl->max_pcpus) {
		errno = EINVAL;
		return NULL;
	}
	p = realloc(tl->pcpus, (cpu + 1) * sizeof(*p));
	if (!p)
		return NULL;
	tl->pcpus = p;
	for (i = tl->npcpus; i <= cpu; i++) {
		memset(&tl->pcpus[i], 0, sizeof(tl->pcpus[i]));
		tl->pcpus[i].cur = -1;
		tl->pcpus[i].restart = true;	/* its first sample weighs 1 */
	}
	tl->npcpus = cpu + 1;
	return &tl->pcpus[cpu];
}

/* The pCPU's state, created on first use; NULL with errno. */
static inline struct vmctx_pcpu *pcpu_of(struct timeline *tl, uint32_t cpu)
{
	return cpu < tl->npcpus ? &tl->pcpus[cpu] : new_pcpu(tl, cpu);
}

/* Where vCPU owner @by is, or would go, in @v's steal_at: owner -> index + 1 in steal_by. */
static inline uint32_t steal_slot(const struct vmctx_vcpu *v, int by)
{
	uint32_t h = ((uint32_t)by * 0x9e3779b1u) >> 27;	/* the high bits: 32 places */

	while (v->steal_at[h] && v->steal_by[v->steal_at[h] - 1] != by)
		h = (h + 1) % ARRAY_SIZE(v->steal_at);
	return h;
}

/*
 * Count @count ticks of @v's steal by vCPU owner @by in the vCPU, if it is
 * one of the first VCPU_STEAL_OWNERS it names; false if not.
 */
static bool count_steal_by(struct vmctx_vcpu *v, int by, uint64_t count)
{
	uint32_t h, i;

	if (by <= OWNER_OUTSIDE)
		return false;
	h = steal_slot(v, by);
	if (!v->steal_at[h]) {
		if (v->nsteal_by == VCPU_STEAL_OWNERS)
			return false;
		i = v->nsteal_by++;
		v->steal_at[h] = i + 1;
		v->steal_by[i] = by;
		v->steal_n[i] = 0;
	}
	v->steal_n[v->steal_at[h] - 1] += count;
	return true;
}

/* @count ticks of @v's steal, by the exit that left it waiting. */
static int steal_exit(struct timeline *tl, struct vmctx_vcpu *v, uint64_t count)
{
	struct agg_key e;

	memset(&e, 0, sizeof(e));
	e.scope = AGG_STEAL_EXIT;
	e.cls = VMCTX_CLASS_STEAL;
	e.sub = v->isa;
	e.vm_idx = v->vm_idx;
	e.vcpu = v->id;
	e.by = -1;
	e.exit = v->exit_key;
	/* a vCPU's waits mostly end on one exit: its row recurs */
	return agg_add_hinted(&tl->agg, &v->hint, &e, count);
}

/*
 * One run of @v's virtual stream: @count ticks of @cls up to @time.  Steal
 * also counts by the vCPU's last exit: now, or added to *@steal for the
 * caller to count once.
 */
static int emit(struct timeline *tl, struct vmctx_vcpu *v, uint64_t time,
		enum vmctx_class cls, int by, const char *function, const char *module,
		uint64_t count, uint64_t *steal)
{
	bool counted = false;
	struct agg_key k;
	int err;

	if (!count)
		return 0;
	memset(&k, 0, sizeof(k));
	k.scope = AGG_VCPU;
	k.cls = cls;
	k.vm_idx = v->vm_idx;
	k.vcpu = v->id;
	k.by = by;
	k.function = function;
	k.module = module;
	/* A vCPU's steal names a bounded number of owners (see the top). */
	if (cls == VMCTX_CLASS_STEAL && by > OWNER_OUTSIDE) {
		counted = count_steal_by(v, by, count);
		if (!counted)
			k.by = OWNER_OTHERS;
	}
	err = timeline_emit(tl, v, &k, time, count, counted);
	if (err || cls != VMCTX_CLASS_STEAL)
		return err;
	if (steal) {
		*steal += count;
		return 0;
	}
	return steal_exit(tl, v, count);
}

static enum vmctx_class blank_class(const struct vmctx_vcpu *v)
{
	return v->halted ? VMCTX_CLASS_IDLE : VMCTX_CLASS_STEAL;
}

static void start_wait(struct vmctx_vcpu *v, const struct vmctx_pcpu *p)
{
	v->state = VCPU_WAITING;
	v->blocked = false;
	v->snap_ticks = p->ticks;
	v->snap_lost = p->lost;
}

/* Hold @n ticks charged to @owner until the held wait ends (end_hold()). */
static int hold_charge(struct vmctx_vcpu *v, int owner, uint64_t n)
{
	if (util_grow((void **)&v->pend, &v->pend_cap, v->npend + 1, sizeof(*v->pend)))
		return -ENOMEM;
	v->pend[v->npend].owner = owner;
	v->pend[v->npend].n = n;
	v->npend++;
	v->held = true;
	return 0;
}

/*
 * Who took @p's ticks (@from, p->ticks]: at most PCPU_RUNS charges in
 * @c, oldest first, one per owner; what the ring no longer holds goes to
 * OWNER_OTHERS.  Returns the number of charges.
 */
static size_t gap_owners(const struct vmctx_pcpu *p, uint64_t from, struct pend_charge *c)
{
	/* owner -> its charge, open addressing: many vCPUs on a pCPU make n large */
	int8_t at[128];
	uint64_t covered = 0;
	size_t n = 0, i, k;

	_Static_assert(2 * PCPU_RUNS < ARRAY_SIZE(at), "at most half full");
	memset(at, -1, sizeof(at));
	for (k = 0; k < p->nruns; k++) {
		const struct owner_run *r = &p->runs[(p->head + PCPU_RUNS - k) % PCPU_RUNS];
		uint64_t d;

		if (r->end <= from)
			break;
		d = r->end - (r->start > from ? r->start : from);
		covered += d;
		i = ((uint32_t)r->owner * 0x9e3779b1u) >> 25;	/* the high bits: 128 places */
		while (at[i] >= 0 && c[at[i]].owner != r->owner)
			i = (i + 1) % ARRAY_SIZE(at);
		if (at[i] < 0) {
			at[i] = n;
			c[n].owner = r->owner;
			c[n++].n = 0;
		}
		c[at[i]].n += d;
	}
	if (covered < p->ticks - from) {
		c[n].owner = OWNER_OTHERS;
		c[n++].n = p->ticks - from - covered;
	}
	/* newest first so far: the stream wants them oldest first */
	for (i = 0; i < n / 2; i++) {
		struct pend_charge t = c[i];

		c[i] = c[n - 1 - i];
		c[n - 1 - i] = t;
	}
	return n;
}

/*
 * flush()'s usual case, steal that nothing else will see: if every run of
 * @p in the wait, (@from, p->ticks], is within the ring and belongs to an
 * owner @v already counts, count each there as it comes, with no list of
 * owners to build.  That is what flush() would count, owner by owner.
 * Returns the ticks counted, or 0 (nothing done) if the usual case does
 * not hold.
 */
static uint64_t count_known_steal(struct vmctx_vcpu *v, const struct vmctx_pcpu *p,
				  uint64_t from)
{
	uint8_t at[PCPU_RUNS];
	uint64_t d[PCPU_RUNS], covered = 0;
	uint32_t h = p->head;
	size_t k, n;

	/* newest first, each run's part in the wait noted once */
	for (n = 0; n < p->nruns; n++, h = (h + PCPU_RUNS - 1) % PCPU_RUNS) {
		const struct owner_run *r = &p->runs[h];

		if (r->end <= from)
			break;
		if (r->owner <= OWNER_OUTSIDE)
			return 0;
		at[n] = v->steal_at[steal_slot(v, r->owner)];
		if (!at[n])
			return 0;
		d[n] = r->end - (r->start > from ? r->start : from);
		covered += d[n];
	}
	if (covered != p->ticks - from)
		return 0;	/* the ring no longer holds the whole wait */
	for (k = 0; k < n; k++)
		v->steal_n[at[k] - 1] += d[k];
	return covered;
}

/*
 * Charge a waiting vCPU for what its home pCPU sampled since the last
 * charge, at most @cap ticks in this wait.  The cap matters when the vCPU
 * resumes on another pCPU within the same tick as a sample on its home
 * pCPU: that sample is the tick the vCPU did run elsewhere, so the latest
 * owner of the home pCPU gives it back.  @hold: hold the charges instead
 * (hold_charge()).
 */
static int flush(struct timeline *tl, struct vmctx_vcpu *v, uint64_t time, uint64_t cap,
		 bool hold)
{
	struct vmctx_pcpu *p = &tl->pcpus[v->home];
	enum vmctx_class cls = blank_class(v);
	struct pend_charge c[PCPU_RUNS + 1];
	uint64_t sum = util_sat_add(p->lost - v->snap_lost, p->ticks - v->snap_ticks);
	uint64_t drop = 0, steal = 0;
	size_t k, n;
	int err;

	if (util_sat_add(v->charged, sum) > cap)
		drop = util_sat_add(v->charged, sum) - cap;
	if (!drop && !hold && cls == VMCTX_CLASS_STEAL && !tl->sink && p->ticks > v->snap_ticks &&
	    (steal = count_known_steal(v, p, v->snap_ticks))) {
		v->charged += steal;
		n = 0;
	} else {
		n = gap_owners(p, v->snap_ticks, c);
	}
	v->snap_ticks = p->ticks;
	/* the latest owner gives back first; if the ring lost its ticks, "others" */
	for (k = 0; k < n && drop; k++) {
		if (c[k].owner == p->cur) {
			uint64_t give = drop < c[k].n ? drop : c[k].n;

			c[k].n -= give;
			drop -= give;
		}
	}
	if (drop && n && c[0].owner == OWNER_OTHERS)
		c[0].n -= drop < c[0].n ? drop : c[0].n;
	for (k = 0; k < n; k++) {
		uint64_t d = c[k].n;

		if (!d)
			continue;
		/* Idle is not attributed to anyone: a halted guest lost nothing. */
		if (hold)
			err = hold_charge(v, c[k].owner, d);
		else if (cls == VMCTX_CLASS_STEAL && !tl->sink && count_steal_by(v, c[k].owner, d))
			err = 0, steal += d;	/* what emit() would do, without its key */
		else
			err = emit(tl, v, time, cls, cls == VMCTX_CLASS_STEAL ? c[k].owner : -1,
				   NULL, NULL, d, &steal);
		if (err)
			return err;
		v->charged += d;
	}
	if (steal && (err = steal_exit(tl, v, steal)))
		return err;
	if (p->lost != v->snap_lost) {
		uint64_t d = p->lost - v->snap_lost;

		v->snap_lost = p->lost;
		if (hold) {
			v->pend_lost = util_sat_add(v->pend_lost, d);
			v->held = true;
		} else {
			err = emit(tl, v, time, VMCTX_CLASS_LOST, -1, NULL, NULL, d, NULL);
			if (err)
				return err;
		}
		v->charged = util_sat_add(v->charged, d);
	}
	return 0;
}

/* End a held wait (see struct vmctx_vcpu): charge what it held as idle, or as steal. */
static int end_hold(struct timeline *tl, struct vmctx_vcpu *v, bool idle)
{
	enum vmctx_class cls = idle ? VMCTX_CLASS_IDLE : VMCTX_CLASS_STEAL;
	uint64_t steal = 0;
	size_t i;
	int err = 0;

	/* nothing held: nothing to charge either way */
	if (!v->held)
		return 0;
	for (i = 0; i < v->npend && !err; i++)
		err = emit(tl, v, v->pend_time, cls, idle ? -1 : v->pend[i].owner, NULL, NULL,
			   v->pend[i].n, &steal);
	if (!err && steal)
		err = steal_exit(tl, v, steal);
	if (!err && v->pend_lost)
		err = emit(tl, v, v->pend_time, VMCTX_CLASS_LOST, -1, NULL, NULL, v->pend_lost,
			   NULL);
	if (!err && v->pend_fill)
		err = emit(tl, v, v->pend_time, cls, idle ? -1 : OWNER_OUTSIDE, NULL, NULL,
			   v->pend_fill, NULL);
	v->npend = 0;
	v->pend_lost = 0;
	v->pend_fill = 0;
	v->held = false;
	return err;
}

/* A weight beyond this is a clock jump or hostile input, not a late timer. */
#define MAX_WEIGHT	1000000

/* The slot of @time, at or after @p's origin, on @p's slots (timeline_weight()). */
static uint64_t slot_of(const struct timeline *tl, const struct vmctx_pcpu *p, uint64_t time)
{
	uint64_t d = time - p->origin, k = d / tl->tick_ns;

	return d % tl->tick_ns >= tl->tick_ns - tl->tick_ns / 2 ? k + 1 : k;
}

/* Count @p's slots from @time, the slot of a sample that weighs 1. */
static void restart_slots(const struct timeline *tl, struct vmctx_pcpu *p, uint64_t time)
{
	p->origin = time;
	p->slot = 0;
	p->next = time + tl->tick_ns - tl->tick_ns / 2;
}

/*
 * By time, a pCPU's samples count the tick slots it spanned, each once:
 * slot k holds the times that round to origin + k ticks, and a sample
 * weighs the slots from the last one counted up to its own.  A late timer
 * (1.6 ticks after the previous sample) counts 2, and the sample after
 * it, 0.4 ticks later, in a slot already counted, 0: rounding each gap on
 * its own would count 3 for 2 ticks, and a pCPU's weights would sum past
 * its time.  Going back in time counts nothing either, to before the first
 * sample or after a loss too: a sample before @next, in a slot counted or
 * before them, weighs 0.  After a loss (the lost ticks are counted as
 * such) or a jump of the clock the count starts again from the next
 * sample past them, which weighs 1.
 */
int timeline_weight(struct timeline *tl, const struct vmctx_sample *smp, uint64_t *w)
{
	struct vmctx_pcpu *p = pcpu_of(tl, smp->cpu);
	uint64_t k;

	if (!p)
		return -errno;
	*w = 1;
	if (smp->time > p->last_sample)
		p->last_sample = smp->time;
	if (!tl->weight_by_time) {
		p->restart = false;
		return 0;
	}
	/* @next is 0 before the first sample */
	if (smp->time < p->next) {
		*w = 0;
		return 0;
	}
	if (p->restart) {
		p->restart = false;
		restart_slots(tl, p, smp->time);
		return 0;
	}
	k = slot_of(tl, p, smp->time);
	if (k - p->slot > MAX_WEIGHT) {
		restart_slots(tl, p, smp->time);
		return 0;
	}
	*w = k - p->slot;
	p->slot = k;
	p->next = p->origin + k * tl->tick_ns + tl->tick_ns - tl->tick_ns / 2;
	return 0;
}

/*
 * Tick slots strictly between two real ticks at @from and @to, the later
 * one on @p.  Weighing by time, on @p's slots (timeline_weight()), so that
 * a vCPU's blank time and the pCPU's weights cut time alike: rounding the
 * gap on its own would now and then give a tick fewer than the weights
 * of the pCPU's other owners sum to, or one more, and move it between
 * them and "(outside)".
 */
static uint64_t ticks_between(const struct timeline *tl, const struct vmctx_pcpu *p,
			      uint64_t from, uint64_t to)
{
	uint64_t gap = to - from, n;

	if (tl->weight_by_time && !p->restart && from >= p->origin) {
		uint64_t a = slot_of(tl, p, from), b = slot_of(tl, p, to);

		return b > a + 1 ? b - a - 1 : 0;
	}
	/* the usual gap, a tick or less: no division */
	if (gap < tl->tick_ns + tl->tick_ns / 2)
		return 0;
	n = (gap + tl->tick_ns / 2) / tl->tick_ns;
	return n ? n - 1 : 0;
}

/*
 * Slots strictly between @from and a switch at @to that @p has counted.
 * A slot after @p's last counted one is its next sample's: that sample's
 * weight stands for it (timeline_weight()), so counting it at the switch
 * too would count it twice, once here and once in that weight (or in the
 * charges of a vCPU that waited through it).  A late timer makes that
 * common: the switch-in comes in the ticks it missed.
 */
static uint64_t ticks_to_switch(const struct timeline *tl, const struct vmctx_pcpu *p,
				uint64_t from, uint64_t to)
{
	uint64_t a, b;

	if (!tl->weight_by_time || p->restart || from < p->origin)
		return ticks_between(tl, p, from, to);
	a = slot_of(tl, p, from);
	b = slot_of(tl, p, to);
	if (b > p->slot + 1)
		b = p->slot + 1;
	return b > a + 1 ? b - a - 1 : 0;
}

/*
 * Account the vCPU's blank time up to @time.  Ticks its home pCPU did not
 * sample (a PMU stops in idle, a pCPU may go quiet) are filled from elapsed
 * time when the nominal tick is known.  @real: the pCPU where the vCPU
 * runs at @time, or NULL; @at_tick: a real tick of the vCPU falls there
 * at @time (else it is a switch-in); @covered: slots before it that its
 * weight stands for.
 */
static int fill(struct timeline *tl, struct vmctx_vcpu *v, uint64_t time,
		const struct vmctx_pcpu *real, bool at_tick, uint64_t covered, bool hold)
{
	uint64_t expected = 0;
	int err;

	if (tl->tick_ns && time > v->last_time) {
		uint64_t gap = time - v->last_time;

		/* ticks strictly between the last real tick and this one */
		if (real && at_tick)
			expected = ticks_between(tl, real, v->last_time, time);
		else if (real)
			expected = ticks_to_switch(tl, real, v->last_time, time);
		else
			expected = gap / tl->tick_ns;
		expected = expected > covered ? expected - covered : 0;
	}
	if (expected > v->charged && hold) {
		v->pend_fill += expected - v->charged;
		v->held = true;
	} else if (expected > v->charged) {
		enum vmctx_class cls = blank_class(v);

		err = emit(tl, v, time, cls, cls == VMCTX_CLASS_STEAL ? OWNER_OUTSIDE : -1,
			   NULL, NULL, expected - v->charged, NULL);
		if (err)
			return err;
	}
	v->charged = 0;
	if (time > v->last_time)
		v->last_time = time;
	return 0;
}

/*
 * End @v's wait at @time: its charges, then its unsampled ticks (fill()).
 * @at_tick: @time is a sample's, on @real, which caps the charges (see
 * flush()); a switch is no tick, and takes them as they are.
 */
static int end_wait(struct timeline *tl, struct vmctx_vcpu *v, uint64_t time,
		    const struct vmctx_pcpu *real, bool at_tick, uint64_t covered, bool hold)
{
	uint64_t cap = UINT64_MAX;
	int err;

	if (real && at_tick && tl->tick_ns && time > v->last_time) {
		cap = ticks_between(tl, real, v->last_time, time);
		cap = cap > covered ? cap - covered : 0;
	}
	err = flush(tl, v, time, cap, hold);

	if (err)
		return err;
	v->state = VCPU_RUNNING;
	if (hold)
		v->pend_time = time;
	return fill(tl, v, time, real, at_tick, covered, hold);
}

int timeline_sample(struct timeline *tl, const struct vmctx_sample *smp, int owner,
		    struct vmctx_vcpu *v, const struct agg_key *guest, uint64_t weight)
{
	struct vmctx_pcpu *p = pcpu_of(tl, smp->cpu);
	uint64_t covered;
	int err;

	if (!p)
		return -errno;
	if (smp->time > tl->last_time)
		tl->last_time = smp->time;
	/*
	 * The vCPU's first sample after a held wait: if its last exit is still
	 * the HLT, the wait was that halt (the sample came before the wake-up
	 * did, or the vCPU is back in the guest); otherwise it was steal.
	 */
	if (v && v->held) {
		err = end_hold(tl, v, vmctx_exit_reason_is_halt(smp->isa, smp->exit_reason));
		if (err)
			return err;
	}

	/* Whoever this pCPU ran before now waits, unless it is us. */
	if (p->cur > 0 && p->cur != owner) {
		struct vmctx_vcpu *w = &tl->vcpus[p->cur - 1];

		if (w->state == VCPU_RUNNING && w->home == smp->cpu)
			start_wait(w, p);
	}
	/* the slots before this sample's own that its weight stands for */
	covered = weight ? weight - 1 : 0;
	if (v && v->state == VCPU_WAITING) {
		err = end_wait(tl, v, smp->time, p, true, covered, false);
		if (err)
			return err;
	} else if (v && v->state == VCPU_RUNNING) {
		/* A gap in a running vCPU's samples: its pCPU sampled nothing else. */
		err = fill(tl, v, smp->time, p, true, covered, false);
		if (err)
			return err;
	}
	if (weight)
		pcpu_add_ticks(p, owner, weight);
	p->cur = owner;
	if (!v)
		return 0;

	v->state = VCPU_RUNNING;
	v->home = smp->cpu;
	/* only forward: a stream going back in time must not fill the same ticks twice */
	if (smp->time > v->last_time)
		v->last_time = smp->time;
	/*
	 * Unnamed codes share one row, so hostile input cannot grow the table
	 * (with no table, nothing reads the row).  A sample of the vCPU's
	 * thread with no vCPU loaded (the VMM's own work for it) carries no
	 * exit: the last one stands.
	 */
	if (smp->isa != VMCTX_ISA_NONE) {
		if (!tl->agg.off && (smp->isa != v->isa || smp->exit_reason != v->last_exit))
			v->exit_key = vmctx_exit_reason_name(smp->isa, smp->exit_reason) ?
				      smp->exit_reason : VMCTX_EXIT_OTHER;
		v->isa = smp->isa;
		v->last_exit = smp->exit_reason;
	}
	if (smp->flags & VMCTX_SAMPLE_GUEST) {
		v->halted = false;
		return emit(tl, v, smp->time, guest->sub, guest->by, guest->function,
			    guest->module, weight, NULL);
	}
	/* The vCPU's thread runs host code: KVM's exit handling, QEMU, halt polling. */
	if (vmctx_exit_reason_is_halt(smp->isa, smp->exit_reason))
		v->halted = true;
	return emit(tl, v, smp->time, blank_class(v),
		    v->halted ? -1 : OWNER_OUTSIDE, NULL, NULL, weight, NULL);
}

int timeline_switch(struct timeline *tl, uint64_t time, uint32_t cpu, struct vmctx_vcpu *v,
		    bool out, bool preempt)
{
	struct vmctx_pcpu *p = pcpu_of(tl, cpu);
	int err;

	if (!p)
		return -errno;
	if (time > tl->last_time)
		tl->last_time = time;
	err = end_hold(tl, v, false);
	if (err)
		return err;
	if (out) {
		if (v->state != VCPU_RUNNING)
			return 0;
		/* Blocked right after a HLT exit is a halted guest; anything else is steal. */
		if (!preempt && vmctx_exit_reason_is_halt(v->isa, v->last_exit))
			v->halted = true;
		v->home = cpu;
		start_wait(v, p);
		v->blocked = !preempt;
		return 0;
	}
	/*
	 * A blocked vCPU is switched in before its kvm_vcpu_wakeup fires: hold
	 * its wait until that (idle) or anything else (steal) comes.  What no
	 * sample covered is counted on this pCPU's slots: the slot of the
	 * switch-in is its next sample's, which a count of whole ticks since
	 * its last one would take now and then.
	 */
	if (v->state == VCPU_WAITING) {
		err = end_wait(tl, v, time, p, false, 0, v->blocked && !v->halted);
		if (err)
			return err;
	}
	v->state = VCPU_RUNNING;
	v->home = cpu;
	if (time > v->last_time)
		v->last_time = time;
	return 0;
}

int timeline_halt(struct timeline *tl, uint64_t time, struct vmctx_vcpu *v, bool halted)
{
	int err;

	/*
	 * A wake-up (kvm_vcpu_wakeup fires when a vCPU leaves its halt) ends a
	 * halt, so a wait that began with the vCPU thread blocking was that
	 * halt, even when no sample caught the HLT exit before it blocked:
	 * samples are rare in the microseconds between the exit and the block.
	 * It fires after the thread is switched back in, so the wait is
	 * usually held by then.
	 */
	err = end_hold(tl, v, !halted);
	if (err)
		return err;
	if (!halted && v->state == VCPU_WAITING && v->blocked)
		v->halted = true;
	/* Charge the blank time so far in the state it had. */
	if (v->state == VCPU_WAITING && v->halted != halted) {
		err = flush(tl, v, time, UINT64_MAX, false);
		if (!err)
			err = fill(tl, v, time, NULL, false, 0, false);
		if (err)
			return err;
	}
	v->halted = halted;
	if (!halted)
		v->blocked = false;	/* woken: runnable from here on */
	return 0;
}

/*
 * The vCPU's thread ended at @time: charge a wait up to then, and no more.
 * It is unseen again: a later sample of it starts it afresh.
 */
int timeline_vcpu_end(struct timeline *tl, uint64_t time, struct vmctx_vcpu *v)
{
	int err;

	if (time > tl->last_time)
		tl->last_time = time;
	err = end_hold(tl, v, false);
	if (err)
		return err;
	if (v->state == VCPU_WAITING) {
		err = end_wait(tl, v, time, NULL, false, 0, false);
		if (err)
			return err;
	}
	v->state = VCPU_UNSEEN;
	v->halted = false;
	v->blocked = false;
	return 0;
}

int timeline_lost(struct timeline *tl, uint64_t time, uint32_t cpu, uint64_t count)
{
	struct vmctx_pcpu *p = pcpu_of(tl, cpu);

	if (!p)
		return -errno;
	if (time > tl->last_time)
		tl->last_time = time;
	p->lost = util_sat_add(p->lost, count);
	p->restart = true;	/* the lost ticks are counted here, not by weight */
	/* The vCPU this pCPU was running lost its own ticks. */
	if (p->cur > 0) {
		struct vmctx_vcpu *v = &tl->vcpus[p->cur - 1];

		if (v->state == VCPU_RUNNING && v->home == cpu) {
			v->charged = util_sat_add(v->charged, count);
			return emit(tl, v, time, VMCTX_CLASS_LOST, -1, NULL, NULL, count, NULL);
		}
	}
	return 0;
}

int timeline_finish(struct timeline *tl, uint64_t time)
{
	size_t i;
	int err;

	if (time < tl->last_time)
		time = tl->last_time;
	for (i = 0; i < tl->nvcpus; i++) {
		struct vmctx_vcpu *v = &tl->vcpus[i];

		err = end_hold(tl, v, false);
		if (err)
			return err;
		if (v->state != VCPU_WAITING)
			continue;
		err = end_wait(tl, v, time, NULL, false, 0, false);
		if (err)
			return err;
	}
	return 0;
}
