// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Exports: the folded stacks of a scenario are exactly the lines its
 * schedule implies; guest names cannot break a folded line or a frame, and
 * reach neither format with raw control bytes; the pprof bytes are a gzip
 * member holding a profile whose string table starts with "" and whose
 * samples add up to the folded counts, with time values only when the
 * tick is known; many distinct symbols export in one sorted pass.
 * test/check-export.sh reads the same exports back with go tool pprof.
 *
 * With a directory argument, the test also writes the hostile session's
 * exports there (hostile.pb.gz, hostile.folded) for check-export.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "scenarios.h"
#include "pb.h"
#include "check.h"

#define VM_TGID		1001
#define ROOT0		0x10000000ULL
#define EXE		0x400000ULL

/* What a hostile guest sends, and how a folded frame spells it. */
#define HOST_RAW	"h;o\x1bst"
#define HOST_FOLDED	"h\\x3bo\\x1bst"
#define COMM_RAW	"a;b c\n"
#define COMM_FOLDED	"a\\x3bb c\\x0a"
#define SYM_RAW		"f;g\x07 99"
#define SYM_FOLDED	"f\\x3bg\\x07 99"

static char *folded(const struct vmctx_session *s, uint32_t flags)
{
	struct vmctx_export_opts o = { .sz = sizeof(o), .flags = flags };
	struct vmctx_export *x = vmctx_export_new(s, &o);
	void *buf = NULL;
	size_t len = 0;
	char *text;

	CHECK(x && !vmctx_export_write_mem(x, VMCTX_EXPORT_FOLDED, &buf, &len), "folded export");
	vmctx_export_free(x);
	text = malloc(len + 1);
	if (!text)
		abort();
	if (len)
		memcpy(text, buf, len);
	text[len] = '\0';
	free(buf);
	return text;
}

/* Ticks among the first @n of a process's mix whose position is in [lo, hi). */
static int mix(int n, int lo, int hi)
{
	int c = n / MIX_LEN * (hi - lo), r = n % MIX_LEN;

	if (r > lo)
		c += (r < hi ? r : hi) - lo;
	return c;
}

/* Lines of one process's @n guest ticks, in folded (strcmp) order, minus the kernel's. */
static void put_mix(FILE *f, const char *vm, const char *comm, int n)
{
	const int t = MIX_TOFFOLI, sx = t + MIX_SIGMA_X, cn = sx + MIX_CNOT, sw = cn + MIX_SWAP;

	fprintf(f, "%s;%s;quantum_cnot %d\n", vm, comm, mix(n, sx, cn));
	fprintf(f, "%s;%s;quantum_sigma_x %d\n", vm, comm, mix(n, t, sx));
	fprintf(f, "%s;%s;quantum_swaptheleads %d\n", vm, comm, mix(n, cn, sw));
	fprintf(f, "%s;%s;quantum_toffoli %d\n", vm, comm, mix(n, 0, t));
}

/*
 * Tables 8/9: two vCPUs of one VM take turns on one pCPU in slots of L
 * ticks, C slots each, a slot starting with one tick of KVM's work.  vcpu1
 * is first seen at tick L, so it is stolen from L ticks fewer.
 */
