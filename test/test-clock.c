// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Guest time on the host axis: the bundle's TSC/ns pairs, the exact chain
 * (perf's time conversion, KVM's TSC offset and scaling, the pairs), the
 * linear relation, the clock fit's rate, and a session that names each
 * owner of a reused root through them.  Every expected value is computed
 * here from how the clocks were built.
 */
#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vmctx.h"
#include "check.h"

#define R	0x12346000ULL
#define NS	1000000000ULL

/* A sealed copy of @b through the writer and the reader. */
static struct vmctx_bundle *round_trip(const struct vmctx_bundle *b)
{
	struct vmctx_bundle *r = NULL;
	size_t len = 0;
	void *buf = NULL;

	CHECK(!vmctx_bundle_write_mem(b, &buf, &len), "written");
	CHECK(buf && !vmctx_bundle_read_mem(buf, len, NULL, &r), "read back");
	free(buf);
	return r;
}

/*
 * A guest clock slewed +500 ppm against its 2 GHz TSC, paired every
 * second for ten seconds: between pairs, ns follow the pairs, not the
 * nominal frequency.
 */
static void pairs_follow_a_drifting_clock(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new(), *r;
	uint64_t ns = 0, i, want;

	vmctx_bundle_set_clock(b, 2000000, 4 * NS, 10 * NS);
	/* added out of order: sealing sorts them */
	for (i = 11; i-- > 0;)
		CHECK(!vmctx_bundle_add_clock_pair(b, 4 * NS + i * 2 * NS,
						   10 * NS + i * (NS + 500000)), "pair %" PRIu64, i);
	CHECK_EQ(vmctx_bundle_nclock_pairs(b), 11, "pairs counted");
	CHECK_EQ(vmctx_bundle_guest_ns(b, 5 * NS, &ns), -VMCTX_E_UNSEALED,
		 "unsorted pairs are not used");
	CHECK(!vmctx_bundle_seal(b), "sealed");
	/* 2.5 s of ticks after the first pair */
	want = 10 * NS + 2 * (NS + 500000) + (NS + 500000) / 2;
	CHECK(!vmctx_bundle_guest_ns(b, 4 * NS + 5 * NS, &ns) && ns == want,
	      "between pairs: got %" PRIu64 ", want %" PRIu64, ns, want);
	/* after the last pair (tsc 24e9, ns 20.005e9), at the TSC frequency */
	want = 10 * NS + 10 * (NS + 500000) + NS;
	CHECK(!vmctx_bundle_guest_ns(b, 26 * NS, &ns) && ns == want,
	      "past the pairs at 2 GHz: got %" PRIu64 ", want %" PRIu64, ns, want);
	r = round_trip(b);
	CHECK(r && vmctx_bundle_nclock_pairs(r) == 11, "pairs survive writing and reading");
	want = 10 * NS + 7 * (NS + 500000) + (NS + 500000) / 4;
	CHECK(r && !vmctx_bundle_guest_ns(r, 4 * NS + 14 * NS + NS / 2, &ns) && ns == want,
	      "read back, between pairs: got %" PRIu64 ", want %" PRIu64, ns, want);
	vmctx_bundle_free(r);
	vmctx_bundle_free(b);

	/* Without a frequency, two pairs are enough and their rate goes on. */
	b = vmctx_bundle_new();
	vmctx_bundle_add_clock_pair(b, 1000, 500);
	vmctx_bundle_add_clock_pair(b, 3000, 1500);
	CHECK(!vmctx_bundle_seal(b) && !vmctx_bundle_guest_ns(b, 5000, &ns) && ns == 2500,
	      "the pairs' rate past them: got %" PRIu64, ns);
	vmctx_bundle_free(b);

	/* A clock that goes back against the TSC is refused. */
	b = vmctx_bundle_new();
	vmctx_bundle_add_clock_pair(b, 1000, 500);
	vmctx_bundle_add_clock_pair(b, 3000, 400);
	CHECK_EQ(vmctx_bundle_seal(b), -VMCTX_E_RANGE, "pairs must increase in both");
	vmctx_bundle_free(b);
}

