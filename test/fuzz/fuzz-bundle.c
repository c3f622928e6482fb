// SPDX-License-Identifier: LGPL-2.1-only
/*
 * libFuzzer harness for the bundle reader.  Any input must be refused with
 * a vmctx error code (or -ENOMEM) without a crash or a leak; any input
 * accepted must write out and read back with the same record counts.
 *
 * Then every task is looked up by its root around its start, and every
 * map's ends resolve (user and kernel), so that the indices' buckets and
 * trees are searched with keys the fuzzer laid out: a lookup must answer
 * a task of the bundle or -ENOENT, and a resolution 0 or -ENOENT.  The
 * switch log is asked who ran around each switch and at each gap's ends.
 *
 * Byte mutations of gzip data rarely get past the CRC, so a custom mutator
 * also mutates the text inside and compresses it again (half of the time),
 * which lets the fuzzer reach the record parser.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "vmctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

#define TEXT_MAX (1 << 20)

static size_t gunzip(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
	z_stream z;
	size_t n;
	int ret;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return 0;
	z.next_in = (uint8_t *)in;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = cap;
	ret = inflate(&z, Z_FINISH);
	n = ret == Z_STREAM_END ? z.total_out : 0;
	inflateEnd(&z);
	return n;
}

static size_t gzip(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
	z_stream z;
	size_t n;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	z.next_in = (uint8_t *)in;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = cap;
	n = deflate(&z, Z_FINISH) == Z_STREAM_END ? z.total_out : 0;
	deflateEnd(&z);
	return n;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	static uint8_t text[TEXT_MAX];
	size_t n, out;

	if (seed & 1)
		return LLVMFuzzerMutate(data, size, max_size);
	n = gunzip(data, size, text, TEXT_MAX / 2);
	if (!n)
		return LLVMFuzzerMutate(data, size, max_size);
	n = LLVMFuzzerMutate(text, n, TEXT_MAX / 2);
	out = gzip(text, n, data, max_size);
	return out ? out : LLVMFuzzerMutate(data, size, max_size);
}

/* Lookups around every task's root and start, and every map's ends. */
static void lookups(const struct vmctx_bundle *b)
{
	size_t n = vmctx_bundle_ntasks(b), i, j;
	const char *sym, *dso;

	for (i = 0; i < n && i < 4096; i++) {
		uint64_t root, start, at[4], lo, hi;
		int k, t, d;

		if (vmctx_bundle_task(b, i, &root, NULL, NULL, NULL, &start, NULL))
			abort();
		at[0] = start - 1;
		at[1] = start;
		at[2] = start + 1;
		at[3] = VMCTX_TIME_NONE;
		for (k = 0; k < 4; k++) {
			t = vmctx_bundle_find_task(b, root, at[k]);
			if (t != -ENOENT && (t < 0 || (size_t)t >= n))
				abort();
		}
		for (j = 0; j < 64 && !vmctx_bundle_task_map(b, i, j, &lo, &hi, NULL, NULL); j++) {
			for (d = -1; d <= 1; d++) {
				int e1 = vmctx_bundle_resolve_user(b, (int)i, lo + d, &sym, &dso);
				int e2 = vmctx_bundle_resolve_user(b, (int)i, hi + d, &sym, &dso);

				if ((e1 && e1 != -ENOENT) || (e2 && e2 != -ENOENT) ||
				    vmctx_bundle_resolve_kernel(b, lo + d, &sym, &dso) ||
				    vmctx_bundle_resolve_kernel(b, hi + d, &sym, &dso))
					abort();
			}
		}
	}
}

/*
 * The owner step at a time the log answered @running for (pid @pid): a
 * kernel-mode sample goes where the log says, or by the first task's root
 * with the log's reason; a user-mode one names a task of the bundle or
 * nobody, never a task out of range.
 */
