// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Writes the seed corpus for fuzz-bundle into DIR: a few valid bundles made
 * with the library's writer, and a few invalid ones (one per error class)
 * made by gzipping hand-written text.  See README in this directory.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "vmctx.h"

static const char *dir;

static int put(const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

static int put_bundle(const char *name, struct vmctx_bundle *b)
{
	size_t len;
	void *buf;
	int err;

	err = vmctx_bundle_seal(b);
	if (!err)
		err = vmctx_bundle_write_mem(b, &buf, &len);
	if (err) {
		fprintf(stderr, "%s: %s\n", name, vmctx_strerror(err));
		return -1;
	}
	err = put(name, buf, len);
	free(buf);
	vmctx_bundle_free(b);
	return err;
}

static int put_text(const char *name, const char *text)
{
	uLong cap = compressBound(strlen(text)) + 64;
	unsigned char *out = malloc(cap);
	z_stream z;
	int err;

	memset(&z, 0, sizeof(z));
	if (!out || deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	z.next_in = (unsigned char *)text;
	z.avail_in = strlen(text);
	z.next_out = out;
	z.avail_out = cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		return -1;
	err = put(name, out, z.total_out);
	deflateEnd(&z);
	free(out);
	return err;
}

static struct vmctx_bundle *sample(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int libc, sh;

	vmctx_bundle_set_identity(b, "guest one", "6.1.0-13-amd64", "9f0e8d2c-1111-4a4a-8b8b-01");
	vmctx_bundle_set_clock(b, 2994375, 123456789012345ull, 987654321ull);
	vmctx_bundle_set_cr3_mask(b, 1ull << 47);
	vmctx_bundle_set_window(b, 4000, 20000);
	vmctx_bundle_set_agent(b, "vmctx-agent 0.2.0 backend=kmod");
	vmctx_bundle_add_task(b, 0x10000, 1, 1, "init", 0, VMCTX_TIME_NONE);
	vmctx_bundle_add_task(b, 0x21001, 100, 100, "odd %name\n", 5000, 9000);
	vmctx_bundle_add_task(b, 0x20000, 200, 200, "libquantum", 9000, VMCTX_TIME_NONE);
	vmctx_bundle_add_task(b, 0x20000, 201, 200, "libquantum", 9100, VMCTX_TIME_NONE);
	libc = vmctx_bundle_add_object(b, "/usr/lib/x86_64-linux-gnu/libc.so.6",
				       "0123456789abcdef0123456789abcdef01234567");
	sh = vmctx_bundle_add_object(b, "/usr/bin/libquantum", NULL);
	vmctx_bundle_add_symbol(b, libc, 0x28000, 0x80, "__libc_start_main");
	vmctx_bundle_add_symbol(b, libc, 0x29000, 0x100, "memcpy");
	vmctx_bundle_add_symbol(b, sh, 0x1000, 0x200, "main");
	vmctx_bundle_add_symbol(b, sh, 0x1200, 0x100, "quantum_toffoli");
	/* unwind tables: a CIE-shaped .eh_frame and its header (x-unwind lines) */
	{
		static const unsigned char hdr[] = { 1, 0x1b, 3, 0x3b, 0xf4, 0xff, 0xff, 0xff,
						     1, 0, 0, 0 };
		static const unsigned char cfi[] = { 0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0,
						     1, 0x78, 0x10, 1, 0x1b, 0x0c, 7, 8, 0x90,
						     1, 0, 0, 0, 0, 0, 0 };

		vmctx_bundle_add_unwind(b, libc, VMCTX_UNWIND_EH_FRAME_HDR, 0x1c000, hdr,
					sizeof(hdr));
		vmctx_bundle_add_unwind(b, libc, VMCTX_UNWIND_EH_FRAME, 0x1d000, cfi, sizeof(cfi));
	}
	vmctx_bundle_add_map(b, 2, 0x400000, 0x402000, 0, 0x3ff000, sh, "/usr/bin/libquantum");
	vmctx_bundle_add_map(b, 2, 0x7f0000001000, 0x7f0000100000, 0x28000, 0x7f0000000000, libc,
			     "/usr/lib/x86_64-linux-gnu/libc.so.6");
	vmctx_bundle_add_map(b, 2, 0x7ffff000, 0x80000000, 0, 0, -1, "[stack]");
	vmctx_bundle_add_kmodule(b, "kvm_amd", 0xffffffffc0100000ull, 0x20000);
	vmctx_bundle_add_ksym(b, 0xffffffff81000000ull, "_stext", NULL);
	vmctx_bundle_add_ksym(b, 0xffffffff81000100ull, "do_idle", NULL);
	vmctx_bundle_add_ksym(b, 0xffffffffc0100040ull, "svm_vcpu_run", "kvm_amd");
	return b;
}

/*
 * A switch log (format version 2) on three CPUs: switches sharing a time,
 * the idle task, a kernel thread, a comm that needs escaping, and gaps,
 * one on a CPU without switches.
 */
static struct vmctx_bundle *switches(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();

	vmctx_bundle_set_identity(b, "guest three", "6.12.0", "9f0e8d2c-3333-4a4a-8b8b-03");
	vmctx_bundle_set_clock(b, 2994375, 1000, 0);
	vmctx_bundle_set_window(b, 1000, 90000);
	vmctx_bundle_add_task(b, 0x10000, 1, 1, "init", 0, VMCTX_TIME_NONE);
	vmctx_bundle_add_switch(b, 0, 1000, 1, 1, VMCTX_TASK_USER, "init");
	vmctx_bundle_add_switch(b, 0, 2000, 0, 0, VMCTX_TASK_IDLE, "swapper/0");
	vmctx_bundle_add_switch(b, 0, 3000, 31, 31, VMCTX_TASK_KTHREAD, "kworker/0:1");
	vmctx_bundle_add_switch(b, 0, 3000, 812, 812, VMCTX_TASK_USER, "odd %name\n");
	vmctx_bundle_add_switch_gap(b, 0, 4000, 5000);
	vmctx_bundle_add_switch(b, 0, 6000, 813, 812, VMCTX_TASK_USER, "odd %name\n");
	vmctx_bundle_add_switch(b, 1, 1500, 0, 0, VMCTX_TASK_IDLE, "swapper/1");
	vmctx_bundle_add_switch(b, 1, 2500, 1, 1, VMCTX_TASK_USER, "init");
	vmctx_bundle_add_switch(b, 3, 1200, 2, 2, VMCTX_TASK_KTHREAD, "kthreadd");
	vmctx_bundle_add_switch_gap(b, 2, 7000, 7000);
	return b;
}

/*
 * Enough of each for the lookups' buckets (key-index.c: 32 keys and more;
 * an object's symbols are indexed from 256): 48 tasks taking turns on
 * three roots, 300 symbols of one object, and a kernel of 300 symbols,
 * vmlinux's bunched far below 48 modules'.
 */
static struct vmctx_bundle *indexed(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	char name[32];
	int obj, i;

	vmctx_bundle_set_identity(b, "guest two", "6.12.0", "9f0e8d2c-2222-4a4a-8b8b-02");
	vmctx_bundle_set_clock(b, 2994375, 1000, 0);
	obj = vmctx_bundle_add_object(b, "/usr/bin/big", "00112233");
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		vmctx_bundle_add_symbol(b, obj, 0x1000 + 0x40 * i, 0x30 + i % 16, name);
	}
	for (i = 0; i < 48; i++) {
		uint64_t start = 1000 * (uint64_t)(i / 3);
		int t = vmctx_bundle_add_task(b, 0x100000 + 0x2000 * (i % 3), 100 + i, 100 + i, "big",
					      start, i % 5 ? start + 900 : VMCTX_TIME_NONE);

		vmctx_bundle_add_map(b, t, 0x400000, 0x400000 + 0x40 * 300 + 0x1000, 0,
				     0x400000 - 0x1000, obj, "/usr/bin/big");
	}
	for (i = 0; i < 48; i++) {
		snprintf(name, sizeof(name), "mod%d", i);
		vmctx_bundle_add_kmodule(b, name, 0xffffffffc0000000ull + 0x10000 * i, 0x8000);
		vmctx_bundle_add_ksym(b, 0xffffffffc0000000ull + 0x10000 * i + 0x10, name, name);
	}
	for (i = 0; i < 252; i++) {
		snprintf(name, sizeof(name), "k%d", i);
		vmctx_bundle_add_ksym(b, 0xffffffff81000000ull + 0x100 * i, name, NULL);
	}
	return b;
}

static const char header[] =
	"vmctx-bundle 1\n"
	"counts tasks=1 objects=1 maps=1 syms=1 kmods=0 ksyms=0\n"
	"identity hostname=g release=r boot_id=b\n"
	"clock tsc_khz=1 tsc=2 ns=3\n"
	"cr3_mask 0x0\n"
	"task 0 root=0x1000 pid=1 tgid=1 start=0 exit=- comm=a\n"
	"object 0 build_id=abcd path=/a\n";

int main(int argc, char **argv)
{
	char text[1024];
	int err = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: gen-corpus DIR\n");
		return 2;
	}
	dir = argv[1];
	err |= put_bundle("valid-empty.vmctx", vmctx_bundle_new());
	err |= put_bundle("valid-sample.vmctx", sample());
	err |= put_bundle("valid-indexed.vmctx", indexed());
	err |= put_bundle("valid-switches.vmctx", switches());

	snprintf(text, sizeof(text), "%ssym 0 0x10 0x10 f\n"
		 "map 0 0x1000 0x2000 pgoff=0x0 bias=0x0 object=0 path=/a\nend\n", header);
	err |= put_text("valid-text.vmctx", text);
	snprintf(text, sizeof(text), "%ssym 0 0x10 0x10 f\n"
		 "map 0 0x1000 0x2000 pgoff=0x0 bias=0x0 object=0 path=/a\n", header);
	err |= put_text("invalid-no-end.vmctx", text);
	snprintf(text, sizeof(text), "%ssym 0 0x10 0x10 f\n"
		 "map 0 0x1000 0x2000 pgoff=0x0 bias=0x0 object=3 path=/a\nend\n", header);
	err |= put_text("invalid-ref.vmctx", text);
	snprintf(text, sizeof(text), "%ssym 0 0x10 0x10 f\n"
		 "map 0 0x2000 0x1000 pgoff=0x0 bias=0x0 object=0 path=/a\nend\n", header);
	err |= put_text("invalid-range.vmctx", text);
	err |= put_text("invalid-version.vmctx", "vmctx-bundle 3\nend\n");
	err |= put_text("invalid-switch-v1.vmctx", "vmctx-bundle 1\n"
			"counts tasks=0 objects=0 maps=0 syms=0 kmods=0 ksyms=0\n"
			"identity hostname=g release=r boot_id=b\nclock tsc_khz=1 tsc=2 ns=3\n"
			"cr3_mask 0x0\nswitch 0 5 pid=1 tgid=1 kind=task comm=a\nend\n");
	err |= put_text("invalid-counts.vmctx", "vmctx-bundle 1\n"
			"counts tasks=4000000000 objects=0 maps=0 syms=0 kmods=0 ksyms=0\n");
	err |= put("invalid-magic.vmctx", "vmctx-bundle 1\nend\n", 20);
	return err ? 1 : 0;
}