/*
 * Hundreds of pairs, however spread: the pair search looks where an even
 * spread would put the pair and steps from there, so it is tried on even,
 * clustered, random and lopsided spreads.  Segment k runs at 1 + k % 3 ns
 * a tick, so that a point read from a neighbouring segment comes out
 * wrong: at every pair, in the middle and at the end of each segment, and
 * past both ends (at the nearest segment's rate), ns is what the segments
 * say.
 */
static void pairs_found_however_spread(void)
{
	enum { N = 900 };
	static const char *const spreads[] = { "even", "clustered", "random", "lopsided" };
	size_t sp;

	for (sp = 0; sp < 4; sp++) {
		struct vmctx_bundle *b = vmctx_bundle_new();
		uint64_t tsc[N], gns[N], rnd = 42, ns = 0, want;
		size_t k, bad = 0;

		tsc[0] = 1000000;
		gns[0] = 5 * NS;
		for (k = 1; k < N; k++) {
			uint64_t len;

			rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
			switch (sp) {
			case 0:
				len = 1000;
				break;
			case 1:		/* half the pairs in the first 0.1% of the span */
				len = k < N / 2 ? 2 : 2000;
				break;
			case 2:
				len = 1 + (rnd >> 44);
				break;
			default:	/* one gap holds nearly all of the span */
				len = k == N / 3 ? 1ULL << 40 : 3;
				break;
			}
			tsc[k] = tsc[k - 1] + len;
			gns[k] = gns[k - 1] + (1 + (k - 1) % 3) * len;
		}
		for (k = N; k-- > 0;)
			vmctx_bundle_add_clock_pair(b, tsc[k], gns[k]);
		CHECK(!vmctx_bundle_seal(b), "%s: sealed", spreads[sp]);
		for (k = 0; k + 1 < N; k++) {
			uint64_t len = tsc[k + 1] - tsc[k], r = 1 + k % 3, d;

			for (d = 0; d < len; d += len / 2 ? len / 2 : 1) {
				want = gns[k] + r * d;
				bad += vmctx_bundle_guest_ns(b, tsc[k] + d, &ns) || ns != want;
			}
			want = gns[k] + r * (len - 1);
			bad += vmctx_bundle_guest_ns(b, tsc[k + 1] - 1, &ns) || ns != want;
		}
		bad += vmctx_bundle_guest_ns(b, tsc[N - 1], &ns) || ns != gns[N - 1];
		/* past the last pair at the last segment's rate, before the first at the first's */
		want = gns[N - 1] + (1 + (N - 2) % 3) * 10;
		bad += vmctx_bundle_guest_ns(b, tsc[N - 1] + 10, &ns) || ns != want;
		bad += vmctx_bundle_guest_ns(b, tsc[0] - 10, &ns) || ns != gns[0] - 10;
		CHECK(!bad, "%s spread: %zu of the points off their segment", spreads[sp], bad);
		vmctx_bundle_free(b);
	}
}

/*
 * The exact chain: host ns = 1000 + tsc / 2 (perf: 2 GHz, mult 2^30 >> 31);
 * KVM scales by 1.5 and subtracts 1e9 ticks; the guest clock runs at 3 GHz
 * from guest TSC 0 = ns 0 (a frequency, no pairs).  So guest TSC =
 * 1.5 * 2 * (H - 1000) - 1e9 and guest ns = (H - 1000) - 1e9 / 3.
 */