static void folded_two_vcpus_line_by_line(void)
{
	const int C = 50, L = 20, guest = C * (L - 1), kernel = mix(guest, MIX_LEN - 1, MIX_LEN);
	char *want = NULL, *got;
	struct scen sc;
	size_t len;
	FILE *f;

	CHECK(!scen_init(&sc, SCEN_TICK_NS) && !scen_two_vcpus(&sc, C, L), "stream accepted");
	f = open_memstream(&want, &len);
	fprintf(f, "[host];vmx_vcpu_run %d\n", 2 * C);
	fprintf(f, "guestOS1 (VM1);[guest kernel];apic_timer_interrupt %d\n", 2 * kernel);
	fprintf(f, "guestOS1 (VM1);[steal];[steal] (on vcpu0) %d\n", C * L - L);
	fprintf(f, "guestOS1 (VM1);[steal];[steal] (on vcpu1) %d\n", C * L);
	fprintf(f, "guestOS1 (VM1);[steal];[steal] (outside) %d\n", 2 * C);
	put_mix(f, "guestOS1 (VM1)", "libquantum(1)", guest);
	put_mix(f, "guestOS1 (VM1)", "libquantum(2)", guest);
	fclose(f);
	got = folded(sc.s, 0);
	CHECK(!strcmp(got, want), "two vCPUs, folded:\n%s\nwant:\n%s", got, want);
	free(got);
	got = folded(sc.s, VMCTX_EXPORT_NO_HOST);
	CHECK(!strcmp(got, strchr(want, '\n') + 1), "without the host's work:\n%s", got);
	free(got);
	free(want);
	scen_fini(&sc);
}

/*
 * Tables 12/13: three VMs take turns on one pCPU, each slot starting with
 * a host kworker tick.  VM k is first seen at tick 1 + (k - 1) L, and
 * every other VM's slot is its [steal] (VMj).
 */
static void folded_three_vms_line_by_line(void)
{
	const int C = 40, L = 20, guest = C * (L - 1), kernel = mix(guest, MIX_LEN - 1, MIX_LEN);
	char *want = NULL, *got, vm[32];
	struct scen sc;
	int k, j;
	size_t len;
	FILE *f;

	CHECK(!scen_init(&sc, SCEN_TICK_NS) && !scen_three_vms(&sc, C, L), "stream accepted");
	f = open_memstream(&want, &len);
	fprintf(f, "[host];process_one_work %d\n", 3 * C);
	for (k = 1; k <= 3; k++) {
		snprintf(vm, sizeof(vm), "guestOS%d (VM%d)", k, k);
		fprintf(f, "%s;[guest kernel];apic_timer_interrupt %d\n", vm, kernel);
		for (j = 1; j <= 3; j++) {
			/* VM j's slots after VM k's first tick */
			int stolen = j < k ? guest - (L - 1) : guest;

			if (j != k)
				fprintf(f, "%s;[steal];[steal] (VM%d) %d\n", vm, j, stolen);
		}
		/* every kworker tick after VM k's first: all but the first k */
		fprintf(f, "%s;[steal];[steal] (outside) %d\n", vm, 3 * C - k);
		put_mix(f, vm, "libquantum", guest);
	}
	fclose(f);
	got = folded(sc.s, 0);
	CHECK(!strcmp(got, want), "three VMs, folded:\n%s\nwant:\n%s", got, want);
	free(got);
	free(want);
	scen_fini(&sc);
}

static struct vmctx_bundle *hostile_bundle(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int exe, task;

	CHECK(b && !vmctx_bundle_set_identity(b, HOST_RAW, "6.1", "boot"), "identity");
	exe = vmctx_bundle_add_object(b, "/bin/s;h\x1b", "ab01");
	CHECK(exe >= 0 && !vmctx_bundle_add_symbol(b, exe, EXE + 0x1000, 0x100, SYM_RAW),
	      "object and symbol");
	task = vmctx_bundle_add_task(b, ROOT0, 300, 300, COMM_RAW, 0, VMCTX_TIME_NONE);
	CHECK(task >= 0 && !vmctx_bundle_add_map(b, task, EXE, EXE + 0x2000, 0, 0, exe,
						 "/bin/s;h\x1b"), "task and map");
	CHECK(!vmctx_bundle_seal(b), "sealed");
	return b;
}

/* @n user ticks of the VM's one vCPU in SYM, or in @nsyms symbols at EXE + 16 i. */
static struct vmctx_session *user_session(const struct vmctx_bundle *b, int n, int nsyms)
{
	struct vmctx_session_opts o = { .sz = sizeof(o), .tick_ns = SCEN_TICK_NS };
	struct vmctx_session *s = vmctx_session_new(&o);
	int i;

