// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Guest-map bundle: a written bundle reads back with every field intact,
 * a sealed bundle never changes and only sealed bundles are written, and
 * every class of malformed bundle is refused with its own error code,
 * bounded memory and nothing leaked (run under ASan/LSan to check that).
 * Malformed inputs are built here from text and gzipped with zlib.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include "bundle.h"

static int failures;
static char last_log[1024];

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			failures++;					\
		}							\
	} while (0)

static unsigned int nr_logs;

static void on_log(enum vmctx_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	nr_logs++;
	snprintf(last_log, sizeof(last_log), "%s", msg);
}

/* ---- helpers ------------------------------------------------------------ */

/*
 * Whether gzip_buf() gives its members a header CRC (FHCRC).  The reader
 * leaves such a member to its streaming path (zlib), and every other sound
 * member to its whole-text path (libdeflate): expect_text() reads each
 * text both ways.
 */
static bool gzip_header_crc;

static unsigned char *gzip_buf(const void *data, size_t len, size_t *out_len)
{
	gz_header head = { .hcrc = 1 };
	z_stream z;
	unsigned char *out;
	size_t cap = deflateBound(NULL, len) + 64;

	memset(&z, 0, sizeof(z));
	out = malloc(cap);
	if (!out || deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	if (gzip_header_crc && deflateSetHeader(&z, &head) != Z_OK)
		abort();
	z.next_in = (unsigned char *)data;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

/* The text inside a gzip member (test-side, trusted input). */
static char *gunzip_buf(const void *data, size_t len)
{
	size_t cap = 1 << 20;
	char *out = malloc(cap);
	z_stream z;

	memset(&z, 0, sizeof(z));
	if (!out || inflateInit2(&z, 15 + 16) != Z_OK)
		abort();
	z.next_in = (unsigned char *)data;
	z.avail_in = len;
	z.next_out = (unsigned char *)out;
	z.avail_out = cap - 1;
	if (inflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	out[z.total_out] = '\0';
	inflateEnd(&z);
	return out;
}

static int read_buf(const void *buf, size_t len, uint64_t max, struct vmctx_bundle **out)
{
	struct vmctx_read_opts opts = { .sz = sizeof(opts), .max_size = max };

	return vmctx_bundle_read_mem(buf, len, &opts, out);
}

/*
 * Read @text gzipped and expect @want (0 or -VMCTX_E_*).  On failure the
 * output pointer must be left alone.  Read both ways (see gzip_header_crc),
 * each must give @want and log the same.
 */
static void expect_text(const char *what, const char *text, size_t len, uint64_t max, int want)
{
	struct vmctx_bundle *sentinel = (struct vmctx_bundle *)&failures, *b;
	char whole_log[sizeof(last_log)];
	unsigned char *gz;
	size_t gzlen;
	int err, way;

	for (way = 0; way < 2; way++) {
		gzip_header_crc = way;
		b = sentinel;
		last_log[0] = '\0';
		gz = gzip_buf(text, len, &gzlen);
		err = read_buf(gz, gzlen, max, &b);
		CHECK(err == want, "%s, %s: got %d (%s), want %d (%s); log: %s", what,
		      way ? "streamed" : "whole", err, vmctx_strerror(err), want,
		      vmctx_strerror(want), last_log);
		if (err)
			CHECK(b == sentinel, "%s: *out changed on error", what);
		else
			vmctx_bundle_free(b);
		free(gz);
		if (!way)
			memcpy(whole_log, last_log, sizeof(whole_log));
		else
			CHECK(!strcmp(whole_log, last_log), "%s: logged \"%s\" whole, \"%s\" streamed",
			      what, whole_log, last_log);
	}
	gzip_header_crc = false;
}

static void expect(const char *what, const char *text, int want)
{
	expect_text(what, text, strlen(text), 0, want);
}

static const char base_text[] =
	"vmctx-bundle 1\n"
	"counts tasks=2 objects=1 maps=2 syms=2 kmods=1 ksyms=2\n"
	"identity hostname=g1 release=6.1.0 boot_id=abc\n"
	"clock tsc_khz=2000000 tsc=1000 ns=500\n"
	"cr3_mask 0x0\n"
	"task 0 root=0x1000 pid=1 tgid=1 start=0 exit=- comm=init\n"
	"task 1 root=0x2000 pid=2 tgid=2 start=10 exit=20 comm=sh\n"
	"object 0 build_id=abcd path=/bin/sh\n"
	"sym 0 0x1000 0x10 main\n"
	"sym 0 0x1010 0x10 foo\n"
	"map 1 0x400000 0x401000 pgoff=0x0 bias=0x3ff000 object=0 path=/bin/sh\n"
	"map 1 0x401000 0x402000 pgoff=0x1000 bias=0x3ff000 object=- path=\n"
	"kmod 0 0xffffffffc0000000 0x1000 kvm\n"
	"ksym 0xffffffff81000000 - _stext\n"
	"ksym 0xffffffffc0000010 0 kvm_init\n"
	"end\n";

/* base_text with the line starting @old replaced by @new (NULL: deleted). */
static char *mutate(const char *old, const char *new)
{
	const char *p = strstr(base_text, old), *eol;
	char *out;

	if (!p)
		abort();
	eol = strchr(p, '\n') + 1;
	if (asprintf(&out, "%.*s%s%s%s", (int)(p - base_text), base_text, new ? new : "",
		     new ? "\n" : "", eol) < 0)
		abort();
	return out;
}

static void expect_mutated(const char *what, const char *old, const char *new, int want)
{
	char *text = mutate(old, new);

	expect(what, text, want);
	free(text);
}

static long maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* ---- a bundle with every kind of record ----------------------------------- */

static const char odd_name[] = "a b%c\nd\t\x01\x7f\xc3\xa9-=";

static struct vmctx_bundle *build_sample(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int libc, sh, again, t0, t1, t2, km;

	CHECK(b, "alloc");
	CHECK(!vmctx_bundle_set_identity(b, "guest one", "6.1.0-13-amd64 #1 SMP",
					 "9f0e8d2c-1111-4a4a-8b8b-000000000001"), "identity");
	CHECK(!vmctx_bundle_set_clock(b, 2994375, 123456789012345ull, 987654321ull), "clock");
	CHECK(!vmctx_bundle_set_cr3_mask(b, 1ull << 47), "cr3 mask");
	t0 = vmctx_bundle_add_task(b, 0x10000ull, 1, 1, "init", 0, VMCTX_TIME_NONE);
	t1 = vmctx_bundle_add_task(b, 0x20000ull | 0x1001, 100, 100, odd_name, 5000, 9000);
	t2 = vmctx_bundle_add_task(b, 0x20000ull, 200, 200, "100%", 9000, VMCTX_TIME_NONE);
	CHECK(t0 == 0 && t1 == 1 && t2 == 2, "task indices %d %d %d", t0, t1, t2);
	CHECK(vmctx_bundle_add_task(b, 0x30000, 201, 200, "worker", 9100, 9200) == 3, "thread");

	libc = vmctx_bundle_add_object(b, "/usr/lib/x86_64-linux-gnu/libc.so.6",
				       "0123456789abcdef0123456789abcdef01234567");
	sh = vmctx_bundle_add_object(b, "/bin/my shell", NULL);
	/* The same build-id under another path is the same object. */
	again = vmctx_bundle_add_object(b, "/lib/x86_64-linux-gnu/libc.so.6",
					"0123456789abcdef0123456789abcdef01234567");
	CHECK(libc == 0 && sh == 1 && again == libc, "objects %d %d %d", libc, sh, again);
	CHECK(vmctx_bundle_nobjects(b) == 2, "dedup by build-id keeps 2 objects");

	/* Added out of order: the writer emits them sorted. */
	CHECK(!vmctx_bundle_add_symbol(b, libc, 0x29000, 0x100, "memcpy"), "sym");
	CHECK(!vmctx_bundle_add_symbol(b, libc, 0x28000, 0x80, "__libc_start_main"), "sym");
	CHECK(!vmctx_bundle_add_symbol(b, libc, 0x30000, 0x10, odd_name), "sym");
	CHECK(!vmctx_bundle_add_symbol(b, sh, 0x1000, 0x200, "main"), "sym");
	CHECK(vmctx_bundle_object_nsyms(b, libc) == 3, "object_nsyms");

	CHECK(!vmctx_bundle_add_map(b, t1, 0x7f0000001000, 0x7f0000100000, 0x28000,
				    0x7f0000000000, libc, "/usr/lib/x86_64-linux-gnu/libc.so.6"),
	      "map");
	CHECK(!vmctx_bundle_add_map(b, t1, 0x400000, 0x401000, 0, 0x0, sh, "/bin/my shell"),
	      "map");
	CHECK(!vmctx_bundle_add_map(b, t1, 0x7ffff000, 0x80000000, 0, 0, -1, "[stack]"), "map");
	CHECK(!vmctx_bundle_add_map(b, t2, 0x400000, 0x401000, 0, 0, sh, NULL), "map");

	km = vmctx_bundle_add_kmodule(b, "kvm_amd", 0xffffffffc0100000ull, 0x20000);
	CHECK(km == 0, "kmodule index %d", km);
	CHECK(vmctx_bundle_add_kmodule(b, "e1000", 0xffffffffc0200000ull, 0x8000) == 1, "kmod");
	CHECK(!vmctx_bundle_add_ksym(b, 0xffffffffc0100040ull, "svm_vcpu_run", "kvm_amd"), "ks");
	CHECK(!vmctx_bundle_add_ksym(b, 0xffffffff81000000ull, "_stext", NULL), "ksym");
	CHECK(!vmctx_bundle_add_ksym(b, 0xffffffff81000100ull, "do_idle", NULL), "ksym");
	CHECK(!vmctx_bundle_add_ksym(b, 0xffffffffc0200010ull, "e1000_intr", "e1000"), "ksym");
	CHECK(!vmctx_bundle_seal(b), "seal");
	return b;
}

static bool streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* Every field of @b equals @a's (both sealed). */
static void compare(const char *what, const struct vmctx_bundle *a,
		    const struct vmctx_bundle *b)
{
	size_t i, j;

	CHECK(streq(vmctx_bundle_hostname(a), vmctx_bundle_hostname(b)), "%s: hostname", what);
	CHECK(streq(vmctx_bundle_release(a), vmctx_bundle_release(b)), "%s: release", what);
	CHECK(streq(vmctx_bundle_boot_id(a), vmctx_bundle_boot_id(b)), "%s: boot_id", what);
	CHECK(a->tsc_khz == b->tsc_khz && a->clock_tsc == b->clock_tsc &&
	      a->clock_ns == b->clock_ns, "%s: clock", what);
	CHECK(a->cr3_mask == b->cr3_mask, "%s: cr3 mask", what);
	CHECK(a->ntasks == b->ntasks, "%s: ntasks", what);
	for (i = 0; i < a->ntasks && i < b->ntasks; i++) {
		const struct vmctx_task *x = &a->tasks[i], *y = &b->tasks[i];

		CHECK(x->root == y->root && x->pid == y->pid && x->tgid == y->tgid &&
		      x->start == y->start && x->exit == y->exit && streq(x->comm, y->comm),
		      "%s: task %zu", what, i);
		CHECK(x->nmaps == y->nmaps, "%s: task %zu nmaps", what, i);
		for (j = 0; j < x->nmaps && j < y->nmaps; j++) {
			const struct vmctx_map *m = &x->maps[j], *n = &y->maps[j];

			CHECK(m->start == n->start && m->end == n->end && m->pgoff == n->pgoff &&
			      m->bias == n->bias && m->object == n->object &&
			      streq(m->path, n->path) && streq(m->base, n->base),
			      "%s: task %zu map %zu", what, i, j);
		}
	}
	CHECK(a->nobjects == b->nobjects, "%s: nobjects", what);
	for (i = 0; i < a->nobjects && i < b->nobjects; i++) {
		const struct vmctx_object *x = &a->objects[i], *y = &b->objects[i];

		CHECK(streq(x->path, y->path) && streq(x->base, y->base), "%s: object %zu", what, i);
		CHECK(x->build_id ? streq(x->build_id, y->build_id) : !y->build_id,
		      "%s: object %zu build-id", what, i);
		CHECK(x->nsyms == y->nsyms, "%s: object %zu nsyms", what, i);
		for (j = 0; j < x->nsyms && j < y->nsyms; j++)
			CHECK(x->syms[j].start == y->syms[j].start &&
			      x->syms[j].end == y->syms[j].end &&
			      streq(x->syms[j].name, y->syms[j].name),
			      "%s: object %zu sym %zu", what, i, j);
	}
	CHECK(a->nkmods == b->nkmods, "%s: nkmods", what);
	for (i = 0; i < a->nkmods && i < b->nkmods; i++)
		CHECK(a->kmods[i].start == b->kmods[i].start && a->kmods[i].end == b->kmods[i].end &&
		      streq(a->kmods[i].name, b->kmods[i].name), "%s: kmod %zu", what, i);
	CHECK(a->nksyms == b->nksyms, "%s: nksyms", what);
	for (i = 0; i < a->nksyms && i < b->nksyms; i++)
		CHECK(a->ksyms[i].addr == b->ksyms[i].addr &&
		      a->ksyms[i].module == b->ksyms[i].module &&
		      streq(a->ksyms[i].name, b->ksyms[i].name), "%s: ksym %zu", what, i);
}

/* ---- round trip ------------------------------------------------------------ */

static void test_round_trip_preserves_every_field(void)
{
	struct vmctx_bundle *a = build_sample(), *b = NULL, *c = NULL;
	uint64_t root, khz, tsc, ns, start, exit;
	void *buf, *buf2;
	size_t len, len2;
	const char *comm;
	int pid, tgid, err;

	err = vmctx_bundle_write_mem(a, &buf, &len);
	CHECK(!err, "write_mem: %s", vmctx_strerror(err));
	if (err)
		goto out;
	err = read_buf(buf, len, 0, &b);
	CHECK(!err, "read_mem of a written bundle: %s; log: %s", vmctx_strerror(err), last_log);
	if (err)
		goto out_buf;
	compare("round trip", a, b);

	/* Through the public inspectors too. */
	CHECK(streq(vmctx_bundle_hostname(b), "guest one"), "hostname with a space");
	CHECK(streq(vmctx_bundle_release(b), "6.1.0-13-amd64 #1 SMP"), "release");
	CHECK(!vmctx_bundle_clock(b, &khz, &tsc, &ns) && khz == 2994375 &&
	      tsc == 123456789012345ull && ns == 987654321ull, "clock values");
	CHECK(vmctx_bundle_ntasks(b) == 4 && vmctx_bundle_nobjects(b) == 2 &&
	      vmctx_bundle_nmaps(b) == 4 && vmctx_bundle_nksyms(b) == 4, "counts");
	CHECK(!vmctx_bundle_task(b, 1, &root, &pid, &tgid, &comm, &start, &exit) &&
	      root == 0x21001 && pid == 100 && tgid == 100 && streq(comm, odd_name) &&
	      start == 5000 && exit == 9000, "exited task with an odd comm, root stored as given");
	CHECK(!vmctx_bundle_task(b, 0, NULL, NULL, NULL, NULL, NULL, &exit) &&
	      exit == VMCTX_TIME_NONE, "live task keeps VMCTX_TIME_NONE");
	CHECK(vmctx_bundle_task(b, 4, NULL, NULL, NULL, NULL, NULL, NULL) == -EINVAL,
	      "task out of range");
	CHECK(b->cr3_mask == 1ull << 47, "cr3 mask");
	CHECK(b->objects[0].nsyms == 3 && streq(b->objects[0].syms[0].name, "__libc_start_main") &&
	      streq(b->objects[0].syms[2].name, odd_name), "symbols sorted, odd name kept");
	CHECK(streq(b->tasks[2].maps[0].path, "") && streq(b->tasks[1].maps[0].base, "my shell"),
	      "map paths and base names");
	CHECK(b->ksyms[0].module == -1 && b->ksyms[2].module == 0 && b->ksyms[3].module == 1,
	      "ksym modules by index");
	CHECK(b->sealed, "reading seals the bundle");

	/* Writing what was read gives the same bytes: the format is canonical. */
	err = vmctx_bundle_write_mem(b, &buf2, &len2);
	CHECK(!err && len2 == len && !memcmp(buf, buf2, len), "rewrite is byte-identical");
	if (!err)
		free(buf2);

	/* What was read is sealed: it takes no more records and stays as it was. */
	CHECK(vmctx_bundle_add_task(b, 0x50000, 300, 300, "late", 1, 2) == -VMCTX_E_SEALED,
	      "add after read");
	CHECK(!vmctx_bundle_seal(b), "sealing a sealed bundle does nothing");
	err = vmctx_bundle_write_mem(b, &buf2, &len2);
	CHECK(!err, "write after a refused change");
	if (!err) {
		err = read_buf(buf2, len2, 0, &c);
		CHECK(!err && vmctx_bundle_ntasks(c) == 4, "the refused task is not written");
		vmctx_bundle_free(c);
		free(buf2);
	}
out_buf:
	free(buf);
out:
	vmctx_bundle_free(a);
	vmctx_bundle_free(b);
}

/* The text matches vmctx-bundle(5) line for line. */
static void test_written_text_is_the_documented_format(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	static const char want[] =
		"vmctx-bundle 1\n"
		"counts tasks=1 objects=1 maps=1 syms=1 kmods=1 ksyms=2\n"
		"identity hostname=h%20x release=r boot_id=\n"
		"clock tsc_khz=1 tsc=2 ns=3\n"
		"cr3_mask 0x800000000000\n"
		"task 0 root=0x1000 pid=7 tgid=7 start=4 exit=- comm=a%25b%0A\n"
		"object 0 build_id=beef path=/x/y\n"
		"sym 0 0x10 0x20 f%C3%A9\n"
		"map 0 0x1000 0x2000 pgoff=0x0 bias=0xff0 object=0 path=/x/y\n"
		"kmod 0 0xffffffffc0000000 0x100 m\n"
		"ksym 0xffffffff81000000 - _text\n"
		"ksym 0xffffffffc0000000 0 m_init\n"
		"end\n";
	size_t len;
	void *buf;
	char *text;
	int obj;

	vmctx_bundle_set_identity(b, "h x", "r", NULL);
	vmctx_bundle_set_clock(b, 1, 2, 3);
	vmctx_bundle_set_cr3_mask(b, 1ull << 47);
	vmctx_bundle_add_task(b, 0x1000, 7, 7, "a%b\n", 4, VMCTX_TIME_NONE);
	obj = vmctx_bundle_add_object(b, "/x/y", "beef");
	vmctx_bundle_add_symbol(b, obj, 0x10, 0x20, "f\xc3\xa9");
	vmctx_bundle_add_map(b, 0, 0x1000, 0x2000, 0, 0xff0, obj, "/x/y");
	vmctx_bundle_add_kmodule(b, "m", 0xffffffffc0000000ull, 0x100);
	vmctx_bundle_add_ksym(b, 0xffffffffc0000000ull, "m_init", "m");
	vmctx_bundle_add_ksym(b, 0xffffffff81000000ull, "_text", NULL);
	if (vmctx_bundle_seal(b) || vmctx_bundle_write_mem(b, &buf, &len)) {
		CHECK(0, "seal and write_mem");
		vmctx_bundle_free(b);
		return;
	}
	text = gunzip_buf(buf, len);
	CHECK(!strcmp(text, want), "text differs:\n%s---- want:\n%s", text, want);
	CHECK(((unsigned char *)buf)[0] == 0x1f && ((unsigned char *)buf)[1] == 0x8b,
	      "gzip magic");
	free(text);
	free(buf);
	vmctx_bundle_free(b);
}

static void test_empty_bundle_round_trips(void)
{
	struct vmctx_bundle *a = vmctx_bundle_new(), *b = NULL;
	size_t len = 0;
	void *buf = NULL;

	CHECK(!vmctx_bundle_seal(a) && !vmctx_bundle_write_mem(a, &buf, &len), "write empty");
	CHECK(!read_buf(buf, len, 0, &b), "read empty");
	if (b) {
		compare("empty", a, b);
		CHECK(streq(vmctx_bundle_hostname(b), ""), "unset hostname reads as empty");
	}
	free(buf);
	vmctx_bundle_free(a);
	vmctx_bundle_free(b);
}

static void test_write_file_is_atomic_and_reads_back(void)
{
	char dir[] = "/tmp/vmctx-test-XXXXXX", path[64], *junk;
	struct vmctx_bundle *a = build_sample(), *b = NULL;
	struct dirent *de;
	int n = 0, err;
	FILE *f;
	DIR *d;

	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(path, sizeof(path), "%s/g.vmctx", dir);
	/* An old file at the path is replaced whole. */
	f = fopen(path, "w");
	fputs("old", f);
	fclose(f);
	err = vmctx_bundle_write_file(a, path);
	CHECK(!err, "write_file: %s", vmctx_strerror(err));
	d = opendir(dir);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	if (d)
		closedir(d);
	CHECK(n == 1, "no temporary file left behind (%d entries)", n);
	err = vmctx_bundle_read_file(path, NULL, &b);
	CHECK(!err, "read_file: %s", vmctx_strerror(err));
	if (b)
		compare("file", a, b);
	vmctx_bundle_free(b);
	b = NULL;

	/* A file bigger than any bundle within max_size is refused unread. */
	{
		struct vmctx_read_opts opts = { .sz = sizeof(opts), .max_size = 1000 };

		junk = calloc(1, 200000);
		f = fopen(path, "w");
		fwrite(junk, 1, 200000, f);
		fclose(f);
		free(junk);
		err = vmctx_bundle_read_file(path, &opts, &b);
		CHECK(err == -VMCTX_E_LIMIT, "oversized file: %d", err);
	}
	CHECK(vmctx_bundle_read_file("/nonexistent/x", NULL, &b) == -ENOENT, "missing file");
	CHECK(vmctx_bundle_read_file(dir, NULL, &b) == -EISDIR, "directory");
	unlink(path);
	rmdir(dir);
	vmctx_bundle_free(a);
}

/*
 * Bundles read in several threads at once (libvmctx(3): distinct objects
 * from distinct threads), as perf reads a fleet's: each read gives the
 * bundle that was written, and none fails.
 */
#define READERS		4
#define READS		8

struct reader_arg {
	const char *path;
	struct vmctx_bundle *got[READS];
	int err[READS];
};

static void *read_repeatedly(void *p)
{
	struct reader_arg *r = p;
	int i;

	for (i = 0; i < READS; i++)
		r->err[i] = vmctx_bundle_read_file(r->path, NULL, &r->got[i]);
	return NULL;
}

static void test_bundles_read_in_threads(void)
{
	char dir[] = "/tmp/vmctx-test-XXXXXX", path[64];
	struct vmctx_bundle *a = build_sample();
	struct reader_arg r[READERS];
	pthread_t t[READERS];
	int i, j, started = 0, err;

	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(path, sizeof(path), "%s/g.vmctx", dir);
	err = vmctx_bundle_write_file(a, path);
	CHECK(!err, "write_file: %s", vmctx_strerror(err));
	memset(r, 0, sizeof(r));
	for (i = 0; i < READERS; i++) {
		r[i].path = path;
		if (pthread_create(&t[i], NULL, read_repeatedly, &r[i]))
			break;
		started++;
	}
	CHECK(started == READERS, "%d reader threads started", started);
	for (i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < started; i++) {
		for (j = 0; j < READS; j++) {
			CHECK(!r[i].err[j], "thread %d read %d: %s", i, j, vmctx_strerror(r[i].err[j]));
			if (r[i].got[j])
				compare("threads", a, r[i].got[j]);
			vmctx_bundle_free(r[i].got[j]);
		}
	}
	unlink(path);
	rmdir(dir);
	vmctx_bundle_free(a);
}

/* ---- builder arguments ------------------------------------------------------ */

static void test_builder_rejects_bad_arguments(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	char long_comm[BUNDLE_MAX_SHORT + 2];
	int obj;

	memset(long_comm, 'c', sizeof(long_comm) - 1);
	long_comm[sizeof(long_comm) - 1] = '\0';
	CHECK(vmctx_bundle_add_task(NULL, 0, 1, 1, "x", 0, 1) == -EINVAL, "NULL bundle");
	CHECK(vmctx_bundle_add_task(b, 0, -1, 1, "x", 0, 1) == -EINVAL, "negative pid");
	CHECK(vmctx_bundle_add_task(b, 0, 1, 1, "x", 5, 4) == -EINVAL, "exit before start");
	CHECK(vmctx_bundle_add_task(b, 0, 1, 1, long_comm, 0, 1) == -VMCTX_E_LIMIT,
	      "comm beyond the limit");
	CHECK(vmctx_bundle_add_task(b, 0, 1, 1, NULL, 0, 1) == 0, "NULL comm is empty");
	CHECK(vmctx_bundle_add_object(b, NULL, NULL) == -EINVAL, "NULL path");
	CHECK(vmctx_bundle_add_object(b, "/x", "ABCD") == -EINVAL, "uppercase build-id");
	CHECK(vmctx_bundle_add_object(b, "/x", "abc") == -EINVAL, "odd build-id");
	obj = vmctx_bundle_add_object(b, "/x", NULL);
	CHECK(obj == 0, "object");
	CHECK(vmctx_bundle_add_object(b, "/x", NULL) == 1, "no build-id: no dedup");
	CHECK(vmctx_bundle_add_symbol(b, 5, 0, 1, "f") == -EINVAL, "symbol of a missing object");
	CHECK(vmctx_bundle_add_symbol(b, obj, 0, 1, "") == -EINVAL, "empty symbol name");
	CHECK(vmctx_bundle_add_symbol(b, obj, UINT64_MAX, 2, "f") == -EINVAL, "symbol wraps");
	CHECK(vmctx_bundle_object_nsyms(b, 9) == 0, "nsyms of a missing object");
	CHECK(vmctx_bundle_add_map(b, 0, 2, 2, 0, 0, -1, "x") == -EINVAL, "empty map");
	CHECK(vmctx_bundle_add_map(b, 3, 2, 3, 0, 0, -1, "x") == -EINVAL, "map of a missing task");
	CHECK(vmctx_bundle_add_map(b, 0, 2, 3, 0, 0, 7, "x") == -EINVAL, "map to a missing object");
	CHECK(vmctx_bundle_add_kmodule(b, "m", 0, 1) == 0, "kmodule");
	CHECK(vmctx_bundle_add_kmodule(b, "m", 9, 1) == -EEXIST, "duplicate module name");
	CHECK(vmctx_bundle_add_ksym(b, 1, "f", "nosuch") == -ENOENT, "ksym of a missing module");
	CHECK(vmctx_bundle_add_ksym(b, 1, NULL, NULL) == -EINVAL, "ksym without a name");
	CHECK(vmctx_bundle_hostname(NULL) == NULL && errno == EINVAL, "inspector on NULL");
	vmctx_bundle_free(b);
	vmctx_bundle_free(NULL);
}

/*
 * Sealing refuses what a reader would reject, and only sealed bundles are
 * written: a refused bundle stays unsealed and is never written.
 */
static void test_seal_refuses_overlapping_maps(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	size_t len = 0;
	void *buf = NULL;

	vmctx_bundle_add_task(b, 0x1000, 1, 1, "a", 0, VMCTX_TIME_NONE);
	vmctx_bundle_add_map(b, 0, 0x1000, 0x3000, 0, 0, -1, "a");
	vmctx_bundle_add_map(b, 0, 0x2000, 0x4000, 0, 0, -1, "b");
	CHECK(vmctx_bundle_write_mem(b, &buf, &len) == -VMCTX_E_UNSEALED, "unsealed bundle written");
	CHECK(vmctx_bundle_seal(b) == -VMCTX_E_RANGE, "overlapping maps sealed");
	CHECK(strstr(last_log, "task 0"), "log names the task: \"%s\"", last_log);
	CHECK(!b->sealed && vmctx_bundle_write_mem(b, &buf, &len) == -VMCTX_E_UNSEALED,
	      "refused bundle stays unsealed and unwritten");
	CHECK(vmctx_bundle_seal(NULL) == -EINVAL, "seal NULL");
	vmctx_bundle_free(b);
}

/* Once sealed, every setter and adder refuses; the inspectors still answer. */
static void test_sealed_bundle_takes_no_records(void)
{
	struct vmctx_bundle *b = build_sample();
	size_t ntasks = vmctx_bundle_ntasks(b), nmaps = vmctx_bundle_nmaps(b);
	int e = -VMCTX_E_SEALED;

	CHECK(vmctx_bundle_set_identity(b, "x", "y", "z") == e, "set_identity");
	CHECK(vmctx_bundle_set_clock(b, 1, 2, 3) == e, "set_clock");
	CHECK(vmctx_bundle_set_cr3_mask(b, 1) == e, "set_cr3_mask");
	CHECK(vmctx_bundle_add_task(b, 0x1000, 1, 1, "x", 0, 1) == e, "add_task");
	CHECK(vmctx_bundle_add_object(b, "/x", NULL) == e, "add_object");
	CHECK(vmctx_bundle_add_symbol(b, 0, 0x1, 0x1, "f") == e, "add_symbol");
	CHECK(vmctx_bundle_add_map(b, 0, 0x1, 0x2, 0, 0, -1, "x") == e, "add_map");
	CHECK(vmctx_bundle_add_kmodule(b, "new", 0x1, 0x1) == e, "add_kmodule");
	CHECK(vmctx_bundle_add_ksym(b, 0x1, "f", NULL) == e, "add_ksym");
	CHECK(vmctx_bundle_ntasks(b) == ntasks && vmctx_bundle_nmaps(b) == nmaps &&
	      streq(vmctx_bundle_hostname(b), "guest one"), "the bundle is unchanged");
	CHECK(vmctx_bundle_object_nsyms(b, 0) == 3, "inspectors answer on a sealed bundle");
	vmctx_bundle_free(b);
}

/* ---- hostile input ----------------------------------------------------------- */

static void test_baseline_text_is_valid(void)
{
	expect("baseline", base_text, 0);
}

static void test_truncated_gzip_is_truncated(void)
{
	struct vmctx_bundle *b = build_sample(), *out;
	size_t len, cuts[8], i;
	unsigned char *buf;
	int err;

	if (vmctx_bundle_write_mem(b, (void **)&buf, &len)) {
		CHECK(0, "write");
		return;
	}
	cuts[0] = 1;
	cuts[1] = 5;
	cuts[2] = 11;
	cuts[3] = len / 2;
	cuts[4] = len - 9;
	cuts[5] = len - 8;
	cuts[6] = len - 4;
	cuts[7] = len - 1;
	for (i = 0; i < ARRAY_SIZE(cuts); i++) {
		out = NULL;
		err = read_buf(buf, cuts[i], 0, &out);
		CHECK(err == -VMCTX_E_TRUNCATED && !out, "cut at %zu of %zu: %d (%s)", cuts[i], len,
		      err, vmctx_strerror(err));
	}
	CHECK(read_buf(buf, 0, 0, &out) == -VMCTX_E_TRUNCATED, "empty input");
	free(buf);
	vmctx_bundle_free(b);
}

static void test_truncated_text_is_truncated(void)
{
	size_t n = strlen(base_text);

	expect_text("no end line", base_text, n - 4, 0, -VMCTX_E_TRUNCATED);
	expect_text("end without newline", base_text, n - 1, 0, -VMCTX_E_TRUNCATED);
	expect_text("cut mid-record", base_text, n / 2, 0, -VMCTX_E_TRUNCATED);
	expect_text("cut in the magic line", base_text, 6, 0, -VMCTX_E_TRUNCATED);
	expect_text("empty text", base_text, 0, 0, -VMCTX_E_TRUNCATED);
}

static void test_corrupt_deflate_is_corrupt(void)
{
	struct vmctx_bundle *b = build_sample(), *out = NULL;
	unsigned char *buf;
	size_t len;
	int err;

	if (vmctx_bundle_write_mem(b, (void **)&buf, &len)) {
		CHECK(0, "write");
		return;
	}
	/* Block type 3 is reserved: the first deflate block header is invalid. */
	buf[10] |= 0x06;
	err = read_buf(buf, len, 0, &out);
	CHECK(err == -VMCTX_E_CORRUPT && !out, "reserved block type: %d", err);
	free(buf);
	vmctx_bundle_free(b);
}

static void test_bad_trailer_is_checksum(void)
{
	struct vmctx_bundle *b = build_sample(), *out = NULL;
	unsigned char *buf;
	size_t len;
	int err;

	if (vmctx_bundle_write_mem(b, (void **)&buf, &len)) {
		CHECK(0, "write");
		return;
	}
	buf[len - 8] ^= 0x01;	/* CRC-32 */
	err = read_buf(buf, len, 0, &out);
	CHECK(err == -VMCTX_E_CHECKSUM && !out, "flipped CRC: %d", err);
	buf[len - 8] ^= 0x01;
	buf[len - 3] ^= 0x40;	/* ISIZE */
	err = read_buf(buf, len, 0, &out);
	CHECK(err == -VMCTX_E_CHECKSUM && !out, "flipped ISIZE: %d", err);
	buf[len - 3] ^= 0x40;
	CHECK(!read_buf(buf, len, 0, &out), "restored bundle reads");
	vmctx_bundle_free(out);
	free(buf);
	vmctx_bundle_free(b);
}

/*
 * Any single corrupted byte of the compressed data or trailer is refused
 * with a vmctx code, or (padding bits) yields the very same bundle.
 */
/* A header's own CRC (FHCRC) is checked: libdeflate would skip it. */
static void test_bad_header_crc_is_corrupt(void)
{
	struct vmctx_bundle *out = NULL;
	unsigned char *gz;
	size_t len;
	int err;

	gzip_header_crc = true;
	gz = gzip_buf(base_text, strlen(base_text), &len);
	gzip_header_crc = false;
	CHECK(gz[3] & 0x02, "FHCRC set");
	CHECK(!read_buf(gz, len, 0, &out), "with its header CRC");
	vmctx_bundle_free(out);
	out = NULL;
	gz[10] ^= 0x01;		/* the CRC-16 after the 10-byte header */
	err = read_buf(gz, len, 0, &out);
	CHECK(err == -VMCTX_E_CORRUPT && !out, "flipped header CRC: %d", err);
	free(gz);
}

static void test_every_byte_flip_is_caught(void)
{
	struct vmctx_bundle *b = build_sample(), *out;
	unsigned char *buf, *orig, *again;
	size_t len, len2, i;
	int err, bad = 0;

	if (vmctx_bundle_write_mem(b, (void **)&buf, &len)) {
		CHECK(0, "write");
		return;
	}
	orig = malloc(len);
	memcpy(orig, buf, len);
	for (i = 10; i < len; i++) {
		buf[i] ^= 0x5a;
		out = NULL;
		err = read_buf(buf, len, 0, &out);
		if (!err) {
			/* Only bits deflate ignores: the bundle must be the same. */
			if (vmctx_bundle_write_mem(out, (void **)&again, &len2)) {
				bad++;
			} else {
				bad += len2 != len || memcmp(again, orig, len);
				free(again);
			}
			vmctx_bundle_free(out);
		} else if (-err < VMCTX_E_BASE || -err >= VMCTX_E_MAX) {
			bad++;
		}
		buf[i] ^= 0x5a;
	}
	CHECK(!bad, "%d byte flips accepted as a different bundle or gave a non-vmctx error", bad);
	free(orig);
	free(buf);
	vmctx_bundle_free(b);
}

static void test_not_gzip_is_magic(void)
{
	struct vmctx_bundle *out = NULL;
	static const unsigned char zlib_hdr[] = { 0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01 };
	unsigned char bin[256];
	size_t i;

	CHECK(read_buf(base_text, strlen(base_text), 0, &out) == -VMCTX_E_MAGIC,
	      "uncompressed text");
	CHECK(read_buf(zlib_hdr, sizeof(zlib_hdr), 0, &out) == -VMCTX_E_MAGIC, "zlib, not gzip");
	CHECK(read_buf("x", 1, 0, &out) == -VMCTX_E_MAGIC, "one byte");
	for (i = 0; i < sizeof(bin); i++)
		bin[i] = i * 7 + 3;
	expect_text("gzip of binary data", (const char *)bin, sizeof(bin), 0, -VMCTX_E_MAGIC);
	expect("gzip of other text", "hello world\nvmctx-bundle 1\n", -VMCTX_E_MAGIC);
	expect("magic without version", "vmctx-bundle\n", -VMCTX_E_MAGIC);
	CHECK(!out, "*out untouched");
}

/* Versions 1 and 2 are read; 2 is 1 with a switch log, which it need not hold. */
static void test_other_version_is_version(void)
{
	expect_mutated("version 2 without a switch log", "vmctx-bundle 1", "vmctx-bundle 2", 0);
	expect_mutated("version 3", "vmctx-bundle 1", "vmctx-bundle 3", -VMCTX_E_VERSION);
	expect_mutated("version 0", "vmctx-bundle 1", "vmctx-bundle 0", -VMCTX_E_VERSION);
	expect_mutated("version 10", "vmctx-bundle 1", "vmctx-bundle 10", -VMCTX_E_VERSION);
	expect_mutated("version 1.1", "vmctx-bundle 1", "vmctx-bundle 1.1", -VMCTX_E_VERSION);
	expect_mutated("version 02", "vmctx-bundle 1", "vmctx-bundle 02", -VMCTX_E_VERSION);
}

static void test_oversized_counts_are_limit_in_bounded_memory(void)
{
	long before = maxrss_kb();

	expect_mutated("4e9 tasks", "counts",
		       "counts tasks=4000000000 objects=1 maps=2 syms=2 kmods=1 ksyms=2",
		       -VMCTX_E_LIMIT);
	expect_mutated("huge syms", "counts",
		       "counts tasks=2 objects=1 maps=2 syms=18446744073709551615 kmods=1 ksyms=2",
		       -VMCTX_E_LIMIT);
	expect_mutated("too many kmods", "counts",
		       "counts tasks=2 objects=1 maps=2 syms=2 kmods=65537 ksyms=2",
		       -VMCTX_E_LIMIT);
	expect_mutated("count overflows u64", "counts",
		       "counts tasks=2 objects=1 maps=2 syms=99999999999999999999 kmods=1 ksyms=2",
		       -VMCTX_E_SYNTAX);
	CHECK(maxrss_kb() - before < 64 * 1024, "reading huge counts grew RSS by %ld KiB",
	      maxrss_kb() - before);
}

static void test_absurd_strings_are_limit(void)
{
	char *line, *text;
	size_t n;

	/* A comm just over its cap, in an otherwise fine line. */
	n = BUNDLE_MAX_SHORT + 1;
	line = malloc(n + 100);
	n = sprintf(line, "task 0 root=0x1000 pid=1 tgid=1 start=0 exit=- comm=");
	memset(line + n, 'x', BUNDLE_MAX_SHORT + 1);
	line[n + BUNDLE_MAX_SHORT + 1] = '\0';
	expect_mutated("comm over its cap", "task 0", line, -VMCTX_E_LIMIT);
	/* at its cap, plain and with its last byte escaped, it is read */
	line[n + BUNDLE_MAX_SHORT] = '\0';
	expect_mutated("comm at its cap", "task 0", line, 0);
	strcpy(line + n + BUNDLE_MAX_SHORT - 1, "%41");
	expect_mutated("comm at its cap, escaped", "task 0", line, 0);
	free(line);

	/* An escaped path of 4097 bytes (12291 characters). */
	line = malloc(3 * (BUNDLE_MAX_PATH + 1) + 100);
	n = sprintf(line, "object 0 build_id=abcd path=");
	for (size_t i = 0; i <= BUNDLE_MAX_PATH; i++)
		n += sprintf(line + n, "%%41");
	expect_mutated("escaped path over its cap", "object 0", line, -VMCTX_E_LIMIT);
	free(line);

	/* A line over the line cap. */
	line = malloc(BUNDLE_MAX_LINE + 100);
	n = sprintf(line, "sym 0 0x1000 0x10 ");
	memset(line + n, 'm', BUNDLE_MAX_LINE);
	line[n + BUNDLE_MAX_LINE] = '\0';
	expect_mutated("line over its cap", "sym 0 0x1000", line, -VMCTX_E_LIMIT);
	free(line);

	/* A first line that never ends. */
	text = malloc(BUNDLE_MAX_LINE * 2);
	memset(text, 'v', BUNDLE_MAX_LINE * 2);
	expect_text("endless first line", text, BUNDLE_MAX_LINE * 2, 0, -VMCTX_E_MAGIC);
	free(text);
}

static void test_bad_ranges_are_range(void)
{
	expect_mutated("overlapping maps", "map 1 0x401000",
		       "map 1 0x400800 0x402000 pgoff=0x1000 bias=0x3ff000 object=- path=",
		       -VMCTX_E_RANGE);
	expect_mutated("unsorted maps", "map 1 0x401000",
		       "map 1 0x300000 0x301000 pgoff=0x1000 bias=0x3ff000 object=- path=",
		       -VMCTX_E_RANGE);
	expect_mutated("empty map", "map 1 0x401000",
		       "map 1 0x401000 0x401000 pgoff=0x1000 bias=0x3ff000 object=- path=",
		       -VMCTX_E_RANGE);
	expect_mutated("unsorted symbols", "sym 0 0x1010", "sym 0 0x100 0x10 foo", -VMCTX_E_RANGE);
	expect_mutated("overlapping symbols", "sym 0 0x1010", "sym 0 0x100f 0x10 foo",
		       -VMCTX_E_RANGE);
	expect_mutated("symbol wraps", "sym 0 0x1010", "sym 0 0xfffffffffffffff0 0x20 foo",
		       -VMCTX_E_RANGE);
	expect_mutated("unsorted ksyms", "ksym 0xffffffffc0000010",
		       "ksym 0xffffffff80000000 0 kvm_init", -VMCTX_E_RANGE);
	expect_mutated("task exits before it starts", "task 1",
		       "task 1 root=0x2000 pid=2 tgid=2 start=10 exit=9 comm=sh", -VMCTX_E_RANGE);
	expect_mutated("kmod wraps", "kmod 0", "kmod 0 0xffffffffc0000000 0x40000000 kvm",
		       -VMCTX_E_RANGE);
}

static void test_dangling_references_are_ref(void)
{
	expect_mutated("map of a missing task", "map 1 0x401000",
		       "map 2 0x401000 0x402000 pgoff=0x0 bias=0x0 object=- path=", -VMCTX_E_REF);
	expect_mutated("map to a missing object", "map 1 0x401000",
		       "map 1 0x401000 0x402000 pgoff=0x0 bias=0x0 object=1 path=", -VMCTX_E_REF);
	expect_mutated("symbol of a missing object", "sym 0 0x1010", "sym 1 0x1010 0x10 foo",
		       -VMCTX_E_REF);
	expect_mutated("ksym of a missing module", "ksym 0xffffffffc0000010",
		       "ksym 0xffffffffc0000010 1 kvm_init", -VMCTX_E_REF);
}

static void test_counts_mismatch_is_syntax(void)
{
	expect_mutated("fewer tasks than counted", "counts",
		       "counts tasks=3 objects=1 maps=2 syms=2 kmods=1 ksyms=2", -VMCTX_E_SYNTAX);
	expect_mutated("more ksyms than counted", "counts",
		       "counts tasks=2 objects=1 maps=2 syms=2 kmods=1 ksyms=1", -VMCTX_E_SYNTAX);
	expect_mutated("missing counts line", "counts", NULL, -VMCTX_E_SYNTAX);
}

static void test_decompression_bomb_is_limit(void)
{
	const size_t n = 24 << 20;
	char *text = malloc(n);
	unsigned char *gz;
	struct vmctx_bundle *out = NULL;
	size_t gzlen, i;
	int err;

	memcpy(text, base_text, strlen(base_text) - 4);
	/* Extension records are skipped, so only the size cap stops this. */
	for (i = strlen(base_text) - 4; i + 6 <= n; i += 6)
		memcpy(text + i, "x-pad\n", 6);
	gz = gzip_buf(text, i, &gzlen);
	CHECK(gzlen < n / 100, "bomb compresses %zu to %zu", n, gzlen);
	err = read_buf(gz, gzlen, 8 << 20, &out);
	CHECK(err == -VMCTX_E_LIMIT && !out, "24 MiB bomb with an 8 MiB cap: %d", err);
	/* The same text within the cap is only missing its end record. */
	err = read_buf(gz, gzlen, 32 << 20, &out);
	CHECK(err == -VMCTX_E_TRUNCATED, "bomb within the cap: %d", err);
	free(gz);
	free(text);
}

static void test_malformed_records_are_syntax(void)
{
	expect_mutated("double space", "task 1",
		       "task 1  root=0x2000 pid=2 tgid=2 start=10 exit=20 comm=sh", -VMCTX_E_SYNTAX);
	expect_mutated("trailing space", "cr3_mask", "cr3_mask 0x0 ", -VMCTX_E_SYNTAX);
	expect_mutated("unknown record", "cr3_mask", "cr3_mask 0x0\nbogus 1", -VMCTX_E_SYNTAX);
	expect_mutated("leading zero", "clock", "clock tsc_khz=02000000 tsc=1000 ns=500",
		       -VMCTX_E_SYNTAX);
	expect_mutated("uppercase hex", "cr3_mask", "cr3_mask 0xFF", -VMCTX_E_SYNTAX);
	expect_mutated("17 hex digits", "cr3_mask", "cr3_mask 0x10000000000000000", -VMCTX_E_SYNTAX);
	expect_mutated("negative pid", "task 1",
		       "task 1 root=0x2000 pid=-2 tgid=2 start=10 exit=20 comm=sh", -VMCTX_E_SYNTAX);
	expect_mutated("pid beyond int", "task 1",
		       "task 1 root=0x2000 pid=2147483648 tgid=2 start=10 exit=20 comm=sh",
		       -VMCTX_E_SYNTAX);
	expect_mutated("task index skips", "task 1",
		       "task 2 root=0x2000 pid=2 tgid=2 start=10 exit=20 comm=sh", -VMCTX_E_SYNTAX);
	expect_mutated("escaped NUL", "task 1",
		       "task 1 root=0x2000 pid=2 tgid=2 start=10 exit=20 comm=s%00h", -VMCTX_E_SYNTAX);
	expect_mutated("bad escape", "task 1",
		       "task 1 root=0x2000 pid=2 tgid=2 start=10 exit=20 comm=s%4", -VMCTX_E_SYNTAX);
	expect_mutated("tab in a line", "task 1",
		       "task 1 root=0x2000 pid=2 tgid=2 start=10 exit=20 comm=s\th", -VMCTX_E_SYNTAX);
	expect_mutated("raw UTF-8", "task 1",
		       "task 1 root=0x2000 pid=2 tgid=2 start=10 exit=20 comm=caf\xc3\xa9",
		       -VMCTX_E_SYNTAX);
	expect_mutated("CRLF", "cr3_mask", "cr3_mask 0x0\r", -VMCTX_E_SYNTAX);
	expect_mutated("sections out of order", "object 0",
		       "object 0 build_id=abcd path=/bin/sh\ntask 2 root=0x2000 pid=2 tgid=2 start=10 exit=20 comm=sh",
		       -VMCTX_E_SYNTAX);
	expect_mutated("identity missing", "identity", NULL, -VMCTX_E_SYNTAX);
	expect_mutated("field renamed", "clock", "clock tsc_khz=1 tsc=2 nanos=3", -VMCTX_E_SYNTAX);
	expect_mutated("duplicate build-id", "object 0",
		       "object 0 build_id=abcd path=/bin/sh\nobject 1 build_id=abcd path=/bin/sh2",
		       -VMCTX_E_SYNTAX);
	expect_mutated("bad build-id", "object 0", "object 0 build_id=ABCD path=/bin/sh",
		       -VMCTX_E_SYNTAX);
	expect_mutated("empty symbol name", "sym 0 0x1010", "sym 0 0x1010 0x10 ", -VMCTX_E_SYNTAX);
	expect_mutated("data after end", "end", "end\nend", -VMCTX_E_SYNTAX);
	expect_mutated("extension record", "cr3_mask", "cr3_mask 0x0\nx-future a=1 b=2", 0);
}

/*
 * A line's bytes are checked eight at a time: a control byte, DEL or a
 * byte above 0x7f at any place of a line, at every offset within a word
 * and in the tail, rejects it as such; every printable byte, the
 * boundaries ' ' and '~' among them, at every offset, is taken.
 */
static void test_every_byte_of_a_line_is_checked(void)
{
	static const unsigned char bad[] = { 0x01, 0x1f, 0x7f, 0x80, 0xfe, 0xff };
	/* 84 bytes: ten whole words and a tail of four */
	static const char line[] =
		"task 1 root=0x2000 pid=2 tgid=2 start=10 exit=20 comm=~!\"#$&'()*+,-./:;<=>?@[]^_`{|}";
	char what[64], copy[sizeof(line)], text_nul[sizeof(base_text)];
	size_t i, k;

	CHECK(sizeof(line) - 1 == 84, "the line is %zu bytes", sizeof(line) - 1);
	expect_mutated("every printable byte in a comm", "task 1", line, 0);
	for (i = 0; i < sizeof(line) - 1; i++) {
		for (k = 0; k < sizeof(bad); k++) {
			char *text;

			memcpy(copy, line, sizeof(line));
			copy[i] = (char)bad[k];
			text = mutate("task 1", copy);
			snprintf(what, sizeof(what), "byte 0x%02x at %zu", bad[k], i);
			last_log[0] = '\0';
			expect(what, text, -VMCTX_E_SYNTAX);
			CHECK(strstr(last_log, "control or non-ASCII byte"), "%s: log \"%s\"", what,
			      last_log);
			free(text);
		}
	}
	/* a NUL byte, in a record and in the magic line: named as such */
	memcpy(text_nul, base_text, sizeof(text_nul));
	text_nul[strstr(base_text, "comm=sh") - base_text + 6] = '\0';
	expect_text("a NUL byte in a comm", text_nul, sizeof(text_nul) - 1, 0, -VMCTX_E_SYNTAX);
	CHECK(strstr(last_log, "line 7: NUL byte"), "NUL: log \"%s\"", last_log);
	memcpy(text_nul, base_text, sizeof(text_nul));
	text_nul[3] = '\0';
	expect_text("a NUL byte in the magic", text_nul, sizeof(text_nul) - 1, 0, -VMCTX_E_MAGIC);
	/* the tail alone: a line shorter than a word */
	expect_mutated("a short line with DEL", "cr3_mask", "cr3_ma\x7f", -VMCTX_E_SYNTAX);
	CHECK(strstr(last_log, "control or non-ASCII byte"), "short line: log \"%s\"", last_log);
}

/* _stext's address in base_text with the kernel's symbols at @hex */
static int read_stext(const char *hex, uint64_t *addr)
{
	struct vmctx_bundle *b = NULL;
	unsigned char *gz;
	char *line, *text;
	size_t gzlen, i;
	int err;

	/* two symbols at the address, in place of the base's two */
	if (asprintf(&line, "ksym %s - _stext\nksym %s - _etext", hex, hex) < 0)
		abort();
	text = mutate("ksym 0xffffffff81000000", line);
	strcpy(strstr(text, "ksym 0xffffffffc0000010"), "end\n");
	gz = gzip_buf(text, strlen(text), &gzlen);
	err = read_buf(gz, gzlen, 0, &b);
	for (i = 0; !err && i < b->nksyms; i++)
		if (!strcmp(b->ksyms[i].name, "_stext"))
			*addr = b->ksyms[i].addr;
	if (!err)
		vmctx_bundle_free(b);
	free(gz);
	free(text);
	free(line);
	return err;
}

/*
 * Hex is read eight digits at a time where there are sixteen: every digit
 * at every place reads as itself, and every byte that is not a lowercase
 * hex digit is refused at every place.
 */
static void test_sixteen_hex_digits_are_read_exactly(void)
{
	static const char digits[] = "0123456789abcdef";
	static const char bad[] = "/:@AFG`gx%-~";
	uint64_t x = 0x9e3779b97f4a7c15ull, addr;
	char hex[19], what[64];
	size_t i, k;
	int err;

	for (i = 0; i < 400; i++) {
		/* every digit at every place, then random values */
		if (i < 256) {
			for (k = 0; k < 16; k++)
				hex[2 + k] = digits[(i / 16 + k * (i % 16 | 1)) % 16];
		} else {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			snprintf(hex + 2, sizeof(hex) - 2, "%016llx", (unsigned long long)x);
		}
		hex[0] = '0';
		hex[1] = 'x';
		hex[2] = hex[2] == '0' ? 'f' : hex[2];	/* no leading zero */
		hex[18] = '\0';
		addr = 0;
		err = read_stext(hex, &addr);
		CHECK(!err && addr == strtoull(hex, NULL, 16), "%s: %d, read 0x%llx", hex, err,
		      (unsigned long long)addr);
	}
	for (i = 0; i < 16; i++) {
		for (k = 0; k < sizeof(bad) - 1; k++) {
			snprintf(hex, sizeof(hex), "0xffffffff81000000");
			hex[2 + i] = bad[k];
			snprintf(what, sizeof(what), "'%c' at digit %zu", bad[k], i);
			CHECK(read_stext(hex, &addr) == -VMCTX_E_SYNTAX, "%s", what);
		}
	}
	/* as many digits as fit, and one more */
	CHECK(!read_stext("0xffffffffffffffff", &addr) && addr == UINT64_MAX, "all ones");
	CHECK(read_stext("0xffffffff810000000", &addr) == -VMCTX_E_SYNTAX, "17 digits");
	CHECK(read_stext("0x0ffffffff8100000", &addr) == -VMCTX_E_SYNTAX, "16 with a leading zero");
}

static void test_trailing_bytes_after_gzip_are_corrupt(void)
{
	struct vmctx_bundle *out = NULL;
	unsigned char *gz, *two;
	size_t len;

	gz = gzip_buf(base_text, strlen(base_text), &len);
	two = malloc(2 * len);
	memcpy(two, gz, len);
	memcpy(two + len, gz, len);
	CHECK(read_buf(two, 2 * len, 0, &out) == -VMCTX_E_CORRUPT && !out, "two gzip members");
	free(two);
	free(gz);
}

static void test_rejection_logs_the_line(void)
{
	last_log[0] = '\0';
	expect_mutated("for the log", "map 1 0x401000",
		       "map 9 0x401000 0x402000 pgoff=0x0 bias=0x0 object=- path=", -VMCTX_E_REF);
	CHECK(strstr(last_log, "line 12"), "log names line 12: \"%s\"", last_log);
}

/*
 * The reader parses as it inflates, once: a stream damaged after a line
 * its text already failed on is still reported as the stream's fault (the
 * damage is what the user must hear of), and logged as that alone.
 */
static void test_damaged_stream_wins_over_its_text(void)
{
	static const char bad_line2[] = "vmctx-bundle 1\ncounts tasks=x\nend\n";
	struct vmctx_bundle *out = NULL;
	unsigned char *gz;
	size_t gzlen;
	int err;

	gz = gzip_buf(bad_line2, strlen(bad_line2), &gzlen);
	last_log[0] = '\0';
	err = read_buf(gz, gzlen, 0, &out);
	CHECK(err == -VMCTX_E_SYNTAX && !out, "line 2 rejected: %d", err);
	CHECK(strstr(last_log, "line 2"), "the line is logged: \"%s\"", last_log);
	gz[gzlen - 8] ^= 0x01;	/* CRC-32 */
	nr_logs = 0;
	err = read_buf(gz, gzlen, 0, &out);
	CHECK(err == -VMCTX_E_CHECKSUM && !out, "line 2 rejected, then a bad CRC: %d", err);
	CHECK(nr_logs == 1 && !strstr(last_log, "line") && strstr(last_log, "check"),
	      "the stream's fault alone is logged (%u): \"%s\"", nr_logs, last_log);
	gz[gzlen - 8] ^= 0x01;
	nr_logs = 0;
	err = read_buf(gz, gzlen - 4, 0, &out);
	CHECK(err == -VMCTX_E_TRUNCATED && !out, "line 2 rejected, then cut: %d", err);
	CHECK(nr_logs == 1 && !strstr(last_log, "line"), "the cut alone is logged (%u): \"%s\"",
	      nr_logs, last_log);
	free(gz);
}

/*
 * Unwind tables: what is added reads back byte for byte, across chunks and
 * padding; each kind once an object; the reader takes a table's chunks
 * only in order and whole, and bounds them.
 */
static void test_unwind_tables_round_trip_and_are_checked(void)
{
	static const unsigned char one[] = { 0xff }, two[] = { 0x00, 0xfe };
	struct vmctx_bundle *b = vmctx_bundle_new(), *out = NULL;
	size_t big = 2 * BUNDLE_UNWIND_CHUNK + 7, len, n;
	unsigned char *cfi = malloc(big), *huge;
	const void *data;
	uint64_t vaddr;
	void *buf;

	for (size_t i = 0; i < big; i++)
		cfi[i] = (unsigned char)(i * 131 + (i >> 8));
	CHECK(vmctx_bundle_add_object(b, "/usr/lib/x86_64-linux-gnu/libc.so.6", "0123abcd") == 0 &&
	      vmctx_bundle_add_object(b, "/bin/sh", NULL) == 1, "objects");
	CHECK(!vmctx_bundle_add_unwind(b, 0, VMCTX_UNWIND_EH_FRAME, 0x1d000, cfi, big), "eh_frame");
	CHECK(!vmctx_bundle_add_unwind(b, 0, VMCTX_UNWIND_EH_FRAME_HDR, 0x1c000, one, 1), "hdr");
	CHECK(!vmctx_bundle_add_unwind(b, 1, VMCTX_UNWIND_DEBUG_FRAME, 0, two, 2), "debug_frame");
	CHECK(vmctx_bundle_add_unwind(b, 0, VMCTX_UNWIND_EH_FRAME, 0, one, 1) == -EEXIST,
	      "a kind twice");
	CHECK(vmctx_bundle_add_unwind(b, 2, VMCTX_UNWIND_EH_FRAME, 0, one, 1) == -EINVAL &&
	      vmctx_bundle_add_unwind(b, 1, VMCTX_UNWIND_KINDS, 0, one, 1) == -EINVAL &&
	      vmctx_bundle_add_unwind(b, 1, VMCTX_UNWIND_EH_FRAME, 0, one, 0) == -EINVAL &&
	      vmctx_bundle_add_unwind(b, 1, VMCTX_UNWIND_EH_FRAME, 0, NULL, 1) == -EINVAL,
	      "bad arguments");
	huge = calloc(1, BUNDLE_MAX_UNWIND + 1);
	CHECK(huge && vmctx_bundle_add_unwind(b, 1, VMCTX_UNWIND_EH_FRAME, 0, huge,
					      BUNDLE_MAX_UNWIND + 1) == -VMCTX_E_LIMIT,
	      "a table over 16 MiB");
	free(huge);
	CHECK(!vmctx_bundle_seal(b), "seal");
	CHECK(vmctx_bundle_add_unwind(b, 1, VMCTX_UNWIND_EH_FRAME, 0, one, 1) == -VMCTX_E_SEALED,
	      "sealed");
	CHECK(!vmctx_bundle_write_mem(b, &buf, &len), "write");
	CHECK(!read_buf(buf, len, 0, &out), "read back: %s", last_log);
	if (out) {
		CHECK(!vmctx_bundle_object_unwind(out, 0, VMCTX_UNWIND_EH_FRAME, &vaddr, &data, &n) &&
		      vaddr == 0x1d000 && n == big && !memcmp(data, cfi, big),
		      "eh_frame of three chunks reads back");
		CHECK(!vmctx_bundle_object_unwind(out, 0, VMCTX_UNWIND_EH_FRAME_HDR, &vaddr, &data, &n) &&
		      vaddr == 0x1c000 && n == 1 && !memcmp(data, one, 1), "one byte reads back");
		CHECK(!vmctx_bundle_object_unwind(out, 1, VMCTX_UNWIND_DEBUG_FRAME, &vaddr, &data, &n) &&
		      vaddr == 0 && n == 2 && !memcmp(data, two, 2), "two bytes read back");
		CHECK(vmctx_bundle_object_unwind(out, 1, VMCTX_UNWIND_EH_FRAME, NULL, NULL, NULL) ==
		      -ENOENT, "no table");
		CHECK(vmctx_bundle_object_unwind(out, 2, VMCTX_UNWIND_EH_FRAME, NULL, NULL, NULL) ==
		      -EINVAL && vmctx_bundle_object_unwind(NULL, 0, 0, NULL, NULL, NULL) == -EINVAL,
		      "no object");
		vmctx_bundle_free(out);
	}
	free(buf);
	free(cfi);
	vmctx_bundle_free(b);

#define AFTER_SYMS(x)	"sym 0 0x1010 0x10 foo\n" x
	expect_mutated("x-unwind", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 0 eh_frame vaddr=0x2000 size=3 off=0 AQID"), 0);
	expect_mutated("x-unwind in two chunks", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 0 eh_frame vaddr=0x2000 size=5 off=0 AQID\n"
				  "x-unwind 0 eh_frame vaddr=0x2000 size=5 off=3 BAU="), 0);
	expect_mutated("x-unwind cut short", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 0 eh_frame vaddr=0x2000 size=6 off=0 AQID"),
		       -VMCTX_E_SYNTAX);
	expect_mutated("x-unwind chunk out of place", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 0 eh_frame vaddr=0x2000 size=6 off=0 AQID\n"
				  "x-unwind 0 eh_frame vaddr=0x2000 size=6 off=4 BAUG"),
		       -VMCTX_E_SYNTAX);
	expect_mutated("x-unwind chunk of another size", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 0 eh_frame vaddr=0x2000 size=6 off=0 AQID\n"
				  "x-unwind 0 eh_frame vaddr=0x2000 size=7 off=3 BAUG"),
		       -VMCTX_E_SYNTAX);
	expect_mutated("x-unwind chunk past its table", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 0 eh_frame vaddr=0x2000 size=2 off=0 AQID"),
		       -VMCTX_E_SYNTAX);
	expect_mutated("x-unwind kind twice", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 0 eh_frame vaddr=0x2000 size=3 off=0 AQID\n"
				  "x-unwind 0 eh_frame vaddr=0x2000 size=3 off=0 AQID"),
		       -VMCTX_E_SYNTAX);
	expect_mutated("x-unwind of no object", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 1 eh_frame vaddr=0x2000 size=3 off=0 AQID"),
		       -VMCTX_E_SYNTAX);
	expect_mutated("x-unwind of no kind", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 0 frame vaddr=0x2000 size=3 off=0 AQID"),
		       -VMCTX_E_SYNTAX);
	expect_mutated("x-unwind not base64", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 0 eh_frame vaddr=0x2000 size=3 off=0 A!ID"),
		       -VMCTX_E_SYNTAX);
	expect_mutated("x-unwind padding with bits", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 0 eh_frame vaddr=0x2000 size=2 off=0 AQJ="),
		       -VMCTX_E_SYNTAX);
	expect_mutated("x-unwind padding inside", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 0 eh_frame vaddr=0x2000 size=6 off=0 AQ==AQID"),
		       -VMCTX_E_SYNTAX);
	expect_mutated("x-unwind of no bytes", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 0 eh_frame vaddr=0x2000 size=0 off=0 AQID"),
		       -VMCTX_E_LIMIT);
	expect_mutated("x-unwind over 16 MiB", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 0 eh_frame vaddr=0x2000 size=16777217 off=0 AQID"),
		       -VMCTX_E_LIMIT);
	expect_mutated("x-unwind with a field missing", "sym 0 0x1010",
		       AFTER_SYMS("x-unwind 0 eh_frame vaddr=0x2000 size=3 AQID"), -VMCTX_E_SYNTAX);
	/* before the objects it is another extension record: skipped */
	expect_mutated("x-unwind before the objects", "cr3_mask",
		       "cr3_mask 0x0\nx-unwind 0 eh_frame vaddr=0x2000 size=3 off=0 AQID", 0);
#undef AFTER_SYMS
}

