// SPDX-License-Identifier: GPL-2.0
/*
 * The switch log.  Which task each guest CPU ran and from when, taken from
 * the backends' per-CPU switch rings (read_switches), clipped to the
 * window, into the bundle's switch and gap records: a ring's overrun is a
 * gap that stays open until that CPU's next switch after it.
 */
#include "agent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void agent_switch_log_init(struct agent_switch_log *l, struct vmctx_bundle *b, uint64_t start)
{
	memset(l, 0, sizeof(*l));
	l->bundle = b;
	l->start = start;
	l->end = AGENT_TIME_NONE;
}

void agent_switch_log_free(struct agent_switch_log *l)
{
	free(l->cpus);
	free(l->held);
	l->cpus = NULL;
	l->held = NULL;
	l->ncpus = l->nheld = l->held_cap = 0;
}

/* Why a guest could not have written @s, or NULL. */
static const char *implausible(const struct agent_switch *s)
{
	bool idle;

	if (s->cpu >= AGENT_SWITCH_CPUS)
		return "a CPU beyond 8191";
	if (s->type == AGENT_SWITCH_LOST)
		return s->lost_to != AGENT_TIME_NONE && s->lost_to < s->ns ?
		       "a loss that ends before it starts" : NULL;
	if (s->type != AGENT_SWITCH)
		return "neither a switch nor a loss";
	if (s->pid < 0 || s->pid >= AGENT_PID_MAX || s->tgid < 0 || s->tgid >= AGENT_PID_MAX)
		return "a pid out of range";
	if (s->kind != VMCTX_TASK_USER && s->kind != VMCTX_TASK_KTHREAD &&
	    s->kind != VMCTX_TASK_IDLE)
		return "an unknown kind of task";
	idle = s->kind == VMCTX_TASK_IDLE;
	if (idle != !s->pid || idle != !s->tgid)
		return "a pid 0 that is not the idle task's, or the idle task's that is not 0";
	if (!memchr(s->comm, '\0', sizeof(s->comm)))
		return "an unterminated comm";
	return NULL;
}

static void refuse(struct agent_switch_log *l, const struct agent_switch *s, const char *why)
{
	if (!l->refused++) {
		l->refused_why = why;
		l->refused_cpu = s->cpu;
	}
}

/* The time up to which a record tells: it goes into the log once the clock has passed it. */
static uint64_t reach(const struct agent_switch *s)
{
	if (s->type == AGENT_SWITCH_LOST && s->lost_to != AGENT_TIME_NONE)
		return s->lost_to;
	return s->ns;
}

/* @cpu's state, grown to hold it; NULL on ENOMEM. */
static struct agent_switch_cpu *cpu_of(struct agent_switch_log *l, unsigned int cpu)
{
	struct agent_switch_cpu *v;
	size_t n, i;

	if (cpu < l->ncpus)
		return &l->cpus[cpu];
	n = l->ncpus ? 2 * l->ncpus : 16;
	if (n <= cpu)
		n = (size_t)cpu + 1;
	v = realloc(l->cpus, n * sizeof(*v));
	if (!v)
		return NULL;
	memset(v + l->ncpus, 0, (n - l->ncpus) * sizeof(*v));
	for (i = l->ncpus; i < n; i++)
		v[i].losing = AGENT_TIME_NONE;
	l->cpus = v;
	l->ncpus = n;
	return &v[cpu];
}

/*
 * A CPU's ring is in its order, which its times follow but for a clock
 * that stepped back: such a time is taken as the CPU's last, so that the
 * log keeps the ring's order.
 */
static void in_order(struct agent_switch_cpu *c, struct agent_switch *s)
{
	if (s->ns < c->last)
		s->ns = c->last;
	if (s->type == AGENT_SWITCH_LOST && s->lost_to != AGENT_TIME_NONE && s->lost_to < s->ns)
		s->lost_to = s->ns;
	c->last = reach(s);
}

