// SPDX-License-Identifier: LGPL-2.1-only
/*
 * plugin_vmctx.so, loaded the way trace-cmd and perf load plugins
 * (tep_load_plugins(), from $TRACEEVENT_PLUGIN_DIR), prints kvm_exit
 * records of the vmctx-patched format (guest_cr3), of stock 6.1 and of a
 * real 6.18 tracefs format exactly as documented in plugin_vmctx(7), and
 * prints what it can of malformed records.
 *
 * The 6.1 formats are built here the way the kernel builds them: field
 * offsets from the TP_STRUCT__entry layout, and the print format from
 * TP_printk with the uapi headers' exit-reason tables stringified.  The
 * expected names (HLT, hlt, ...) are Linux's spelling from those headers.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>
#include <sys/stat.h>
#include <asm/kvm.h>
#include <asm/svm.h>
#include <asm/vmx.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "vmctx.h"
#include "check.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define STR_(...)	#__VA_ARGS__
#define STR(...)	STR_(__VA_ARGS__)

#define KVM_EXIT_ID		103
#define KVM_NESTED_VMEXIT_ID	90

/* TP_STRUCT__entry of kvm_exit on x86-64, with patch 0007's guest_cr3 last. */
struct exit_rec {
	uint16_t common_type;
	uint8_t common_flags;
	uint8_t common_preempt_count;
	int32_t common_pid;
	uint32_t exit_reason;
	uint64_t guest_rip;
	uint32_t isa;
	uint64_t info1;
	uint64_t info2;
	uint32_t intr_info;
	uint32_t error_code;
	uint32_t vcpu_id;
	uint64_t guest_cr3;
};

/* Stock 6.1 records end after vcpu_id, padded to the struct's alignment. */
#define STOCK_SIZE	((offsetof(struct exit_rec, guest_cr3) + 7) & ~(size_t)7)
#define PATCHED_SIZE	sizeof(struct exit_rec)

struct field_desc {
	const char *type;
	const char *name;
	size_t offset;
	size_t size;
	int is_signed;
};

#define FIELD(type, member, sgn)							\
	{ type, #member, offsetof(struct exit_rec, member),				\
	  sizeof(((struct exit_rec *)0)->member), sgn }

static const struct field_desc common_fields[] = {
	FIELD("unsigned short", common_type, 0),
	FIELD("unsigned char", common_flags, 0),
	FIELD("unsigned char", common_preempt_count, 0),
	FIELD("int", common_pid, 1),
};

static const struct field_desc exit_fields[] = {
	FIELD("unsigned int", exit_reason, 0),
	FIELD("unsigned long", guest_rip, 0),
	FIELD("u32", isa, 0),
	FIELD("u64", info1, 0),
	FIELD("u64", info2, 0),
	FIELD("u32", intr_info, 0),
	FIELD("u32", error_code, 0),
	FIELD("unsigned int", vcpu_id, 0),
	FIELD("unsigned long", guest_cr3, 0),
};

/* TP_printk of TRACE_EVENT_KVM_EXIT in 6.1, as tracefs shows it. */
#define PRINT_ARGS_6_1							\
	"REC->vcpu_id, (REC->isa == 1) ? __print_symbolic(REC->exit_reason & 0xffff, " \
	STR(VMX_EXIT_REASONS) ") : __print_symbolic(REC->exit_reason, "		\
	STR(SVM_EXIT_REASONS) "), (REC->isa == 1 && REC->exit_reason & ~0xffff) ? \" \" : \"\", " \
	"(REC->isa == 1) ? __print_flags(REC->exit_reason & ~0xffff, \" \", "	\
	STR(VMX_EXIT_REASON_FLAGS) ") : \"\", REC->guest_rip, REC->info1, REC->info2, " \
	"REC->intr_info, REC->error_code"
#define PRINT_FMT_6_1							\
	"\"vcpu %u reason %s%s%s rip 0x%lx info1 0x%016llx info2 0x%016llx intr_info 0x%08x " \
	"error_code 0x%08x"

static const char print_stock[] = PRINT_FMT_6_1 "\", " PRINT_ARGS_6_1;
static const char print_patched[] = PRINT_FMT_6_1 " guest_cr3 0x%lx\", " PRINT_ARGS_6_1
	", REC->guest_cr3";

/* A tracefs format file for @name, with the exit fields up to (not) @last. */
static char *make_format(const char *name, int id, const char *last, const char *print)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f;

	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "name: %s\nID: %d\nformat:\n", name, id);
	for (i = 0; i < ARRAY_SIZE(common_fields); i++)
		fprintf(f, "\tfield:%s %s;\toffset:%zu;\tsize:%zu;\tsigned:%d;\n",
			common_fields[i].type, common_fields[i].name, common_fields[i].offset,
			common_fields[i].size, common_fields[i].is_signed);
	fputc('\n', f);
	for (i = 0; i < ARRAY_SIZE(exit_fields); i++) {
		if (last && !strcmp(exit_fields[i].name, last))
			break;
		fprintf(f, "\tfield:%s %s;\toffset:%zu;\tsize:%zu;\tsigned:%d;\n",
			exit_fields[i].type, exit_fields[i].name, exit_fields[i].offset,
			exit_fields[i].size, exit_fields[i].is_signed);
	}
	fprintf(f, "\nprint fmt: %s\n", print);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char *read_text(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f, *out;
	int c;

	f = fopen(path, "r");
	if (!f)
		return NULL;
	out = open_memstream(&buf, &len);
	if (!out) {
		fclose(f);
		return NULL;
	}
	while ((c = fgetc(f)) != EOF)
		fputc(c, out);
	fclose(f);
	fclose(out);
	return buf;
}

static int parse(struct tep_handle *tep, const char *text)
{
	return text ? (int)tep_parse_event(tep, text, strlen(text), "kvm") : -1;
}

/* The plugin directory of the build tree, as trace-cmd users set it. */
static char plugin_dir[PATH_MAX];

static struct tep_handle *new_tep(bool sys_plugins)
{
	struct tep_handle *tep = tep_alloc();

	if (!tep)
		return NULL;
	tep_set_long_size(tep, 8);
	tep_set_page_size(tep, 4096);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	if (!sys_plugins)
		tep_set_flag(tep, TEP_DISABLE_SYS_PLUGINS);
	return tep;
}

