// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The objects' unwind tables (.eh_frame_hdr, .eh_frame, .debug_frame): what
 * a host needs to unwind a guest's user stack copied without frame
 * pointers.  Held per object, each kind once; in the file as x-unwind
 * lines (vmctx-bundle(5)), a table's bytes in base64 chunks in order, so
 * that readers of version 1 skip them.  The reader keeps the format's
 * rules here, as bundle.c keeps the other records': a chunk continues its
 * table where the last one ended, and a table is whole at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"

static const char *const kind_names[VMCTX_UNWIND_KINDS] = {
	[VMCTX_UNWIND_EH_FRAME_HDR] = "eh_frame_hdr",
	[VMCTX_UNWIND_EH_FRAME] = "eh_frame",
	[VMCTX_UNWIND_DEBUG_FRAME] = "debug_frame",
};

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

const char *bundle_unwind_kind_name(int kind)
{
	return kind >= 0 && kind < VMCTX_UNWIND_KINDS ? kind_names[kind] : NULL;
}

int bundle_unwind_kind(const char *name)
{
	for (int k = 0; k < VMCTX_UNWIND_KINDS; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return -1;
}

size_t bundle_unwind_encode(const unsigned char *in, size_t n, char *out)
{
	char *o = out;
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 63];
		*o++ = b64[(v >> 6) & 63];
		*o++ = b64[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);

		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 63];
		*o++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	return o - out;
}

static int b64_value(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;

	return p ? (int)(p - b64) : -1;
}

/*
 * Decode @len characters of @in into @out (room for 3 * @len / 4 bytes):
 * groups of four, '=' only as the last one or two of the last group, the
 * bits padding leaves unused 0 (one encoding per byte string).  Returns
 * the bytes, or -1.
 */
static long b64_decode(const char *in, size_t len, unsigned char *out)
{
	size_t i, n = 0;

	if (!len || len % 4)
		return -1;
	for (i = 0; i < len; i += 4) {
		int v[4], pad = 0;
		uint32_t x;

		for (int j = 0; j < 4; j++) {
			if (in[i + j] == '=' && i + 4 == len && j >= 2) {
				v[j] = 0;
				pad++;
				continue;
			}
			v[j] = pad ? -1 : b64_value(in[i + j]);
			if (v[j] < 0)
				return -1;
		}
		if (pad == 1 && in[i + 2] == '=')
			return -1;
		x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | v[3];
		if ((pad == 1 && (x & 0xff)) || (pad == 2 && (x & 0xffff)))
			return -1;
		out[n++] = x >> 16;
		if (pad < 2)
			out[n++] = x >> 8;
		if (!pad)
			out[n++] = x;
	}
	return n;
}

/* Room for a table of @size bytes at @vaddr in @u, within the bundle's budget. */
static int unwind_begin(struct vmctx_bundle *b, struct vmctx_unwind *u, uint64_t vaddr,
			uint64_t size)
{
	if (size > BUNDLE_MAX_UNWIND || b->unwind_total + size > BUNDLE_MAX_UNWIND_ALL)
		return -VMCTX_E_LIMIT;
	u->data = malloc(size);
	if (!u->data)
		return -ENOMEM;
	u->vaddr = vaddr;
	u->size = size;
	u->fill = 0;
	b->unwind_total += size;
	return 0;
}

int bundle_unwind_put(struct vmctx_bundle *b, int obj, int kind, uint64_t vaddr, uint64_t size,
		      uint64_t off, const char *data)
{
	size_t len = strlen(data);
	struct vmctx_unwind *u;
	long n;

	if (obj < 0 || (size_t)obj >= b->nobjects || kind < 0 || kind >= VMCTX_UNWIND_KINDS)
		return -VMCTX_E_SYNTAX;
	if (!size || size > BUNDLE_MAX_UNWIND)
		return -VMCTX_E_LIMIT;
	u = &b->objects[obj].unwind[kind];
	if (!off) {
		int err;

		if (u->data)
			return -VMCTX_E_SYNTAX;	/* the kind twice */
		err = unwind_begin(b, u, vaddr, size);
		if (err)
			return err;
	} else if (!u->data || u->vaddr != vaddr || u->size != size || u->fill != off) {
		return -VMCTX_E_SYNTAX;	/* not where the table's last chunk ended */
	}
	/* what the chunk decodes to, known before a byte is written */
	if (!len || len % 4 || len > (BUNDLE_UNWIND_CHUNK / 3) * 4)
		return -VMCTX_E_SYNTAX;
	n = len / 4 * 3 - (data[len - 1] == '=') - (data[len - 2] == '=');
	if ((size_t)n > u->size - u->fill || b64_decode(data, len, u->data + u->fill) != n)
		return -VMCTX_E_SYNTAX;
	u->fill += n;
	return 0;
}

bool bundle_unwind_whole(const struct vmctx_bundle *b)
{
	for (size_t i = 0; i < b->nobjects; i++)
		for (int k = 0; k < VMCTX_UNWIND_KINDS; k++)
			if (b->objects[i].unwind[k].fill != b->objects[i].unwind[k].size)
				return false;
	return true;
}

void bundle_unwind_free(struct vmctx_object *o)
{
	for (int k = 0; k < VMCTX_UNWIND_KINDS; k++)
		free(o->unwind[k].data);
}

int vmctx_bundle_add_unwind(struct vmctx_bundle *b, int object, enum vmctx_unwind_kind kind,
			    uint64_t vaddr, const void *data, size_t size)
{
	struct vmctx_unwind *u;
	int err;

	if (!b)
		return -EINVAL;
	if (b->sealed)
		return -VMCTX_E_SEALED;
	if (object < 0 || (size_t)object >= b->nobjects || (int)kind < 0 ||
	    kind >= VMCTX_UNWIND_KINDS || !data || !size)
		return -EINVAL;
	u = &b->objects[object].unwind[kind];
	if (u->data)
		return -EEXIST;
	err = unwind_begin(b, u, vaddr, size);
	if (err)
		return err;
	memcpy(u->data, data, size);
	u->fill = size;
	return 0;
}

int vmctx_bundle_object_unwind(const struct vmctx_bundle *b, int object,
			       enum vmctx_unwind_kind kind, uint64_t *vaddr, const void **data,
			       size_t *size)
{
	const struct vmctx_unwind *u;

	if (!b || object < 0 || (size_t)object >= b->nobjects || (int)kind < 0 ||
	    kind >= VMCTX_UNWIND_KINDS)
		return -EINVAL;
	u = &b->objects[object].unwind[kind];
	if (!u->data)
		return -ENOENT;
	if (vaddr)
		*vaddr = u->vaddr;
	if (data)
		*data = u->data;
	if (size)
		*size = u->size;
	return 0;
}