static void set_full(struct agent_switch_log *l, uint64_t ns)
{
	l->full = true;
	l->full_at = ns;
}

static int add_gap(struct agent_switch_log *l, unsigned int cpu)
{
	struct agent_switch_cpu *c = &l->cpus[cpu];

	c->has_gap = false;
	return vmctx_bundle_add_switch_gap(l->bundle, cpu, c->gap_from, c->gap_to);
}

/*
 * Switches of @cpu may be missing over [@from, @to]: the open gap grows,
 * or the next one opens.  Once the log is full, no switch closes a gap
 * any more: a CPU has one at most from then on, to the end.
 */
static int open_gap(struct agent_switch_log *l, unsigned int cpu, uint64_t from, uint64_t to)
{
	struct agent_switch_cpu *c = &l->cpus[cpu];
	int err;

	if (c->has_gap && (from <= c->gap_to || l->full)) {
		if (to > c->gap_to)
			c->gap_to = to;
		return 0;
	}
	if (c->has_gap) {
		err = add_gap(l, cpu);
		if (err)
			return err;
	}
	/* room left for one more gap of every CPU */
	if (!l->full && l->ngaps + AGENT_SWITCH_CPUS >= AGENT_SWITCH_GAPS_MAX)
		set_full(l, from);
	c->has_gap = true;
	c->gap_from = from;
	c->gap_to = to;
	l->ngaps++;
	return 0;
}

/* @cpu switched to @s's task at @ns; a gap it ends is added first. */
static int add_switch(struct agent_switch_log *l, unsigned int cpu, uint64_t ns,
		      const struct agent_switch *s)
{
	struct agent_switch_cpu *c = &l->cpus[cpu];
	int err;

	if (c->has_gap && ns > c->gap_to && !l->full) {
		err = add_gap(l, cpu);
		if (err)
			return err;
	}
	if (!l->full && l->nswitches == AGENT_SWITCHES_MAX)
		set_full(l, ns);
	if (l->full)
		return open_gap(l, cpu, ns, ns);
	err = vmctx_bundle_add_switch(l->bundle, cpu, ns, s->pid, s->tgid, s->kind, s->comm);
	if (err)
		return err;
	l->nswitches++;
	return 0;
}

/* @cpu's first record in the window: the task it ran at the start goes first. */
static int begin(struct agent_switch_log *l, unsigned int cpu)
{
	struct agent_switch_cpu *c = &l->cpus[cpu];

	if (c->started)
		return 0;
	c->started = true;
	if (!c->has_run)
		return 0;
	c->has_run = false;
	return add_switch(l, cpu, l->start, &c->run);
}

/* @n switches of @cpu lost over [@from, @to], which ends in the window. */
static int take_loss(struct agent_switch_log *l, unsigned int cpu, uint64_t from, uint64_t to,
		     uint64_t n)
{
	struct agent_switch_cpu *c = &l->cpus[cpu];
	int err;

	/* a loss over the start: who ran then is unknown */
	if (from <= l->start)
		c->has_run = false;
	err = begin(l, cpu);
	if (err)
		return err;
	l->lost += n;
	l->lost_cpus += !c->lost;
	c->lost = true;
	return open_gap(l, cpu, from < l->start ? l->start : from, to < l->end ? to : l->end);
}

/* One record, in its CPU's order, once the clock has passed it. */
static int take_one(struct agent_switch_log *l, const struct agent_switch *s)
{
	struct agent_switch_cpu *c = &l->cpus[s->cpu];
	uint64_t to = reach(s);
	int err;

	if (s->type == AGENT_SWITCH_LOST && s->lost_to == AGENT_TIME_NONE) {
		/* told again at each read while it lasts; the window's end may close it */
		c->losing = s->ns;
		c->nlosing = s->nlost;
		return 0;
	}
	c->losing = AGENT_TIME_NONE;
	if (s->ns > l->end) {
		l->outside++;
		return 0;
	}
	if (to < l->start) {
		/* before the window, only who runs at its start matters */
		c->has_run = s->type == AGENT_SWITCH;
		if (c->has_run)
			c->run = *s;
		return 0;
	}
	if (s->type == AGENT_SWITCH_LOST)
		return take_loss(l, s->cpu, s->ns, to, s->nlost);
	err = begin(l, s->cpu);
	return err ? err : add_switch(l, s->cpu, s->ns, s);
}