static void tsc_chain_is_exact(void)
{
	struct vmctx_clock_tsc p = {
		.sz = sizeof(p), .time_zero = 1000, .time_mult = 1u << 30, .time_shift = 31,
		.tsc_offset = -1000000000LL, .tsc_ratio = 3ULL << 47, .tsc_frac_bits = 48,
	};
	struct vmctx_bundle *b = vmctx_bundle_new();
	struct vmctx_clock *c = vmctx_clock_new();
	uint64_t h, ns = 0, want;
	bool exact = true;

	CHECK(c && vmctx_clock_kind(c) == VMCTX_CLOCK_UNKNOWN, "a new clock is unknown");
	CHECK_EQ(vmctx_clock_guest_ns(c, 5, &ns), -ENODATA, "an unknown clock converts nothing");
	vmctx_bundle_set_clock(b, 3000000, 0, 0);
	CHECK_EQ(vmctx_clock_set_tsc(c, &p, b), -VMCTX_E_UNSEALED, "the bundle must be sealed");
	CHECK(!vmctx_bundle_seal(b) && !vmctx_clock_set_tsc(c, &p, b), "TSC chain set");
	CHECK(vmctx_clock_kind(c) == VMCTX_CLOCK_TSC, "kind TSC");
	for (h = NS; h < 100 * NS; h += 7 * NS + 12345) {
		want = h - 1000 - 333333334;	/* 1e9 / 3, rounded towards the later ns */
		if (vmctx_clock_guest_ns(c, h, &ns) || (ns > want + 1 || ns + 1 < want)) {
			exact = false;
			CHECK(0, "host %" PRIu64 ": guest %" PRIu64 ", want %" PRIu64, h, ns, want);
		}
	}
	CHECK(exact, "the chain is exact to a nanosecond over 100 s");
	/*
	 * A TSC that started before the host clock: perf's time_zero wraps
	 * below 0 (a real L1 host had time_zero = 2^64 - 367724619).  The
	 * same chain with time_zero -1000 instead of +1000 is 2000 ns later.
	 */
	p.time_zero = (uint64_t)-1000;
	CHECK(!vmctx_clock_set_tsc(c, &p, b), "TSC chain with a negative time_zero");
	want = 5 * NS + 1000 - 333333334;
	CHECK(!vmctx_clock_guest_ns(c, 5 * NS, &ns) && (ns <= want + 1 && ns + 1 >= want),
	      "time_zero below 0: host 5 s is guest %" PRIu64 ", want %" PRIu64, ns, want);
	p.time_zero = 1000;
	/*
	 * A VM started while perf recorded: KVM's offset held from host 40 s
	 * only.  Before it there is no guest time; from it, the same chain.
	 */
	p.from = 40 * NS;
	CHECK(!vmctx_clock_set_tsc(c, &p, b), "TSC chain from 40 s");
	CHECK_EQ(vmctx_clock_guest_ns(c, 40 * NS - 1, &ns), -ERANGE,
		 "no guest time before the offset was known");
	want = 40 * NS - 1000 - 333333334;
	CHECK(!vmctx_clock_guest_ns(c, 40 * NS, &ns) && (ns <= want + 1 && ns + 1 >= want),
	      "from 40 s: guest %" PRIu64 ", want %" PRIu64, ns, want);
	/* a caller built before 'from' existed: its shorter struct holds always */
	p.sz = offsetof(struct vmctx_clock_tsc, from);
	CHECK(!vmctx_clock_set_tsc(c, &p, b), "an older, shorter struct is taken");
	CHECK(!vmctx_clock_guest_ns(c, 5 * NS, &ns), "an older struct's chain has no 'from'");
	p.sz = sizeof(p);
	p.from = 0;
	p.time_mult = 0;
	CHECK_EQ(vmctx_clock_set_tsc(c, &p, b), -EINVAL, "a zero multiplier is refused");
	vmctx_bundle_free(b);

	/* a bundle with no clock data cannot be on the chain */
	b = vmctx_bundle_new();
	p.time_mult = 1u << 30;
	CHECK(!vmctx_bundle_seal(b) && vmctx_clock_set_tsc(c, &p, b) == -ENODATA,
	      "no clock data, no chain");
	vmctx_bundle_free(b);
	vmctx_clock_free(c);
	vmctx_clock_free(NULL);
}

/*
 * The chain to the nanosecond, as vmctx.h defines it, at random: host TSC
 * = the largest t with time_zero + ((t * mult) >> shift) <= host ns (the
 * floor of (host ns - time_zero) * 2^shift / mult); guest TSC = ((host
 * TSC * ratio) >> frac_bits) + offset; guest ns by the pairs' segment.
 * Shifts from 0 to 40 and pairs 1e3 to 1e13 ticks apart: the products
 * both fit 64 bits and do not.
 */