static void test_strerror_covers_every_code(void)
{
	int e;

	for (e = VMCTX_E_BASE; e < VMCTX_E_MAX; e++) {
		const char *m = vmctx_strerror(-e);

		CHECK(m && *m && m == vmctx_strerror(e), "code %d", e);
		CHECK(e == VMCTX_E_BASE || strcmp(m, vmctx_strerror(-(e - 1))), "distinct %d", e);
	}
	CHECK(streq(vmctx_strerror(-ENOMEM), "Cannot allocate memory"), "errno text");
	CHECK(vmctx_strerror(-99999) && vmctx_strerror(INT32_MIN) && vmctx_strerror(0),
	      "never NULL");
}

/* Counts with or without clockpairs; the pairs held to their count and order. */
static void test_clock_pairs_are_counted_and_ordered(void)
{
#define HEAD "vmctx-bundle 1\ncounts tasks=0 objects=0 maps=0 syms=0 kmods=0 ksyms=0"
#define BODY "\nidentity hostname=g release=r boot_id=b\nclock tsc_khz=0 tsc=0 ns=0\n" \
	     "cr3_mask 0x0\n"
	static const char none[] = HEAD BODY "end\n";
	static const char two[] = HEAD " clockpairs=2" BODY
		"clockpair tsc=1 ns=1\nclockpair tsc=2 ns=2\nend\n";
	static const char extra[] = HEAD " clockpairs=1" BODY
		"clockpair tsc=1 ns=1\nclockpair tsc=2 ns=2\nend\n";
	static const char many[] = HEAD " clockpairs=99999999" BODY "end\n";
	static const char unsorted[] = HEAD " clockpairs=2" BODY
		"clockpair tsc=5 ns=5\nclockpair tsc=2 ns=2\nend\n";
	static const char backwards[] = HEAD " clockpairs=2" BODY
		"clockpair tsc=1 ns=5\nclockpair tsc=2 ns=2\nend\n";

	expect_text("no clockpairs count", none, sizeof(none) - 1, 0, 0);
	expect_text("two pairs", two, sizeof(two) - 1, 0, 0);
	expect_text("more pairs than counted", extra, sizeof(extra) - 1, 0, -VMCTX_E_SYNTAX);
	expect_text("pairs beyond the limit", many, sizeof(many) - 1, 0, -VMCTX_E_LIMIT);
	expect_text("unsorted pairs", unsorted, sizeof(unsorted) - 1, 0, -VMCTX_E_RANGE);
	expect_text("a clock going back", backwards, sizeof(backwards) - 1, 0, -VMCTX_E_RANGE);
#undef HEAD
#undef BODY
}