static int hold(struct agent_switch_log *l, const struct agent_switch *s)
{
	struct agent_switch *v;
	size_t cap;

	if (l->nheld == l->held_cap) {
		if (l->held_cap >= AGENT_SWITCHES_MAX) {
			refuse(l, s, "later than the guest's clock");
			return 0;
		}
		cap = l->held_cap ? 2 * l->held_cap : 256;
		v = realloc(l->held, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->held = v;
		l->held_cap = cap;
	}
	l->held[l->nheld++] = *s;
	return 0;
}

/*
 * A CPU's records reach ever later times (in_order()): of those that
 * wait, the ones the clock has passed come first, and a CPU's later
 * records wait behind its earlier ones.
 */
int agent_switch_log_take(struct agent_switch_log *l, const struct agent_switch *sw, size_t n,
			  uint64_t now)
{
	size_t i, kept = 0;
	int err = 0;

	for (i = 0; i < l->nheld; i++) {
		if (err || reach(&l->held[i]) > now)
			l->held[kept++] = l->held[i];
		else
			err = take_one(l, &l->held[i]);
	}
	l->nheld = kept;
	for (i = 0; !err && i < n; i++) {
		struct agent_switch s = sw[i];
		const char *why = implausible(&s);
		struct agent_switch_cpu *c;

		if (why) {
			refuse(l, &s, why);
			continue;
		}
		c = cpu_of(l, s.cpu);
		if (!c)
			return -ENOMEM;
		in_order(c, &s);
		err = reach(&s) > now ? hold(l, &s) : take_one(l, &s);
	}
	return err;
}

/*
 * The guest's clock has passed what the rings held once they are read: on
 * this machine's own /proc its clock is ours; a fake tree's is its table's.
 */
static uint64_t guest_now(const struct agent *a)
{
	struct timespec ts;

	if (!a->real_root || clock_gettime(CLOCK_MONOTONIC, &ts))
		return a->table.ns;
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int agent_switch_log_drain(struct agent *a, bool final)
{
	struct agent_switch *sw = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	if (a->ops && a->ops->read_switches)
		err = a->ops->read_switches(a, &sw, &n, &cap);
	/* serve: kept, for each bundle asked for to replay */
	if (!err && a->serving) {
		err = agent_switch_store_add(&a->store, sw, n);
		free(sw);
		return err;
	}
	if (!err)
		err = agent_switch_log_take(&a->switches, sw, n,
					    final ? a->table.ns : guest_now(a));
	free(sw);
	if (!err && final)
		err = agent_switch_log_finish(&a->switches, a->table.ns);
	return err;
}

/*
 * A loss still under way at the end leaves its CPU unknown from its start
 * to the end; a CPU with nothing in the window ran its task of before
 * throughout.
 */
int agent_switch_log_finish(struct agent_switch_log *l, uint64_t end)
{
	size_t cpu;
	int err;

	l->end = end;
	err = agent_switch_log_take(l, NULL, 0, AGENT_TIME_NONE);
	for (cpu = 0; !err && cpu < l->ncpus; cpu++) {
		struct agent_switch_cpu *c = &l->cpus[cpu];

		if (c->losing != AGENT_TIME_NONE && c->losing <= end)
			err = take_loss(l, cpu, c->losing, end, c->nlosing);
		else if (c->losing != AGENT_TIME_NONE)
			l->outside++;
		c->losing = AGENT_TIME_NONE;
		if (!err)
			err = begin(l, cpu);
		if (!err && c->has_gap)
			err = add_gap(l, cpu);
	}
	return err;
}