	CHECK(s && vmctx_session_add_vm(s, VM_TGID, NULL) == 1, "VM declared");
	CHECK(!vmctx_session_attach_bundle(s, VM_TGID, b, 0), "bundle attached");
	for (i = 0; i < n; i++) {
		struct vmctx_sample smp = {
			.sz = sizeof(smp), .time = i * SCEN_TICK_NS, .pid = VM_TGID,
			.tid = VM_TGID + 1, .vm_tgid = VM_TGID, .vcpu = 0,
			.flags = VMCTX_SAMPLE_GUEST, .cpl = 3, .isa = VMCTX_ISA_VMX,
			.cr3 = ROOT0, .ip = nsyms ? EXE + 16 * (i % nsyms) : EXE + 0x1010,
		};

		CHECK(!vmctx_session_sample(s, &smp), "sample %d", i);
	}
	CHECK(!vmctx_session_finish(s, n * SCEN_TICK_NS), "finish");
	return s;
}

/* Each line is "frame;frame;frame count": no raw control byte, three frames. */
static void folded_escapes_guest_names(const struct vmctx_session *s)
{
	char *text = folded(s, 0);
	size_t i, bad = 0;

	for (i = 0; text[i]; i++)
		bad += ((unsigned char)text[i] < 0x20 && text[i] != '\n') || text[i] == 0x7f;
	CHECK(!bad, "no raw control bytes in:\n%s", text);
	CHECK(!strcmp(text, HOST_FOLDED " (VM1);" COMM_FOLDED ";" SYM_FOLDED " 50\n"),
	      "';' is \\x3b, controls are \\xHH, spaces stay and the count is last:\n%s", text);
	free(text);
}

/* ---- What the pprof export writes, read with pb.h ---- */

struct profile_summary {
	size_t nsamples, nstrings, nlocations, nfunctions, nmappings;
	uint64_t count, ns;
	bool first_string_empty, raw_controls;
	uint64_t period;
};

static void summarise(const uint8_t *msg, size_t len, struct profile_summary *ps)
{
	struct pb b = { msg, msg + len, false }, sub = { 0 }, vals = { 0 };
	uint64_t v = 0;
	int num, f, wire;

	memset(ps, 0, sizeof(*ps));
	while ((num = pb_field(&b, &sub, &v, &wire))) {
		switch (num) {
		case 2:		/* sample: its values, packed */
			ps->nsamples++;
			while ((f = pb_field(&sub, &vals, &v, &wire)))
				if (f == 2) {
					ps->count += pb_varint(&vals);
					ps->ns += vals.p < vals.end ? pb_varint(&vals) : 0;
				}
			break;
		case 3:
			ps->nmappings++;
			break;
		case 4:
			ps->nlocations++;
			break;
		case 5:
			ps->nfunctions++;
			break;
		case 6:
			if (!ps->nstrings++)
				ps->first_string_empty = sub.p == sub.end;
			for (; sub.p < sub.end; sub.p++)
				ps->raw_controls |= *sub.p < 0x20 || *sub.p == 0x7f;
			break;
		case 12:
			ps->period = v;
			break;
		}
	}
	CHECK(!b.bad, "the profile parses");
}

static void pprof_summary(const struct vmctx_export *x, struct profile_summary *ps)
{
	uint8_t *out = NULL;
	void *buf = NULL;
	uLongf outlen = 0;
	size_t len = 0;
	z_stream z;

	CHECK(!vmctx_export_write_mem(x, VMCTX_EXPORT_PPROF, &buf, &len), "pprof export");
	CHECK(len > 2 && ((uint8_t *)buf)[0] == 0x1f && ((uint8_t *)buf)[1] == 0x8b,
	      "pprof is a gzip member");
	memset(&z, 0, sizeof(z));
	outlen = 64 * len + (1 << 20);
	out = malloc(outlen);
	CHECK(out && inflateInit2(&z, 15 + 16) == Z_OK, "inflate");
	z.next_in = buf;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = outlen;
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END, "the gzip member is whole");
	summarise(out, z.total_out, ps);
	inflateEnd(&z);
	free(out);
	free(buf);
}