/* A record of exactly @size bytes at host time @ts, so that ASan sees any read past it. */
static char *print_record_at(struct tep_handle *tep, const void *data, size_t size,
			     unsigned long long ts)
{
	struct tep_record rec = { .cpu = 0, .size = (int)size, .ts = ts };
	struct trace_seq s;
	char *out;

	rec.data = malloc(size ? size : 1);
	if (!rec.data)
		return NULL;
	memcpy(rec.data, data, size);
	trace_seq_init(&s);
	tep_print_event(tep, &s, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	out = strdup(s.buffer ? s.buffer : "");
	trace_seq_destroy(&s);
	free(rec.data);
	return out;
}

static char *print_record(struct tep_handle *tep, const void *data, size_t size)
{
	return print_record_at(tep, data, size, 0);
}

static void expect_at(struct tep_handle *tep, const struct exit_rec *r, size_t size,
		      unsigned long long ts, const char *want, const char *what)
{
	char *got = print_record_at(tep, r, size, ts);

	CHECK(got && !strcmp(got, want), "%s:\n  got  \"%s\"\n  want \"%s\"", what,
	      got ? got : "(null)", want);
	free(got);
}

static void expect(struct tep_handle *tep, const struct exit_rec *r, size_t size,
		   const char *want, const char *what)
{
	expect_at(tep, r, size, 0, want, what);
}

static struct exit_rec rec(uint16_t id, uint32_t isa, uint32_t reason, uint32_t vcpu)
{
	struct exit_rec r;

	memset(&r, 0, sizeof(r));
	r.common_type = id;
	r.common_pid = 4242;
	r.isa = isa;
	r.exit_reason = reason;
	r.vcpu_id = vcpu;
	return r;
}

#define ZERO_INFO "info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x00000000 " \
	"error_code 0x00000000"

/* Exit records on the vmctx-patched format, with handlers registered first as trace-cmd does. */
static void patched_format_prints_reason_rip_root_and_info(void)
{
	struct tep_plugin_list *plugins;
	struct tep_handle *tep = new_tep(false);
	char *fmt = make_format("kvm_exit", KVM_EXIT_ID, NULL, print_patched);
	struct exit_rec r;

	plugins = tep_load_plugins(tep);
	CHECK(plugins, "plugin_vmctx.so loads from %s", plugin_dir);
	CHECK(parse(tep, fmt) == 0, "patched kvm_exit format parses");

	/* VMX HLT; CR3 with bit 63 (no-flush) and PCID 0x801 */
	r = rec(KVM_EXIT_ID, 1, EXIT_REASON_HLT, 3);
	r.guest_rip = 0xffffffff81a3c5e2;
	r.guest_cr3 = 0x8000000012346801;
	expect(tep, &r, PATCHED_SIZE,
	       "vcpu 3 reason HLT rip 0xffffffff81a3c5e2 cr3 0x12346000 (raw 0x8000000012346801) "
	       ZERO_INFO, "VMX HLT");

	/* SVM hlt; CR3 with the PTI user bit (12) and PCID 3 */
	r = rec(KVM_EXIT_ID, 2, SVM_EXIT_HLT, 0);
	r.guest_rip = 0x401000;
	r.guest_cr3 = 0x23457003;
	expect(tep, &r, PATCHED_SIZE,
	       "vcpu 0 reason hlt rip 0x401000 cr3 0x23456000 (raw 0x23457003) " ZERO_INFO,
	       "SVM hlt");

	/* every info field lands in its own slot */
	r = rec(KVM_EXIT_ID, 1, EXIT_REASON_EPT_VIOLATION, 1);
	r.guest_rip = 0x7f0012345678;
	r.guest_cr3 = 0x6000;
	r.info1 = 0x181;
	r.info2 = 0xfee00030;
	r.intr_info = 0x80000b0e;
	r.error_code = 0x2;
	expect(tep, &r, PATCHED_SIZE,
	       "vcpu 1 reason EPT_VIOLATION rip 0x7f0012345678 cr3 0x6000 (raw 0x6000) "
	       "info1 0x0000000000000181 info2 0x00000000fee00030 intr_info 0x80000b0e "
	       "error_code 0x00000002", "VMX EPT_VIOLATION with info");

	/* a failed VM entry keeps the kernel's flag name */
	r = rec(KVM_EXIT_ID, 1, VMX_EXIT_REASONS_FAILED_VMENTRY | EXIT_REASON_INVALID_STATE, 0);
	expect(tep, &r, PATCHED_SIZE,
	       "vcpu 0 reason INVALID_STATE FAILED_VMENTRY rip 0x0 cr3 0x0 (raw 0x0) " ZERO_INFO,
	       "VMX failed entry");

	/* codes no table names print as numbers */
	r = rec(KVM_EXIT_ID, 1, 69, 0);
	expect(tep, &r, PATCHED_SIZE, "vcpu 0 reason 0x45 rip 0x0 cr3 0x0 (raw 0x0) " ZERO_INFO,
	       "unknown VMX code");
	r = rec(KVM_EXIT_ID, 2, 0x3ff, 0);
	expect(tep, &r, PATCHED_SIZE, "vcpu 0 reason 0x3ff rip 0x0 cr3 0x0 (raw 0x0) " ZERO_INFO,
	       "unknown SVM code");
	r = rec(KVM_EXIT_ID, 7, EXIT_REASON_HLT, 0);
	expect(tep, &r, PATCHED_SIZE,
	       "vcpu 0 reason 0xc (isa 7) rip 0x0 cr3 0x0 (raw 0x0) " ZERO_INFO, "unknown ISA");

	tep_unload_plugins(plugins, tep);
	tep_free(tep);
	free(fmt);
}

/* Every code of libvmctx's tables prints with its name: the plugin has no table of its own. */
static void names_are_libvmctx_names(void)
{
	static const enum vmctx_isa isas[] = { VMCTX_ISA_VMX, VMCTX_ISA_SVM };
	struct tep_plugin_list *plugins;
	struct tep_handle *tep = new_tep(false);
	char *fmt = make_format("kvm_exit", KVM_EXIT_ID, NULL, print_patched);
	size_t i, k, bad = 0;

	plugins = tep_load_plugins(tep);
	parse(tep, fmt);
	for (k = 0; k < ARRAY_SIZE(isas); k++) {
		for (i = 0; i < vmctx_exit_reason_count(isas[k]); i++) {
			struct exit_rec r;
			const char *name;
			uint64_t code;
			char want[128];
			char *got;

			vmctx_exit_reason_at(isas[k], i, &code, &name);
			r = rec(KVM_EXIT_ID, isas[k] == VMCTX_ISA_VMX ? 1 : 2, (uint32_t)code, 0);
			got = print_record(tep, &r, PATCHED_SIZE);
			snprintf(want, sizeof(want), "vcpu 0 reason %s rip ", name);
			if (!got || strncmp(got, want, strlen(want)))
				bad++;
			free(got);
		}
	}
	CHECK_EQ(bad, 0, "codes not printed with libvmctx's name");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);
	free(fmt);
}