/* The window: optional, once, right after cr3_mask, start <= end; kept. */
static void test_window_is_optional_once_and_ordered(void)
{
#define HEAD "vmctx-bundle 1\ncounts tasks=0 objects=0 maps=0 syms=0 kmods=0 ksyms=0\n" \
	     "identity hostname=g release=r boot_id=b\nclock tsc_khz=0 tsc=0 ns=0\n"
	static const char one[] = HEAD "cr3_mask 0x0\nwindow start=5 end=9\nend\n";
	static const char point[] = HEAD "cr3_mask 0x0\nwindow start=5 end=5\nend\n";
	static const char twice[] = HEAD "cr3_mask 0x0\nwindow start=5 end=9\n"
		"window start=5 end=9\nend\n";
	static const char early[] = HEAD "window start=5 end=9\ncr3_mask 0x0\nend\n";
	static const char late[] = "vmctx-bundle 1\ncounts tasks=1 objects=0 maps=0 syms=0 "
		"kmods=0 ksyms=0\nidentity hostname=g release=r boot_id=b\n"
		"clock tsc_khz=0 tsc=0 ns=0\ncr3_mask 0x0\n"
		"task 0 root=0x1000 pid=1 tgid=1 start=0 exit=- comm=init\n"
		"window start=5 end=9\nend\n";
	static const char backwards[] = HEAD "cr3_mask 0x0\nwindow start=9 end=5\nend\n";
	static const char open_end[] = HEAD "cr3_mask 0x0\nwindow start=5 end=-\nend\n";
	static const char swapped[] = HEAD "cr3_mask 0x0\nwindow end=9 start=5\nend\n";
	static const char short_rec[] = HEAD "cr3_mask 0x0\nwindow start=5\nend\n";
	struct vmctx_bundle *b = vmctx_bundle_new(), *r = NULL;
	uint64_t s = 0, e = 0;
	void *buf = NULL;
	size_t len = 0;

	expect("a window", one, 0);
	expect("a window of one instant", point, 0);
	expect("two windows", twice, -VMCTX_E_SYNTAX);
	expect("a window before cr3_mask", early, -VMCTX_E_SYNTAX);
	expect("a window after a task", late, -VMCTX_E_SYNTAX);
	expect("a window ending before it starts", backwards, -VMCTX_E_RANGE);
	expect("a window without an end", open_end, -VMCTX_E_SYNTAX);
	expect("a window's fields swapped", swapped, -VMCTX_E_SYNTAX);
	expect("a window without its end field", short_rec, -VMCTX_E_SYNTAX);

	/* built, written and read back: the same window */
	CHECK(!vmctx_bundle_set_window(b, 123456789, 987654321), "window set");
	CHECK(!vmctx_bundle_seal(b), "sealed");
	CHECK(!vmctx_bundle_write_mem(b, &buf, &len), "written");
	CHECK(buf && !vmctx_bundle_read_mem(buf, len, NULL, &r), "read back");
	CHECK(r && !vmctx_bundle_window(r, &s, &e) && s == 123456789 && e == 987654321,
	      "the window read back: %llu..%llu", (unsigned long long)s, (unsigned long long)e);
	vmctx_bundle_free(r);
	vmctx_bundle_free(b);
	free(buf);
	/* a bundle without one is written without one */
	b = vmctx_bundle_new();
	r = NULL;
	buf = NULL;
	CHECK(!vmctx_bundle_seal(b) && !vmctx_bundle_write_mem(b, &buf, &len), "no window: written");
	CHECK(buf && !vmctx_bundle_read_mem(buf, len, NULL, &r), "no window: read back");
	CHECK(r && vmctx_bundle_window(r, NULL, NULL) == -ENOENT, "no window: none read back");
	vmctx_bundle_free(r);
	vmctx_bundle_free(b);
	free(buf);
#undef HEAD
}