static __int128 floor_div(__int128 a, __int128 b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static void tsc_chain_matches_its_definition(void)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL, ns = 0;
	int round, i, bad = 0, fast = 0, slow = 0;

	for (round = 0; round < 200; round++) {
		struct vmctx_clock_tsc p = { .sz = sizeof(p) };
		struct vmctx_bundle *b = vmctx_bundle_new();
		struct vmctx_clock *c = vmctx_clock_new();
		uint64_t gap = 1000ULL * (1ULL << (check_rnd(&seed) % 34)), tsc[4], gns[4];
		int n = 2 + check_rnd(&seed) % 3, k;

		p.time_shift = check_rnd(&seed) % 41;
		p.time_mult = 1 + check_rnd(&seed) % 0xffffffffULL;
		p.time_zero = check_rnd(&seed) % (1ULL << 40);
		p.tsc_offset = (int64_t)(check_rnd(&seed) % (1ULL << 40)) - (1LL << 39);
		if (round % 2) {
			p.tsc_frac_bits = 48;
			p.tsc_ratio = (1ULL << 47) + check_rnd(&seed) % (1ULL << 48);
		}
		for (i = 0; i < n; i++) {
			tsc[i] = ((uint64_t)1 << 40) + (i * gap + check_rnd(&seed) % (gap / 2 + 1));
			gns[i] = ((uint64_t)1 << 39) + (i * gap + check_rnd(&seed) % (gap / 2 + 1));
			vmctx_bundle_add_clock_pair(b, tsc[i], gns[i]);
		}
		k = vmctx_bundle_seal(b);
		CHECK(!k && !(k = vmctx_clock_set_tsc(c, &p, b)), "round %d: chain: %d", round, k);
		for (i = 0; i < 50; i++) {
			uint64_t h = p.time_zero + check_rnd(&seed) % (1ULL << (20 + round % 40));
			__int128 t = floor_div(((__int128)h - p.time_zero) << p.time_shift, p.time_mult);
			__int128 d;

			/* (a host TSC past 2^64 is no real one, and its product overflows) */
			if (t >> 64)
				continue;
			if (p.tsc_ratio)
				t = floor_div(t * p.tsc_ratio, (__int128)1 << p.tsc_frac_bits);
			t += p.tsc_offset;
			/* (before the first pair the library truncates, as C divides) */
			if (t < (__int128)tsc[0])
				continue;
			/* the segment holding t, or the first or last one */
			for (k = 1; k < n - 1 && (uint64_t)t >= tsc[k]; k++)
				;
			d = (__int128)gns[k - 1] + floor_div(((__int128)t - tsc[k - 1]) *
							      (gns[k] - gns[k - 1]),
							      tsc[k] - tsc[k - 1]);
			if (d < 0 || d >= (__int128)VMCTX_TIME_NONE)
				continue;
			((uint64_t)t - tsc[k - 1]) * (__int128)(gns[k] - gns[k - 1]) >> 64 ? slow++ : fast++;
			if (vmctx_clock_guest_ns(c, h, &ns) || ns != (uint64_t)d) {
				if (bad++ < 5)
					CHECK(0, "round %d, host %" PRIu64 ": guest %" PRIu64 ", want %" PRIu64,
					      round, h, ns, (uint64_t)d);
			}
		}
		vmctx_clock_free(c);
		vmctx_bundle_free(b);
	}
	CHECK(!bad, "%d conversions off their definition", bad);
	CHECK(fast > 100 && slow > 100, "products within 64 bits (%d) and beyond (%d) both tried",
	      fast, slow);
}

