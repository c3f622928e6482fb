// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Tables a terminal can trust.  A guest whose host name, comm, symbol and
 * kernel module carry ESC, BEL, CR, LF and DEL is recorded; every view's
 * text holds none of those bytes raw, spells them exactly as
 * vmctx_escape(3) documents, and keeps its columns aligned.  Also: the
 * percent cut-off of vmctx_table_format(), and [idle] rows with a
 * module.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmctx.h"
#include "check.h"

#define TICK_NS		1000000ULL
#define VM_TGID		1001
#define ROOT		0x10000000ULL
#define EXE		0x400000ULL
#define KMOD		0xffffffffc0000000ULL

/* What the guest sends, and how each must print. */
#define HOST_RAW	"evil\x1b]0;pwned\x07"
#define HOST_ESC	"evil\\x1b]0;pwned\\x07"
#define COMM_RAW	"sh\r\n   999  99.99  fake\x7f"
#define COMM_ESC	"sh\\x0d\\x0a   999  99.99  fake\\x7f"
#define SYM_RAW		"f\x1b[2J\x1b[31m"
#define SYM_ESC		"f\\x1b[2J\\x1b[31m"
#define KMOD_RAW	"km\x07\x7f"
#define KMOD_ESC	"km\\x07\\x7f"
#define KSYM_RAW	"k\x1b" "c"
#define KSYM_ESC	"k\\x1bc"
/* 41 columns escaped: wider than the Function column's 32 */
#define LONG_RAW	"long\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b_name"
#define LONG_ESC	"long\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b_name"

/* Offset of the Function column: "%10s %7s  " */
#define FUNCTION_COL	(10 + 1 + 7 + 2)

static void escapes_are_exactly_as_documented(void)
{
	static const struct {
		const char *raw, *esc;
	} cases[] = {
		{ "\x1b", "\\x1b" }, { "\x07", "\\x07" }, { "\r", "\\x0d" }, { "\n", "\\x0a" },
		{ "\x7f", "\\x7f" }, { "\x01\x1f", "\\x01\\x1f" }, { "\t", "\\x09" },
		{ "a\\x1b", "a\\\\x1b" },			/* a guest's fake escape */
		{ "caf\xc3\xa9", "caf\xc3\xa9" },		/* UTF-8 is copied */
		{ "\xe2\x82\xac\xf0\x9f\x98\x80", "\xe2\x82\xac\xf0\x9f\x98\x80" },
		{ "\xc2\x9b" "2J", "\\xc2\\x9b2J" },		/* C1 CSI */
		{ "\xc2\x85", "\\xc2\\x85" },			/* C1 NEL */
		{ "\xff\x80", "\\xff\\x80" },			/* not UTF-8 */
		{ "\xc0\x9b", "\\xc0\\x9b" },			/* overlong ESC-ish */
		{ "\xe0\x80\x9b", "\\xe0\\x80\\x9b" },		/* overlong CSI */
		{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },		/* surrogate */
		{ "\xe2\x82", "\\xe2\\x82" },			/* cut short */
		{ "plain name-1.0", "plain name-1.0" },
		{ "", "" },
	};
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = vmctx_escape(buf, sizeof(buf), cases[i].raw);

		CHECK(n == (int)strlen(cases[i].esc) && !strcmp(buf, cases[i].esc),
		      "case %zu escapes to \"%s\" (got %d \"%s\")", i, cases[i].esc, n, buf);
	}
	CHECK_EQ(vmctx_escape(NULL, 0, "\x1b[2J"), 7, "size 0 gives the length needed");
	/* cut at a whole escape: "ab\x1b" in 5 bytes holds "ab" */
	CHECK(vmctx_escape(buf, 5, "ab\x1b") == 6 && !strcmp(buf, "ab"),
	      "a cut leaves no half escape (got \"%s\")", buf);
	CHECK(vmctx_escape(buf, 4, "a\xc3\xa9z") == 4 && !strcmp(buf, "a\xc3\xa9"),
	      "a character fits exactly");
	CHECK(vmctx_escape(buf, 3, "a\xc3\xa9z") == 4 && !strcmp(buf, "a"),
	      "a cut leaves no half character");
	CHECK(vmctx_escape(buf, 1, "abc") == 3 && !buf[0], "size 1 gives an empty string");
	/* a run of plain bytes is cut anywhere, and nothing after the cut is kept */
	CHECK(vmctx_escape(buf, 4, "abcdef") == 6 && !strcmp(buf, "abc"),
	      "a plain run fills the buffer (got \"%s\")", buf);
	CHECK(vmctx_escape(buf, 4, "ab\\cd") == 6 && !strcmp(buf, "ab"),
	      "a cut before a doubled backslash (got \"%s\")", buf);
	CHECK(vmctx_escape(buf, sizeof(buf), "a\\b\x7f c") == 10 && !strcmp(buf, "a\\\\b\\x7f c"),
	      "runs around a backslash and DEL (got \"%s\")", buf);
	CHECK_EQ(vmctx_escape(buf, sizeof(buf), NULL), -EINVAL, "NULL source");
	CHECK_EQ(vmctx_escape(NULL, 4, "a"), -EINVAL, "NULL buffer with a size");
}