/* identity's agent=: optional, a string like the others, kept. */
static void test_agent_is_optional_and_kept(void)
{
#define HEAD "vmctx-bundle 1\ncounts tasks=0 objects=0 maps=0 syms=0 kmods=0 ksyms=0\n"
#define TAIL "\nclock tsc_khz=0 tsc=0 ns=0\ncr3_mask 0x0\nend\n"
	static const char with[] = HEAD "identity hostname=g release=r boot_id=b "
		"agent=vmctx-agent%200.2.0%20backend=bpf" TAIL;
	static const char bad_key[] = HEAD "identity hostname=g release=r boot_id=b "
		"writer=x" TAIL;
	static const char too_many[] = HEAD "identity hostname=g release=r boot_id=b "
		"agent=x agent=y" TAIL;
	static const char ctrl[] = HEAD "identity hostname=g release=r boot_id=b "
		"agent=a%1bb" TAIL;
	struct vmctx_bundle *b = vmctx_bundle_new(), *r = NULL;
	char long_name[300];
	void *buf = NULL;
	size_t len = 0;

	expect("an agent", with, 0);
	expect("a sixth identity field that is not agent", bad_key, -VMCTX_E_SYNTAX);
	expect("two agents", too_many, -VMCTX_E_SYNTAX);
	expect("an agent with a control byte", ctrl, 0);
	CHECK(!strcmp(vmctx_bundle_agent(b), ""), "unset: \"\"");
	CHECK(vmctx_bundle_agent(NULL) == NULL && errno == EINVAL, "NULL bundle: NULL, EINVAL");
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	CHECK(vmctx_bundle_set_agent(b, long_name) == -VMCTX_E_LIMIT, "an agent beyond the cap");
	CHECK(!vmctx_bundle_set_agent(b, "vmctx-agent 9.9 backend=kmod\x1b"), "agent set");
	CHECK(!vmctx_bundle_seal(b) && !vmctx_bundle_write_mem(b, &buf, &len), "written");
	CHECK(buf && !vmctx_bundle_read_mem(buf, len, NULL, &r), "read back");
	CHECK(r && !strcmp(vmctx_bundle_agent(r), "vmctx-agent 9.9 backend=kmod\x1b"),
	      "the agent read back byte for byte");
	CHECK(vmctx_bundle_set_agent(b, "x") == -VMCTX_E_SEALED, "sealed: no new agent");
	vmctx_bundle_free(r);
	vmctx_bundle_free(b);
	free(buf);
#undef HEAD
#undef TAIL
}