/* A stock 6.1 kernel has no guest_cr3: the line has everything else. */
static void stock_format_omits_cr3(void)
{
	struct tep_plugin_list *plugins;
	struct tep_handle *tep = new_tep(false);
	char *fmt = make_format("kvm_exit", KVM_EXIT_ID, "guest_cr3", print_stock);
	struct exit_rec r;

	/* the format first, then the plugins: the handler overrides a parsed event */
	CHECK(parse(tep, fmt) == 0, "stock kvm_exit format parses");
	plugins = tep_load_plugins(tep);

	r = rec(KVM_EXIT_ID, 1, EXIT_REASON_HLT, 3);
	r.guest_rip = 0xffffffff81a3c5e2;
	expect(tep, &r, STOCK_SIZE, "vcpu 3 reason HLT rip 0xffffffff81a3c5e2 " ZERO_INFO,
	       "stock VMX HLT");
	r = rec(KVM_EXIT_ID, 2, SVM_EXIT_HLT, 1);
	expect(tep, &r, STOCK_SIZE, "vcpu 1 reason hlt rip 0x0 " ZERO_INFO, "stock SVM hlt");

	tep_unload_plugins(plugins, tep);
	tep_free(tep);
	free(fmt);
}

/*
 * Linux 6.18 puts a "requests" field where patch 0007 puts guest_cr3
 * (test/data/kvm_exit-linux-6.18.format, a real tracefs file): it is not
 * mistaken for a CR3.
 */
static void real_6_18_format_has_no_cr3(void)
{
	struct tep_plugin_list *plugins;
	struct tep_handle *tep = new_tep(false);
	const char *srcdir = getenv("top_srcdir") ? getenv("top_srcdir") : TOP_SRCDIR;
	char path[PATH_MAX];
	struct exit_rec r;
	char *fmt;

	snprintf(path, sizeof(path), "%s/test/data/kvm_exit-linux-6.18.format", srcdir);
	fmt = read_text(path);
	CHECK(fmt, "%s is readable", path);
	plugins = tep_load_plugins(tep);
	CHECK(parse(tep, fmt) == 0, "Linux 6.18 kvm_exit format parses");

	r = rec(KVM_EXIT_ID, 2, SVM_EXIT_NPF, 1);
	r.guest_rip = 0xffffffff81000000;
	r.guest_cr3 = 0x8000000000000001;	/* "requests" in this format */
	r.info1 = 0x100000004;
	r.info2 = 0xfebd5000;
	expect(tep, &r, PATCHED_SIZE,
	       "vcpu 1 reason npf rip 0xffffffff81000000 info1 0x0000000100000004 "
	       "info2 0x00000000febd5000 intr_info 0x00000000 error_code 0x00000000",
	       "6.18 SVM npf");

	tep_unload_plugins(plugins, tep);
	tep_free(tep);
	free(fmt);
}

/* kvm_nested_vmexit has kvm_exit's layout (TRACE_EVENT_KVM_EXIT) and the same line. */
static void nested_vmexit_is_decoded_too(void)
{
	struct tep_plugin_list *plugins;
	struct tep_handle *tep = new_tep(false);
	char *fmt = make_format("kvm_nested_vmexit", KVM_NESTED_VMEXIT_ID, NULL, print_patched);
	struct exit_rec r;

	plugins = tep_load_plugins(tep);
	CHECK(parse(tep, fmt) == 0, "patched kvm_nested_vmexit format parses");
	r = rec(KVM_NESTED_VMEXIT_ID, 1, EXIT_REASON_CPUID, 2);
	r.guest_rip = 0x1000;
	r.guest_cr3 = 0x4000;
	expect(tep, &r, PATCHED_SIZE, "vcpu 2 reason CPUID rip 0x1000 cr3 0x4000 (raw 0x4000) "
	       ZERO_INFO, "nested VMX CPUID");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);
	free(fmt);
}

static void put_be(void *p, uint64_t v, size_t n)
{
	uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

/* A big-endian file reads through libtraceevent's byte order, not the host's. */
static void big_endian_file_reads_the_same(void)
{
	struct tep_plugin_list *plugins;
	struct tep_handle *tep = new_tep(false);
	char *fmt = make_format("kvm_exit", KVM_EXIT_ID, NULL, print_patched);
	struct exit_rec r;

	tep_set_file_bigendian(tep, TEP_BIG_ENDIAN);
	plugins = tep_load_plugins(tep);
	parse(tep, fmt);
	memset(&r, 0, sizeof(r));
	put_be(&r.common_type, KVM_EXIT_ID, 2);
	put_be(&r.exit_reason, SVM_EXIT_HLT, 4);
	put_be(&r.isa, 2, 4);
	put_be(&r.vcpu_id, 5, 4);
	put_be(&r.guest_rip, 0xffffffff81a3c5e2, 8);
	put_be(&r.guest_cr3, 0x8000000012346801, 8);
	put_be(&r.error_code, 0x1234, 4);
	expect(tep, &r, PATCHED_SIZE,
	       "vcpu 5 reason hlt rip 0xffffffff81a3c5e2 cr3 0x12346000 (raw 0x8000000012346801) "
	       "info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x00000000 "
	       "error_code 0x00001234", "big-endian SVM hlt");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);
	free(fmt);
}

