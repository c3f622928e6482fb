// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The bundle's search index (lib/key-index.c), built into this test: for
 * keys spread evenly, bunched in clusters far apart, all equal, growing
 * geometrically, and at both ends of the 64-bit range, of one and of two
 * words, every count of keys <= a query agrees with a plain binary search
 * of the same keys: at each key, beside it, at the ends and at random.
 * Each shape is checked to go through the buckets it was built for (a
 * split bucket, or the tree behind a crowded one), so that the buckets'
 * paths are the ones tested.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "key-index.h"
#include "check.h"

static uint64_t rnd_state = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
	return check_rnd(&rnd_state);
}

static int cmp_key(const void *a, const void *b, void *width)
{
	const uint64_t *x = a, *y = b;
	unsigned i;

	for (i = 0; i < *(unsigned *)width; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

/* Keys <= (a, b) by the textbook binary search. */
static size_t plain_upper(const uint64_t *k, size_t n, unsigned w, uint64_t a, uint64_t b)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const uint64_t *m = &k[mid * w];

		if (m[0] < a || (m[0] == a && (w == 1 || m[1] <= b)))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct paths {
	size_t split, crowded;	/* top buckets split again, and left to the tree */
};

/* Which of the buckets' paths the index has. */
static struct paths paths_of(const struct key_index *x)
{
	struct paths p = { 0, 0 };
	size_t j;

	if (!x->node)
		return p;
	for (j = 0; j < x->node[0].nb; j++) {
		size_t keys = x->first[j + 1] - x->first[j];

		p.split += x->child[j] != 0;
		if (keys > 16 && !x->child[j])
			p.crowded++;
	}
	for (j = 1; j <= p.split; j++) {
		const struct key_index_node *nd = &x->node[j];
		size_t i;

		for (i = 0; i < nd->nb; i++)
			p.crowded += x->first[nd->from + i + 1] - x->first[nd->from + i] > 16;
	}
	return p;
}

static void probe(const struct key_index *x, const uint64_t *k, size_t n, unsigned w,
		  uint64_t a, uint64_t b, size_t *bad, const char *shape)
{
	size_t want = plain_upper(k, n, w, a, b), got = key_index_upper(x, a, b);

	if (got != want && (*bad)++ < 5)
		CHECK(0, "%s: (%#" PRIx64 ", %#" PRIx64 "): got %zu, want %zu", shape, a, b, got,
		      want);
}

/* Sort @k, index it, and probe it everywhere that matters. */
static struct paths check_shape(uint64_t *k, size_t n, unsigned w, const char *shape)
{
	struct key_index x;
	struct paths p;
	size_t i, bad = 0;
	int d;

	qsort_r(k, n, w * sizeof(*k), cmp_key, &w);
	CHECK(!key_index_build(&x, k, n, w * sizeof(*k), 0, w), "%s: built", shape);
	CHECK(n < 32 || x.node, "%s: %zu keys have buckets", shape, n);
	for (i = 0; i < n; i++) {
		const uint64_t *e = &k[i * w];

		for (d = -1; d <= 1; d++) {
			probe(&x, k, n, w, e[0] + d, w == 2 ? e[1] : 0, &bad, shape);
			if (w == 2)
				probe(&x, k, n, w, e[0], e[1] + d, &bad, shape);
		}
	}
	for (i = 0; i < 4 * n; i++) {
		const uint64_t *e = &k[(rnd() % n) * w];

		/* near a key, and anywhere */
		probe(&x, k, n, w, e[0] + rnd() % 64 - 32, rnd(), &bad, shape);
		probe(&x, k, n, w, rnd(), rnd(), &bad, shape);
		if (w == 2)
			probe(&x, k, n, w, e[0], e[1] + rnd() % 1024 - 512, &bad, shape);
	}
	probe(&x, k, n, w, 0, 0, &bad, shape);
	probe(&x, k, n, w, UINT64_MAX, 0, &bad, shape);
	probe(&x, k, n, w, UINT64_MAX, UINT64_MAX, &bad, shape);
	probe(&x, k, n, w, UINT64_MAX - 1, UINT64_MAX, &bad, shape);
	CHECK(!bad, "%s: %zu counts differ from a binary search", shape, bad);
	p = paths_of(&x);
	key_index_free(&x);
	return p;
}

#define N	20000

static void one_word_keys_count_as_a_binary_search_would(void)
{
	static uint64_t k[N];
	struct paths p;
	uint64_t at = 0;
	size_t i;

	for (i = 0; i < N; i++)
		k[i] = at += 1 + rnd() % 32;
	p = check_shape(k, N, 1, "evenly spread");
	CHECK(!p.crowded, "evenly spread keys crowd %zu buckets", p.crowded);

	/* a kernel's symbols, and modules far above them */
	for (i = 0; i < N; i++)
		k[i] = (i % 3 ? 0xffffffff81000000ULL : 0xffffffffc0000000ULL) + 16 * (rnd() % N);
	p = check_shape(k, N, 1, "two clusters");
	CHECK(p.split >= 2, "two clusters: %zu buckets split again", p.split);

	/* and at the ends of the range, wrapping as a bench's modules once did */
	for (i = 0; i < N; i++)
		k[i] = (i % 2 ? 0 : 0xffffffffc0000000ULL) + 0x100 * (rnd() % N);
	k[0] = 0;
	k[1] = UINT64_MAX;
	p = check_shape(k, N, 1, "both ends");
	CHECK(p.split >= 1, "both ends: %zu buckets split again", p.split);

	for (i = 0; i < N; i++)
		k[i] = 0x1234;
	p = check_shape(k, N, 1, "all equal");
	CHECK(p.crowded == 1, "all equal: %zu crowded buckets, want the one", p.crowded);

	for (i = 0; i < N; i++)
		k[i] = 1ULL << (rnd() % 64);
	p = check_shape(k, N, 1, "powers of two");
	CHECK(p.crowded >= 1, "powers of two: %zu crowded buckets", p.crowded);

	for (i = 0; i < N; i++)
		k[i] = rnd();
	check_shape(k, N, 1, "random");
	for (i = 0; i < 40; i++)
		k[i] = rnd() % 100;
	check_shape(k, 40, 1, "few");
	check_shape(k, 31, 1, "fewer than buckets need");
}

static void two_word_keys_count_as_a_binary_search_would(void)
{
	static uint64_t k[2 * N];
	struct paths p;
	size_t i;

	/* few roots, each reused by thousands of tasks in turn */
	for (i = 0; i < N; i++) {
		k[2 * i] = 0x10000000 + 0x2000 * (rnd() % 4);
		k[2 * i + 1] = 20 * (rnd() % N);
	}
	p = check_shape(k, N, 2, "few roots");
	CHECK(p.split == 4, "few roots: %zu roots' buckets split by time, want 4", p.split);

	/* a root per task or two */
	for (i = 0; i < N; i++) {
		k[2 * i] = 0x2000 * (rnd() % N);
		k[2 * i + 1] = rnd() % 1000;
	}
	check_shape(k, N, 2, "many roots");

	/* roots sharing a bucket: not split, left to the tree */
	for (i = 0; i < N; i++) {
		k[2 * i] = 0x2000 * (rnd() % 4) + (i % 2) * (1ULL << 40);
		k[2 * i + 1] = rnd();
	}
	check_shape(k, N, 2, "roots far apart");

	/* one root, all at one time, and at the ends of time */
	for (i = 0; i < N; i++) {
		k[2 * i] = 0x4000;
		k[2 * i + 1] = i % 3 ? 77 : i % 2 ? 0 : UINT64_MAX;
	}
	p = check_shape(k, N, 2, "one root, one time");
	CHECK(p.split == 1 && p.crowded >= 1, "one root, one time: %zu split, %zu crowded",
	      p.split, p.crowded);
}

int main(void)
{
	one_word_keys_count_as_a_binary_search_would();
	two_word_keys_count_as_a_binary_search_would();
	return check_result("test-key-index");
}