/*
 * Plain runs are scanned eight bytes at a time: a byte that is not plain,
 * at every offset of a 24-byte name (three words) and of the tail, is
 * escaped as documented, and the plain bytes around it are copied.
 */
static void escapes_hold_at_every_offset(void)
{
	static const struct {
		const char *raw, *esc;
	} odd[] = {
		{ "\x01", "\\x01" }, { "\x1f", "\\x1f" }, { "\x7f", "\\x7f" },
		{ "\x80", "\\x80" }, { "\xff", "\\xff" }, { "\\", "\\\\" },
		{ " ", " " }, { "~", "~" }, { "\xc3\xa9", "\xc3\xa9" },
	};
	char raw[64], want[64], buf[64];
	size_t i, k;

	for (k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) {
		for (i = 0; i < 24; i++) {
			int n;

			snprintf(raw, sizeof(raw), "%.*s%s%.*s", (int)i, "aaaaaaaaaaaaaaaaaaaaaaaa",
				 odd[k].raw, (int)(23 - i), "bbbbbbbbbbbbbbbbbbbbbbbb");
			snprintf(want, sizeof(want), "%.*s%s%.*s", (int)i, "aaaaaaaaaaaaaaaaaaaaaaaa",
				 odd[k].esc, (int)(23 - i), "bbbbbbbbbbbbbbbbbbbbbbbb");
			n = vmctx_escape(buf, sizeof(buf), raw);
			CHECK(n == (int)strlen(want) && !strcmp(buf, want),
			      "odd byte %zu at %zu: got %d \"%s\"", k, i, n, buf);
		}
	}
}

static struct vmctx_bundle *hostile_bundle(void)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int exe, task;

	CHECK(b && !vmctx_bundle_set_identity(b, HOST_RAW, "6.1", "boot"), "identity");
	exe = vmctx_bundle_add_object(b, "/bin/sh", "ab01");
	CHECK(exe >= 0 && !vmctx_bundle_add_symbol(b, exe, EXE + 0x1000, 0x100, SYM_RAW) &&
	      !vmctx_bundle_add_symbol(b, exe, EXE + 0x1100, 0x100, LONG_RAW),
	      "object and symbols");
	task = vmctx_bundle_add_task(b, ROOT, 300, 300, COMM_RAW, 0, VMCTX_TIME_NONE);
	CHECK(task >= 0 && !vmctx_bundle_add_map(b, task, EXE, EXE + 0x2000, 0, 0, exe, "/bin/sh"),
	      "task and map");
	CHECK(vmctx_bundle_add_kmodule(b, KMOD_RAW, KMOD, 0x1000) >= 0 &&
	      !vmctx_bundle_add_ksym(b, KMOD + 0x10, KSYM_RAW, KMOD_RAW), "kernel module");
	CHECK(!vmctx_bundle_seal(b), "sealed");
	return b;
}

/*
 * VM1's one vCPU on pCPU 0: 50 user ticks in SYM, 10 in LONG, 30 in the
 * module; pCPU 1 idles 10.
 */
static struct vmctx_session *hostile_session(const struct vmctx_bundle *b)
{
	struct vmctx_session_opts o = { .sz = sizeof(o), .tick_ns = TICK_NS };
	struct vmctx_session *s = vmctx_session_new(&o);
	int i;