/* Short records and formats without the usual fields: what can be read, nothing past the end. */
static void malformed_records_print_what_they_can(void)
{
	static const char sparse_fmt[] =
		"name: kvm_exit\nID: 103\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:unsigned int vcpu_id;\toffset:12;\tsize:4;\tsigned:0;\n"
		"\tfield:char guest_cr3[3];\toffset:16;\tsize:3;\tsigned:0;\n\n"
		"print fmt: \"vcpu %u reason %u\", REC->vcpu_id, REC->exit_reason\n";
	struct tep_plugin_list *plugins;
	struct tep_handle *tep = new_tep(false);
	char *fmt = make_format("kvm_exit", KVM_EXIT_ID, NULL, print_patched);
	struct tep_record empty = { .size = 0 };
	struct tep_event *ev;
	struct trace_seq s;
	struct exit_rec r;

	plugins = tep_load_plugins(tep);
	parse(tep, fmt);

	/* ends inside info2: vcpu_id, info2 and later fields are past the end */
	r = rec(KVM_EXIT_ID, 1, EXIT_REASON_HLT, 3);
	r.guest_rip = 0xffffffff81a3c5e2;
	r.info1 = 0x11;
	expect(tep, &r, offsetof(struct exit_rec, info2) + 4,
	       "reason HLT rip 0xffffffff81a3c5e2 info1 0x0000000000000011 [truncated]",
	       "record cut inside info2");
	/* ends right before guest_cr3: a stock-sized record on a patched format */
	expect(tep, &r, STOCK_SIZE,
	       "vcpu 3 reason HLT rip 0xffffffff81a3c5e2 info1 0x0000000000000011 "
	       "info2 0x0000000000000000 intr_info 0x00000000 error_code 0x00000000 [truncated]",
	       "record without guest_cr3's bytes");

	/* the handler itself, on a record with no data at all */
	ev = tep_find_event_by_name(tep, "kvm", "kvm_exit");
	CHECK(ev && ev->handler, "kvm_exit has a handler");
	if (ev && ev->handler) {
		trace_seq_init(&s);
		CHECK(ev->handler(&s, &empty, ev, ev->context) == 0, "handler returns 0");
		trace_seq_terminate(&s);
		CHECK(s.buffer && !strcmp(s.buffer, "[truncated]"), "empty record: got \"%s\"",
		      s.buffer ? s.buffer : "(null)");
		trace_seq_destroy(&s);
	}
	tep_unload_plugins(plugins, tep);
	tep_free(tep);
	free(fmt);

	/* no isa, rip or info fields, and a guest_cr3 that is not a number */
	tep = new_tep(false);
	plugins = tep_load_plugins(tep);
	CHECK(parse(tep, sparse_fmt) == 0, "sparse format parses");
	r = rec(KVM_EXIT_ID, 0, EXIT_REASON_HLT, 2);
	memcpy((char *)&r + 12, &r.vcpu_id, 4);
	expect(tep, &r, 24, "vcpu 2 reason 0xc", "format without isa, rip, info");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);
}

/*
 * A record comes from a guest's doing: whatever bytes its fields hold
 * (here every one ESC, BEL, CR, LF or DEL, under each ISA), the line has
 * no control byte, so trace-cmd report and perf script print one line that
 * drives no terminal.  The plugin prints numbers and libvmctx's names
 * only; guest names it prints later go through vmctx_escape().
 */
static void records_of_control_bytes_print_no_control_bytes(void)
{
	static const unsigned char bytes[] = { 0x1b, 0x07, 0x0d, 0x0a, 0x7f };
	static const uint32_t isas[] = { 0, 1, 2 };
	struct tep_plugin_list *plugins;
	struct tep_handle *tep = new_tep(false);
	char *fmt = make_format("kvm_exit", KVM_EXIT_ID, NULL, print_patched);
	size_t i, j, k;

	plugins = tep_load_plugins(tep);
	CHECK(parse(tep, fmt) == 0, "patched format parses");
	for (i = 0; i < ARRAY_SIZE(bytes); i++) {
		for (j = 0; j < ARRAY_SIZE(isas); j++) {
			struct exit_rec r = rec(KVM_EXIT_ID, 0, 0, 0);
			size_t bad = 0;
			char *got;

			memset((char *)&r + offsetof(struct exit_rec, exit_reason), bytes[i],
			       sizeof(r) - offsetof(struct exit_rec, exit_reason));
			r.isa = isas[j];
			got = print_record(tep, &r, PATCHED_SIZE);
			CHECK(got && *got, "byte 0x%02x isa %u prints something", bytes[i], isas[j]);
			for (k = 0; got && got[k]; k++)
				bad += (unsigned char)got[k] < 0x20 || got[k] == 0x7f;
			CHECK(!bad, "byte 0x%02x isa %u: %zu control bytes in \"%s\"", bytes[i],
			      isas[j], bad, got ? got : "(null)");
			free(got);
		}
	}
	tep_unload_plugins(plugins, tep);
	tep_free(tep);
	free(fmt);
}

/* ---- Guest names through bundles ------------------------------------------ */

/*
 * The guest of these tests: "sh" (pid 42) alone ever owned ROOT_SH and
 * runs main at 0x401000 of /bin/busybox; ROOT_REUSED was "old" (pid 50)
 * from 1000 to 2000 ns, then "new" (pid 60) from 3000 ns on; the kernel
 * has schedule at KSYM.  Bundle times are guest ns.
 */
#define ROOT_SH		0x12346000ULL
#define ROOT_REUSED	0x55556000ULL
#define ROOT_UNKNOWN	0x77778000ULL
#define MAIN_IP		0x401000ULL
#define KSYM		0xffffffff81000000ULL

static char tmpdir[PATH_MAX];

/* Write a bundle with @comm, @sym and @path for "sh" to a file of @tmpdir; the path, malloc'd. */
/* When not 0, the bundles written next have the window [0, window_end]. */
static uint64_t window_end;
/*
 * When set, the bundles written next have a switch log: guest CPU 0 runs
 * sh (42) from guest 100 ns, the kernel thread kworker/0:2 (31) from 4000
 * and its idle task from 6000.
 */
static bool with_switches;

