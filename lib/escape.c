// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Escaping: what a guest names (processes, files, symbols, its host name)
 * reaches terminals, logs and profiles, so every text the library hands
 * out goes through one escaper.  Controls, C1, the bidi and invisible
 * characters and bytes that are not UTF-8 become "\xHH"; a backslash is
 * doubled, so that a guest cannot fake an escape.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util.h"

/*
 * Characters that change how a line reads without showing themselves: the
 * bidi embeddings and overrides (U+202A..U+202E), the bidi isolates
 * (U+2066..U+2069), the zero-width space, joiners and direction marks
 * (U+200B..U+200F), the line and paragraph separators (U+2028, U+2029)
 * and the byte order mark (U+FEFF).  A guest could make one row read as
 * another's with them, so they are escaped like C1 controls.  All are
 * three bytes: @p is a well-formed sequence of them.
 */
static bool invisible(const unsigned char *p)
{
	uint32_t c = (uint32_t)(p[0] & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);

	return (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) ||
	       (c >= 0x200b && c <= 0x200f) || c == 0x2028 || c == 0x2029 || c == 0xfeff;
}

/*
 * The length of the well-formed UTF-8 sequence at @p, or 0 when it is not
 * one (overlong, a surrogate, beyond U+10FFFF), is a C1 control (U+0080
 * to U+009F), which some terminals obey like ESC [ and friends, or is
 * invisible() (above).
 */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (p[0] == 0xc2 || p[0] == 0xe0)	/* C1 controls; overlong forms */
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	if (n == 3 && invisible(p))
		return 0;
	return n;
}

/*
 * The printable form of the character at @p: written to @out (4 bytes at
 * most, not terminated), its length returned, and the bytes it consumed
 * in *@n.  Control bytes, DEL, C1 controls and bytes that are not UTF-8
 * become "\xHH" (lowercase hex), a backslash "\\" so that a guest cannot
 * fake an escape; anything else is copied.
 */
size_t util_escape_char(const unsigned char *p, char *out, size_t *n)
{
	static const char hex[] = "0123456789abcdef";

	*n = 1;
	if (*p == '\\') {
		memcpy(out, "\\\\", 2);
		return 2;
	}
	if (*p >= 0x20 && *p < 0x7f) {
		*out = *p;
		return 1;
	}
	if (*p >= 0x80 && (*n = utf8_len(p))) {
		memcpy(out, p, *n);
		return *n;
	}
	*n = 1;
	out[0] = '\\';
	out[1] = 'x';
	out[2] = hex[*p >> 4];
	out[3] = hex[*p & 0xf];
	return 4;
}

/* A byte that stands for itself: printable ASCII but the backslash. */
static bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '\\';
}

/* Whether the eight bytes of @w all stand for themselves (plain()). */
static bool plain_word(uint64_t w)
{
	return !util_word_unprintable(w) && !util_word_has(w, '\\');
}

/* The length of the run of plain() bytes that starts @p, of the @left bytes there. */
static size_t plain_run(const unsigned char *p, size_t left)
{
	size_t n = 0;
	uint64_t w;

	/* names are mostly plain: eight bytes at a time, then the tail */
	while (n + sizeof(w) <= left) {
		memcpy(&w, p + n, sizeof(w));
		if (!plain_word(w))
			break;
		n += sizeof(w);
	}
	while (n < left && plain(p[n]))
		n++;
	return n;
}

int vmctx_escape(char *dst, size_t size, const char *src)
{
	const unsigned char *p = (const unsigned char *)src, *stop;
	size_t len = 0, end = 0, n, plen;
	char piece[4];

	if (!src || (!dst && size))
		return -EINVAL;
	/* the runs below are read up to the NUL, and never past it */
	stop = p + strlen(src);
	for (; *p; p += n) {
		/*
		 * A run of printable ASCII, what nearly every name is, copies
		 * as it is: as much of it as fits, since each byte is a piece.
		 */
		n = plain_run(p, stop - p);
		if (n) {
			if (len == end && size > end + 1) {
				plen = n < size - end - 1 ? n : size - end - 1;
				memcpy(dst + end, p, plen);
				end += plen;
			}
			len += n;
			if (len > INT_MAX)
				return -EOVERFLOW;
			continue;
		}
		plen = util_escape_char(p, piece, &n);
		/* Cut short at a whole piece: never half an escape or a character. */
		if (len == end && len + plen < size) {
			memcpy(dst + len, piece, plen);
			end += plen;
		}
		len += plen;
		if (len > INT_MAX)
			return -EOVERFLOW;
	}
	if (size)
		dst[end] = '\0';
	return (int)len;
}

