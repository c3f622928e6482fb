/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * libvmctx's bottom layer: memory, searching, a byte buffer, a name
 * index, a keyed hash and an index by it, escaping and the log (util.c,
 * escape.c, log.c).
 * Nothing here is exported.
 */
#ifndef VMCTX_UTIL_H
#define VMCTX_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vmctx.h"

#define __hidden __attribute__((visibility("hidden")))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Structs a caller hands in start with size_t sz, the caller's sizeof, so
 * that they can grow; one rule holds for all of them, as libbpf's
 * OPTS_VALID() and OPTS_GET() do.  A struct as old as its first version
 * (up to and including the field @first) or newer is accepted; the fields
 * an older one lacks read as their defaults (OPTS_GET()); a newer one only
 * if the bytes this library does not know are all zero, since a caller
 * who set them expects something this library cannot do.  NULL options
 * mean every default.
 */
#define offsetofend(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
#define OPTS_VALID(opts, type, first) \
	(!(opts) || util_sz_valid((opts), (opts)->sz, offsetofend(type, first), sizeof(type)))
#define OPTS_HAS(opts, field) \
	((opts) && (opts)->sz >= offsetofend(__typeof__(*(opts)), field))
#define OPTS_GET(opts, field, fallback) (OPTS_HAS(opts, field) ? (opts)->field : (fallback))

/* Are the @n bytes at @p all zero? */
__hidden bool util_all_zero(const void *p, size_t n);

/* The check of OPTS_VALID(); inline, as vmctx_session_sample() makes it for each sample. */
static inline bool util_sz_valid(const void *opts, size_t sz, size_t min, size_t known)
{
	if (sz < min)
		return false;
	return sz <= known || util_all_zero((const char *)opts + known, sz - known);
}

/*
 * Counts that come from a recording (lost-sample records claim up to
 * 2^64 - 1) add saturating: a total stays the largest count, never wraps
 * below its parts.
 */
static inline uint64_t util_sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

#define UTIL_BYTES(c)	(0x0101010101010101ULL * (uint8_t)(c))

/*
 * Whether one of the eight bytes of @w is not printable ASCII (' ' to
 * '~'), for the scans that take a guest's text a word at a time: a byte
 * below ' ' sets its high bit in (w - ' ' * ones) & ~w, one of 0x7f or
 * above in w | (w + ones).  A borrow or carry into a byte comes only from
 * a byte that is flagged itself, so the answer for the word is exact.
 */
static inline bool util_word_unprintable(uint64_t w)
{
	return (((w - UTIL_BYTES(' ')) & ~w) | w | (w + UTIL_BYTES(1))) & UTIL_BYTES(0x80);
}

/* Whether one of the eight bytes of @w is @c (a zero byte in w ^ c), exactly. */
static inline bool util_word_has(uint64_t w, unsigned char c)
{
	uint64_t x = w ^ UTIL_BYTES(c);

	return (x - UTIL_BYTES(1)) & ~x & UTIL_BYTES(0x80);
}

