// SPDX-License-Identifier: LGPL-2.1-only
/*
 * A guest's clock on the host's time axis: the relation that turns the
 * host time of a sample into the guest CLOCK_MONOTONIC time that the
 * bundle's task lifetimes are in.  Either linear (an offset and a rate,
 * from the clock fit or the caller), or the exact chain of what the
 * hardware and KVM know: host perf time to host TSC (perf's TIME_CONV),
 * host TSC to guest TSC (KVM's TSC offset and scaling ratio), guest TSC to
 * guest ns (the bundle's clock pairs).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "clock.h"

struct vmctx_clock *vmctx_clock_new(void)
{
	return calloc(1, sizeof(struct vmctx_clock));
}

void vmctx_clock_free(struct vmctx_clock *c)
{
	free(c);
}

int vmctx_clock_set_linear(struct vmctx_clock *c, uint64_t host_ref, int64_t offset,
			   int64_t rate_ppb)
{
	if (!c || offset == INT64_MIN || rate_ppb <= -1000000000LL || rate_ppb >= 1000000000LL)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->kind = VMCTX_CLOCK_LINEAR;
	c->host_ref = host_ref;
	c->offset = offset;
	c->rate_ppb = rate_ppb;
	return 0;
}

int vmctx_clock_set_tsc(struct vmctx_clock *c, const struct vmctx_clock_tsc *p,
			const struct vmctx_bundle *b)
{
	uint64_t khz;
	int err;

	if (!c || !p || !OPTS_VALID(p, struct vmctx_clock_tsc, tsc_frac_bits))
		return -EINVAL;
	if (!p->time_mult || p->time_shift > 63 || p->tsc_frac_bits > 63)
		return -EINVAL;
	err = bundle_check_sealed(b);
	if (err)
		return err;
	err = vmctx_bundle_clock(b, &khz, NULL, NULL);
	if (err)
		return err;
	if (!khz && vmctx_bundle_nclock_pairs(b) < 2)
		return -ENODATA;
	memset(c, 0, sizeof(*c));
	c->kind = VMCTX_CLOCK_TSC;
	/* an older caller's struct is shorter: its missing fields read as 0 */
	memcpy(&c->tsc, p, p->sz < sizeof(c->tsc) ? p->sz : sizeof(c->tsc));
	c->tsc.sz = sizeof(c->tsc);
	c->b = b;
	return 0;
}

enum vmctx_clock_kind vmctx_clock_kind(const struct vmctx_clock *c)
{
	return c ? c->kind : VMCTX_CLOCK_UNKNOWN;
}

int vmctx_clock_linear(const struct vmctx_clock *c, uint64_t *host_ref, int64_t *offset,
		       int64_t *rate_ppb)
{
	if (!c)
		return -EINVAL;
	if (c->kind != VMCTX_CLOCK_LINEAR)
		return -ENODATA;
	if (host_ref)
		*host_ref = c->host_ref;
	if (offset)
		*offset = c->offset;
	if (rate_ppb)
		*rate_ppb = c->rate_ppb;
	return 0;
}

/*
 * @tsc - @from.tsc in ns, at @num ns per @den ticks (@den not 0), or -1
 * if out of any range.  A sample's time converts twice, so where the
 * product fits 64 bits (a tick count after @from of under about 2^64 /
 * @num) one 64-bit division does what the 128-bit one would, to the same
 * ns.
 */
static __int128 ticks_to_ns(uint64_t tsc, const struct vmctx_clock_pair *from, uint64_t num,
			    uint64_t den)
{
	uint64_t prod;
	__int128 wide;

	if (tsc >= from->tsc && !__builtin_mul_overflow(tsc - from->tsc, num, &prod))
		return (__int128)from->ns + prod / den;
	/*
	 * A bundle's pairs may be crafted: a product past 128 bits, or a
	 * quotient whose sum would be, is out of range (-1 says so).
	 */
	if (__builtin_mul_overflow((__int128)tsc - (__int128)from->tsc, (__int128)num, &wide))
		return -1;
	wide /= den;
	if (wide > (__int128)1 << 100 || wide < -((__int128)1 << 100))
		return -1;
	return (__int128)from->ns + wide;
}