static char *write_bundle(const char *name, const char *comm, const char *sym, const char *path,
			  uint64_t sh_root)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	char file[PATH_MAX + 64];
	int t, o, ok;

	if (!b)
		return NULL;
	snprintf(file, sizeof(file), "%s/%s", tmpdir, name);
	ok = vmctx_bundle_set_identity(b, "guest", "6.1.0", NULL) == 0;
	t = vmctx_bundle_add_task(b, sh_root, 42, 42, comm, 0, VMCTX_TIME_NONE);
	o = vmctx_bundle_add_object(b, path, NULL);
	ok = ok && t >= 0 && o >= 0;
	ok = ok && vmctx_bundle_add_symbol(b, o, MAIN_IP, 0x100, sym) == 0;
	ok = ok && vmctx_bundle_add_map(b, t, 0x400000, 0x500000, 0, 0, o, path) == 0;
	ok = ok && vmctx_bundle_add_task(b, ROOT_REUSED, 50, 50, "old", 1000, 2000) >= 0;
	ok = ok && vmctx_bundle_add_task(b, ROOT_REUSED, 60, 60, "new", 3000, VMCTX_TIME_NONE) >= 0;
	ok = ok && vmctx_bundle_add_ksym(b, KSYM, "schedule", NULL) == 0;
	ok = ok && vmctx_bundle_add_ksym(b, KSYM + 0x1000, "schedule_end", NULL) == 0;
	ok = ok && (!window_end || vmctx_bundle_set_window(b, 0, window_end) == 0);
	ok = ok && (!with_switches ||
		    (!vmctx_bundle_add_switch(b, 0, 100, 42, 42, VMCTX_TASK_USER, comm) &&
		     !vmctx_bundle_add_switch(b, 0, 4000, 31, 31, VMCTX_TASK_KTHREAD,
					      "kworker/0:2") &&
		     !vmctx_bundle_add_switch(b, 0, 6000, 0, 0, VMCTX_TASK_IDLE, "swapper/0")));
	ok = ok && vmctx_bundle_seal(b) == 0 && vmctx_bundle_write_file(b, file) == 0;
	vmctx_bundle_free(b);
	CHECK(ok, "bundle %s written", file);
	return ok ? strdup(file) : NULL;
}

/* Load the plugins with @maps as VMCTX_GUEST_MAPS (NULL: unset) and parse the patched format. */
static struct tep_plugin_list *load_with_env(struct tep_handle *tep, const char *maps,
					     const char *fmt)
{
	struct tep_plugin_list *plugins;

	if (maps)
		setenv("VMCTX_GUEST_MAPS", maps, 1);
	plugins = tep_load_plugins(tep);
	unsetenv("VMCTX_GUEST_MAPS");
	CHECK(parse(tep, fmt) == 0, "patched format parses");
	return plugins;
}

static struct exit_rec guest_rec(uint64_t cr3, uint64_t rip)
{
	struct exit_rec r = rec(KVM_EXIT_ID, 1, EXIT_REASON_EXTERNAL_INTERRUPT, 0);

	r.guest_cr3 = cr3;
	r.guest_rip = rip;
	return r;
}

#define EXT_HEAD "vcpu 0 reason EXTERNAL_INTERRUPT rip "

/*
 * perf script's way (VMCTX_GUEST_MAPS): a root one process ever owned is
 * named at any time, with the function at a user or kernel RIP; a reused
 * root, or a root nobody owned, is "guest=?" and never a wrong name.
 */
static void env_bundle_names_single_owner_roots(void)
{
	char *file = write_bundle("one.vmctx", "sh", "main", "/bin/busybox", ROOT_SH);
	char *fmt = make_format("kvm_exit", KVM_EXIT_ID, NULL, print_patched);
	struct tep_handle *tep = new_tep(false);
	struct tep_plugin_list *plugins = load_with_env(tep, file, fmt);
	struct exit_rec r;

	r = guest_rec(ROOT_SH | 0x801 | 1ULL << 63, MAIN_IP + 0x10);
	expect_at(tep, &r, PATCHED_SIZE, 123456789,
		  EXT_HEAD "0x401010 cr3 0x12346000 (raw 0x8000000012346801) guest=sh[42] "
		  "func=main (busybox) " ZERO_INFO, "single owner named with its function");
	r = guest_rec(ROOT_SH, KSYM + 0x20);
	expect(tep, &r, PATCHED_SIZE,
	       EXT_HEAD "0xffffffff81000020 cr3 0x12346000 (raw 0x12346000) guest=sh[42] "
	       "func=schedule (vmlinux) " ZERO_INFO, "kernel RIP in a named process");
	r = guest_rec(ROOT_SH, 0x900000);
	expect(tep, &r, PATCHED_SIZE,
	       EXT_HEAD "0x900000 cr3 0x12346000 (raw 0x12346000) guest=sh[42] " ZERO_INFO,
	       "unmapped RIP: process only");
	r = guest_rec(ROOT_REUSED, MAIN_IP);
	expect_at(tep, &r, PATCHED_SIZE, 1500,
		  EXT_HEAD "0x401000 cr3 0x55556000 (raw 0x55556000) guest=? " ZERO_INFO,
		  "a root of two owners is not named without an offset");
	r = guest_rec(ROOT_UNKNOWN, KSYM + 0x20);
	expect(tep, &r, PATCHED_SIZE,
	       EXT_HEAD "0xffffffff81000020 cr3 0x77778000 (raw 0x77778000) guest=? "
	       "func=schedule (vmlinux) " ZERO_INFO, "unknown root: kernel function still named");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);

	/* a bundle that cannot be read leaves the line as without bundles */
	tep = new_tep(false);
	plugins = load_with_env(tep, "/nonexistent.vmctx", fmt);
	r = guest_rec(ROOT_SH, MAIN_IP);
	expect(tep, &r, PATCHED_SIZE,
	       EXT_HEAD "0x401000 cr3 0x12346000 (raw 0x12346000) " ZERO_INFO,
	       "unreadable bundle: no guest item");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);
	free(fmt);
	free(file);
}

/*
 * trace-cmd's way (-O vmctx:maps=A:B -O vmctx:offset=NS): with the offset a
 * reused root is named by the owner whose lifetime covers host ts +
 * offset, and nobody between owners; a root two VMs' bundles list is not
 * named, as the record cannot tell which VM it came from.
 */