	CHECK(s && vmctx_session_add_vm(s, VM_TGID, NULL) == 1, "VM declared");
	CHECK(!vmctx_session_attach_bundle(s, VM_TGID, b, 0), "bundle attached");
	for (i = 0; i < 100; i++) {
		struct vmctx_sample smp = {
			.sz = sizeof(smp), .time = i * TICK_NS, .cpu = 0, .pid = VM_TGID,
			.tid = VM_TGID + 1, .vm_tgid = VM_TGID, .vcpu = 0,
			.flags = VMCTX_SAMPLE_GUEST, .cpl = 3, .isa = VMCTX_ISA_VMX,
			.cr3 = ROOT, .ip = EXE + 0x1010, .exit_reason = 1,
		};

		if (i >= 50 && i < 60) {
			smp.ip = EXE + 0x1110;
		} else if (i >= 60 && i < 90) {
			smp.cpl = 0;
			smp.ip = KMOD + 0x20;
		} else if (i >= 90) {
			smp = (struct vmctx_sample){
				.sz = sizeof(smp), .time = i * TICK_NS, .cpu = 1,
				.vm_tgid = -1, .vcpu = -1, .flags = VMCTX_SAMPLE_IDLE,
			};
		}
		CHECK(!vmctx_session_sample(s, &smp), "sample %d", i);
	}
	CHECK(!vmctx_session_finish(s, 100 * TICK_NS), "finish");
	return s;
}

static char *format(const struct vmctx_session *s, enum vmctx_view view, double limit)
{
	struct vmctx_format_opts o = { .sz = sizeof(o), .percent_limit = limit };
	struct vmctx_table *t = vmctx_table_new(s, view, VM_TGID, -1);
	char *text = NULL;

	CHECK(t && !vmctx_table_format(t, &o, &text) && text, "view %d formats", view);
	vmctx_table_free(t);
	return text;
}

/* Only newlines, and as many as the table has lines; no DEL. */
/* @c as UTF-8 in @buf (4 bytes and a NUL at most); its length. */
static size_t utf8(uint32_t c, char *buf)
{
	size_t n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
	size_t i;

	buf[n] = '\0';
	for (i = n - 1; i > 0; i--, c >>= 6)
		buf[i] = (char)(0x80 | (c & 0x3f));
	buf[0] = (char)(n == 1 ? c : (0xf0 << (4 - n) & 0xff) | c);
	return n;
}

/*
 * Issue 29 item 7: the characters that change how a line reads without
 * showing themselves (bidi embeddings, overrides and isolates, zero-width
 * characters and marks, line and paragraph separators, the BOM) are
 * escaped byte by byte, like C1 controls; their neighbours are copied.
 * Each is built from its code point here, so the expectation does not
 * restate the escaper's tables.
 */
static void bidi_and_invisible_characters_are_escaped(void)
{
	static const struct {
		uint32_t lo, hi;
	} hidden[] = {
		{ 0x202a, 0x202e }, { 0x2066, 0x2069 }, { 0x200b, 0x200f }, { 0x2028, 0x2029 },
		{ 0xfeff, 0xfeff }, { 0x80, 0x9f },
	};
	static const uint32_t shown[] = { 0x200a, 0x2010, 0x2027, 0x202f, 0x2065, 0x206a,
					  0xfefe, 0xff00, 0xa0, 0x7e };
	char raw[8], want[32], got[32];
	size_t i, j, n;
	uint32_t c;

	for (i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++) {
		for (c = hidden[i].lo; c <= hidden[i].hi; c++) {
			n = utf8(c, raw);
			for (j = 0; j < n; j++)
				sprintf(want + 4 * j, "\\x%02x", (unsigned char)raw[j]);
			CHECK(vmctx_escape(got, sizeof(got), raw) == (int)(4 * n) &&
			      !strcmp(got, want), "U+%04X escapes to %s (got %s)", c, want, got);
		}
	}
	for (i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		n = utf8(shown[i], raw);
		CHECK(vmctx_escape(got, sizeof(got), raw) == (int)n && !strcmp(got, raw),
		      "U+%04X, a neighbour, is copied", shown[i]);
	}
}