/*
 * util_upper_bound() over @b's n >= 2 sealed pairs by TSC: the number of
 * pairs at or below @tsc.  An agent writes its pairs at a steady pace, so
 * the pair at the average spacing is the one, or next to it: a look there
 * and a few steps spare a sample the binary search through hundreds of
 * pairs.  Pairs that are not evenly spread (or crafted) cost at most
 * PAIR_STEPS steps more than the binary search.
 */
#define PAIR_STEPS	4
static size_t pair_upper(const struct vmctx_bundle *b, uint64_t tsc)
{
	const struct vmctx_clock_pair *pr = b->pairs;
	size_t n = b->npairs, i, k;
	uint64_t step;

	if (tsc < pr[0].tsc)
		return 0;
	if (tsc >= pr[n - 1].tsc)
		return n;
	/* pr[0].tsc <= tsc < pr[n - 1].tsc: the answer is in [1, n - 1] */
	step = (pr[n - 1].tsc - pr[0].tsc) / (n - 1);
	i = step ? (tsc - pr[0].tsc) / step + 1 : 1;
	if (i > n - 1)
		i = n - 1;
	for (k = 0; k < PAIR_STEPS; k++) {
		if (pr[i - 1].tsc > tsc)
			i--;
		else if (pr[i].tsc <= tsc)
			i++;
		else
			return i;	/* pr[i - 1].tsc <= tsc < pr[i].tsc */
	}
	return util_upper_bound(pr, n, sizeof(*pr), offsetof(struct vmctx_clock_pair, tsc), tsc);
}

/*
 * Between two pairs, interpolate; outside them, go on at the TSC frequency
 * if the guest gave it, else at the nearest two pairs' rate.  A single pair
 * (or the clock record's) needs the frequency.
 */
int vmctx_bundle_guest_ns(const struct vmctx_bundle *b, uint64_t guest_tsc, uint64_t *ns)
{
	const struct vmctx_clock_pair *p, *q, one = { b ? b->clock_tsc : 0, b ? b->clock_ns : 0 };
	size_t n, i;
	__int128 d;

	if (!b || !ns)
		return -EINVAL;
	n = b->npairs;
	if (n > 1 && !b->sealed)
		return -VMCTX_E_UNSEALED;	/* the pairs are sorted when sealed */
	if (n < 2 && !b->tsc_khz)
		return -ENODATA;
	if (n < 2) {
		p = n ? &b->pairs[0] : &one;
		/* 1 kHz of TSC is 1e6 ns per 1000 ticks: ns = ticks * 1e6 / kHz */
		d = ticks_to_ns(guest_tsc, p, 1000000, b->tsc_khz);
	} else {
		i = pair_upper(b, guest_tsc);
		/* the segment [p, q] holding guest_tsc, or the nearest one */
		i = i == 0 ? 1 : i == n ? n - 1 : i;
		p = &b->pairs[i - 1];
		q = &b->pairs[i];
		if (b->tsc_khz && (guest_tsc < b->pairs[0].tsc || guest_tsc > b->pairs[n - 1].tsc))
			d = ticks_to_ns(guest_tsc, guest_tsc < p->tsc ? p : q, 1000000, b->tsc_khz);
		else
			d = ticks_to_ns(guest_tsc, p, q->ns - p->ns, q->tsc - p->tsc);
	}
	if (d < 0 || d >= (__int128)VMCTX_TIME_NONE)
		return -ERANGE;
	*ns = (uint64_t)d;
	return 0;
}

/*
 * perf's TIME_CONV backwards: host ns = time_zero + (TSC * mult) >> shift.
 * time_zero wraps below 0 when the TSC started before the clock (as perf
 * computes it, modulo 2^64): the difference is taken the same way.
 */
