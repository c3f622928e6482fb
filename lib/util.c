// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Small helpers shared by the library's source files.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/random.h>

#include "util.h"

/*
 * A large bundle's arrays (tasks, symbols, the lookup structures) are read
 * at random places: with 4 KiB pages nearly every lookup also misses the
 * TLB, and a page walk in a virtual machine reads both guest and host
 * tables.  Large blocks ask for transparent huge pages, before the memory
 * is first touched where possible (it is only advice: without THP,
 * nothing changes).
 */
#define HUGE_BYTES	(2u << 20)
/*
 * A block from half a huge page up is made of whole huge pages, aligned
 * and advised before its first touch: where first touches are dear (a
 * page fault in a virtual machine costs about 10 us on the machines this
 * was measured on), a huge page takes one fault for 512.  The rest of its
 * last huge page is the cost: at most as much again as the block.
 */
#define HUGE_MIN	(HUGE_BYTES / 2)

/* Advise huge pages for the whole 2 MiB pages inside a large block. */
static void advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	uintptr_t from = ((uintptr_t)p + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1);
	uintptr_t to = ((uintptr_t)p + bytes) & ~(uintptr_t)(HUGE_BYTES - 1);

	if (bytes >= HUGE_MIN && to > from)
		madvise((void *)from, to - from, MADV_HUGEPAGE);
#endif
}

/* @bytes rounded up to whole huge pages, or 0 if that wraps. */
static size_t huge_round(size_t bytes)
{
	if (bytes > SIZE_MAX - (HUGE_BYTES - 1))
		return 0;
	return (bytes + HUGE_BYTES - 1) & ~(size_t)(HUGE_BYTES - 1);
}

/* @bytes (whole huge pages) aligned to a huge page and advised; free() frees it. */
static void *alloc_huge(size_t bytes)
{
	void *p = aligned_alloc(HUGE_BYTES, bytes);

	if (p)
		advise_huge(p, bytes);
	return p;
}

/*
 * A block of *@bytes, in whole huge pages from @huge_from bytes up (*@bytes
 * then rounded up to them), else malloc()ed; free() frees it.  NULL
 * without memory.
 */
static void *alloc_block(size_t *bytes, size_t huge_from)
{
	if (*bytes < huge_from)
		return malloc(*bytes);
	*bytes = huge_round(*bytes);
	return *bytes ? alloc_huge(*bytes) : NULL;
}

void *util_alloc_big(size_t *bytes)
{
	return alloc_block(bytes, HUGE_MIN);
}

/* The capacity util_grow() takes for @need elements of @size bytes, or 0 if too many. */
static size_t grow_cap(size_t cap, size_t need, size_t size)
{
	/* Double, so that appending n elements costs O(n) copies. */
	size_t ncap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;

	if (ncap < need)
		ncap = need;
	if (ncap < 8)
		ncap = 8;
	if (ncap > SIZE_MAX / size) {
		ncap = SIZE_MAX / size;
		if (ncap < need)
			return 0;
	}
	return ncap;
}

int util_grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	if (!size)
		return -EINVAL;
	ncap = grow_cap(*cap, need, size);
	if (!ncap)
		return -ENOMEM;
	if (ncap * size < HUGE_MIN) {
		p = realloc(*arr, ncap * size);
		if (!p)
			return -ENOMEM;
	} else {
		/* whole huge pages, all of them used: a copy, not realloc() */
		size_t bytes = ncap * size;

		p = alloc_block(&bytes, HUGE_MIN);
		if (!p)
			return -ENOMEM;
		ncap = bytes / size;
		if (*cap)
			memcpy(p, *arr, *cap * size);
		free(*arr);
	}
	*arr = p;
	*cap = ncap;
	return 0;
}

int util_grow_aligned(void **arr, size_t *cap, size_t need, size_t size, size_t align)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	if (!size || size % align)
		return -EINVAL;
	ncap = grow_cap(*cap, need, size);
	if (!ncap)
		return -ENOMEM;
	p = aligned_alloc(align, ncap * size);
	if (!p)
		return -ENOMEM;
	advise_huge(p, ncap * size);
	if (*cap)
		memcpy(p, *arr, *cap * size);
	free(*arr);
	*arr = p;
	*cap = ncap;
	return 0;
}

void *util_calloc_big(size_t n, size_t size)
{
	size_t bytes, align;
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	bytes = n * size;
	if (bytes > SIZE_MAX - HUGE_BYTES)
		return NULL;
	/* cache-line pairs below, huge pages above */
	align = bytes < HUGE_MIN ? 128 : HUGE_BYTES;
	bytes = bytes ? (bytes + align - 1) / align * align : align;
	p = aligned_alloc(align, bytes);
	if (!p)
		return NULL;
	advise_huge(p, bytes);
	memset(p, 0, bytes);
	return p;
}

