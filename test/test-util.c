// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The library's id index (lib/util.c, util_id_*), built into this test:
 * ids spread over the 64-bit range, ids that differ in their high word
 * only (a VM's tgid above a vCPU's id, as the session keys them), ids
 * that share their low bits, and 0 and UINT64_MAX, each added with its
 * position: every id finds its own position through each growth, and ids
 * never added, including each added id's neighbours, find none.  And the
 * string pool (util_pool_*): strings of every size, past a chunk's, each
 * keeps its bytes while the others are carved after it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "check.h"

#define N 5000

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	return check_rnd(&rnd_state);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Is @id among the @n ids of @sorted? */
static int added(const uint64_t *sorted, size_t n, uint64_t id)
{
	return bsearch(&id, sorted, n, sizeof(*sorted), cmp_u64) != NULL;
}

static void check_shape(const char *shape, uint64_t (*make)(size_t i))
{
	static uint64_t ids[N], sorted[N];
	struct util_id_index x;
	size_t i, k, misses = 0, wrong = 0;

	memset(&x, 0, sizeof(x));
	CHECK(util_id_find(&x, 42) == -1, "%s: an empty index finds nothing", shape);
	for (i = 0; i < N; i++) {
		ids[i] = make(i);
		CHECK(!util_id_add(&x, ids[i], i), "%s: add %zu", shape, i);
		/* after each growth, every id so far is still found */
		if ((i & (i + 1)) == 0)
			for (k = 0; k <= i; k++)
				if (util_id_find(&x, ids[k]) != (int)k)
					wrong++;
	}
	memcpy(sorted, ids, sizeof(ids));
	qsort(sorted, N, sizeof(*sorted), cmp_u64);
	for (i = 0; i < N; i++) {
		if (util_id_find(&x, ids[i]) != (int)i)
			wrong++;
		if (!added(sorted, N, ids[i] + 1) && util_id_find(&x, ids[i] + 1) != -1)
			misses++;
		if (!added(sorted, N, ids[i] - 1) && util_id_find(&x, ids[i] - 1) != -1)
			misses++;
	}
	CHECK(!wrong, "%s: %zu ids found another position", shape, wrong);
	CHECK(!misses, "%s: %zu ids never added were found", shape, misses);
	CHECK(x.used == N && x.size >= 2 * N, "%s: %zu used of %zu slots (at most half full)",
	      shape, x.used, x.size);
	util_id_index_free(&x);
	CHECK(!x.size && util_id_find(&x, ids[0]) == -1, "%s: freed, it finds nothing", shape);
}

static uint64_t spread(size_t i)
{
	return i == 0 ? 0 : i == 1 ? UINT64_MAX : rnd() | 1;
}

static uint64_t high_word(size_t i)
{
	/* VM tgids above one vCPU id each: the low word alike */
	return (uint64_t)(1000 + i) << 32 | 3;
}

static uint64_t low_bits(size_t i)
{
	/* multiples of a large power of two: no low bit to tell them apart */
	return (uint64_t)(i + 1) << 40;
}

static uint64_t vcpus(size_t i)
{
	/* 50 VMs of 100 vCPUs each, as vcpu_key() makes them */
	return (uint64_t)(4000 + i / 100) << 32 | (uint32_t)(i % 100);
}

/* String @i of the pool test: its length and the byte it repeats. */
static size_t pool_len(size_t i)
{
	return i % 997 == 0 ? (size_t)200000 + i : i % 61;
}

static void check_pool(void)
{
	enum { NSTR = 20000 };
	static char *str[NSTR];
	struct util_pool p = { 0 };
	size_t i, k, bad = 0, overlap = 0;

	for (i = 0; i < NSTR; i++) {
		str[i] = util_pool_alloc(&p, pool_len(i) + 1);
		if (!str[i]) {
			CHECK(0, "pool: string %zu of %zu bytes", i, pool_len(i) + 1);
			return;
		}
		memset(str[i], 'a' + i % 26, pool_len(i));
		str[i][pool_len(i)] = '\0';
	}
	for (i = 0; i < NSTR; i++) {
		if (strlen(str[i]) != pool_len(i))
			bad++;
		for (k = 0; k < pool_len(i); k++)
			if (str[i][k] != 'a' + (char)(i % 26)) {
				bad++;
				break;
			}
		/* the next string starts past this one's NUL, or elsewhere */
		if (i && str[i] > str[i - 1] && str[i] <= str[i - 1] + pool_len(i - 1))
			overlap++;
	}
	CHECK(!bad, "pool: %zu of %d strings lost their bytes", bad, NSTR);
	CHECK(!overlap, "pool: %zu strings overlap the one before", overlap);
	util_pool_free(&p);
	CHECK(!p.head, "pool: freed, it is empty");
	util_pool_free(&p);
}

int main(void)
{
	struct util_id_index x;

	check_shape("spread", spread);
	check_shape("high word", high_word);
	check_shape("low bits", low_bits);
	check_shape("vcpus", vcpus);
	memset(&x, 0, sizeof(x));
	CHECK(util_id_add(&x, 7, UINT32_MAX) == -EOVERFLOW,
	      "a position that cannot be stored is refused");
	util_id_index_free(&x);
	check_pool();
	return check_result("test-util");
}