static __int128 host_tsc(const struct vmctx_clock_tsc *p, uint64_t host_ns)
{
	int64_t d = (int64_t)(host_ns - p->time_zero);
	__int128 t = d;

	/*
	 * floor, so that converting back gives host_ns or just below.  As
	 * perf_time_to_tsc() does it, in 64 bits where they hold: with d =
	 * q * mult + r, d * 2^shift / mult = q * 2^shift + r * 2^shift / mult,
	 * and r < mult < 2^32.
	 */
	if (d >= 0 && p->time_shift < 32) {
		uint64_t q = (uint64_t)d / p->time_mult, r = (uint64_t)d % p->time_mult;

		if (q <= UINT64_MAX >> p->time_shift)
			return (__int128)(q << p->time_shift) + (r << p->time_shift) / p->time_mult;
	}
	t *= (__int128)1 << p->time_shift;
	return t >= 0 ? t / p->time_mult : -((-t + p->time_mult - 1) / p->time_mult);
}

/*
 * KVM: guest TSC = ((host TSC * ratio) >> frac_bits) + offset, into *@out;
 * -ERANGE where it leaves 64 bits.  perf.data gives the chain, so any
 * ratio and any host time: a product past 128 bits is refused before it
 * overflows.
 */
static int guest_tsc(const struct vmctx_clock_tsc *p, __int128 tsc, uint64_t *out)
{
	__int128 prod;

	if (p->tsc_ratio) {
		if (__builtin_mul_overflow(tsc, (__int128)p->tsc_ratio, &prod))
			return -ERANGE;
		/* a division by a power of two, which for prod >= 0 is the shift */
		tsc = prod >= 0 ? prod >> p->tsc_frac_bits :
				  prod / ((__int128)1 << p->tsc_frac_bits);
	}
	/* (|offset| < 2^63: no sum of a TSC inside these bounds overflows) */
	if (tsc < -((__int128)1 << 64) || tsc > (__int128)1 << 65)
		return -ERANGE;
	tsc += p->tsc_offset;
	if (tsc < 0 || tsc > (__int128)UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)tsc;
	return 0;
}

/*
 * The TSC chain, out of line: its calls would otherwise make every sample
 * on a linear clock pay for the registers they need.
 */
static __attribute__((noinline)) int tsc_guest_ns(const struct vmctx_clock *c, uint64_t host_ns,
						  uint64_t *guest_ns)
{
	uint64_t tsc;
	int err;

	if (host_ns < c->tsc.from)
		return -ERANGE;
	err = guest_tsc(&c->tsc, host_tsc(&c->tsc, host_ns), &tsc);
	return err ?: vmctx_bundle_guest_ns(c->b, tsc, guest_ns);
}

int clock_guest_ns(const struct vmctx_clock *c, uint64_t host_ns, uint64_t *guest_ns)
{
	__int128 t;

	switch (c->kind) {
	case VMCTX_CLOCK_LINEAR:
		t = (__int128)host_ns + c->offset;
		/* no 128-bit division a sample when the rates agree (an offset alone) */
		if (c->rate_ppb)
			t += ((__int128)host_ns - c->host_ref) * c->rate_ppb / 1000000000;
		break;
	case VMCTX_CLOCK_TSC:
		return tsc_guest_ns(c, host_ns, guest_ns);
	default:
		return -ENODATA;
	}
	if (t < 0 || t >= (__int128)VMCTX_TIME_NONE)
		return -ERANGE;
	*guest_ns = (uint64_t)t;
	return 0;
}

int vmctx_clock_guest_ns(const struct vmctx_clock *c, uint64_t host_ns, uint64_t *guest_ns)
{
	if (!c || !guest_ns)
		return -EINVAL;
	return clock_guest_ns(c, host_ns, guest_ns);
}