static void no_raw_controls(const char *text, size_t lines, const char *what)
{
	size_t i, nl = 0, bad = 0;

	for (i = 0; text[i]; i++) {
		unsigned char c = text[i];

		nl += c == '\n';
		bad += (c < 0x20 && c != '\n') || c == 0x7f;
	}
	CHECK(!bad, "%s: %zu raw control bytes:\n%s", what, bad, text);
	CHECK(nl == lines, "%s: %zu lines, want %zu:\n%s", what, nl, lines, text);
}

/*
 * The row whose Function text is @function has Module @module in the
 * column the header's "Module" heads.
 */
static void row_aligned(const char *text, const char *function, const char *module,
			const char *what)
{
	const char *head = strstr(text, "   Samples  %Ratio  Function");
	const char *line = text, *m = head ? strstr(head, "Module\n") : NULL;
	size_t col = m ? (size_t)(m - head) : 0, f = strlen(function), n = strlen(module);

	while (line && (line = strchr(line, '\n'))) {
		line++;
		if (strlen(line) > col && !strncmp(line + FUNCTION_COL, function, f) &&
		    line[FUNCTION_COL + f] == ' ')
			break;
	}
	CHECK(col > FUNCTION_COL && line && line[col - 1] == ' ' && line[col - 2] != '\n' &&
	      !strncmp(line + col, module, n) && line[col + n] == '\n',
	      "%s: row %s has module %s at column %zu:\n%s", what, function, module, col, text);
}

static void tables_print_no_raw_guest_bytes(void)
{
	struct vmctx_bundle *b = hostile_bundle();
	struct vmctx_session *s = hostile_session(b);
	char *text;

	CHECK(!strcmp(vmctx_session_vm_name(s, VM_TGID), HOST_RAW), "the VM takes the host name");

	/* header, column header, 3 rows; the Function column widens to LONG_ESC's 41 */
	text = format(s, VMCTX_VIEW_GUEST, 0);
	no_raw_controls(text, 5, "guest view");
	row_aligned(text, SYM_ESC, COMM_ESC, "guest view");
	row_aligned(text, LONG_ESC, COMM_ESC, "guest view");
	row_aligned(text, KSYM_ESC, KMOD_ESC, "guest view");
	CHECK(strstr(text, "\n   Samples  %Ratio  Function" "                                  Module\n"),
	      "the column header, byte for byte:\n%s", text);
	CHECK(strstr(text, "\n" "        50   55.56  " SYM_ESC "                          "
		     COMM_ESC "\n"), "the user row, byte for byte:\n%s", text);
	free(text);

	/* header, column header, the VM, [idle] */
	text = format(s, VMCTX_VIEW_HOST, 0);
	no_raw_controls(text, 4, "host view");
	row_aligned(text, "[" HOST_ESC "]", "(VM1)", "host view");
	row_aligned(text, "[idle]", "[kernel.kallsyms]", "host view");
	free(text);

	/* header, column header, 3 guest rows, [idle] */
	text = format(s, VMCTX_VIEW_UNIFIED, 0);
	no_raw_controls(text, 6, "unified view");
	row_aligned(text, LONG_ESC, COMM_ESC " (VM1)", "unified view");
	row_aligned(text, SYM_ESC, COMM_ESC " (VM1)", "unified view");
	row_aligned(text, KSYM_ESC, KMOD_ESC " (VM1)", "unified view");
	row_aligned(text, "[idle]", "[kernel.kallsyms]", "unified view");
	free(text);

	vmctx_session_free(s);
	vmctx_bundle_free(b);
}