/* build_sample() gave task 1 three maps out of order, task 2 one, task 0 none */
static void test_task_maps_are_read_in_address_order(void)
{
	static const struct {
		uint64_t start, end, pgoff;
		const char *path;
	} want[] = {
		{ 0x400000, 0x401000, 0, "/bin/my shell" },
		{ 0x7ffff000, 0x80000000, 0, "[stack]" },
		{ 0x7f0000001000, 0x7f0000100000, 0x28000, "/usr/lib/x86_64-linux-gnu/libc.so.6" },
	};
	struct vmctx_bundle *b = build_sample(), *r = NULL;
	uint64_t start = 0, end = 0, pgoff = 1;
	const char *path = NULL;
	void *buf = NULL;
	size_t i, len = 0;

	for (i = 0; i < 3; i++) {
		CHECK(!vmctx_bundle_task_map(b, 1, i, &start, &end, &pgoff, &path) &&
		      start == want[i].start && end == want[i].end && pgoff == want[i].pgoff &&
		      streq(path, want[i].path),
		      "task 1 map %zu: %#llx-%#llx %#llx %s", i, (unsigned long long)start,
		      (unsigned long long)end, (unsigned long long)pgoff, path ? path : "(null)");
	}
	CHECK(vmctx_bundle_task_map(b, 1, 3, NULL, NULL, NULL, NULL) == -ENOENT, "past the last map");
	CHECK(vmctx_bundle_task_map(b, 0, 0, &start, NULL, NULL, NULL) == -ENOENT, "a task without maps");
	CHECK(!vmctx_bundle_task_map(b, 2, 0, NULL, NULL, NULL, NULL), "every output may be NULL");
	CHECK(vmctx_bundle_task_map(b, vmctx_bundle_ntasks(b), 0, NULL, NULL, NULL, NULL) == -EINVAL,
	      "a missing task");
	CHECK(vmctx_bundle_task_map(NULL, 0, 0, NULL, NULL, NULL, NULL) == -EINVAL, "NULL bundle");
	/* and the same after a round trip through the format */
	CHECK(!vmctx_bundle_write_mem(b, &buf, &len) && !vmctx_bundle_read_mem(buf, len, NULL, &r),
	      "round trip");
	CHECK(r && !vmctx_bundle_task_map(r, 1, 2, &start, &end, &pgoff, &path) &&
	      start == want[2].start && end == want[2].end && pgoff == want[2].pgoff &&
	      streq(path, want[2].path), "task 1's libc map read back");
	vmctx_bundle_free(r);
	vmctx_bundle_free(b);
	free(buf);
}

/*
 * Tasks' maps need not come task by task: each task gets its own, in
 * order, whichever way they came and whichever way the text was read.
 */
static void test_interleaved_task_maps_stay_each_tasks(void)
{
	static const char text[] =
		"vmctx-bundle 1\n"
		"counts tasks=3 objects=0 maps=7 syms=0 kmods=0 ksyms=0\n"
		"identity hostname=g release=r boot_id=b\n"
		"clock tsc_khz=1 tsc=0 ns=0\n"
		"cr3_mask 0x0\n"
		"task 0 root=0x1000 pid=1 tgid=1 start=0 exit=- comm=a\n"
		"task 1 root=0x2000 pid=2 tgid=2 start=0 exit=- comm=b\n"
		"task 2 root=0x3000 pid=3 tgid=3 start=0 exit=- comm=c\n"
		"map 0 0x1000 0x2000 pgoff=0x0 bias=0x0 object=- path=/a0\n"
		"map 0 0x2000 0x3000 pgoff=0x0 bias=0x0 object=- path=/a1\n"
		"map 1 0x1000 0x2000 pgoff=0x0 bias=0x0 object=- path=/b0\n"
		"map 0 0x3000 0x4000 pgoff=0x0 bias=0x0 object=- path=/a2\n"
		"map 2 0x1000 0x2000 pgoff=0x0 bias=0x0 object=- path=/c0\n"
		"map 1 0x2000 0x3000 pgoff=0x0 bias=0x0 object=- path=/b1\n"
		"map 2 0x2000 0x3000 pgoff=0x0 bias=0x0 object=- path=/c1\n"
		"end\n";
	static const char *const want[3][3] = {
		{ "/a0", "/a1", "/a2" }, { "/b0", "/b1" }, { "/c0", "/c1" },
	};
	struct vmctx_bundle *b;
	unsigned char *gz;
	size_t gzlen, t, i;
	int way;

	for (way = 0; way < 2; way++) {
		gzip_header_crc = way;
		gz = gzip_buf(text, strlen(text), &gzlen);
		b = NULL;
		CHECK(!read_buf(gz, gzlen, 0, &b), "interleaved maps, %s: %s",
		      way ? "streamed" : "whole", last_log);
		for (t = 0; b && t < 3; t++) {
			for (i = 0; i < 3 && want[t][i]; i++) {
				uint64_t start = 0;
				const char *path = NULL;

				CHECK(!vmctx_bundle_task_map(b, t, i, &start, NULL, NULL, &path) &&
				      start == 0x1000 * (i + 1) && streq(path, want[t][i]),
				      "%s: task %zu map %zu: %#llx %s", way ? "streamed" : "whole", t,
				      i, (unsigned long long)start, path ? path : "(null)");
			}
			CHECK(vmctx_bundle_task_map(b, t, i, NULL, NULL, NULL, NULL) == -ENOENT,
			      "task %zu has %zu maps", t, i);
		}
		vmctx_bundle_free(b);
		free(gz);
	}
	gzip_header_crc = false;
}

/* ---- listing a bundle's records ---------------------------------------------- */

/*
 * A bundle to list: symbols added out of order, with an alias, a
 * zero-sized symbol between two others and one at the end; maps out of
 * order with their biases; a process leader with maps, a thread without
 * (it uses the leader's), a thread with its own, and a process without
 * any; modules and kernel symbols out of order.  Left unsealed.
 */
static struct vmctx_bundle *build_listing(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int app, libc, t;

	CHECK(b, "alloc");
	app = vmctx_bundle_add_object(b, "/usr/bin/app", "aabbccdd");
	libc = vmctx_bundle_add_object(b, "/usr/lib/libc.so.6", NULL);
	CHECK(app == 0 && libc == 1, "objects %d %d", app, libc);
	CHECK(!vmctx_bundle_add_symbol(b, app, 0x1200, 0x10, "late") &&
	      !vmctx_bundle_add_symbol(b, app, 0x1000, 0, "label") &&
	      !vmctx_bundle_add_symbol(b, app, 0x1100, 0x20, "mid") &&
	      !vmctx_bundle_add_symbol(b, app, 0x1100, 0x8, "mid_alias") &&
	      !vmctx_bundle_add_symbol(b, app, 0x1300, 0, "tail"), "symbols");

	t = vmctx_bundle_add_task(b, 0x10000, 10, 10, "app", 100, VMCTX_TIME_NONE);
	CHECK(t == 0, "leader %d", t);
	CHECK(vmctx_bundle_add_task(b, 0x10000, 11, 10, "worker", 110, VMCTX_TIME_NONE) == 1 &&
	      vmctx_bundle_add_task(b, 0x10000, 12, 10, "jit", 120, VMCTX_TIME_NONE) == 2 &&
	      vmctx_bundle_add_task(b, 0x20000, 20, 20, "idle", 200, VMCTX_TIME_NONE) == 3,
	      "threads and a process without maps");
	CHECK(!vmctx_bundle_add_map(b, 0, 0x7f0000001000, 0x7f0000100000, 0x1000,
				    0x7f0000000000, libc, "/usr/lib/libc.so.6") &&
	      !vmctx_bundle_add_map(b, 0, 0x555555554000, 0x555555556000, 0, 0x555555553000,
				    app, "/usr/bin/app") &&
	      !vmctx_bundle_add_map(b, 0, 0x7ffff000, 0x80000000, 0, 0, -1, "[stack]") &&
	      !vmctx_bundle_add_map(b, 2, 0x10000000, 0x10001000, 0, 0x20, -1, "[anon:jit]"),
	      "maps");

	CHECK(vmctx_bundle_add_kmodule(b, "kvm", 0xffffffffc0100000ull, 0x20000) == 0 &&
	      vmctx_bundle_add_kmodule(b, "e1000", 0xffffffffc0000000ull, 0x8000) == 1, "modules");
	CHECK(!vmctx_bundle_add_ksym(b, 0xffffffffc0100040ull, "kvm_init", "kvm") &&
	      !vmctx_bundle_add_ksym(b, 0xffffffff81000000ull, "_stext", NULL) &&
	      !vmctx_bundle_add_ksym(b, 0xffffffffc0000010ull, "e1000_intr", "e1000") &&
	      !vmctx_bundle_add_ksym(b, 0xffffffff81000100ull, "do_idle", NULL), "ksyms");
	return b;
}

static const struct listed_sym {
	uint64_t start, end;
	const char *name;
} listing_sealed_syms[] = {
	{ 0x1000, 0x1100, "label" },	/* zero-sized: up to the next */
	{ 0x1100, 0x1120, "mid" },	/* the longest of two at one address */
	{ 0x1200, 0x1210, "late" },
	{ 0x1300, 0x1301, "tail" },	/* zero-sized and last: one byte */
};

static void check_sym(const struct vmctx_bundle *b, int object, size_t i,
		      const struct listed_sym *want, const char *what)
{
	uint64_t start = 0, end = 0;
	const char *name = NULL;
	int err;

	err = vmctx_bundle_object_symbol(b, object, i, &start, &end, &name);
	CHECK(!err && start == want->start && end == want->end && streq(name, want->name),
	      "%s: symbol %zu: %d %#llx-%#llx %s, want %#llx-%#llx %s", what, i, err,
	      (unsigned long long)start, (unsigned long long)end, name ? name : "(null)",
	      (unsigned long long)want->start, (unsigned long long)want->end, want->name);
}

/* Unsealed, symbols are as added and a zero-sized one ends at its start. */
static void test_unsealed_symbols_are_listed_as_added(void)
{
	static const struct listed_sym want[] = {
		{ 0x1200, 0x1210, "late" },
		{ 0x1000, 0x1000, "label" },
		{ 0x1100, 0x1120, "mid" },
		{ 0x1100, 0x1108, "mid_alias" },
		{ 0x1300, 0x1300, "tail" },
	};
	struct vmctx_bundle *b = build_listing();
	uint64_t addr = 0;
	const char *name = NULL;
	size_t i;
	int mod = 0;

	CHECK(vmctx_bundle_object_nsyms(b, 0) == 5, "every symbol added is there");
	for (i = 0; i < 5; i++)
		check_sym(b, 0, i, &want[i], "unsealed");
	CHECK(vmctx_bundle_object_symbol(b, 0, 5, NULL, NULL, NULL) == -ENOENT, "past the last");
	CHECK(!vmctx_bundle_ksym(b, 0, &addr, &name, &mod) && addr == 0xffffffffc0100040ull &&
	      streq(name, "kvm_init") && mod == 0, "kernel symbols as added");
	CHECK(vmctx_bundle_task_maps_owner(b, 1) == -VMCTX_E_UNSEALED,
	      "the maps' owner needs a sealed bundle");
	vmctx_bundle_free(b);
}