static void owner_agrees(const struct vmctx_bundle *b, unsigned int cpu, uint64_t ns,
			 int running, int pid)
{
	struct vmctx_owner o = { .sz = sizeof(o) };
	uint64_t root = 0;
	int user;

	if (vmctx_bundle_ntasks(b))
		vmctx_bundle_task(b, 0, &root, NULL, NULL, NULL, NULL, NULL);
	for (user = 0; user <= 1; user++) {
		if (vmctx_bundle_owner(b, (int)cpu, root, ns, user, &o))
			abort();
		if (o.task < -1 || (o.task >= 0 && (size_t)o.task >= vmctx_bundle_ntasks(b)))
			abort();
		if (!user && !running && (o.by != VMCTX_OWNER_SWITCH || o.pid != pid))
			abort();
		if (o.by == VMCTX_OWNER_SWITCH && (running || o.log_err || o.disagree))
			abort();
		if (running && o.by == VMCTX_OWNER_SWITCH)
			abort();
		if (o.by != VMCTX_OWNER_NONE && !o.comm)
			abort();
	}
}

/*
 * Who ran around every switch and at every gap's ends: at a switch's own
 * time its CPU ran a task or lost it in a gap, and at a gap's ends it was
 * lost; anywhere else the answer is one of the three.
 */
static void switch_lookups(const struct vmctx_bundle *b)
{
	size_t i, n = vmctx_bundle_nswitches(b);
	uint64_t ns, end;
	unsigned int cpu;
	int d, e, pid = -1;

	for (i = 0; i < n && i < 4096; i++) {
		if (vmctx_bundle_switch(b, i, &cpu, &ns, NULL, NULL, NULL, NULL))
			abort();
		for (d = -1; d <= 1; d++) {
			e = vmctx_bundle_running(b, cpu, ns + d, &pid, NULL, NULL, NULL);
			if (e && e != -ENOENT && e != -VMCTX_E_GAP)
				abort();
			if (!d && e && e != -VMCTX_E_GAP)
				abort();
			owner_agrees(b, cpu, ns + d, e, pid);
		}
	}
	n = vmctx_bundle_nswitch_gaps(b);
	for (i = 0; i < n && i < 4096; i++) {
		if (vmctx_bundle_switch_gap(b, i, &cpu, &ns, &end))
			abort();
		if (vmctx_bundle_running(b, cpu, ns, NULL, NULL, NULL, NULL) != -VMCTX_E_GAP ||
		    vmctx_bundle_running(b, cpu, end, NULL, NULL, NULL, NULL) != -VMCTX_E_GAP)
			abort();
	}
}

static bool vmctx_code(int err)
{
	return err == -ENOMEM || (err <= -VMCTX_E_BASE && err > -VMCTX_E_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A small cap keeps each run fast and the harness's memory low. */
	struct vmctx_read_opts opts = { .sz = sizeof(opts), .max_size = 8 << 20 };
	struct vmctx_bundle *b = NULL, *c = NULL;
	size_t len;
	void *buf;
	int err;

	err = vmctx_bundle_read_mem(data, size, &opts, &b);
	if (err) {
		if (!vmctx_code(err) || b)
			abort();
		return 0;
	}
	err = vmctx_bundle_write_mem(b, &buf, &len);
	if (err)
		abort();
	err = vmctx_bundle_read_mem(buf, len, NULL, &c);
	if (err)
		abort();
	if (vmctx_bundle_ntasks(b) != vmctx_bundle_ntasks(c) ||
	    vmctx_bundle_nobjects(b) != vmctx_bundle_nobjects(c) ||
	    vmctx_bundle_nmaps(b) != vmctx_bundle_nmaps(c) ||
	    vmctx_bundle_nksyms(b) != vmctx_bundle_nksyms(c) ||
	    vmctx_bundle_nswitches(b) != vmctx_bundle_nswitches(c) ||
	    vmctx_bundle_nswitch_gaps(b) != vmctx_bundle_nswitch_gaps(c))
		abort();
	lookups(b);
	switch_lookups(b);
	free(buf);
	vmctx_bundle_free(c);
	vmctx_bundle_free(b);
	return 0;
}