/* Rows below the limit are left out; the header still counts them. */
static void percent_limit_leaves_out_small_rows(void)
{
	struct vmctx_bundle *b = hostile_bundle();
	struct vmctx_session *s = hostile_session(b);
	struct vmctx_format_opts o = { .sz = sizeof(o) };
	struct vmctx_table *t;
	char *text = NULL;

	text = format(s, VMCTX_VIEW_UNIFIED, 20);
	no_raw_controls(text, 4, "unified view, 20%");
	CHECK(strstr(text, "Total samples: 100  ") && strstr(text, SYM_ESC) &&
	      strstr(text, KSYM_ESC) && !strstr(text, "[idle]"),
	      "the 10%% [idle] row is left out at 20%%:\n%s", text);
	free(text);
	text = format(s, VMCTX_VIEW_UNIFIED, 30);
	no_raw_controls(text, 4, "unified view, 30%");
	CHECK(strstr(text, KSYM_ESC), "a row at exactly the limit stays");
	free(text);
	text = format(s, VMCTX_VIEW_UNIFIED, 30.5);
	no_raw_controls(text, 3, "unified view, 30.5%");
	free(text);

	t = vmctx_table_new(s, VMCTX_VIEW_UNIFIED, -1, -1);
	o.max_rows = 1;
	CHECK(!vmctx_table_format(t, &o, &text), "max_rows through opts");
	no_raw_controls(text, 3, "unified view, 1 row");
	free(text);
	CHECK(!vmctx_table_format(t, NULL, &text), "NULL opts print every row");
	no_raw_controls(text, 6, "unified view, NULL opts");
	free(text);
	o.percent_limit = 101;
	CHECK_EQ(vmctx_table_format(t, &o, &text), -EINVAL, "a limit above 100%");
	o.percent_limit = -1;
	CHECK_EQ(vmctx_table_format(t, &o, &text), -EINVAL, "a negative limit");
	o.sz = sizeof(size_t);
	CHECK_EQ(vmctx_table_format(t, &o, &text), -EINVAL, "opts without max_rows");
	o.sz = offsetof(struct vmctx_format_opts, percent_limit);
	o.max_rows = 2;
	CHECK(!vmctx_table_format(t, &o, &text), "opts of an older caller");
	no_raw_controls(text, 4, "older opts: 2 rows, no limit");
	free(text);
	vmctx_table_free(t);
	vmctx_session_free(s);
	vmctx_bundle_free(b);
}

/*
 * One rule for every struct a caller hands in (libvmctx(3), Conventions):
 * a newer caller's struct, larger than this library's, is refused when a
 * field this library does not know is set, and taken when that tail is
 * zero.  Each struct is wrapped with one more word after it.
 */
#define NEWER(type) struct { struct type o; uint64_t newer; }

static void every_struct_refuses_a_set_unknown_field(void)
{
	struct vmctx_bundle *b = hostile_bundle();
	struct vmctx_session *s = hostile_session(b), *s2;
	NEWER(vmctx_session_opts) so = { .o = { .sz = sizeof(so), .tick_ns = 1000 }, .newer = 1 };
	NEWER(vmctx_format_opts) fo = { .o = { .sz = sizeof(fo) }, .newer = 1 };
	NEWER(vmctx_export_opts) xo = { .o = { .sz = sizeof(xo) }, .newer = 1 };
	NEWER(vmctx_sample) smp = { .o = { .sz = sizeof(smp), .vm_tgid = -1, .vcpu = -1 },
				    .newer = 1 };
	NEWER(vmctx_clock_tsc) tsc = { .o = { .sz = sizeof(tsc), .time_mult = 1 }, .newer = 1 };
	struct vmctx_clock *c = vmctx_clock_new();
	struct vmctx_table *t = vmctx_table_new(s, VMCTX_VIEW_UNIFIED, -1, -1);
	struct vmctx_export *x;
	char *text = NULL;

	errno = 0;
	CHECK(!vmctx_session_new(&so.o) && errno == EINVAL, "session opts: a set unknown field");
	so.newer = 0;
	s2 = vmctx_session_new(&so.o);
	CHECK(s2, "session opts: a zero unknown tail");
	CHECK_EQ(vmctx_session_sample(s2, &smp.o), -EINVAL, "sample: a set unknown field");
	smp.newer = 0;
	CHECK_EQ(vmctx_session_sample(s2, &smp.o), 0, "sample: a zero unknown tail");
	vmctx_session_free(s2);
	CHECK_EQ(vmctx_table_format(t, &fo.o, &text), -EINVAL, "format opts: a set unknown field");
	fo.newer = 0;
	CHECK_EQ(vmctx_table_format(t, &fo.o, &text), 0, "format opts: a zero unknown tail");
	free(text);
	errno = 0;
	CHECK(!vmctx_export_new(s, &xo.o) && errno == EINVAL, "export opts: a set unknown field");
	xo.newer = 0;
	x = vmctx_export_new(s, &xo.o);
	CHECK(x, "export opts: a zero unknown tail");
	vmctx_export_free(x);
	CHECK_EQ(vmctx_clock_set_tsc(c, &tsc.o, b), -EINVAL, "clock_tsc: a set unknown field");
	vmctx_clock_free(c);
	vmctx_table_free(t);
	vmctx_session_free(s);
	vmctx_bundle_free(b);
}