#define POOL_CHUNK	(64 << 10)

struct util_pool_chunk {
	struct util_pool_chunk *next;
	size_t used, cap;
	char data[];
};

/*
 * Each chunk twice the last, from POOL_CHUNK to HUGE_BYTES: a pool of a
 * few strings stays small, and one of megabytes of them (a kernel's
 * symbol names) is in huge pages.
 */
char *util_pool_alloc(struct util_pool *p, size_t n)
{
	struct util_pool_chunk *c = p->head;
	size_t bytes;
	bool own;

	if (c && c->cap - c->used >= n) {
		c->used += n;
		return c->data + c->used - n;
	}
	bytes = p->chunk ? p->chunk * 2 : POOL_CHUNK;
	if (bytes > HUGE_BYTES)
		bytes = HUGE_BYTES;
	/* One larger than a chunk gets one of its own, behind the current one. */
	own = n > bytes - sizeof(*c);
	if (own) {
		if (n > SIZE_MAX - sizeof(*c))
			return NULL;
		bytes = n + sizeof(*c);
	} else {
		p->chunk = bytes;
	}
	c = alloc_block(&bytes, HUGE_MIN);
	if (!c)
		return NULL;
	c->used = n;
	c->cap = bytes - sizeof(*c);
	if (own && p->head) {
		c->next = p->head->next;
		p->head->next = c;
	} else {
		c->next = p->head;
		p->head = c;
	}
	return c->data;
}

int util_pool_reserve(struct util_pool *p, size_t n)
{
	struct util_pool_chunk *c;
	size_t bytes;

	if (n > SIZE_MAX - sizeof(*c) - HUGE_BYTES)
		return -ENOMEM;
	bytes = n + sizeof(*c);
	/*
	 * Huge pages from two up: below, most of a bound's last huge page
	 * would be waste.  malloc()'s large blocks are mmap()ed, and their
	 * untouched pages cost nothing.
	 */
	c = alloc_block(&bytes, 2 * HUGE_BYTES);
	if (!c)
		return -ENOMEM;
	c->used = 0;
	c->cap = bytes - sizeof(*c);
	c->next = p->head;
	p->head = c;
	return 0;
}

void util_pool_free(struct util_pool *p)
{
	struct util_pool_chunk *c, *next;

	for (c = p->head; c; c = next) {
		next = c->next;
		free(c);
	}
	p->head = NULL;
	p->chunk = 0;
}

