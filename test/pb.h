/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * A small reader of protobuf messages, field by field, for the tests that
 * decode what the pprof writer makes (test-export, test-profile): varints
 * and length-delimited fields, which is all profile.proto uses.  A message
 * that runs out or holds another wire type sets bad and ends the reading.
 */
#ifndef VMCTX_TEST_PB_H
#define VMCTX_TEST_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pb {
	const uint8_t *p, *end;
	bool bad;
};

static inline uint64_t pb_varint(struct pb *b)
{
	uint64_t v = 0;
	int shift;

	for (shift = 0; b->p < b->end && shift < 64; shift += 7) {
		uint8_t c = *b->p++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	b->bad = true;
	return 0;
}

/*
 * The next field of @b: its number (0 at the end or on a bad message),
 * its wire type in *@wire, and @sub over its bytes or *@v its varint.
 */
static inline int pb_field(struct pb *b, struct pb *sub, uint64_t *v, int *wire)
{
	uint64_t key, n;

	if (b->p >= b->end || b->bad)
		return 0;
	key = pb_varint(b);
	*wire = key & 7;
	if (*wire == 0) {
		*v = pb_varint(b);
	} else if (*wire == 2) {
		n = pb_varint(b);
		if (n > (uint64_t)(b->end - b->p)) {
			b->bad = true;
			return 0;
		}
		*sub = (struct pb){ b->p, b->p + n, false };
		b->p += n;
	} else {
		b->bad = true;
		return 0;
	}
	return b->bad ? 0 : (int)(key >> 3);
}

/* A repeated varint field, packed (wire 2) or not (wire 0), appended to @out. */
static inline void pb_repeated(struct pb *sub, uint64_t v, int wire, uint64_t *out, size_t *n,
			       size_t max)
{
	if (wire == 0) {
		if (*n < max)
			out[(*n)++] = v;
		return;
	}
	while (sub->p < sub->end && !sub->bad) {
		v = pb_varint(sub);
		if (*n < max)
			out[(*n)++] = v;
	}
}

#endif /* VMCTX_TEST_PB_H */