/* Sealed: objects as added, symbols in address order with every end. */
static void test_sealed_objects_list_sorted_symbols_with_ends(void)
{
	struct vmctx_bundle *b = build_listing();
	const char *path = NULL, *id = NULL;
	size_t i, n = ARRAY_SIZE(listing_sealed_syms);

	CHECK(!vmctx_bundle_seal(b), "seal");
	CHECK(!vmctx_bundle_object(b, 0, &path, &id) && streq(path, "/usr/bin/app") &&
	      streq(id, "aabbccdd"), "object 0: its path and build-id");
	id = "x";
	CHECK(!vmctx_bundle_object(b, 1, &path, &id) && streq(path, "/usr/lib/libc.so.6") && !id,
	      "object 1: no build-id reads as NULL");
	CHECK(!vmctx_bundle_object(b, 1, NULL, NULL), "every output may be NULL");
	CHECK(vmctx_bundle_object(b, 2, &path, &id) == -EINVAL, "a missing object");
	CHECK(vmctx_bundle_object(b, -1, &path, &id) == -EINVAL, "a negative object");
	CHECK(vmctx_bundle_object(NULL, 0, &path, &id) == -EINVAL, "NULL bundle");

	CHECK(vmctx_bundle_object_nsyms(b, 0) == n, "the alias is pruned");
	for (i = 0; i < n; i++)
		check_sym(b, 0, i, &listing_sealed_syms[i], "sealed");
	CHECK(vmctx_bundle_object_symbol(b, 0, n, NULL, NULL, NULL) == -ENOENT, "past the last");
	CHECK(vmctx_bundle_object_symbol(b, 1, 0, NULL, NULL, NULL) == -ENOENT,
	      "an object without symbols");
	CHECK(!vmctx_bundle_object_symbol(b, 0, 0, NULL, NULL, NULL), "every output may be NULL");
	CHECK(vmctx_bundle_object_symbol(b, 2, 0, NULL, NULL, NULL) == -EINVAL, "a missing object");
	CHECK(vmctx_bundle_object_symbol(b, -1, 0, NULL, NULL, NULL) == -EINVAL,
	      "a negative object");
	CHECK(vmctx_bundle_object_symbol(NULL, 0, 0, NULL, NULL, NULL) == -EINVAL, "NULL bundle");
	vmctx_bundle_free(b);
}

/*
 * Each map names its object and bias, and the owner of a task's maps is
 * the task that resolution uses: the leader for a thread without maps.
 */
static void test_task_maps_name_object_bias_and_owner(void)
{
	static const struct {
		int object;
		uint64_t bias;
	} want[] = {
		{ -1, 0 },				/* [stack], lowest */
		{ 0, 0x555555553000 },			/* app */
		{ 1, 0x7f0000000000 },			/* libc */
	};
	struct vmctx_bundle *b = build_listing();
	const char *sym = NULL, *dso = NULL;
	uint64_t bias = 1;
	int object = 7;
	size_t i;

	CHECK(!vmctx_bundle_seal(b), "seal");
	for (i = 0; i < ARRAY_SIZE(want); i++)
		CHECK(!vmctx_bundle_task_map_object(b, 0, i, &object, &bias) &&
		      object == want[i].object && bias == want[i].bias,
		      "task 0 map %zu: object %d bias %#llx", i, object, (unsigned long long)bias);
	CHECK(!vmctx_bundle_task_map_object(b, 2, 0, &object, &bias) && object == -1 &&
	      bias == 0x20, "a thread's own map");
	CHECK(vmctx_bundle_task_map_object(b, 0, 3, &object, &bias) == -ENOENT, "past the last map");
	CHECK(vmctx_bundle_task_map_object(b, 1, 0, &object, &bias) == -ENOENT,
	      "a thread without maps has none of its own");
	CHECK(!vmctx_bundle_task_map_object(b, 0, 0, NULL, NULL), "every output may be NULL");
	CHECK(vmctx_bundle_task_map_object(b, 4, 0, NULL, NULL) == -EINVAL, "a missing task");
	CHECK(vmctx_bundle_task_map_object(b, -1, 0, NULL, NULL) == -EINVAL, "a negative task");
	CHECK(vmctx_bundle_task_map_object(NULL, 0, 0, NULL, NULL) == -EINVAL, "NULL bundle");

	CHECK(vmctx_bundle_task_maps_owner(b, 0) == 0, "a leader with maps owns them");
	CHECK(vmctx_bundle_task_maps_owner(b, 1) == 0, "a thread without maps uses its leader's");
	CHECK(vmctx_bundle_task_maps_owner(b, 2) == 2, "a thread with maps uses its own");
	CHECK(vmctx_bundle_task_maps_owner(b, 3) == 3, "a process without maps is its own owner");
	CHECK(vmctx_bundle_task_maps_owner(b, 4) == -EINVAL, "a missing task");
	CHECK(vmctx_bundle_task_maps_owner(b, -1) == -EINVAL, "a negative task");
	CHECK(vmctx_bundle_task_maps_owner(NULL, 0) == -EINVAL, "NULL bundle");
	/* the owner is whom resolution follows: ip - bias is the symbol's address */
	CHECK(!vmctx_bundle_resolve_user(b, 1, 0x555555553000 + 0x1110, &sym, &dso) &&
	      streq(sym, "mid") && streq(dso, "app"), "the thread resolves in its leader's maps");
	vmctx_bundle_free(b);
}

/* Modules keep the index add_kmodule() gave; kernel symbols sort by address. */
static void test_kernel_modules_and_symbols_are_listed(void)
{
	static const struct {
		uint64_t addr;
		const char *name;
		int module;
	} want[] = {
		{ 0xffffffff81000000ull, "_stext", -1 },
		{ 0xffffffff81000100ull, "do_idle", -1 },
		{ 0xffffffffc0000010ull, "e1000_intr", 1 },
		{ 0xffffffffc0100040ull, "kvm_init", 0 },
	};
	struct vmctx_bundle *b = build_listing();
	uint64_t addr = 0, start = 0, end = 0;
	const char *name = NULL;
	int module = 7;
	size_t i;

	CHECK(!vmctx_bundle_seal(b), "seal");
	CHECK(vmctx_bundle_nkmodules(b) == 2 && vmctx_bundle_nkmodules(NULL) == 0, "nkmodules");
	CHECK(!vmctx_bundle_kmodule(b, 0, &name, &start, &end) && streq(name, "kvm") &&
	      start == 0xffffffffc0100000ull && end == 0xffffffffc0120000ull, "module 0");
	CHECK(!vmctx_bundle_kmodule(b, 1, &name, &start, &end) && streq(name, "e1000") &&
	      start == 0xffffffffc0000000ull && end == 0xffffffffc0008000ull,
	      "module 1 keeps its index though it lies lower");
	CHECK(!vmctx_bundle_kmodule(b, 1, NULL, NULL, NULL), "every output may be NULL");
	CHECK(vmctx_bundle_kmodule(b, 2, &name, NULL, NULL) == -EINVAL, "a missing module");
	CHECK(vmctx_bundle_kmodule(b, -1, &name, NULL, NULL) == -EINVAL, "a negative module");
	CHECK(vmctx_bundle_kmodule(NULL, 0, &name, NULL, NULL) == -EINVAL, "NULL bundle");

	CHECK(vmctx_bundle_nksyms(b) == ARRAY_SIZE(want), "nksyms");
	for (i = 0; i < ARRAY_SIZE(want); i++)
		CHECK(!vmctx_bundle_ksym(b, i, &addr, &name, &module) && addr == want[i].addr &&
		      streq(name, want[i].name) && module == want[i].module,
		      "ksym %zu: %#llx %s %d", i, (unsigned long long)addr,
		      name ? name : "(null)", module);
	CHECK(vmctx_bundle_ksym(b, ARRAY_SIZE(want), &addr, &name, &module) == -ENOENT,
	      "past the last kernel symbol");
	CHECK(!vmctx_bundle_ksym(b, 0, NULL, NULL, NULL), "every output may be NULL");
	CHECK(vmctx_bundle_ksym(NULL, 0, NULL, NULL, NULL) == -EINVAL, "NULL bundle");
	vmctx_bundle_free(b);
}

/* What the listing calls give of @a, they give of @b (both sealed). */
static void compare_listing(const struct vmctx_bundle *a, const struct vmctx_bundle *b)
{
	uint64_t s1, s2, e1, e2, x1, x2;
	const char *n1, *n2, *p1, *p2;
	int k, o1, o2, err1, err2;
	size_t j;

	CHECK(vmctx_bundle_nobjects(a) == vmctx_bundle_nobjects(b), "nobjects");
	for (k = 0; (size_t)k < vmctx_bundle_nobjects(a); k++) {
		CHECK(!vmctx_bundle_object(a, k, &p1, &n1) && !vmctx_bundle_object(b, k, &p2, &n2) &&
		      streq(p1, p2) && (n1 ? streq(n1, n2) : !n2), "object %d", k);
		CHECK(vmctx_bundle_object_nsyms(a, k) == vmctx_bundle_object_nsyms(b, k),
		      "object %d nsyms", k);
		for (j = 0; j <= vmctx_bundle_object_nsyms(a, k); j++) {
			err1 = vmctx_bundle_object_symbol(a, k, j, &s1, &e1, &n1);
			err2 = vmctx_bundle_object_symbol(b, k, j, &s2, &e2, &n2);
			CHECK(err1 == err2 && (err1 || (s1 == s2 && e1 == e2 && streq(n1, n2))),
			      "object %d symbol %zu", k, j);
		}
	}
	CHECK(vmctx_bundle_ntasks(a) == vmctx_bundle_ntasks(b), "ntasks");
	for (k = 0; (size_t)k < vmctx_bundle_ntasks(a); k++) {
		CHECK(vmctx_bundle_task_maps_owner(a, k) == vmctx_bundle_task_maps_owner(b, k),
		      "task %d's maps' owner", k);
		for (j = 0, err1 = 0; !err1; j++) {
			err1 = vmctx_bundle_task_map_object(a, k, j, &o1, &x1);
			err2 = vmctx_bundle_task_map_object(b, k, j, &o2, &x2);
			CHECK(err1 == err2 && (err1 || (o1 == o2 && x1 == x2)),
			      "task %d map %zu", k, j);
		}
	}
	CHECK(vmctx_bundle_nkmodules(a) == vmctx_bundle_nkmodules(b), "nkmodules");
	for (k = 0; (size_t)k < vmctx_bundle_nkmodules(a); k++)
		CHECK(!vmctx_bundle_kmodule(a, k, &n1, &s1, &e1) &&
		      !vmctx_bundle_kmodule(b, k, &n2, &s2, &e2) &&
		      streq(n1, n2) && s1 == s2 && e1 == e2, "module %d", k);
	for (j = 0, err1 = 0; !err1; j++) {
		err1 = vmctx_bundle_ksym(a, j, &s1, &n1, &o1);
		err2 = vmctx_bundle_ksym(b, j, &s2, &n2, &o2);
		CHECK(err1 == err2 && (err1 || (s1 == s2 && streq(n1, n2) && o1 == o2)),
		      "ksym %zu", j);
	}
}

/* A bundle read back lists what the written one did, ends and owners included. */
static void test_listing_survives_a_round_trip(void)
{
	struct vmctx_bundle *b = build_listing(), *r = NULL;
	void *buf = NULL;
	size_t i, len = 0;

	CHECK(!vmctx_bundle_seal(b), "seal");
	CHECK(!vmctx_bundle_write_mem(b, &buf, &len) && !vmctx_bundle_read_mem(buf, len, NULL, &r),
	      "round trip");
	if (r) {
		compare_listing(b, r);
		for (i = 0; i < ARRAY_SIZE(listing_sealed_syms); i++)
			check_sym(r, 0, i, &listing_sealed_syms[i], "read back");
		CHECK(vmctx_bundle_task_maps_owner(r, 1) == 0, "the thread's owner read back");
	}
	vmctx_bundle_free(r);
	vmctx_bundle_free(b);
	free(buf);
}

/*
 * vmctx_read_opts follows the options rule every struct does: sz = 0 (no
 * struct at all) fails instead of meaning the defaults, a newer caller's
 * struct is read only if the fields this library does not know are zero,
 * and an older or equal one keeps its limit.
 */
static void test_read_opts_follow_the_options_rule(void)
{
	struct {
		struct vmctx_read_opts o;
		uint64_t newer;
	} big = { .o = { .max_size = 0 } };
	VMCTX_OPTS(vmctx_read_opts, small, .max_size = 64);
	struct vmctx_bundle *b = NULL;
	struct vmctx_read_opts zero = { .sz = 0 };
	unsigned char *gz;
	size_t gzlen;

	gz = gzip_buf(base_text, strlen(base_text), &gzlen);
	CHECK(vmctx_bundle_read_mem(gz, gzlen, &zero, &b) == -EINVAL && !b,
	      "read_mem: sz = 0 is refused, not taken as the defaults");
	CHECK(vmctx_bundle_read_file("/nonexistent", &zero, &b) == -EINVAL && !b,
	      "read_file: sz = 0 is refused before the file is opened");
	big.o.sz = sizeof(big);
	big.newer = 1;
	CHECK(vmctx_bundle_read_mem(gz, gzlen, &big.o, &b) == -EINVAL && !b,
	      "a newer struct with a field this library does not know set is refused");
	big.newer = 0;
	CHECK(!vmctx_bundle_read_mem(gz, gzlen, &big.o, &b) && b,
	      "a newer struct whose unknown tail is zero is read");
	vmctx_bundle_free(b);
	b = NULL;
	CHECK(vmctx_bundle_read_mem(gz, gzlen, &small, &b) == -VMCTX_E_LIMIT && !b,
	      "VMCTX_OPTS sets sz, and the 64-byte limit holds");
	free(gz);
}

/* ---- the switch log ------------------------------------------------------------ */

/*
 * A schedule made up at random, and what the documented rules say of it,
 * found by a sweep over each CPU's events in time order (not by the
 * library's searches): a switch makes its task the one running; a gap
 * makes it unknown from its start, and only a switch after its end makes
 * it known again; of events at one time, switches come first (a switch
 * lost at the same time may have come after them) and among them the last
 * added.
 */
#define LOG_CPUS	4	/* CPUs with switches; CPU LOG_CPUS has a gap only */
#define LOG_WINDOW_START 1000
#define LOG_WINDOW_END	9000

