/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * A search index over sorted keys (key-index.c), built once: a static
 * B+-tree whose upper levels stay in cache.
 */
#ifndef VMCTX_KEY_INDEX_H
#define VMCTX_KEY_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/*
 * A search index over sorted keys (key-index.c), built once: a static
 * B+-tree whose upper levels stay in cache.  A key is @width (1 or 2)
 * 64-bit words, compared in order.
 */
#define KEY_INDEX_MAX_LEVELS	16
/* Buckets over the keys [lo, hi) at a word: first[from .. from + nb]. */
struct key_index_node {
	uint64_t min;		/* the word of the first key */
	uint64_t head;		/* at word 1: the keys' shared first word */
	size_t from, nb, lo, hi;
	unsigned shift, word;
};
struct key_index {
	uint64_t *level[KEY_INDEX_MAX_LEVELS];	/* level[0]: the keys, in one allocation */
	size_t n;
	unsigned width, nlevels;
	/*
	 * Buckets in front of the tree (key-index.c): node 0 splits the keys'
	 * first words, a crowded bucket of it has a node of its own (child),
	 * and bucket boundaries are positions in level[0] (first).
	 */
	struct key_index_node *node;
	uint32_t *first, *child;
};
/*
 * Index the @n sorted keys at offset @off of the elements of @base (@size
 * bytes each); 0 or -ENOMEM.  The index owns a copy of the keys.
 */
__hidden int key_index_build(struct key_index *x, const void *base, size_t n, size_t size,
			     size_t off, unsigned width);
/* How many keys are <= (@a, @b) (@b is ignored at width 1): O(log n), one or two misses. */
__hidden size_t key_index_upper(const struct key_index *x, uint64_t a, uint64_t b);
__hidden void key_index_free(struct key_index *x);

#endif /* VMCTX_KEY_INDEX_H */