/* Crafted chains and pairs: refused, never overflowed. */
static void crafted_clocks_are_refused(void)
{
	uint64_t ns = 0;

	/*
	 * perf.data gives the chain: a host TSC of 2^126 (shift 63, mult 1)
	 * times a ratio of 2^64 - 1 is past 128 bits, either sign: no guest
	 * time, and no overflow (the sanitizer builds run this).
	 */
	{
		struct vmctx_clock_tsc p = {
			.sz = sizeof(p), .time_mult = 1, .time_shift = 63,
			.tsc_ratio = UINT64_MAX, .tsc_frac_bits = 63, .tsc_offset = INT64_MIN,
		};
		struct vmctx_bundle *b = vmctx_bundle_new();
		struct vmctx_clock *c = vmctx_clock_new();

		vmctx_bundle_set_clock(b, 3000000, 0, 0);
		CHECK(!vmctx_bundle_seal(b) && !vmctx_clock_set_tsc(c, &p, b), "a wild chain is taken");
		CHECK_EQ(vmctx_clock_guest_ns(c, 1ULL << 62, &ns), -ERANGE, "host TSC 2^125: out of range");
		CHECK_EQ(vmctx_clock_guest_ns(c, 1ULL << 63, &ns), -ERANGE, "host TSC -2^126: out of range");
		CHECK_EQ(vmctx_clock_guest_ns(c, UINT64_MAX, &ns), -ERANGE, "host TSC -2^63: out of range");
		p.tsc_ratio = 0;
		p.tsc_offset = INT64_MAX;
		CHECK(!vmctx_clock_set_tsc(c, &p, b), "no scaling, the largest offset");
		CHECK_EQ(vmctx_clock_guest_ns(c, 1ULL << 62, &ns), -ERANGE, "host TSC 2^125 plus it: out of range");
		vmctx_clock_free(c);
		vmctx_bundle_free(b);
	}
	/* a bundle's pairs may be crafted too: 2^64 - 2 ns in one tick, then 2^64 ticks on */
	{
		struct vmctx_bundle *b = vmctx_bundle_new();

		vmctx_bundle_add_clock_pair(b, 1, 0);
		vmctx_bundle_add_clock_pair(b, 2, UINT64_MAX - 1);
		CHECK(!vmctx_bundle_seal(b), "steep pairs sealed");
		CHECK_EQ(vmctx_bundle_guest_ns(b, UINT64_MAX, &ns), -ERANGE,
			 "2^64 ticks at 2^64 ns a tick: out of range");
		CHECK_EQ(vmctx_bundle_guest_ns(b, 0, &ns), -ERANGE,
			 "a tick before the pairs at that rate: out of range");
		vmctx_bundle_free(b);
	}
}

static void linear_clock_has_a_rate(void)
{
	struct vmctx_clock *c = vmctx_clock_new();
	uint64_t ns = 0, ref = 0;
	int64_t off = 0, rate = 0;

	CHECK(!vmctx_clock_set_linear(c, NS, 5 * NS, 811000), "linear set");
	/* 1 s after the reference, 811 ppm of a second more */
	CHECK(!vmctx_clock_guest_ns(c, 2 * NS, &ns) && ns == 7 * NS + 811000,
	      "offset and rate: got %" PRIu64, ns);
	CHECK(!vmctx_clock_guest_ns(c, 0, &ns) && ns == 5 * NS - 811000,
	      "before the reference: got %" PRIu64, ns);
	CHECK(!vmctx_clock_linear(c, &ref, &off, &rate) && ref == NS && off == 5 * (int64_t)NS &&
	      rate == 811000, "parameters read back");
	CHECK_EQ(vmctx_clock_set_linear(c, 0, 0, 1000000000LL), -EINVAL, "a 100% rate is refused");
	CHECK(!vmctx_clock_set_linear(c, 0, -10 * (int64_t)NS, 0) &&
	      vmctx_clock_guest_ns(c, NS, &ns) == -ERANGE, "a time before the guest's 0 is refused");
	vmctx_clock_free(c);
}

/*
 * The guest clock runs 811 ppm fast: guest = host + 3 s + host * 811e-6.
 * Forty processes on roots of their own live 150 ms each, one starting
 * every 200 ms, and the fit learns the clock from them.  Meanwhile 400
 * processes of 20 ms each run one after the other on two roots that
 * alternate (a freed root is reused at once): only a clock right to well
 * under 20 ms names them.
 */