static void options_pick_owner_by_time_and_bundle(void)
{
	char *one = write_bundle("one.vmctx", "sh", "main", "/bin/busybox", ROOT_SH);
	char *two = write_bundle("two.vmctx", "dd", "copy", "/bin/dd", 0xabce000);
	char *fmt = make_format("kvm_exit", KVM_EXIT_ID, NULL, print_patched);
	struct tep_handle *tep = new_tep(false);
	struct tep_plugin_list *plugins;
	char list[2 * PATH_MAX + 200];
	struct exit_rec r;
	char *win, *sw;

	snprintf(list, sizeof(list), "%s:%s", one, two);
	tep_plugin_add_option("vmctx:maps", list);
	tep_plugin_add_option("vmctx:offset", "-1000000");
	plugins = load_with_env(tep, NULL, fmt);

	r = guest_rec(ROOT_REUSED, 0x10);
	expect_at(tep, &r, PATCHED_SIZE, 1000000 + 1500,
		  EXT_HEAD "0x10 cr3 0x55556000 (raw 0x55556000) guest=? " ZERO_INFO,
		  "both VMs had an owner of the root then: not named");
	r = guest_rec(ROOT_SH, MAIN_IP);
	expect_at(tep, &r, PATCHED_SIZE, 1000000 + 5000,
		  EXT_HEAD "0x401000 cr3 0x12346000 (raw 0x12346000) guest=sh[42] "
		  "func=main (busybox) " ZERO_INFO, "root of the first VM only");
	r = guest_rec(0xabce000, MAIN_IP + 1);
	expect_at(tep, &r, PATCHED_SIZE, 1000000 + 5000,
		  EXT_HEAD "0x401001 cr3 0xabce000 (raw 0xabce000) guest=dd[42] "
		  "func=copy (dd) " ZERO_INFO, "root of the second VM only");
	r = guest_rec(ROOT_UNKNOWN, KSYM);
	expect_at(tep, &r, PATCHED_SIZE, 1000000 + 5000,
		  EXT_HEAD "0xffffffff81000000 cr3 0x77778000 (raw 0x77778000) guest=? " ZERO_INFO,
		  "two VMs: an unowned root's kernel RIP is not guessed");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);

	/* one VM: the offset picks the owner of a reused root by lifetime */
	tep_plugin_add_option("vmctx:maps", one);
	tep = new_tep(false);
	plugins = load_with_env(tep, NULL, fmt);
	r = guest_rec(ROOT_REUSED, 0x10);
	expect_at(tep, &r, PATCHED_SIZE, 1000000 + 1500,
		  EXT_HEAD "0x10 cr3 0x55556000 (raw 0x55556000) guest=old[50] " ZERO_INFO,
		  "guest 1500 ns: the first owner");
	expect_at(tep, &r, PATCHED_SIZE, 1000000 + 2500,
		  EXT_HEAD "0x10 cr3 0x55556000 (raw 0x55556000) guest=? " ZERO_INFO,
		  "guest 2500 ns: between owners, nobody");
	expect_at(tep, &r, PATCHED_SIZE, 1000000 + 9000,
		  EXT_HEAD "0x10 cr3 0x55556000 (raw 0x55556000) guest=new[60] " ZERO_INFO,
		  "guest 9000 ns: the second owner");
	expect_at(tep, &r, PATCHED_SIZE, 10,
		  EXT_HEAD "0x10 cr3 0x55556000 (raw 0x55556000) guest=? " ZERO_INFO,
		  "before the guest's clock began: nobody");
	r = guest_rec(ROOT_SH, MAIN_IP);
	expect_at(tep, &r, PATCHED_SIZE, 10,
		  EXT_HEAD "0x401000 cr3 0x12346000 (raw 0x12346000) guest=? " ZERO_INFO,
		  "before the guest's clock began: not even a single owner");
	expect_at(tep, &r, PATCHED_SIZE, ~0ULL,
		  EXT_HEAD "0x401000 cr3 0x12346000 (raw 0x12346000) guest=sh[42] "
		  "func=main (busybox) " ZERO_INFO, "the largest time stamp, a living owner");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);

	/* a bundle whose window ends at guest 20000 ns names nobody after it */
	window_end = 20000;
	win = write_bundle("win.vmctx", "sh", "main", "/bin/busybox", ROOT_SH);
	window_end = 0;
	tep_plugin_add_option("vmctx:maps", win);
	tep = new_tep(false);
	plugins = load_with_env(tep, NULL, fmt);
	r = guest_rec(ROOT_SH, MAIN_IP);
	expect_at(tep, &r, PATCHED_SIZE, 1000000 + 20000,
		  EXT_HEAD "0x401000 cr3 0x12346000 (raw 0x12346000) guest=sh[42] "
		  "func=main (busybox) " ZERO_INFO, "the window's last instant: the living owner");
	expect_at(tep, &r, PATCHED_SIZE, 1000000 + 20001,
		  EXT_HEAD "0x401000 cr3 0x12346000 (raw 0x12346000) guest=? " ZERO_INFO,
		  "after the bundle's window: nobody, though its owner never exited");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);

	/*
	 * With the guest's switch log, the exit's vCPU 0 names the task that
	 * ran: the kernel thread, then the idle task, on sh's page tables; a
	 * user RIP stays sh's (its address space), before the first switch
	 * the root decides, and an unknown time leaves it to the root too.
	 */
	with_switches = true;
	sw = write_bundle("sw.vmctx", "sh", "main", "/bin/busybox", ROOT_SH);
	with_switches = false;
	tep_plugin_add_option("vmctx:maps", sw);
	tep = new_tep(false);
	plugins = load_with_env(tep, NULL, fmt);
	r = guest_rec(ROOT_SH, KSYM + 0x20);
	expect_at(tep, &r, PATCHED_SIZE, 1000000 + 5000,
		  EXT_HEAD "0xffffffff81000020 cr3 0x12346000 (raw 0x12346000) guest=kworker/0:2[31] "
		  "func=schedule (vmlinux) " ZERO_INFO,
		  "switch log: a kernel thread on sh's page tables is the kernel thread");
	expect_at(tep, &r, PATCHED_SIZE, 1000000 + 7000,
		  EXT_HEAD "0xffffffff81000020 cr3 0x12346000 (raw 0x12346000) guest=swapper/0[0] "
		  "func=schedule (vmlinux) " ZERO_INFO, "switch log: the idle task");
	expect_at(tep, &r, PATCHED_SIZE, 1000000 + 50,
		  EXT_HEAD "0xffffffff81000020 cr3 0x12346000 (raw 0x12346000) guest=sh[42] "
		  "func=schedule (vmlinux) " ZERO_INFO,
		  "switch log: before the CPU's first switch, the root's owner");
	r = guest_rec(ROOT_SH, MAIN_IP);
	expect_at(tep, &r, PATCHED_SIZE, 1000000 + 5000,
		  EXT_HEAD "0x401000 cr3 0x12346000 (raw 0x12346000) guest=sh[42] "
		  "func=main (busybox) " ZERO_INFO,
		  "switch log: a user RIP is the root's process, whatever the log says");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);

	tep_plugin_add_option("vmctx:maps", "");
	tep_plugin_add_option("vmctx:offset", "");
	free(fmt);
	free(one);
	free(two);
	free(win);
	free(sw);
}

