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
 *
 * Still, a search of a million keys descends five or seven blocks, even
 * when they are all in cache.  So in front of the tree sit buckets of
 * equal width, a power of two, from the first key to the last: a search
 * finds its bucket with a subtraction and a shift, and counts the few keys
 * in it.  Keys bunched together (a kernel's symbols, modules far above
 * them) crowd a bucket; such a bucket is split again, once, over its own
 * keys' span, and for two-word keys only where its keys share their first
 * word, which is then the second word's split (a root's tasks by start).
 * A bucket still crowded after that is left to the tree, so that no input
 * makes a search more than O(log n); the buckets cost O(n) memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include "key-index.h"

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

/* Keys a bucket holds if they are spread evenly; a bucket of more than SCAN is crowded. */
#define BUCKET_KEYS	4
#define BUCKET_SCAN	16
#define NODE_MIN	(2 * BUCKET_SCAN)

static inline uint64_t word_at(const struct key_index *x, size_t i, unsigned w)
{
	return x->level[0][i * x->width + w];
}

/* The shift that spreads @range over at most @want buckets. */
static unsigned spread(uint64_t range, size_t want)
{
	unsigned s = 0;

	while (s < 63 && (range >> s) >= want)
		s++;
	return s;
}

/* Node @nd over [lo, hi) at @word; its boundaries go at first[*used..]. */
static void node_fill(struct key_index *x, struct key_index_node *nd, size_t lo, size_t hi,
		      unsigned word, size_t *used)
{
	uint64_t min = word_at(x, lo, word);
	size_t i, j;

	nd->min = min;
	nd->head = word ? word_at(x, lo, 0) : 0;
	nd->lo = lo;
	nd->hi = hi;
	nd->word = word;
	nd->shift = spread(word_at(x, hi - 1, word) - min, (hi - lo) / BUCKET_KEYS);
	nd->nb = (size_t)((word_at(x, hi - 1, word) - min) >> nd->shift) + 1;
	nd->from = *used;
	for (i = lo, j = 0; j <= nd->nb; j++) {
		while (i < hi && (word_at(x, i, word) - min) >> nd->shift < j)
			i++;
		x->first[nd->from + j] = (uint32_t)i;
	}
	*used += nd->nb + 1;
}

/* Can the crowded bucket [lo, hi) be split again? */
static bool splittable(const struct key_index *x, size_t lo, size_t hi)
{
	return hi - lo > BUCKET_SCAN &&
	       (x->width == 1 || word_at(x, lo, 0) == word_at(x, hi - 1, 0));
}

static int buckets_build(struct key_index *x)
{
	size_t nb, nodes = 1, slots, used = 0, j;
	struct key_index_node top;

	if (x->n < NODE_MIN || x->n > UINT32_MAX)
		return 0;
	/*
	 * A node over k keys has at most k / BUCKET_KEYS buckets (spread()),
	 * and a child's keys are more than BUCKET_SCAN: so many slots at most
	 * for the top node's boundaries and then its children's.
	 */
	slots = 2 * (x->n / BUCKET_KEYS + 1) + x->n / (BUCKET_SCAN + 1);
	x->first = malloc(slots * sizeof(*x->first));
	if (!x->first)
		return -ENOMEM;
	node_fill(x, &top, 0, x->n, 0, &used);
	nb = top.nb;
	x->child = calloc(nb, sizeof(*x->child));
	if (!x->child)
		goto nomem;
	for (j = 0; j < nb; j++)
		if (splittable(x, x->first[j], x->first[j + 1]))
			nodes++;
	x->node = calloc(nodes, sizeof(*x->node));
	if (!x->node)
		goto nomem;
	x->node[0] = top;
	for (nodes = 1, j = 0; j < nb; j++) {
		size_t lo = x->first[j], hi = x->first[j + 1];

		if (!splittable(x, lo, hi))
			continue;
		node_fill(x, &x->node[nodes], lo, hi, x->width - 1, &used);
		x->child[j] = (uint32_t)nodes++;
	}
	return 0;
nomem:
	free(x->first);
	free(x->child);
	x->first = x->child = NULL;
	return -ENOMEM;
}

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
	mem = util_calloc_big((total * width * sizeof(uint64_t) + BLOCK_BYTES - 1) / BLOCK_BYTES,
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
	return buckets_build(x);
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

/* Keys in [lo, hi) <= (@a, @b), or SIZE_MAX for the tree to tell. */
static inline size_t bucket_count(const struct key_index *x, uint64_t a, uint64_t b)
{
	const struct key_index_node *nd = x->node;
	size_t j, lo, hi, c;
	unsigned d;

	for (d = 0; d < 2; d++) {
		uint64_t q = nd->word ? b : a;

		if (nd->word && a != nd->head)
			return a < nd->head ? nd->lo : nd->hi;
		if (q < nd->min)
			return nd->lo;
		j = (q - nd->min) >> nd->shift;
		if (j >= nd->nb)
			return nd->hi;
		lo = x->first[nd->from + j];
		hi = x->first[nd->from + j + 1];
		if (hi - lo <= BUCKET_SCAN) {
			const uint64_t *k = x->level[0];

			/* (a child's keys share their first word, the query's) */
			if (x->width == 1 || nd->word)
				for (c = lo; lo < hi; lo++)
					c += le1(&k[lo * x->width + nd->word], q);
			else
				for (c = lo; lo < hi; lo++)
					c += le2(&k[2 * lo], a, b);
			return c;
		}
		if (d || !x->child[j])
			break;
		nd = &x->node[x->child[j]];
	}
	return SIZE_MAX;
}

size_t key_index_upper(const struct key_index *x, uint64_t a, uint64_t b)
{
	size_t c;

	if (!x->n)
		return 0;
	if (a == UINT64_MAX && (x->width == 1 || b == UINT64_MAX))
		return x->n;
	if (x->node) {
		c = bucket_count(x, a, b);
		if (c != SIZE_MAX)
			return c;
	}
	return x->width == 1 ? upper1(x, a) : upper2(x, a, b);
}

void key_index_free(struct key_index *x)
{
	free(x->level[0]);
	free(x->first);
	free(x->child);
	free(x->node);
	memset(x, 0, sizeof(*x));
}