void util_buf_put(struct util_buf *b, const void *data, size_t n)
{
	if (b->err || !n)
		return;
	if (b->len + n < b->len || util_grow((void **)&b->p, &b->cap, b->len + n, 1)) {
		b->err = -ENOMEM;
		return;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

#define ROTL(x, b)	((x) << (b) | (x) >> (64 - (b)))

static void sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = ROTL(v[1], 13) ^ v[0];
	v[0] = ROTL(v[0], 32);
	v[2] += v[3];
	v[3] = ROTL(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = ROTL(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = ROTL(v[1], 17) ^ v[2];
	v[2] = ROTL(v[2], 32);
}

/* SipHash-2-4 (Aumasson and Bernstein), its words in host byte order. */
uint64_t util_siphash(const uint64_t key[2], const void *data, size_t n)
{
	uint64_t v[4] = {
		key[0] ^ 0x736f6d6570736575ULL, key[1] ^ 0x646f72616e646f6dULL,
		key[0] ^ 0x6c7967656e657261ULL, key[1] ^ 0x7465646279746573ULL,
	};
	const unsigned char *p = data;
	uint64_t m = (uint64_t)n << 56;
	size_t i;

	for (; n >= 8; n -= 8, p += 8) {
		uint64_t w;

		memcpy(&w, p, sizeof(w));
		v[3] ^= w;
		sip_round(v);
		sip_round(v);
		v[0] ^= w;
	}
	for (i = 0; i < n; i++)
		m |= (uint64_t)p[i] << (8 * i);
	v[3] ^= m;
	sip_round(v);
	sip_round(v);
	v[0] ^= m;
	v[2] ^= 0xff;
	for (i = 0; i < 4; i++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

void util_hash_key(uint64_t key[2], uintptr_t salt)
{
	const void *at_random;

	if (getrandom(key, 2 * sizeof(*key), GRND_NONBLOCK) != 2 * sizeof(*key)) {
		/* too early in boot: the kernel's random bytes for this process */
		at_random = (const void *)getauxval(AT_RANDOM);
		if (at_random)
			memcpy(key, at_random, 2 * sizeof(*key));
		key[0] ^= salt;
	}
}

int64_t util_hash_find(const struct util_hash_index *x, uint32_t h, util_same_fn same,
		       const void *ctx, const void *key)
{
	size_t i, mask = x->size - 1;

	if (!x->size)
		return -1;
	for (i = h & mask; x->slot[i]; i = (i + 1) & mask)
		if (x->slot[i] >> 32 == h && same(ctx, (uint32_t)x->slot[i] - 1, key))
			return (uint32_t)x->slot[i] - 1;
	return -1;
}

static void hash_put(uint64_t *slot, size_t size, uint64_t v)
{
	size_t i;

	for (i = (v >> 32) & (size - 1); slot[i]; i = (i + 1) & (size - 1))
		;
	slot[i] = v;
}

int util_hash_add(struct util_hash_index *x, uint32_t h, uint32_t id)
{
	if (2 * (x->used + 1) > x->size) {
		size_t i, size = x->size ? 2 * x->size : 64;
		uint64_t *slot = calloc(size, sizeof(*slot));

		if (!slot)
			return -ENOMEM;
		for (i = 0; i < x->size; i++)
			if (x->slot[i])
				hash_put(slot, size, x->slot[i]);
		free(x->slot);
		x->slot = slot;
		x->size = size;
	}
	hash_put(x->slot, x->size, (uint64_t)h << 32 | ((uint64_t)id + 1));
	x->used++;
	return 0;
}

void util_hash_index_free(struct util_hash_index *x)
{
	free(x->slot);
	x->slot = NULL;
	x->size = x->used = 0;
}

bool util_all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i])
			return false;
	return true;
}

static size_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return (size_t)h;
}

int util_name_find(const struct util_name_index *x, const char *name, vmctx_name_of_fn name_of,
		    const void *arr)
{
	size_t i;

	if (!x->size)
		return -1;
	for (i = name_hash(name) & (x->size - 1); x->slot[i]; i = (i + 1) & (x->size - 1))
		if (!strcmp(name_of(arr, x->slot[i] - 1), name))
			return (int)(x->slot[i] - 1);
	return -1;
}

static void name_put(struct util_name_index *x, const char *name, uint32_t idx)
{
	size_t i;

	for (i = name_hash(name) & (x->size - 1); x->slot[i]; i = (i + 1) & (x->size - 1))
		;
	x->slot[i] = idx + 1;
}

int util_name_add(struct util_name_index *x, const char *name, uint32_t idx,
		   vmctx_name_of_fn name_of, const void *arr)
{
	/* At most half full, so that probes stay short. */
	if (2 * (x->used + 1) > x->size) {
		size_t i, size = x->size ? 2 * x->size : 16;
		uint32_t *old = x->slot, *slot = calloc(size, sizeof(*slot));

		if (!slot)
			return -ENOMEM;
		x->slot = slot;
		for (i = 0; i < x->size; i++)
			if (old[i])
				name_put(&(struct util_name_index){ slot, size, 0 },
					 name_of(arr, old[i] - 1), old[i] - 1);
		x->size = size;
		free(old);
	}
	name_put(x, name, idx);
	x->used++;
	return 0;
}

void util_name_index_free(struct util_name_index *x)
{
	free(x->slot);
	x->slot = NULL;
	x->size = x->used = 0;
}

static void id_put(struct util_id_entry *slot, size_t size, struct util_id_entry e)
{
	size_t i;

	for (i = util_id_slot(e.id, size); slot[i].pos; i = (i + 1) & (size - 1))
		;
	slot[i] = e;
}

int util_id_add(struct util_id_index *x, uint64_t id, uint32_t pos)
{
	if (pos == UINT32_MAX)
		return -EOVERFLOW;
	/* At most half full, so that probes stay short. */
	if (2 * (x->used + 1) > x->size) {
		size_t i, size = x->size ? 2 * x->size : 16;
		struct util_id_entry *slot = calloc(size, sizeof(*slot));

		if (!slot)
			return -ENOMEM;
		for (i = 0; i < x->size; i++)
			if (x->slot[i].pos)
				id_put(slot, size, x->slot[i]);
		free(x->slot);
		x->slot = slot;
		x->size = size;
	}
	id_put(x->slot, x->size, (struct util_id_entry){ .id = id, .pos = pos + 1 });
	x->used++;
	return 0;
}

void util_id_index_free(struct util_id_index *x)
{
	free(x->slot);
	x->slot = NULL;
	x->size = x->used = 0;
}
