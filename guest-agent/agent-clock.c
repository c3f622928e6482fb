// SPDX-License-Identifier: GPL-2.0
/*
 * The guest clock, for the host: pairs of the guest TSC and the guest's
 * CLOCK_MONOTONIC, in which the bundle's times are.  The host puts a
 * sample's host time on the guest TSC through KVM's TSC offset, and on
 * the guest clock through these pairs, interpolating between them.
 *
 * A pair is only as good as the time between its two reads: an interrupt,
 * or the host preempting the vCPU, between reading the TSC and reading the
 * clock puts one of them late, and every host sample between that pair
 * and its neighbours as far off.  So the TSC is read between two readings
 * of the clock, the tightest of a few tries is taken, with the clock at
 * the middle of the two readings, and a pair whose readings lie far apart
 * is not kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "agent.h"
#include "agent-tsc.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

uint64_t agent_clock_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX, n0, n1, t;
	unsigned int i;

	for (i = 0; i < AGENT_PAIR_TRIES; i++) {
		n0 = mono_ns();
		t = agent_tsc();	/* after the clock read before it, before the one after */
		n1 = mono_ns();
		if (n1 < n0 || n1 - n0 >= best)
			continue;
		best = n1 - n0;
		*tsc = t;
		*ns = n0 + best / 2;
	}
	return best;
}

int agent_pairs_note(struct agent_pairs *p, uint64_t tsc, uint64_t ns, uint64_t span)
{
	struct agent_pair *nv;

	if (span > AGENT_PAIR_MAX_SPAN_NS) {
		p->dropped++;
		return 0;
	}
	if (p->n && (ns < p->v[p->n - 1].ns + AGENT_PAIR_EVERY_NS || tsc <= p->v[p->n - 1].tsc))
		return 0;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256;

		nv = realloc(p->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		p->v = nv;
		p->cap = cap;
	}
	p->v[p->n].tsc = tsc;
	p->v[p->n].ns = ns;
	p->n++;
	if (span > p->max_span)
		p->max_span = span;
	return 0;
}

int agent_pairs_take(struct agent_pairs *p)
{
	uint64_t tsc = 0, ns = 0, span;

	span = agent_clock_pair(&tsc, &ns);
	return agent_pairs_note(p, tsc, ns, span);
}