/* Debian's plugin_kvm.so (libtraceevent1-plugin), or $VMCTX_PLUGIN_KVM. */
static const char *plugin_kvm_path(void)
{
	const char *env = getenv("VMCTX_PLUGIN_KVM");

	return env && *env ? env : TRACEEVENT_LIBDIR "/traceevent/plugins/plugin_kvm.so";
}

/* Load plugin_kvm.so from a directory of its own, before (@kvm_first) or after vmctx's. */
static struct tep_plugin_list *load_both(struct tep_handle *tep, bool kvm_first, const char *maps)
{
	char dir[PATH_MAX + 16], link[PATH_MAX + 32];
	struct tep_plugin_list *plugins;
	struct trace_seq s;
	const char *kvm, *ours;

	snprintf(dir, sizeof(dir), "%s/kvm", tmpdir);
	snprintf(link, sizeof(link), "%s/plugin_kvm.so", dir);
	if (access(link, F_OK)) {
		mkdir(dir, 0700);
		CHECK(symlink(plugin_kvm_path(), link) == 0, "link to %s", plugin_kvm_path());
	}
	tep_add_plugin_path(tep, dir, kvm_first ? TEP_PLUGIN_FIRST : TEP_PLUGIN_LAST);
	setenv("VMCTX_GUEST_MAPS", maps, 1);
	plugins = tep_load_plugins(tep);
	unsetenv("VMCTX_GUEST_MAPS");

	trace_seq_init(&s);
	tep_print_plugins(&s, "", "\n", plugins);
	trace_seq_terminate(&s);
	kvm = s.buffer ? strstr(s.buffer, "/plugin_kvm.so\n") : NULL;
	ours = s.buffer ? strstr(s.buffer, "/plugin_vmctx.so\n") : NULL;
	/* the list is in reverse load order */
	CHECK(kvm && ours && (kvm_first ? ours < kvm : kvm < ours),
	      "both plugins loaded, plugin_kvm %s:\n%s", kvm_first ? "first" : "last",
	      s.buffer ? s.buffer : "");
	trace_seq_destroy(&s);
	return plugins;
}

/*
 * Both plugins in one handle over the real 6.18 kvm_exit format and the
 * patched one.  The handler registered last prints the line: vmctx's when
 * plugin_kvm came first.  When plugin_kvm came last, its line carries the
 * guest's names anyway, through its tep_plugin_kvm_get_func() hook, which
 * this program (as perf) leaves to plugins.  Nothing crashes on unload.
 */
static void plugin_kvm_coexists_in_either_order(void)
{
	char *file = write_bundle("one.vmctx", "sh", "main", "/bin/busybox", ROOT_SH);
	char *fmt = make_format("kvm_exit", KVM_EXIT_ID, NULL, print_patched);
	const char *srcdir = getenv("top_srcdir") ? getenv("top_srcdir") : TOP_SRCDIR;
	char path[PATH_MAX];
	char *real;
	struct tep_plugin_list *plugins;
	struct tep_handle *tep;
	struct exit_rec r = guest_rec(ROOT_SH, MAIN_IP + 4);
	int order;

	snprintf(path, sizeof(path), "%s/test/data/kvm_exit-linux-6.18.format", srcdir);
	real = read_text(path);
	CHECK(access(plugin_kvm_path(), R_OK) == 0,
	      "%s is installed (Debian: libtraceevent1-plugin)", plugin_kvm_path());
	for (order = 0; order < 2; order++) {
		bool kvm_first = order;

		tep = new_tep(false);
		plugins = load_both(tep, kvm_first, file);
		CHECK(parse(tep, fmt) == 0, "patched format parses");
		if (kvm_first)
			expect(tep, &r, PATCHED_SIZE,
			       EXT_HEAD "0x401004 cr3 0x12346000 (raw 0x12346000) guest=sh[42] "
			       "func=main (busybox) " ZERO_INFO, "plugin_kvm first: vmctx's line");
		else
			expect(tep, &r, PATCHED_SIZE,
			       "reason EXTERNAL_INTERRUPT rip 0x401004 guest=sh[42] func=main (busybox) "
			       "info 0 0", "plugin_kvm last: its line, with the guest's names");
		tep_unload_plugins(plugins, tep);
		tep_free(tep);

		/* the real 6.18 format has no guest_cr3: no guest item, no crash */
		tep = new_tep(false);
		plugins = load_both(tep, kvm_first, file);
		CHECK(real && parse(tep, real) == 0, "6.18 format parses");
		{
			char *got = print_record(tep, &r, PATCHED_SIZE);

			CHECK(got && strstr(got, "rip 0x401004") && !strstr(got, "guest="),
			      "6.18, plugin_kvm %s: \"%s\"", kvm_first ? "first" : "last",
			      got ? got : "(null)");
			free(got);
		}
		tep_unload_plugins(plugins, tep);
		tep_free(tep);
	}
	free(real);
	free(fmt);
	free(file);
}