static void pprof_holds_the_folded_counts(const struct vmctx_session *s, uint64_t total,
					  const char *what)
{
	struct vmctx_export *x = vmctx_export_new(s, NULL);
	struct profile_summary ps;

	pprof_summary(x, &ps);
	CHECK(ps.first_string_empty, "%s: the string table starts with \"\"", what);
	CHECK(!ps.raw_controls, "%s: no string holds a raw control byte", what);
	CHECK_EQ(ps.count, total, what);
	CHECK_EQ(ps.ns, total * SCEN_TICK_NS, what);
	CHECK_EQ(ps.period, SCEN_TICK_NS, what);
	CHECK(ps.nfunctions && ps.nlocations >= ps.nfunctions && ps.nmappings,
	      "%s: functions, and locations of them in mappings", what);
	vmctx_export_free(x);
}

/*
 * 20,000 distinct symbols sampled once each: one row each, and the export
 * sorts them once (a quadratic dedup would take minutes here).
 */
static void many_symbols_export_in_one_pass(void)
{
	const int N = 20000;
	struct vmctx_bundle *b = vmctx_bundle_new();
	struct vmctx_session *s;
	struct vmctx_export *x;
	struct profile_summary ps;
	char name[32];
	int exe, task, i;

	exe = vmctx_bundle_add_object(b, "/bin/big", "ab02");
	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		CHECK(!vmctx_bundle_add_symbol(b, exe, EXE + 16 * i, 16, name), "symbol %d", i);
	}
	task = vmctx_bundle_add_task(b, ROOT0, 300, 300, "big", 0, VMCTX_TIME_NONE);
	CHECK(!vmctx_bundle_add_map(b, task, EXE, EXE + 16 * N, 0, 0, exe, "/bin/big") &&
	      !vmctx_bundle_seal(b), "bundle");
	s = user_session(b, N, N);
	x = vmctx_export_new(s, NULL);
	pprof_summary(x, &ps);
	CHECK_EQ(ps.nsamples, N, "a sample per symbol");
	CHECK_EQ(ps.nfunctions, N, "a function per symbol");
	CHECK_EQ(ps.count, N, "samples");
	vmctx_export_free(x);
	vmctx_session_free(s);
	vmctx_bundle_free(b);
}

/* Without a tick length, a sample is a count only: no time values, no period. */
static void no_tick_no_time(const struct vmctx_bundle *b)
{
	struct vmctx_session *s = vmctx_session_new(NULL);
	struct vmctx_sample smp = {
		.sz = sizeof(smp), .pid = VM_TGID, .tid = VM_TGID + 1, .vm_tgid = VM_TGID,
		.vcpu = 0, .flags = VMCTX_SAMPLE_GUEST, .cpl = 3, .isa = VMCTX_ISA_VMX,
		.cr3 = ROOT0, .ip = EXE + 0x1010,
	};
	struct profile_summary ps;
	struct vmctx_export *x;
	int i;

	CHECK(vmctx_session_add_vm(s, VM_TGID, NULL) == 1 &&
	      !vmctx_session_attach_bundle(s, VM_TGID, b, 0), "VM and bundle");
	for (i = 0; i < 7; i++, smp.time += SCEN_TICK_NS)
		CHECK(!vmctx_session_sample(s, &smp), "sample %d", i);
	CHECK(!vmctx_session_finish(s, smp.time), "finish");
	x = vmctx_export_new(s, NULL);
	pprof_summary(x, &ps);
	CHECK(ps.count == 7 && !ps.ns && !ps.period, "7 samples, no time (got %" PRIu64 ", %"
	      PRIu64 " ns, period %" PRIu64 ")", ps.count, ps.ns, ps.period);
	vmctx_export_free(x);
	vmctx_session_free(s);
}