#define OFF_NS		3000000000LL
#define RATE_PPB	811000LL
#define FIRST_NS	(OFF_NS + 100000000ULL)
#define SOLO		40
#define SOLO_EVERY	200000000ULL
#define SOLO_LIFE	150000000ULL
#define CHURN		400
#define LIFE_NS		20000000ULL
#define SOLO_ROOT(i)	(R + 0x100000 + (i) * 0x2000ULL)
#define CHURN_ROOT(k)	(R + ((k) % 2) * 0x2000ULL)

static uint64_t drift_guest(uint64_t host)
{
	return host + OFF_NS + host * RATE_PPB / 1000000000LL;
}

static struct vmctx_bundle *drift_bundle(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	char comm[16];
	int i;

	for (i = 0; i < SOLO; i++) {
		uint64_t start = FIRST_NS + i * SOLO_EVERY;

		snprintf(comm, sizeof(comm), "solo%d", i);
		vmctx_bundle_add_task(b, SOLO_ROOT(i), 1000 + i, 1000 + i, comm, start,
				      start + SOLO_LIFE);
	}
	for (i = 0; i < CHURN; i++) {
		uint64_t start = FIRST_NS + i * LIFE_NS;

		snprintf(comm, sizeof(comm), "p%d", i);
		vmctx_bundle_add_task(b, CHURN_ROOT(i), 100 + i, 100 + i, comm, start,
				      start + LIFE_NS - 1);
	}
	CHECK(!vmctx_bundle_seal(b), "drift bundle sealed");
	return b;
}

/* The process alive at guest time @g among @n of @life ns every @every ns: its index, or -1. */
static int alive(uint64_t g, int n, uint64_t every, uint64_t life)
{
	if (g < FIRST_NS || g >= FIRST_NS + n * every || (g - FIRST_NS) % every >= life)
		return -1;
	return (int)((g - FIRST_NS) / every);
}

static void fit_finds_the_rate(void)
{
	struct vmctx_bundle *b = drift_bundle();
	struct vmctx_clock_fit *f = vmctx_clock_fit_new(b);
	struct vmctx_clock *c = vmctx_clock_new();
	uint64_t t, agree = 0, used = 0, ref = 0, right = 0, all = 0, g;
	int64_t off = 0, rate = 0;

	/* one sample per ms on each of two vCPUs: the solo processes, the churn */
	for (t = 0; t < 9 * NS; t += 1000000) {
		int i = alive(drift_guest(t), SOLO, SOLO_EVERY, SOLO_LIFE);
		int k = alive(drift_guest(t), CHURN, LIFE_NS, LIFE_NS);

		if (i >= 0)
			vmctx_clock_fit_add(f, t, SOLO_ROOT(i));
		if (k >= 0)
			vmctx_clock_fit_add(f, t, CHURN_ROOT(k));
	}
	CHECK(!vmctx_clock_fit_solve(f, c, &agree, &used), "offset and rate");
	CHECK(!vmctx_clock_linear(c, &ref, &off, &rate), "a linear clock");
	CHECK(rate > RATE_PPB - 50000 && rate < RATE_PPB + 50000,
	      "rate within 50 ppm of 811 ppm: got %" PRId64 " ppb", rate);
	CHECK(agree >= SOLO * 149, "the solo processes' samples agree: %" PRIu64 " of %" PRIu64,
	      agree, used);
	/* every churn sample put on the guest clock lands in its own process */
	for (t = 0; t < 9 * NS; t += 1000000) {
		int k = alive(drift_guest(t), CHURN, LIFE_NS, LIFE_NS);
		int task;

		if (k < 0)
			continue;
		all++;
		task = vmctx_clock_guest_ns(c, t, &g) ? -1 :
		       vmctx_bundle_find_task(b, CHURN_ROOT(k), g);
		if (task >= 0 && alive(g, CHURN, LIFE_NS, LIFE_NS) == k)
			right++;
	}
	CHECK(all > 7900 && right * 100 >= all * 99,
	      "%" PRIu64 " of %" PRIu64 " churn samples find their process", right, all);

	/* the offset alone, without the rate, misses some of them */
	CHECK(!vmctx_clock_set_linear(c, ref, off, 0), "rate dropped");
	for (right = 0, t = 0; t < 9 * NS; t += 1000000) {
		int k = alive(drift_guest(t), CHURN, LIFE_NS, LIFE_NS);

		if (k >= 0 && !vmctx_clock_guest_ns(c, t, &g) &&
		    alive(g, CHURN, LIFE_NS, LIFE_NS) == k)
			right++;
	}
	CHECK(right * 100 < all * 95, "without the rate, only %" PRIu64 " of %" PRIu64, right, all);
	vmctx_clock_free(c);
	vmctx_clock_fit_free(f);
	vmctx_bundle_free(b);
}