/* True when @s has a byte below 0x20 or DEL. */
static void remove_tmpdir(void)
{
	static const char *const names[] = { "one.vmctx", "two.vmctx", "evil.vmctx" };
	char file[PATH_MAX + 64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(file, sizeof(file), "%s/%s", tmpdir, names[i]);
		unlink(file);
	}
	snprintf(file, sizeof(file), "%s/kvm/plugin_kvm.so", tmpdir);
	unlink(file);
	snprintf(file, sizeof(file), "%s/kvm", tmpdir);
	rmdir(file);
	rmdir(tmpdir);
}

static bool has_control(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/*
 * A tenant names its process, symbol and file: ESC sequences, BEL, CR, LF
 * and spaces reach the line as "\xHH", one item each, so the line can
 * neither drive the terminal nor fake fields.
 */
static void guest_strings_are_escaped(void)
{
	char *file = write_bundle("evil.vmctx", "\x1b]0;own\x07 x\r\n", "f\x1b[2J g",
				  "/lib/a\x9b\x1b c", ROOT_SH);
	char *fmt = make_format("kvm_exit", KVM_EXIT_ID, NULL, print_patched);
	struct tep_handle *tep = new_tep(false);
	struct tep_plugin_list *plugins = load_with_env(tep, file, fmt);
	struct exit_rec r = guest_rec(ROOT_SH, MAIN_IP);
	char *got;

	expect(tep, &r, PATCHED_SIZE,
	       EXT_HEAD "0x401000 cr3 0x12346000 (raw 0x12346000) "
	       "guest=\\x1b]0;own\\x07\\x20x\\x0d\\x0a[42] func=f\\x1b[2J\\x20g "
	       "(a\\x9b\\x1b\\x20c) " ZERO_INFO, "comm, symbol and file escaped");
	got = print_record(tep, &r, PATCHED_SIZE);
	CHECK(got && !has_control(got), "no control byte in \"%s\"", got ? got : "(null)");
	free(got);
	tep_unload_plugins(plugins, tep);
	tep_free(tep);
	free(fmt);
	free(file);
}

/* Unloading gives the event back to its print format: loader and unloader agree. */
static void unloader_restores_print_format(void)
{
	struct tep_plugin_list *plugins;
	struct tep_handle *tep = new_tep(false);
	char *fmt = make_format("kvm_exit", KVM_EXIT_ID, NULL, print_patched);
	struct tep_event *ev;
	struct exit_rec r;

	plugins = tep_load_plugins(tep);
	parse(tep, fmt);
	tep_unload_plugins(plugins, tep);
	ev = tep_find_event_by_name(tep, "kvm", "kvm_exit");
	CHECK(ev && !ev->handler, "no handler is left on kvm_exit after unloading");

	r = rec(KVM_EXIT_ID, 1, EXIT_REASON_HLT, 3);
	r.guest_rip = 0xffffffff81a3c5e2;
	r.guest_cr3 = 0x8000000012346801;
	expect(tep, &r, PATCHED_SIZE,
	       "vcpu 3 reason HLT rip 0xffffffff81a3c5e2 " ZERO_INFO " guest_cr3 0x8000000012346801",
	       "the kernel's print format after unloading");
	tep_free(tep);
	free(fmt);
}

/*
 * With the system's plugins (Debian's plugin_kvm.so also registers
 * kvm_exit), the handler registered last wins, and libtraceevent loads
 * $TRACEEVENT_PLUGIN_DIR after the system directory: vmctx's line is printed.
 */
static void plugin_dir_wins_over_system_plugin_kvm(void)
{
	struct tep_plugin_list *plugins;
	struct tep_handle *tep = new_tep(true);
	char *fmt = make_format("kvm_exit", KVM_EXIT_ID, NULL, print_patched);
	struct trace_seq s;
	struct exit_rec r;
	bool have_kvm;

	plugins = tep_load_plugins(tep);
	trace_seq_init(&s);
	tep_print_plugins(&s, "", "\n", plugins);
	trace_seq_terminate(&s);
	have_kvm = s.buffer && strstr(s.buffer, "/plugin_kvm.so\n");
	trace_seq_destroy(&s);
	if (!have_kvm)
		fprintf(stderr, "test-plugin: no system plugin_kvm.so loaded, precedence not checked\n");
	parse(tep, fmt);
	r = rec(KVM_EXIT_ID, 1, EXIT_REASON_HLT, 3);
	r.guest_rip = 0xffffffff81a3c5e2;
	r.guest_cr3 = 0x8000000012346801;
	expect(tep, &r, PATCHED_SIZE,
	       "vcpu 3 reason HLT rip 0xffffffff81a3c5e2 cr3 0x12346000 (raw 0x8000000012346801) "
	       ZERO_INFO, "vmctx wins over the system plugins");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);
	free(fmt);
}

int main(void)
{
	const char *builddir = getenv("top_builddir") ? getenv("top_builddir") : TOP_BUILDDIR;
	char dir[PATH_MAX];

	/* only the build tree's plugin: no ~/.local/lib/traceevent/plugins */
	snprintf(dir, sizeof(dir), "%s/perf-plugin/%s", builddir, LT_OBJDIR);
	if (!realpath(dir, plugin_dir)) {
		fprintf(stderr, "test-plugin: %s: plugin not built\n", dir);
		return 1;
	}
	setenv("TRACEEVENT_PLUGIN_DIR", plugin_dir, 1);
	setenv("HOME", "/nonexistent", 1);

	patched_format_prints_reason_rip_root_and_info();
	names_are_libvmctx_names();
	stock_format_omits_cr3();
	real_6_18_format_has_no_cr3();
	nested_vmexit_is_decoded_too();
	big_endian_file_reads_the_same();
	malformed_records_print_what_they_can();
	records_of_control_bytes_print_no_control_bytes();
	unloader_restores_print_format();
	plugin_dir_wins_over_system_plugin_kvm();

	snprintf(tmpdir, sizeof(tmpdir), "%s/test-plugin.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("test-plugin: mkdtemp");
		return 1;
	}
	env_bundle_names_single_owner_roots();
	options_pick_owner_by_time_and_bundle();
	guest_strings_are_escaped();
	plugin_kvm_coexists_in_either_order();
	remove_tmpdir();
	return check_result("test-plugin");
}