/* The largest "N.NN%" in @text, or -1. */
static double max_percent(const char *text)
{
	double max = -1, v;
	const char *p;

	for (p = strchr(text, '%'); p; p = strchr(p + 1, '%')) {
		const char *q = p;

		while (q > text && (q[-1] == '.' || (q[-1] >= '0' && q[-1] <= '9')))
			q--;
		if (q < p && sscanf(q, "%lf", &v) == 1 && v > max)
			max = v;
	}
	return max;
}

/*
 * Issue 29 item 5: lost records that claim 2^64 - 1 samples, twice, on
 * the pCPU a vCPU runs on and on a host pCPU, saturate the counts instead
 * of wrapping them: no class or row counts more than the total, the guest
 * samples keep their number, and no percentage printed exceeds 100.
 */
static void huge_lost_counts_saturate(void)
{
	struct vmctx_bundle *b = hostile_bundle();
	enum vmctx_view views[] = { VMCTX_VIEW_GUEST, VMCTX_VIEW_VCPUS, VMCTX_VIEW_HOST,
				    VMCTX_VIEW_UNIFIED };
	struct vmctx_session *s2;
	size_t i, r;

	/* 50 samples of one user function on pCPU 0; two huge losses on pCPUs 0 and 1 */
	s2 = vmctx_session_new(&(struct vmctx_session_opts){ .sz = sizeof(struct vmctx_session_opts),
							    .tick_ns = TICK_NS });
	CHECK(s2 && vmctx_session_add_vm(s2, VM_TGID, NULL) == 1, "VM declared");
	CHECK(!vmctx_session_attach_bundle(s2, VM_TGID, b, 0), "bundle attached");
	for (i = 0; i < 50; i++) {
		struct vmctx_sample smp = {
			.sz = sizeof(smp), .time = i * TICK_NS, .cpu = 0, .pid = VM_TGID,
			.tid = VM_TGID + 1, .vm_tgid = VM_TGID, .vcpu = 0,
			.flags = VMCTX_SAMPLE_GUEST, .cpl = 3, .isa = VMCTX_ISA_VMX,
			.cr3 = ROOT, .ip = EXE + 0x1010, .exit_reason = 1,
		};

		CHECK(!vmctx_session_sample(s2, &smp), "sample %zu", i);
		if (i == 20 || i == 30) {
			CHECK(!vmctx_session_lost(s2, smp.time, 0, UINT64_MAX), "lost on cpu 0");
			CHECK(!vmctx_session_lost(s2, smp.time, 1, UINT64_MAX), "lost on cpu 1");
		}
	}
	CHECK(!vmctx_session_finish(s2, 50 * TICK_NS), "finish");
	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		struct vmctx_table *t = vmctx_table_new(s2, views[i], VM_TGID, -1);
		uint64_t total = vmctx_table_total(t), n;
		char *text = NULL;
		int c;

		CHECK(t, "view %d", views[i]);
		for (c = 0; c < VMCTX_CLASS_MAX; c++)
			CHECK(vmctx_table_class(t, c) <= total,
			      "view %d: class %d counts no more than the total", views[i], c);
		for (r = 0; !vmctx_table_row(t, r, &n, NULL, NULL); r++)
			CHECK(n <= total, "view %d: row %zu counts no more than the total", views[i], r);
		if (views[i] == VMCTX_VIEW_GUEST)
			CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_USER), 50,
				 "the guest's 50 user samples keep their number");
		CHECK(!vmctx_table_format(t, NULL, &text) && text, "view %d formats", views[i]);
		CHECK(text && max_percent(text) <= 100.0,
		      "view %d prints no share above 100%%:\n%s", views[i], text);
		free(text);
		vmctx_table_free(t);
	}
	vmctx_session_free(s2);
	vmctx_bundle_free(b);
}

int main(void)
{
	escapes_are_exactly_as_documented();
	escapes_hold_at_every_offset();
	bidi_and_invisible_characters_are_escaped();
	tables_print_no_raw_guest_bytes();
	percent_limit_leaves_out_small_rows();
	every_struct_refuses_a_set_unknown_field();
	huge_lost_counts_saturate();
	return check_result("test-report");
}
