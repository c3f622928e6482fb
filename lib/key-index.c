// SPDX-License-Identifier: LGPL-2.1-only
/*
 * A search index over sorted keys, for the bundle's lookups.  A binary
 * search of a million keys reads twenty places spread over megabytes, and
 * in a large bundle the last eight or ten of them miss the cache.  Here the
 * keys are copied once, at seal time, into blocks of two cache lines, and
 * each block's first key is repeated in a level above, and so on up to a
 * single block: a static B+-tree.  A search reads one block per level, top
 * down; the levels above the keys hold a fifteenth of them together and
 * stay in cache, so that a search misses about once, in the keys' block.
 *
 * Keys are one or two 64-bit words, compared in order.  Blocks are padded
 * with all-ones keys, which only the all-ones query could count: it is
 * answered before the search.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmctx-local.h"

#define BLOCK_BYTES	128
#define BLOCK_WORDS	(BLOCK_BYTES / sizeof(uint64_t))

/* Keys a block holds. */
static size_t block_keys(const struct key_index *x)
{
	return BLOCK_WORDS / x->width;
}

/* Is the key at @k <= (@a, @b)?  Without a branch. */
static inline size_t le1(const uint64_t *k, uint64_t a)
{
	return k[0] <= a;
}

static inline size_t le2(const uint64_t *k, uint64_t a, uint64_t b)
{
	return (k[0] < a) | ((k[0] == a) & (k[1] <= b));
}

/*
 * Keys of a block that are <= the query: halve the block without a branch
 * (conditional moves), so that a random query does not mispredict, then
 * one more comparison tells the last key in.
 */
#define BLOCK_COUNT(k, per, width, le, ...)					\
	({									\
		size_t c_ = 0, h_;						\
										\
		for (h_ = (per) / 2; h_; h_ /= 2)				\
			c_ += le(&(k)[(c_ + h_ - 1) * (width)], __VA_ARGS__) ? h_ : 0; \
		c_ + le(&(k)[c_ * (width)], __VA_ARGS__);			\
	})

int key_index_build(struct key_index *x, const void *base, size_t n, size_t size, size_t off,
		    unsigned width)
{
	size_t per, len[KEY_INDEX_MAX_LEVELS], total = 0, i, j;
	unsigned l, nl = 0;
	uint64_t *mem;

	memset(x, 0, sizeof(*x));
	x->width = width;
	if (!n)
		return 0;
	per = block_keys(x);
	/* Level l + 1 holds the first key of each of level l's blocks. */
	len[nl] = n;
	while (nl + 1 < KEY_INDEX_MAX_LEVELS) {
		total += (len[nl] + per - 1) / per * per;
		if (len[nl] <= per)
			break;
		len[nl + 1] = (len[nl] + per - 1) / per;
		nl++;
	}
	if (len[nl] > per)
		return -ENOMEM;	/* more keys than size_t can count: not reached */
	nl++;
	if (total > SIZE_MAX / BLOCK_BYTES)
		return -ENOMEM;
	/* (huge pages if large: blocks stay aligned on their 128 bytes) */
	mem = vmctx_calloc_big((total * width * sizeof(uint64_t) + BLOCK_BYTES - 1) / BLOCK_BYTES,
			       BLOCK_BYTES);
	if (!mem)
		return -ENOMEM;
	memset(mem, 0xff, total * width * sizeof(uint64_t));
	for (i = 0; i < n; i++)
		memcpy(&mem[i * width], (const char *)base + i * size + off,
		       width * sizeof(uint64_t));
	x->level[0] = mem;
	for (l = 1; l < nl; l++) {
		x->level[l] = x->level[l - 1] + (len[l - 1] + per - 1) / per * per * width;
		for (j = 0; j < len[l]; j++)
			memcpy(&x->level[l][j * width], &x->level[l - 1][j * per * width],
			       width * sizeof(uint64_t));
	}
	x->n = n;
	x->nlevels = nl;
	return 0;
}

/*
 * Block j of level l holds the last key <= the query of the level below:
 * descend from the top, one block a level.
 */
static size_t upper1(const struct key_index *x, uint64_t a)
{
	const size_t per = BLOCK_WORDS;
	size_t j = 0, c;
	unsigned l;

	for (l = x->nlevels; l--;) {
		c = BLOCK_COUNT(&x->level[l][j * per], per, 1, le1, a);
		if (!l)
			return j * per + c;
		if (!c)
			return 0;	/* only at the top */
		j = j * per + c - 1;
	}
	return 0;
}

static size_t upper2(const struct key_index *x, uint64_t a, uint64_t b)
{
	const size_t per = BLOCK_WORDS / 2;
	size_t j = 0, c;
	unsigned l;

	for (l = x->nlevels; l--;) {
		c = BLOCK_COUNT(&x->level[l][j * per * 2], per, 2, le2, a, b);
		if (!l)
			return j * per + c;
		if (!c)
			return 0;
		j = j * per + c - 1;
	}
	return 0;
}

size_t key_index_upper(const struct key_index *x, uint64_t a, uint64_t b)
{
	if (!x->n)
		return 0;
	if (a == UINT64_MAX && (x->width == 1 || b == UINT64_MAX))
		return x->n;
	return x->width == 1 ? upper1(x, a) : upper2(x, a, b);
}

void key_index_free(struct key_index *x)
{
	free(x->level[0]);
	memset(x, 0, sizeof(*x));
}