/* A small deterministic generator (xorshift64), so that a failure reproduces. */
static uint64_t rnd(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

struct sched_task {
	int pid, tgid;
	enum vmctx_task_kind kind;
	const char *comm;
};

static const struct sched_task sched_tasks[] = {
	{ 0, 0, VMCTX_TASK_IDLE, "swapper/0" },
	{ 1, 1, VMCTX_TASK_USER, "init" },
	{ 812, 812, VMCTX_TASK_USER, "libquantum" },
	{ 813, 812, VMCTX_TASK_USER, "libquantum" },	/* a thread: the same comm */
	{ 31, 31, VMCTX_TASK_KTHREAD, "kworker/0:1" },
	{ 900, 900, VMCTX_TASK_USER, "a b%c\n\x01\x7f\xc3\xa9=" },	/* escaped in the file */
};

struct sched_switch {
	unsigned int cpu;
	uint64_t ns;
	int task;		/* into sched_tasks */
	size_t order;		/* when it was added */
};

struct sched_gap {
	unsigned int cpu;
	uint64_t start, end;
};

struct sched {
	struct sched_switch sw[400];
	size_t nsw;
	struct sched_gap gap[40];
	size_t ngap;
};

/* Switches on LOG_CPUS CPUs at times that repeat, gaps apart, CPU LOG_CPUS a gap alone. */
static void make_sched(struct sched *s, uint64_t *seed)
{
	unsigned int cpu;
	size_t i, j;

	memset(s, 0, sizeof(*s));
	for (cpu = 0; cpu <= LOG_CPUS; cpu++) {
		uint64_t at = LOG_WINDOW_START + rnd(seed) % 300;

		for (j = 0; j < 4 && at < LOG_WINDOW_END; j++) {
			uint64_t len = rnd(seed) % 400;

			if (at + len > LOG_WINDOW_END)
				break;
			s->gap[s->ngap++] = (struct sched_gap){ cpu, at, at + len };
			at += len + 1 + rnd(seed) % 2000;
		}
	}
	for (i = 0; i < ARRAY_SIZE(s->sw); i++) {
		struct sched_switch *w = &s->sw[s->nsw++];

		w->cpu = rnd(seed) % LOG_CPUS;
		/* a coarse clock: many switches share a time */
		w->ns = LOG_WINDOW_START + (rnd(seed) % 800) * 10;
		w->task = rnd(seed) % ARRAY_SIZE(sched_tasks);
		w->order = i;
	}
}

/* What the rules say ran on @cpu at @t: 0 and *@task, -ENOENT or -VMCTX_E_GAP. */
static int sched_running(const struct sched *s, unsigned int cpu, uint64_t t, int *task)
{
	uint64_t known_from = 0, last_ns = 0;
	bool any = false, lost = false;
	size_t i;

	if (t < LOG_WINDOW_START || t > LOG_WINDOW_END)
		return -ENOENT;
	/* the last switch at or before t, the last added of those at its time */
	for (i = 0; i < s->nsw; i++) {
		const struct sched_switch *w = &s->sw[i];

		if (w->cpu != cpu || w->ns > t)
			continue;
		if (!any || w->ns > last_ns ||
		    (w->ns == last_ns && w->order > s->sw[*task].order)) {
			*task = i;
			last_ns = w->ns;
			any = true;
		}
	}
	/* a gap that began by t and had not ended when that switch came */
	known_from = any ? last_ns : t;
	for (i = 0; i < s->ngap; i++)
		if (s->gap[i].cpu == cpu && s->gap[i].start <= t && s->gap[i].end >= known_from)
			lost = true;
	if (lost)
		return -VMCTX_E_GAP;
	return any ? 0 : -ENOENT;
}

/* The bundle asked at @t on @cpu answers as the rules do. */
static void check_running_at(const char *what, const struct vmctx_bundle *b,
			     const struct sched *s, unsigned int cpu, uint64_t t)
{
	enum vmctx_task_kind kind = 99;
	const char *comm = NULL;
	int task = -1, pid = -7, tgid = -7;
	int want = sched_running(s, cpu, t, &task);
	int got = vmctx_bundle_running(b, cpu, t, &pid, &tgid, &kind, &comm);
	const struct sched_task *k = task >= 0 ? &sched_tasks[s->sw[task].task] : NULL;

	CHECK(got == want, "%s: CPU %u at %llu: got %d (%s), want %d (%s)", what, cpu,
	      (unsigned long long)t, got, vmctx_strerror(got), want, vmctx_strerror(want));
	if (got || want)
		CHECK(pid == -7 && tgid == -7 && kind == 99 && !comm,
		      "%s: CPU %u at %llu: outputs set on failure", what, cpu,
		      (unsigned long long)t);
	else
		CHECK(pid == k->pid && tgid == k->tgid && kind == k->kind && streq(comm, k->comm),
		      "%s: CPU %u at %llu: got pid %d, want %d (%s)", what, cpu,
		      (unsigned long long)t, pid, k->pid, k->comm);
}

/* Every switch's time and its neighbours, every gap's ends and theirs, and more. */
static void check_sched(const char *what, const struct vmctx_bundle *b, const struct sched *s,
			uint64_t *seed)
{
	unsigned int cpu;
	size_t i;
	int d;

	for (i = 0; i < s->nsw; i++)
		for (d = -1; d <= 1; d++)
			check_running_at(what, b, s, s->sw[i].cpu, s->sw[i].ns + d);
	for (i = 0; i < s->ngap; i++)
		for (d = -1; d <= 1; d++) {
			check_running_at(what, b, s, s->gap[i].cpu, s->gap[i].start + d);
			check_running_at(what, b, s, s->gap[i].cpu, s->gap[i].end + d);
		}
	for (cpu = 0; cpu <= LOG_CPUS + 2; cpu++) {
		check_running_at(what, b, s, cpu, LOG_WINDOW_START - 1);
		check_running_at(what, b, s, cpu, LOG_WINDOW_START);
		check_running_at(what, b, s, cpu, LOG_WINDOW_END);
		check_running_at(what, b, s, cpu, LOG_WINDOW_END + 1);
		check_running_at(what, b, s, cpu, 0);
		check_running_at(what, b, s, cpu, UINT64_MAX);
		for (i = 0; i < 50; i++)
			check_running_at(what, b, s, cpu, rnd(seed) % (LOG_WINDOW_END + 500));
	}
}

/* @s's switches and gaps added to @b in an order of @seed's. */
static void add_sched(struct vmctx_bundle *b, struct sched *s, uint64_t *seed)
{
	size_t i, j;

	/* shuffled (Fisher-Yates); order records the order of addition */
	for (i = s->nsw - 1; i > 0; i--) {
		struct sched_switch t;

		j = rnd(seed) % (i + 1);
		t = s->sw[i];
		s->sw[i] = s->sw[j];
		s->sw[j] = t;
	}
	for (i = 0; i < s->nsw; i++) {
		const struct sched_task *k = &sched_tasks[s->sw[i].task];

		s->sw[i].order = i;
		CHECK(!vmctx_bundle_add_switch(b, s->sw[i].cpu, s->sw[i].ns, k->pid, k->tgid,
					       k->kind, k->comm), "switch %zu added", i);
	}
	for (i = s->ngap; i-- > 0;)
		CHECK(!vmctx_bundle_add_switch_gap(b, s->gap[i].cpu, s->gap[i].start,
						   s->gap[i].end), "gap %zu added", i);
}

/*
 * Built in any order, sealed, written and read back: every lookup answers
 * what the schedule says, and the sealed log lists it by CPU and time.
 */
static void test_switch_log_answers_as_built(void)
{
	uint64_t seed = 0x5eed5eed1234ull;
	int round;

	for (round = 0; round < 8; round++) {
		struct vmctx_bundle *b = vmctx_bundle_new(), *r = NULL;
		struct sched *s = malloc(sizeof(*s));
		unsigned int cpu, prev_cpu = 0;
		uint64_t ns, prev_ns = 0;
		void *buf = NULL, *buf2 = NULL;
		size_t i, len = 0, len2 = 0;

		make_sched(s, &seed);
		vmctx_bundle_set_window(b, LOG_WINDOW_START, LOG_WINDOW_END);
		add_sched(b, s, &seed);
		CHECK(vmctx_bundle_running(b, 0, LOG_WINDOW_START, NULL, NULL, NULL, NULL) ==
		      -VMCTX_E_UNSEALED, "lookups need a sealed bundle");
		CHECK(!vmctx_bundle_seal(b), "sealed: %s", last_log);
		CHECK(vmctx_bundle_nswitches(b) == s->nsw &&
		      vmctx_bundle_nswitch_gaps(b) == s->ngap, "every switch and gap is kept");
		for (i = 0; i < s->nsw; i++) {
			CHECK(!vmctx_bundle_switch(b, i, &cpu, &ns, NULL, NULL, NULL, NULL) &&
			      (cpu > prev_cpu || (cpu == prev_cpu && ns >= prev_ns)),
			      "sealed: switch %zu by CPU and time", i);
			prev_cpu = cpu;
			prev_ns = ns;
		}
		check_sched("built", b, s, &seed);
		CHECK(!vmctx_bundle_write_mem(b, &buf, &len), "written");
		CHECK(buf && !vmctx_bundle_read_mem(buf, len, NULL, &r), "read back: %s", last_log);
		if (r) {
			check_sched("read back", r, s, &seed);
			CHECK(!vmctx_bundle_write_mem(r, &buf2, &len2) && len2 == len &&
			      !memcmp(buf, buf2, len), "rewritten byte for byte");
		}
		free(buf2);
		free(buf);
		vmctx_bundle_free(r);
		vmctx_bundle_free(b);
		free(s);
	}
}

/* A small log whose every answer is known, one case per rule. */
static void test_switch_lookups_follow_the_rules(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	enum vmctx_task_kind kind;
	const char *comm = NULL;
	int pid = -1, tgid = -1;

	vmctx_bundle_set_window(b, 100, 1000);
	/* CPU 0: init at 100, idle at 200, then two at 300 (the later added ran) */
	vmctx_bundle_add_switch(b, 0, 300, 31, 31, VMCTX_TASK_KTHREAD, "kworker/0:1");
	vmctx_bundle_add_switch(b, 0, 200, 0, 0, VMCTX_TASK_IDLE, "swapper/0");
	vmctx_bundle_add_switch(b, 0, 100, 1, 1, VMCTX_TASK_USER, "init");
	vmctx_bundle_add_switch(b, 0, 300, 812, 812, VMCTX_TASK_USER, "app");
	/* switches lost in [400, 450]; the next one known at 600 */
	vmctx_bundle_add_switch_gap(b, 0, 400, 450);
	vmctx_bundle_add_switch(b, 0, 600, 1, 1, VMCTX_TASK_USER, "init");
	/* CPU 2: first switch at 500; CPU 3: a gap only */
	vmctx_bundle_add_switch(b, 2, 500, 813, 812, VMCTX_TASK_USER, "app");
	vmctx_bundle_add_switch_gap(b, 3, 700, 800);
	CHECK(!vmctx_bundle_seal(b), "sealed");

	CHECK(!vmctx_bundle_running(b, 0, 100, &pid, &tgid, &kind, &comm) && pid == 1 &&
	      tgid == 1 && kind == VMCTX_TASK_USER && streq(comm, "init"),
	      "at a switch's own time, its task");
	CHECK(!vmctx_bundle_running(b, 0, 199, &pid, NULL, NULL, &comm) && pid == 1,
	      "between switches, the earlier one's task");
	CHECK(!vmctx_bundle_running(b, 0, 250, &pid, &tgid, &kind, &comm) && pid == 0 &&
	      tgid == 0 && kind == VMCTX_TASK_IDLE && streq(comm, "swapper/0"), "the idle task");
	CHECK(!vmctx_bundle_running(b, 0, 300, &pid, NULL, &kind, &comm) && pid == 812 &&
	      kind == VMCTX_TASK_USER && streq(comm, "app"),
	      "of two switches at one time, the one added last");
	CHECK(!vmctx_bundle_running(b, 0, 399, &pid, NULL, NULL, NULL) && pid == 812,
	      "up to the gap, the last switch's task");
	CHECK(vmctx_bundle_running(b, 0, 400, &pid, NULL, NULL, NULL) == -VMCTX_E_GAP,
	      "at the gap's start: lost");
	CHECK(vmctx_bundle_running(b, 0, 450, &pid, NULL, NULL, NULL) == -VMCTX_E_GAP,
	      "at the gap's end: lost");
	CHECK(vmctx_bundle_running(b, 0, 599, &pid, NULL, NULL, NULL) == -VMCTX_E_GAP,
	      "after the gap, before the next switch: still unknown");
	CHECK(!vmctx_bundle_running(b, 0, 600, &pid, NULL, NULL, NULL) && pid == 1,
	      "the first switch after the gap is known");
	CHECK(!vmctx_bundle_running(b, 0, 1000, &pid, NULL, NULL, NULL) && pid == 1,
	      "to the window's end, the last switch's task");
	CHECK(vmctx_bundle_running(b, 0, 1001, &pid, NULL, NULL, NULL) == -ENOENT,
	      "after the window: nobody");
	CHECK(vmctx_bundle_running(b, 0, 99, &pid, NULL, NULL, NULL) == -ENOENT,
	      "before the window: nobody");
	CHECK(vmctx_bundle_running(b, 2, 499, &pid, NULL, NULL, NULL) == -ENOENT,
	      "before a CPU's first switch: nobody");
	CHECK(!vmctx_bundle_running(b, 2, 500, &pid, &tgid, NULL, NULL) && pid == 813 &&
	      tgid == 812, "a thread as itself, not its process");
	CHECK(vmctx_bundle_running(b, 1, 500, &pid, NULL, NULL, NULL) == -ENOENT,
	      "a CPU between two logged ones, without a log");
	CHECK(vmctx_bundle_running(b, 4, 500, &pid, NULL, NULL, NULL) == -ENOENT,
	      "a CPU past the last logged one");
	CHECK(vmctx_bundle_running(b, 3, 750, &pid, NULL, NULL, NULL) == -VMCTX_E_GAP,
	      "a CPU with a gap only: in the gap, lost");
	CHECK(vmctx_bundle_running(b, 3, 801, &pid, NULL, NULL, NULL) == -ENOENT,
	      "a CPU with a gap only: after it, before any switch, nobody");
	CHECK(vmctx_bundle_running(NULL, 0, 100, NULL, NULL, NULL, NULL) == -EINVAL, "NULL bundle");
	vmctx_bundle_free(b);

	/* without a window, the last switch's task runs on */
	b = vmctx_bundle_new();
	vmctx_bundle_add_switch(b, 0, 100, 1, 1, VMCTX_TASK_USER, NULL);
	CHECK(!vmctx_bundle_seal(b), "sealed");
	CHECK(!vmctx_bundle_running(b, 0, UINT64_MAX, &pid, NULL, NULL, &comm) && pid == 1 &&
	      streq(comm, ""), "no window: the last task to the end of time; NULL comm is empty");
	vmctx_bundle_free(b);

	/* a bundle without a log (every bundle before it existed) knows nobody */
	b = build_sample();
	CHECK(vmctx_bundle_nswitches(b) == 0 && vmctx_bundle_nswitch_gaps(b) == 0,
	      "no switch log");
	CHECK(vmctx_bundle_running(b, 0, 5000, &pid, NULL, NULL, NULL) == -ENOENT,
	      "no log: nobody");
	vmctx_bundle_free(b);
}

/* The switch log as vmctx-bundle(5) writes it: version 2, comm escaped. */
static void test_switch_log_text_is_the_documented_format(void)
{
	static const char want[] =
		"vmctx-bundle 2\n"
		"counts tasks=0 objects=0 maps=0 syms=0 kmods=0 ksyms=0 switches=3 gaps=2\n"
		"identity hostname= release= boot_id=\n"
		"clock tsc_khz=0 tsc=0 ns=0\n"
		"cr3_mask 0x0\n"
		"window start=10 end=90\n"
		"switch 0 10 pid=0 tgid=0 kind=idle comm=swapper/0\n"
		"switch 0 20 pid=7 tgid=7 kind=task comm=a%20b%25%0A\n"
		"switch 3 15 pid=2 tgid=2 kind=kthread comm=kthreadd\n"
		"gap 0 30 40\n"
		"gap 3 50 50\n"
		"end\n";
	struct vmctx_bundle *b = vmctx_bundle_new();
	size_t len;
	void *buf;
	char *text;

	vmctx_bundle_set_window(b, 10, 90);
	vmctx_bundle_add_switch_gap(b, 3, 50, 50);
	vmctx_bundle_add_switch(b, 3, 15, 2, 2, VMCTX_TASK_KTHREAD, "kthreadd");
	vmctx_bundle_add_switch(b, 0, 20, 7, 7, VMCTX_TASK_USER, "a b%\n");
	vmctx_bundle_add_switch_gap(b, 0, 30, 40);
	vmctx_bundle_add_switch(b, 0, 10, 0, 0, VMCTX_TASK_IDLE, "swapper/0");
	if (vmctx_bundle_seal(b) || vmctx_bundle_write_mem(b, &buf, &len)) {
		CHECK(0, "seal and write_mem");
		vmctx_bundle_free(b);
		return;
	}
	text = gunzip_buf(buf, len);
	CHECK(!strcmp(text, want), "text differs:\n%s---- want:\n%s", text, want);
	free(text);
	free(buf);
	vmctx_bundle_free(b);
}

/* Each switch is 16 bytes; tasks and comms are kept once, however often they ran. */
static void test_switch_log_keeps_each_task_and_comm_once(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new(), *r = NULL;
	const char *c0 = NULL, *c1 = NULL, *c2 = NULL;
	void *buf = NULL;
	size_t i, len = 0;

	CHECK(sizeof(struct switch_rec) == 16, "a switch is 16 bytes");
	/* 3 tasks, 2 comms: two threads of "bash", and the idle task */
	for (i = 0; i < 30000; i++) {
		static const int pids[3] = { 0, 500, 501 };
		int pid = pids[i % 3];

		CHECK(!vmctx_bundle_add_switch(b, i % 2, i, pid, pid ? 500 : 0,
					       pid ? VMCTX_TASK_USER : VMCTX_TASK_IDLE,
					       pid ? "bash" : "swapper"), "switch %zu", i);
	}
	CHECK(!vmctx_bundle_seal(b), "sealed");
	CHECK(b->switches.ntasks == 3 && b->switches.ncomms == 2,
	      "3 tasks, 2 comms kept: %zu and %zu", b->switches.ntasks, b->switches.ncomms);
	vmctx_bundle_switch(b, 0, NULL, NULL, NULL, NULL, NULL, &c0);
	vmctx_bundle_switch(b, 1, NULL, NULL, NULL, NULL, NULL, &c1);
	vmctx_bundle_switch(b, 2, NULL, NULL, NULL, NULL, NULL, &c2);
	CHECK(streq(c0, "swapper") && streq(c1, "bash") && c1 == c2,
	      "two tasks of one comm share its one copy");
	CHECK(!vmctx_bundle_write_mem(b, &buf, &len) && !vmctx_bundle_read_mem(buf, len, NULL, &r),
	      "round trip");
	CHECK(r && r->switches.ntasks == 3 && r->switches.ncomms == 2 && r->switches.n == 30000,
	      "read back: each task and comm once");
	vmctx_bundle_free(r);
	vmctx_bundle_free(b);
	free(buf);
}

static void test_builder_refuses_bad_switches(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	char long_comm[BUNDLE_MAX_SHORT + 2];
	unsigned int cpu = 1;

	memset(long_comm, 'c', sizeof(long_comm) - 1);
	long_comm[sizeof(long_comm) - 1] = '\0';
	CHECK(vmctx_bundle_add_switch(NULL, 0, 1, 1, 1, VMCTX_TASK_USER, "x") == -EINVAL, "NULL");
	CHECK(vmctx_bundle_add_switch(b, 0, 1, 1, 1, VMCTX_TASK_IDLE + 1, "x") == -EINVAL,
	      "an unknown kind");
	CHECK(vmctx_bundle_add_switch(b, 0, 1, -1, 1, VMCTX_TASK_USER, "x") == -EINVAL,
	      "a negative pid");
	CHECK(vmctx_bundle_add_switch(b, 0, 1, 1, -1, VMCTX_TASK_USER, "x") == -EINVAL,
	      "a negative tgid");
	CHECK(vmctx_bundle_add_switch(b, 0, 1, 5, 5, VMCTX_TASK_IDLE, "x") == -EINVAL,
	      "an idle task whose pid is not 0");
	CHECK(vmctx_bundle_add_switch(b, 0, 1, 0, 5, VMCTX_TASK_IDLE, "x") == -EINVAL,
	      "an idle task whose tgid is not 0");
	CHECK(vmctx_bundle_add_switch(b, 0, 1, 0, 0, VMCTX_TASK_KTHREAD, "x") == -EINVAL,
	      "pid 0 for a task that is not idle");
	CHECK(vmctx_bundle_add_switch(b, 8192, 1, 1, 1, VMCTX_TASK_USER, "x") == -VMCTX_E_LIMIT,
	      "CPU 8192");
	CHECK(vmctx_bundle_add_switch(b, 0, 1, 1, 1, VMCTX_TASK_USER, long_comm) == -VMCTX_E_LIMIT,
	      "a comm beyond its cap");
	CHECK(vmctx_bundle_add_switch_gap(b, 0, 5, 4) == -EINVAL, "a gap ending before it starts");
	CHECK(vmctx_bundle_add_switch_gap(b, 8192, 4, 5) == -VMCTX_E_LIMIT, "a gap on CPU 8192");
	CHECK(vmctx_bundle_add_switch_gap(NULL, 0, 4, 5) == -EINVAL, "a gap, NULL");
	CHECK(vmctx_bundle_nswitches(b) == 0 && vmctx_bundle_nswitch_gaps(b) == 0,
	      "nothing refused is kept");
	CHECK(!vmctx_bundle_add_switch(b, 8191, 1, 1, 1, VMCTX_TASK_USER, "x") &&
	      !vmctx_bundle_add_switch_gap(b, 8191, 4, 4), "CPU 8191, and a gap of one instant");
	CHECK(vmctx_bundle_switch(b, 1, &cpu, NULL, NULL, NULL, NULL, NULL) == -ENOENT && cpu == 1,
	      "past the last switch");
	CHECK(vmctx_bundle_switch_gap(b, 1, &cpu, NULL, NULL) == -ENOENT && cpu == 1,
	      "past the last gap");
	CHECK(vmctx_bundle_switch(NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL) == -EINVAL &&
	      vmctx_bundle_switch_gap(NULL, 0, NULL, NULL, NULL) == -EINVAL &&
	      vmctx_bundle_nswitches(NULL) == 0 && vmctx_bundle_nswitch_gaps(NULL) == 0,
	      "inspectors on NULL");
	CHECK(!vmctx_bundle_seal(b), "sealed");
	CHECK(vmctx_bundle_add_switch(b, 0, 2, 1, 1, VMCTX_TASK_USER, "x") == -VMCTX_E_SEALED &&
	      vmctx_bundle_add_switch_gap(b, 0, 6, 7) == -VMCTX_E_SEALED, "sealed: no more");
	CHECK(!vmctx_bundle_switch_gap(b, 0, &cpu, NULL, NULL) && cpu == 8191,
	      "the inspectors answer on a sealed bundle");
	vmctx_bundle_free(b);
}

/* What a reader would refuse, sealing refuses: overlapping gaps, times outside the window. */
static void test_seal_refuses_bad_switch_logs(void)
{
	static const struct {
		const char *what;
		uint64_t gaps[2][2];
		uint64_t sw;
		bool window;
		int want;
	} cases[] = {
		{ "gaps apart", { { 10, 20 }, { 21, 30 } }, 15, true, 0 },
		{ "overlapping gaps", { { 10, 20 }, { 15, 30 } }, 15, true, -VMCTX_E_RANGE },
		{ "a gap starting at another's end", { { 10, 20 }, { 20, 30 } }, 15, true,
		  -VMCTX_E_RANGE },
		{ "the same gap twice", { { 10, 20 }, { 10, 20 } }, 15, true, -VMCTX_E_RANGE },
		{ "a gap within another", { { 21, 30 }, { 10, 40 } }, 15, true, -VMCTX_E_RANGE },
		{ "a switch before the window", { { 10, 20 }, { 21, 30 } }, 4, true,
		  -VMCTX_E_RANGE },
		{ "a switch after the window", { { 10, 20 }, { 21, 30 } }, 101, true,
		  -VMCTX_E_RANGE },
		{ "a switch outside, no window", { { 10, 20 }, { 21, 30 } }, 101, false, 0 },
		{ "a gap past the window", { { 10, 20 }, { 90, 101 } }, 15, true, -VMCTX_E_RANGE },
		{ "a gap before the window", { { 4, 20 }, { 90, 100 } }, 15, true, -VMCTX_E_RANGE },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct vmctx_bundle *b = vmctx_bundle_new();
		void *buf = NULL;
		size_t len = 0;
		int err;

		if (cases[i].window)
			vmctx_bundle_set_window(b, 5, 100);
		vmctx_bundle_add_switch_gap(b, 1, cases[i].gaps[0][0], cases[i].gaps[0][1]);
		vmctx_bundle_add_switch_gap(b, 1, cases[i].gaps[1][0], cases[i].gaps[1][1]);
		/* the same gaps on another CPU do not overlap these */
		vmctx_bundle_add_switch_gap(b, 2, cases[i].gaps[0][0], cases[i].gaps[0][1]);
		vmctx_bundle_add_switch(b, 1, cases[i].sw, 1, 1, VMCTX_TASK_USER, "a");
		last_log[0] = '\0';
		err = vmctx_bundle_seal(b);
		CHECK(err == cases[i].want, "%s: got %d, want %d", cases[i].what, err,
		      cases[i].want);
		if (err)
			CHECK(strstr(last_log, "switch") || strstr(last_log, "gap"),
			      "%s: the log says which: \"%s\"", cases[i].what, last_log);
		if (!err) {
			struct vmctx_bundle *r = NULL;

			CHECK(!vmctx_bundle_write_mem(b, &buf, &len) && !read_buf(buf, len, 0, &r),
			      "%s: what seals reads back", cases[i].what);
			vmctx_bundle_free(r);
		}
		free(buf);
		vmctx_bundle_free(b);
	}
}

/* A version-2 text whose counts end with @counts and whose records before end are @body. */
static char *log_text(int version, const char *counts, const char *body)
{
	char *text;

	if (asprintf(&text, "vmctx-bundle %d\n"
		     "counts tasks=0 objects=0 maps=0 syms=0 kmods=0 ksyms=0%s\n"
		     "identity hostname=g release=r boot_id=b\n"
		     "clock tsc_khz=0 tsc=0 ns=0\n"
		     "cr3_mask 0x0\n"
		     "window start=100 end=1000\n"
		     "%send\n", version, counts, body) < 0)
		abort();
	return text;
}

static void expect_log(const char *what, int version, const char *counts, const char *body,
		       int want)
{
	char *text = log_text(version, counts, body);

	expect(what, text, want);
	free(text);
}

#define SW_OK	"switch 0 100 pid=1 tgid=1 kind=task comm=init\n"	\
		"switch 0 200 pid=0 tgid=0 kind=idle comm=swapper/0\n"	\
		"switch 1 150 pid=7 tgid=7 kind=kthread comm=kworker%2F1:0\n"

/* Each hostile switch log is refused with the code vmctx-bundle(5) gives it. */
static void test_hostile_switch_logs_are_refused(void)
{
	const char *c3 = " switches=3 gaps=0", *c31 = " switches=3 gaps=1", *c1 = " switches=1 gaps=0";
	long before = maxrss_kb();

	expect_log("a switch log", 2, c31, SW_OK "gap 0 300 400\n", 0);
	expect_log("version 2 without a log", 2, "", "", 0);
	expect_log("clockpairs before the log's counts", 2, " clockpairs=1 switches=0 gaps=1",
		   "clockpair tsc=1 ns=1\ngap 0 100 100\n", 0);
	expect_log("a switch log in version 1", 1, c3, SW_OK, -VMCTX_E_SYNTAX);
	expect_log("switch records in version 1, not counted", 1, "", SW_OK, -VMCTX_E_SYNTAX);
	expect_log("a gap in version 1", 1, "", "gap 0 300 400\n", -VMCTX_E_SYNTAX);
	expect_log("version 3", 3, c3, SW_OK, -VMCTX_E_VERSION);
	expect_log("switches without gaps", 2, " switches=3", SW_OK, -VMCTX_E_SYNTAX);
	expect_log("gaps without switches", 2, " gaps=0", "", -VMCTX_E_SYNTAX);
	expect_log("the log's counts swapped", 2, " gaps=0 switches=3", SW_OK, -VMCTX_E_SYNTAX);
	expect_log("the log's counts before clockpairs", 2, " switches=0 gaps=0 clockpairs=0", "",
		   -VMCTX_E_SYNTAX);
	expect_log("fewer switches than counted", 2, " switches=4 gaps=0", SW_OK, -VMCTX_E_SYNTAX);
	expect_log("more switches than counted", 2, " switches=2 gaps=0", SW_OK, -VMCTX_E_SYNTAX);

	/* order */
	expect_log("a switch going back in time", 2, c3,
		   "switch 0 200 pid=1 tgid=1 kind=task comm=a\n"
		   "switch 0 100 pid=2 tgid=2 kind=task comm=b\n"
		   "switch 1 150 pid=7 tgid=7 kind=kthread comm=k\n", -VMCTX_E_RANGE);
	expect_log("CPUs out of order", 2, c3,
		   "switch 1 100 pid=1 tgid=1 kind=task comm=a\n"
		   "switch 0 200 pid=2 tgid=2 kind=task comm=b\n"
		   "switch 0 300 pid=7 tgid=7 kind=kthread comm=k\n", -VMCTX_E_RANGE);
	expect_log("two switches at one time", 2, c3,
		   "switch 0 100 pid=1 tgid=1 kind=task comm=a\n"
		   "switch 0 100 pid=2 tgid=2 kind=task comm=b\n"
		   "switch 0 300 pid=7 tgid=7 kind=kthread comm=k\n", 0);
	expect_log("a gap before the switches", 2, c31, "gap 0 300 400\n" SW_OK, -VMCTX_E_SYNTAX);
	expect_log("gaps out of order", 2, " switches=0 gaps=2", "gap 0 500 600\ngap 0 300 400\n",
		   -VMCTX_E_RANGE);
	expect_log("overlapping gaps", 2, " switches=0 gaps=2", "gap 0 300 400\ngap 0 400 500\n",
		   -VMCTX_E_RANGE);
	expect_log("gaps of two CPUs at one time", 2, " switches=0 gaps=2",
		   "gap 0 300 400\ngap 1 300 400\n", 0);
	expect_log("a gap ending before it starts", 2, " switches=0 gaps=1", "gap 0 400 300\n",
		   -VMCTX_E_RANGE);

	/* the window */
	expect_log("a switch before the window", 2, c1,
		   "switch 0 99 pid=1 tgid=1 kind=task comm=a\n", -VMCTX_E_RANGE);
	expect_log("a switch after the window", 2, c1,
		   "switch 0 1001 pid=1 tgid=1 kind=task comm=a\n", -VMCTX_E_RANGE);
	expect_log("a switch at the window's end", 2, c1,
		   "switch 0 1000 pid=1 tgid=1 kind=task comm=a\n", 0);
	expect_log("a gap past the window", 2, " switches=0 gaps=1", "gap 0 900 1001\n",
		   -VMCTX_E_RANGE);

	/* caps */
	expect_log("CPU 8192", 2, c1, "switch 8192 100 pid=1 tgid=1 kind=task comm=a\n",
		   -VMCTX_E_LIMIT);
	expect_log("CPU 8191", 2, c1, "switch 8191 100 pid=1 tgid=1 kind=task comm=a\n", 0);
	expect_log("a gap on CPU 8192", 2, " switches=0 gaps=1", "gap 8192 100 200\n",
		   -VMCTX_E_LIMIT);
	expect_log("2^32 switches counted", 2, " switches=4294967296 gaps=0", "", -VMCTX_E_LIMIT);
	expect_log("2^23 + 1 switches counted", 2, " switches=8388609 gaps=0", "", -VMCTX_E_LIMIT);
	expect_log("2^20 + 1 gaps counted", 2, " switches=0 gaps=1048577", "", -VMCTX_E_LIMIT);
	CHECK(maxrss_kb() - before < 64 * 1024, "huge switch counts grew RSS by %ld KiB",
	      maxrss_kb() - before);
	{
		char body[BUNDLE_MAX_SHORT + 100];
		int n = sprintf(body, "switch 0 100 pid=1 tgid=1 kind=task comm=");

		memset(body + n, 'c', BUNDLE_MAX_SHORT + 1);
		strcpy(body + n + BUNDLE_MAX_SHORT + 1, "\n");
		expect_log("a comm over its cap", 2, c1, body, -VMCTX_E_LIMIT);
	}

	/* fields */
	expect_log("idle with a pid", 2, c1, "switch 0 100 pid=5 tgid=0 kind=idle comm=a\n",
		   -VMCTX_E_SYNTAX);
	expect_log("idle with a tgid", 2, c1, "switch 0 100 pid=0 tgid=5 kind=idle comm=a\n",
		   -VMCTX_E_SYNTAX);
	expect_log("pid 0 not idle", 2, c1, "switch 0 100 pid=0 tgid=0 kind=kthread comm=a\n",
		   -VMCTX_E_SYNTAX);
	expect_log("pid beyond int", 2, c1,
		   "switch 0 100 pid=2147483648 tgid=1 kind=task comm=a\n", -VMCTX_E_SYNTAX);
	expect_log("an unknown kind", 2, c1, "switch 0 100 pid=1 tgid=1 kind=user comm=a\n",
		   -VMCTX_E_SYNTAX);
	expect_log("a field missing", 2, c1, "switch 0 100 pid=1 tgid=1 comm=a\n", -VMCTX_E_SYNTAX);
	expect_log("fields swapped", 2, c1, "switch 0 100 tgid=1 pid=1 kind=task comm=a\n",
		   -VMCTX_E_SYNTAX);
	expect_log("a CPU with a leading zero", 2, c1,
		   "switch 00 100 pid=1 tgid=1 kind=task comm=a\n", -VMCTX_E_SYNTAX);
	expect_log("a negative CPU", 2, c1, "switch -1 100 pid=1 tgid=1 kind=task comm=a\n",
		   -VMCTX_E_SYNTAX);
	expect_log("an escaped NUL in a comm", 2, c1,
		   "switch 0 100 pid=1 tgid=1 kind=task comm=a%00\n", -VMCTX_E_SYNTAX);
	expect_log("a gap without its end", 2, " switches=0 gaps=1", "gap 0 300\n",
		   -VMCTX_E_SYNTAX);
	last_log[0] = '\0';
	expect_log("for the log", 2, c1, "switch 0 100 pid=5 tgid=0 kind=idle comm=a\n",
		   -VMCTX_E_SYNTAX);
	CHECK(strstr(last_log, "line 7") && strstr(last_log, "idle"),
	      "log names the line and why: \"%s\"", last_log);
}
#undef SW_OK

int main(void)
{
	vmctx_set_log(on_log, NULL);
	test_round_trip_preserves_every_field();
	test_written_text_is_the_documented_format();
	test_empty_bundle_round_trips();
	test_write_file_is_atomic_and_reads_back();
	test_bundles_read_in_threads();
	test_builder_rejects_bad_arguments();
	test_seal_refuses_overlapping_maps();
	test_sealed_bundle_takes_no_records();
	test_baseline_text_is_valid();
	test_truncated_gzip_is_truncated();
	test_truncated_text_is_truncated();
	test_corrupt_deflate_is_corrupt();
	test_bad_trailer_is_checksum();
	test_bad_header_crc_is_corrupt();
	test_every_byte_flip_is_caught();
	test_not_gzip_is_magic();
	test_other_version_is_version();
	test_oversized_counts_are_limit_in_bounded_memory();
	test_absurd_strings_are_limit();
	test_bad_ranges_are_range();
	test_dangling_references_are_ref();
	test_counts_mismatch_is_syntax();
	test_decompression_bomb_is_limit();
	test_malformed_records_are_syntax();
	test_every_byte_of_a_line_is_checked();
	test_sixteen_hex_digits_are_read_exactly();
	test_unwind_tables_round_trip_and_are_checked();
	test_trailing_bytes_after_gzip_are_corrupt();
	test_rejection_logs_the_line();
	test_damaged_stream_wins_over_its_text();
	test_strerror_covers_every_code();
	test_clock_pairs_are_counted_and_ordered();
	test_window_is_optional_once_and_ordered();
	test_agent_is_optional_and_kept();
	test_task_maps_are_read_in_address_order();
	test_interleaved_task_maps_stay_each_tasks();
	test_unsealed_symbols_are_listed_as_added();
	test_sealed_objects_list_sorted_symbols_with_ends();
	test_task_maps_name_object_bias_and_owner();
	test_kernel_modules_and_symbols_are_listed();
	test_listing_survives_a_round_trip();
	test_read_opts_follow_the_options_rule();
	test_switch_log_answers_as_built();
	test_switch_lookups_follow_the_rules();
	test_switch_log_text_is_the_documented_format();
	test_switch_log_keeps_each_task_and_comm_once();
	test_builder_refuses_bad_switches();
	test_seal_refuses_bad_switch_logs();
	test_hostile_switch_logs_are_refused();
	if (failures)
		fprintf(stderr, "test-bundle: %d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
