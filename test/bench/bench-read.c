// SPDX-License-Identifier: LGPL-2.1-only
/*
 * bench-read: the cost of reading a bundle of a Debian guest's size.
 * The bundle is built here in the shape of the lab's guests' (what
 * vmctx-agent writes in a Debian 12 guest): 80,000 kernel symbols in the
 * kernel and 40 modules, 20 objects of 1,500 symbols each, 400 tasks of
 * 12 maps each, names as long as the kernel's, 16-digit kernel addresses.
 * It is written once and read from memory, the best of RUNS reads timed:
 * prints the compressed and text sizes, the time of a read, the text's
 * rate, and the peak RSS.  A figure, not a check.
 *
 *   bench-read [-n RUNS]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmctx.h"
#include "../rss.h"

#define KSYMS		80000
#define KMODS		40
#define KMOD_SYMS	500		/* of the KSYMS, in each module */
#define OBJECTS		20
#define OBJECT_SYMS	1500
#define TASKS		400
#define TASK_MAPS	12
#define KTEXT		0xffffffff81000000ULL
#define KMOD_BASE	0xffffffffc0000000ULL

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A name of the kernel's length (24 bytes on average), unique by @i. */
static void sym_name(char *buf, size_t size, const char *prefix, size_t i)
{
	static const char *const words[] = {
		"alloc", "free", "lock", "unlock", "queue", "work", "page", "irq",
	};

	snprintf(buf, size, "%s_%s_%s_%zu", prefix, words[i % 8], words[(i / 8) % 8], i);
}

static struct vmctx_bundle *build(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	char name[64], path[64], build_id[41];
	size_t i, k;
	int err = 0;

	if (!b)
		return NULL;
	err |= vmctx_bundle_set_identity(b, "guest", "6.1.0-28-amd64", "0123-4567");
	err |= vmctx_bundle_set_clock(b, 2000000, 1000000, 500000);
	for (i = 0; i < OBJECTS; i++) {
		int obj;

		snprintf(path, sizeof(path), "/usr/lib/x86_64-linux-gnu/libobject%zu.so.1", i);
		snprintf(build_id, sizeof(build_id), "0123456789abcdef0123456789abcdef%08zx", i);
		obj = vmctx_bundle_add_object(b, path, build_id);
		err |= obj < 0;
		for (k = 0; k < OBJECT_SYMS; k++) {
			sym_name(name, sizeof(name), "lib", k);
			err |= vmctx_bundle_add_symbol(b, obj, 0x1000 + 0x40 * k, 0x30, name) < 0;
		}
	}
	for (i = 0; i < TASKS; i++) {
		int t = vmctx_bundle_add_task(b, 0x10000000ULL + 0x2000ULL * i, (int)i + 1,
					      (int)i + 1, "worker", 0, VMCTX_TIME_NONE);

		err |= t < 0;
		for (k = 0; k < TASK_MAPS; k++) {
			uint64_t start = 0x7f0000000000ULL + 0x1000000ULL * k;

			snprintf(path, sizeof(path), "/usr/lib/x86_64-linux-gnu/libobject%zu.so.1",
				 k % OBJECTS);
			err |= vmctx_bundle_add_map(b, t, start, start + 0x100000, 0, start,
						    (int)(k % OBJECTS), path) < 0;
		}
	}
	for (i = 0; i < KSYMS - KMODS * KMOD_SYMS; i++) {
		sym_name(name, sizeof(name), "kernel", i);
		err |= vmctx_bundle_add_ksym(b, KTEXT + 0x40 * i, name, NULL) < 0;
	}
	for (i = 0; i < KMODS; i++) {
		char mod[32];

		snprintf(mod, sizeof(mod), "module%zu", i);
		err |= vmctx_bundle_add_kmodule(b, mod, KMOD_BASE + 0x100000 * i, 0x80000) < 0;
		for (k = 0; k < KMOD_SYMS; k++) {
			sym_name(name, sizeof(name), mod, k);
			err |= vmctx_bundle_add_ksym(b, KMOD_BASE + 0x100000 * i + 0x100 * k, name,
						     mod) < 0;
		}
	}
	if (err || vmctx_bundle_seal(b)) {
		vmctx_bundle_free(b);
		return NULL;
	}
	return b;
}

/* The text's length: the gzip trailer's ISIZE (the text is far below 4 GiB). */
static size_t text_len(const unsigned char *gz, size_t len)
{
	return (size_t)gz[len - 4] | (size_t)gz[len - 3] << 8 | (size_t)gz[len - 2] << 16 |
	       (size_t)gz[len - 1] << 24;
}

int main(int argc, char **argv)
{
	struct vmctx_bundle *b, *r;
	double best = 1e9, t0, t;
	int opt, runs = 20, i, err;
	void *buf;
	size_t len;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n' || (runs = atoi(optarg)) < 1) {
			fprintf(stderr, "usage: bench-read [-n RUNS]\n");
			return 2;
		}
	}
	b = build();
	if (!b || vmctx_bundle_write_mem(b, &buf, &len)) {
		fprintf(stderr, "bench-read: building the bundle failed\n");
		return 1;
	}
	vmctx_bundle_free(b);
	for (i = 0; i < runs; i++) {
		t0 = now();
		err = vmctx_bundle_read_mem(buf, len, NULL, &r);
		t = now() - t0;
		if (err) {
			fprintf(stderr, "bench-read: reading failed: %s\n", vmctx_strerror(err));
			return 1;
		}
		vmctx_bundle_free(r);
		if (t < best)
			best = t;
	}
	printf("bundle read: %d kernel symbols, %d user symbols, %d maps: %zu bytes, %zu of text; best of %d: %.2f ms, %.0f MB/s of text; peak RSS %ld KiB\n",
	       KSYMS, OBJECTS * OBJECT_SYMS, TASKS * TASK_MAPS, len, text_len(buf, len), runs,
	       best * 1e3, text_len(buf, len) / best / 1e6, peak_rss_kib());
	free(buf);
	return 0;
}