/*
 * A session names each owner of a reused root once it has the clock, and
 * none of them without: root R served "early" until guest 5 s, then "late".
 */
static void session_resolves_reused_roots_with_a_clock(void)
{
	struct vmctx_session_opts o = { .sz = sizeof(o), .tick_ns = 1000000 };
	struct vmctx_bundle *b = vmctx_bundle_new();
	struct vmctx_clock *c = vmctx_clock_new();
	int pass;

	vmctx_bundle_add_task(b, R, 10, 10, "early", 1 * NS, 5 * NS);
	vmctx_bundle_add_task(b, R, 11, 11, "late", 5 * NS, VMCTX_TIME_NONE);
	CHECK(!vmctx_bundle_seal(b), "sealed");
	/* guest = host + 4 s: host 0.5 s .. 1.5 s is guest 4.5 s .. 5.5 s */
	CHECK(!vmctx_clock_set_linear(c, 0, 4 * NS, 0), "clock");
	for (pass = 0; pass < 2; pass++) {
		struct vmctx_session *s = vmctx_session_new(&o);
		struct vmctx_table *tab;
		uint64_t t;

		CHECK(s && vmctx_session_add_vm(s, 77, "vm") == 1, "VM declared");
		CHECK(!vmctx_session_attach_bundle(s, 77, b, VMCTX_OFFSET_UNKNOWN), "attached");
		CHECK_EQ(vmctx_session_set_clock(s, 78, c), -ENOENT, "unknown VM");
		CHECK(!vmctx_session_set_clock(s, 77, pass ? c : NULL), "clock set");
		for (t = NS / 2; t < NS + NS / 2; t += 1000000) {
			struct vmctx_sample smp = {
				.sz = sizeof(smp), .time = t, .cpu = 0, .pid = 77, .tid = 78,
				.vm_tgid = 77, .vcpu = 0, .flags = VMCTX_SAMPLE_GUEST, .cpl = 3,
				.isa = VMCTX_ISA_SVM, .cr3 = R, .ip = 0x401000,
			};

			CHECK(!vmctx_session_sample(s, &smp), "sample");
		}
		CHECK(!vmctx_session_finish(s, NS + NS / 2), "finish");
		tab = vmctx_table_new(s, VMCTX_VIEW_GUEST, 77, -1);
		CHECK(tab, "table");
		if (pass) {
			CHECK_EQ(vmctx_table_lookup(tab, NULL, "early"), 500, "early's half");
			CHECK_EQ(vmctx_table_lookup(tab, NULL, "late"), 500, "late's half");
		} else {
			CHECK(!vmctx_table_lookup(tab, NULL, "early") &&
			      !vmctx_table_lookup(tab, NULL, "late"),
			      "without a clock, a reused root names nobody");
		}
		vmctx_table_free(tab);
		vmctx_session_free(s);
	}
	vmctx_clock_free(c);
	vmctx_bundle_free(b);
}

int main(void)
{
	pairs_follow_a_drifting_clock();
	pairs_found_however_spread();
	tsc_chain_is_exact();
	tsc_chain_matches_its_definition();
	crafted_clocks_are_refused();
	linear_clock_has_a_rate();
	fit_finds_the_rate();
	session_resolves_reused_roots_with_a_clock();
	return check_result("test-clock");
}