/* log.c */
__hidden void util_log(enum vmctx_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * escape.c: the printable form of the character at @p, written to @out (4
 * bytes at most, not terminated); its length, and in *@n the bytes of @p
 * it stands for.  vmctx_escape() is this over a string.
 */
__hidden size_t util_escape_char(const unsigned char *p, char *out, size_t *n);

/* Grow *@arr (elements of @size) so that it holds at least @need; 0 or -ENOMEM. */
__hidden int util_grow(void **arr, size_t *cap, size_t need, size_t size);
/* util_grow() into memory aligned to @align, which divides @size: a copy, not realloc(). */
__hidden int util_grow_aligned(void **arr, size_t *cap, size_t need, size_t size, size_t align);
/*
 * The number of elements of the sorted array @base (@n of @size bytes)
 * whose uint64_t key at offset @off is <= @key.  Inline: every caller's
 * @size and @off are constants, and a sample's resolution calls it twice.
 */
static inline size_t util_upper_bound(const void *base, size_t n, size_t size, size_t off,
				      uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * size + off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
/* Narrow the range of times [@iv[0], @iv[1]) (if @iv) to [@from, @until). */
static inline void util_range_clip(uint64_t *iv, uint64_t from, uint64_t until)
{
	if (!iv)
		return;
	if (iv[0] < from)
		iv[0] = from;
	if (iv[1] > until)
		iv[1] = until;
}
/*
 * malloc() for a large block written once, in order (a bundle's text): in
 * whole huge pages from 1 MiB up, *@bytes then rounded up to them; free()
 * frees it.
 */
__hidden void *util_alloc_big(size_t *bytes);
/* calloc() for a lookup structure: 128-byte aligned, huge pages if large; free() frees it. */
__hidden void *util_calloc_big(size_t n, size_t size);

/*
 * SipHash-2-4 of the @n bytes at @data under the secret @key: a hash of
 * names a guest chose that the guest cannot flood, as it cannot know the
 * key.
 */
__hidden uint64_t util_siphash(const uint64_t key[2], const void *data, size_t n);

/*
 * A hash index of ids by what they stand for (util.c), for what a guest
 * names: the caller hashes with util_siphash() under a secret key from
 * util_hash_key(), so that no guest can aim its names at one slot and make
 * adding them quadratic.  It stores ids; @same tells whether the id's
 * thing is @key.  Open addressing, at most half full.
 */
struct util_hash_index {
	uint64_t *slot;		/* hash << 32 | (id + 1); 0: empty */
	size_t size, used;
};
typedef bool (*util_same_fn)(const void *ctx, uint32_t id, const void *key);
/* The id hashed @h that @same() takes for @key, or -1. */
__hidden int64_t util_hash_find(const struct util_hash_index *x, uint32_t h, util_same_fn same,
				 const void *ctx, const void *key);
/* Add @id (below UINT32_MAX), hashed @h (not there yet); 0 or -ENOMEM. */
__hidden int util_hash_add(struct util_hash_index *x, uint32_t h, uint32_t id);
__hidden void util_hash_index_free(struct util_hash_index *x);
/* A secret key for util_siphash(): the kernel's random bytes, mixed with @salt. */
__hidden void util_hash_key(uint64_t key[2], uintptr_t salt);

/* A byte buffer that grows; an error sticks, and is reported once at the end. */
/*
 * Strings that live and die together (a bundle's symbol names), carved
 * from large chunks: one allocation for thousands of them, and one free
 * each chunk.  Zero-initialized is empty.
 */
struct util_pool_chunk;
struct util_pool {
	struct util_pool_chunk *head;
	size_t chunk;		/* the size of the last regular chunk */
};
/* @n bytes from @p (their alignment is 1), or NULL without memory. */
__hidden char *util_pool_alloc(struct util_pool *p, size_t n);
/*
 * A chunk of @n bytes for @p to carve from next, where most of what it will
 * hold is known: untouched, its pages cost nothing.  0 or -ENOMEM.
 */
__hidden int util_pool_reserve(struct util_pool *p, size_t n);
__hidden void util_pool_free(struct util_pool *p);

struct util_buf {
	uint8_t *p;
	size_t len, cap;
	int err;
};
/* Append @n bytes of @data to @b (nothing once @b has failed). */
__hidden void util_buf_put(struct util_buf *b, const void *data, size_t n);

/*
 * A hash index of names (util.c): the builder finds modules by name and
 * objects by build-id in O(1), not by a scan.  It stores indices into the
 * caller's array; @name_of gives the name at an index.
 */
struct util_name_index {
	uint32_t *slot;		/* index + 1, 0 if empty */
	size_t size, used;
};
typedef const char *(*vmctx_name_of_fn)(const void *arr, uint32_t idx);
/* The index named @name, or -1. */
__hidden int util_name_find(const struct util_name_index *x, const char *name,
			     vmctx_name_of_fn name_of, const void *arr);
/* Add @idx under @name (not there yet); 0 or -ENOMEM. */
__hidden int util_name_add(struct util_name_index *x, const char *name, uint32_t idx,
			    vmctx_name_of_fn name_of, const void *arr);
__hidden void util_name_index_free(struct util_name_index *x);

/*
 * A hash index of 64-bit ids (util.c): the session finds a sample's VM by
 * its tgid and its vCPU by tgid and id in one probe, whatever their
 * number.  It stores positions in the caller's array; zeroed is empty.
 * Open addressing, at most half full.
 */
struct util_id_index {
	struct util_id_entry {
		uint64_t id;
		uint32_t pos;	/* position + 1, 0 if empty */
	} *slot;
	size_t size, used;
};

static inline size_t util_id_slot(uint64_t id, size_t size)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ULL;

	return (h ^ (h >> 29)) & (size - 1);
}

/* The position stored under @id, or -1.  Inline: it is on every sample's path. */
static inline int util_id_find(const struct util_id_index *x, uint64_t id)
{
	size_t i;

	if (!x->size)
		return -1;
	for (i = util_id_slot(id, x->size); x->slot[i].pos; i = (i + 1) & (x->size - 1))
		if (x->slot[i].id == id)
			return (int)(x->slot[i].pos - 1);
	return -1;
}
/* Add @pos under @id (not there yet); 0, -ENOMEM, or -EOVERFLOW for UINT32_MAX. */
__hidden int util_id_add(struct util_id_index *x, uint64_t id, uint32_t pos);
__hidden void util_id_index_free(struct util_id_index *x);

#endif /* VMCTX_UTIL_H */