/* A session without samples exports no line and a profile without samples. */
static void empty_session_exports_nothing(void)
{
	struct vmctx_session *s = vmctx_session_new(NULL);
	struct profile_summary ps;
	struct vmctx_export *x;
	void *buf = NULL;
	size_t len = 1;

	CHECK(s && !vmctx_session_finish(s, 0), "an empty session");
	x = vmctx_export_new(s, NULL);
	CHECK(x && !vmctx_export_write_mem(x, VMCTX_EXPORT_FOLDED, &buf, &len) && !len,
	      "no folded line");
	free(buf);
	pprof_summary(x, &ps);
	CHECK(!ps.nsamples && ps.first_string_empty, "no sample, and \"\" first");
	vmctx_export_free(x);
	vmctx_session_free(s);
}

static void bad_calls_fail_cleanly(const struct vmctx_session *s)
{
	struct vmctx_export_opts o = { .sz = sizeof(o) };
	struct vmctx_export *x;
	void *buf;
	size_t len;

	errno = 0;
	CHECK(!vmctx_export_new(NULL, NULL) && errno == EINVAL, "a NULL session");
	o.flags = 1u << 7;
	CHECK(!vmctx_export_new(s, &o) && errno == EINVAL, "an unknown flag");
	o.flags = 0;
	o.sz = sizeof(size_t);
	CHECK(!vmctx_export_new(s, &o) && errno == EINVAL, "options too short for flags");
	o.sz = offsetof(struct vmctx_export_opts, time_ns);
	x = vmctx_export_new(s, &o);
	CHECK(x, "options of an older caller");
	CHECK_EQ(vmctx_export_write_mem(x, (enum vmctx_export_format)7, &buf, &len), -EINVAL,
		 "an unknown format");
	CHECK_EQ(vmctx_export_write_mem(NULL, VMCTX_EXPORT_FOLDED, &buf, &len), -EINVAL,
		 "a NULL export");
	CHECK_EQ(vmctx_export_write_fd(x, VMCTX_EXPORT_FOLDED, -1), -EINVAL, "a bad fd");
	vmctx_export_free(x);
	vmctx_export_free(NULL);
}

static void write_file(const struct vmctx_export *x, enum vmctx_export_format format,
		       const char *dir, const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && !vmctx_export_write_fd(x, format, fd) && !close(fd), "write %s", path);
}

int main(int argc, char **argv)
{
	struct vmctx_bundle *b = hostile_bundle();
	struct vmctx_session *s = user_session(b, 50, 0);
	struct scen sc;

	folded_two_vcpus_line_by_line();
	folded_three_vms_line_by_line();
	folded_escapes_guest_names(s);
	pprof_holds_the_folded_counts(s, 50, "hostile names");
	CHECK(!scen_init(&sc, SCEN_TICK_NS) && !scen_three_vms(&sc, 40, 20), "three VMs");
	/* each VM's time, less the ticks before it was first seen, and 120 kworker ticks */
	pprof_holds_the_folded_counts(sc.s, 3 * 3 * 40 * 20 - 1 - 21 - 41 + 120, "three VMs");
	scen_fini(&sc);
	many_symbols_export_in_one_pass();
	no_tick_no_time(b);
	empty_session_exports_nothing();
	bad_calls_fail_cleanly(s);
	if (argc > 1) {
		struct vmctx_export *x = vmctx_export_new(s, NULL);

		write_file(x, VMCTX_EXPORT_PPROF, argv[1], "hostile.pb.gz");
		write_file(x, VMCTX_EXPORT_FOLDED, argv[1], "hostile.folded");
		vmctx_export_free(x);
	}
	vmctx_session_free(s);
	vmctx_bundle_free(b);
	return check_result("test-export");
}
