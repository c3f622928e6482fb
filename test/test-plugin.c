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
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <asm/kvm.h>
#include <asm/svm.h>
#include <asm/vmx.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "vmctx.h"
#include "tap.h"

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

/* A record of exactly @size bytes, so that ASan sees any read past it. */
static char *print_record(struct tep_handle *tep, const void *data, size_t size)
{
	struct tep_record rec = { .cpu = 0, .size = (int)size };
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

static void expect(struct tep_handle *tep, const struct exit_rec *r, size_t size,
		   const char *want, const char *what)
{
	char *got = print_record(tep, r, size);

	CHECK(got && !strcmp(got, want), "%s:\n  got  \"%s\"\n  want \"%s\"", what,
	      got ? got : "(null)", want);
	free(got);
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

/*
 * A guest's bundle names the process that owns guest_cr3 and the function at
 * the guest RIP: process 100 (whose comm holds an escape sequence) owns root
 * 0x12346000 and maps prog (prog_main at 0x401000, 0x100 bytes); root
 * 0x5000000 was owned by two processes in turn; the kernel has do_idle.
 */
#define ROOT_ONE	0x12346000ULL
#define ROOT_REUSED	0x5000000ULL
#define PROG_MAIN	0x401000ULL
#define DO_IDLE		0xffffffff81a3c500ULL

static void write_guest_bundle(const char *path)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int task, obj;

	CHECK(b != NULL, "bundle allocated");
	if (!b)
		return;
	vmctx_bundle_set_identity(b, "guest\x1b", "6.1.0", "boot");
	task = vmctx_bundle_add_task(b, ROOT_ONE, 100, 100, "pr\x1b]0;x\x07og", 0,
				     VMCTX_TIME_NONE);
	obj = vmctx_bundle_add_object(b, "/usr/bin/prog", NULL);
	CHECK(task >= 0 && obj >= 0, "task and object added");
	CHECK(vmctx_bundle_add_symbol(b, obj, PROG_MAIN, 0x100, "prog_main") >= 0, "symbol added");
	CHECK(vmctx_bundle_add_symbol(b, obj, PROG_MAIN + 0x100, 0x10, "evil\r\n\x1b[2J") >= 0,
	      "hostile symbol added");
	CHECK(vmctx_bundle_add_map(b, task, 0x400000, 0x402000, 0, 0, obj, "/usr/bin/prog") >= 0,
	      "map added");
	CHECK(vmctx_bundle_add_symbol(b, obj, PROG_MAIN + 0x200, 0x10, "x func=fake") >= 0,
	      "symbol with a space added");
	CHECK(vmctx_bundle_add_task(b, ROOT_REUSED, 200, 200, "first", 0, 1000) >= 0 &&
	      vmctx_bundle_add_task(b, ROOT_REUSED, 201, 201, "second", 2000, VMCTX_TIME_NONE) >= 0,
	      "reused root added");
	CHECK(vmctx_bundle_add_ksym(b, DO_IDLE, "do_idle", NULL) >= 0, "kernel symbol added");
	CHECK(vmctx_bundle_seal(b) == 0 && vmctx_bundle_write_file(b, path) == 0, "bundle written");
	vmctx_bundle_free(b);
}

/* A patched kvm_exit (HLT, vCPU 3) at guest @rip under @cr3, printed by @tep. */
static void expect_guest(struct tep_handle *tep, uint64_t cr3, uint64_t rip, const char *tail,
			 const char *what)
{
	struct exit_rec r = rec(KVM_EXIT_ID, 1, EXIT_REASON_HLT, 3);
	char want[512];

	r.guest_rip = rip;
	r.guest_cr3 = cr3;
	snprintf(want, sizeof(want),
		 "vcpu 3 reason HLT rip 0x%llx cr3 0x%llx (raw 0x%llx)%s%s " ZERO_INFO,
		 (unsigned long long)rip, (unsigned long long)vmctx_cr3_normalize(cr3, 0),
		 (unsigned long long)cr3, *tail ? " " : "", tail);
	expect(tep, &r, PATCHED_SIZE, want, what);
}

/* Load the plugins into a new handle and parse the patched format. */
static struct tep_handle *guest_tep(struct tep_plugin_list **plugins, char *fmt)
{
	struct tep_handle *tep = new_tep(false);

	*plugins = tep_load_plugins(tep);
	parse(tep, fmt);
	return tep;
}

static void bundle_names_guest_process_and_function(const char *bundle)
{
	char *fmt = make_format("kvm_exit", KVM_EXIT_ID, NULL, print_patched);
	struct tep_plugin_list *plugins;
	struct tep_handle *tep;

	/* perf script: the environment variable */
	setenv("VMCTX_GUEST_MAPS", bundle, 1);
	tep = guest_tep(&plugins, fmt);
	expect_guest(tep, 0x8000000012346801ULL, PROG_MAIN + 0x10,
		     "guest=pr\\x1b]0;x\\x07og[100] func=prog_main",
		     "env: the root's process, escaped, and its function (PCID bits dropped)");
	expect_guest(tep, ROOT_ONE, DO_IDLE + 0xe2, "guest=pr\\x1b]0;x\\x07og[100] func=do_idle",
		     "env: a kernel RIP under the process's root: a kernel function");
	expect_guest(tep, ROOT_ONE, PROG_MAIN + 0x104,
		     "guest=pr\\x1b]0;x\\x07og[100] func=evil\\x0d\\x0a\\x1b[2J",
		     "env: a hostile symbol name is escaped");
	expect_guest(tep, ROOT_ONE, PROG_MAIN + 0x208,
		     "guest=pr\\x1b]0;x\\x07og[100] func=x\\x20func=fake",
		     "env: a space in a guest name cannot add an item to the line");
	expect_guest(tep, ROOT_ONE, 0x401800, "guest=pr\\x1b]0;x\\x07og[100] func=?",
		     "env: a mapped address no symbol covers");
	expect_guest(tep, ROOT_REUSED, PROG_MAIN, "guest=? func=?",
		     "env: a root two processes owned in turn names neither");
	expect_guest(tep, ROOT_REUSED, DO_IDLE, "guest=? func=do_idle",
		     "env: ... but a kernel RIP still names its function");
	expect_guest(tep, 0x7777000, PROG_MAIN, "guest=? func=?", "env: a root nobody owned");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);

	/* trace-cmd report -O vmctx:maps=FILE; the option wins over the variable */
	setenv("VMCTX_GUEST_MAPS", "/nonexistent/guest.vmctx", 1);
	CHECK(tep_plugin_add_option("vmctx:maps", bundle) == 0, "plugin option added");
	tep = guest_tep(&plugins, fmt);
	expect_guest(tep, ROOT_ONE, PROG_MAIN, "guest=pr\\x1b]0;x\\x07og[100] func=prog_main",
		     "option vmctx:maps names the process");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);
	CHECK(tep_plugin_add_option("vmctx:maps", "") == 0, "plugin option cleared");

	/* a bundle that cannot be read: the exits still print, without names */
	tep = guest_tep(&plugins, fmt);
	expect_guest(tep, ROOT_ONE, PROG_MAIN, "", "an unreadable bundle: no guest items");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);
	unsetenv("VMCTX_GUEST_MAPS");

	/* and without any: the line of patched_format_prints_... */
	tep = guest_tep(&plugins, fmt);
	expect_guest(tep, ROOT_ONE, PROG_MAIN, "", "no bundle: no guest items");
	tep_unload_plugins(plugins, tep);
	tep_free(tep);
	free(fmt);
}

/*
 * Debian's plugin_kvm.so registers kvm_exit too.  Loaded into one handle in
 * either order with vmctx, the handler registered last prints each record,
 * whole; unloading both in the opposite order restores the format's line.
 */
static void coexists_with_plugin_kvm_either_order(void)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu/traceevent/plugins", "/usr/lib64/traceevent/plugins",
		"/usr/lib/traceevent/plugins",
	};
	char *fmt = make_format("kvm_exit", KVM_EXIT_ID, NULL, print_patched);
	char kvm_so[PATH_MAX], vmctx_so[PATH_MAX];
	int order;
	size_t i;

	kvm_so[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(dirs) && !kvm_so[0]; i++) {
		snprintf(kvm_so, sizeof(kvm_so), "%s/plugin_kvm.so", dirs[i]);
		if (access(kvm_so, R_OK))
			kvm_so[0] = '\0';
	}
	if (!kvm_so[0]) {
		fprintf(stderr, "test-plugin: no plugin_kvm.so (libtraceevent1-plugin): coexistence not checked\n");
		free(fmt);
		return;
	}
	snprintf(vmctx_so, sizeof(vmctx_so), "%s/plugin_vmctx.so", plugin_dir);
	for (order = 0; order < 2; order++) {
		const char *first = order ? kvm_so : vmctx_so, *second = order ? vmctx_so : kvm_so;
		void *h1 = dlopen(first, RTLD_NOW | RTLD_GLOBAL);
		void *h2 = dlopen(second, RTLD_NOW | RTLD_GLOBAL);
		int (*load1)(struct tep_handle *) = h1 ? dlsym(h1, "tep_plugin_loader") : NULL;
		int (*load2)(struct tep_handle *) = h2 ? dlsym(h2, "tep_plugin_loader") : NULL;
		int (*unload1)(struct tep_handle *) = h1 ? dlsym(h1, "tep_plugin_unloader") : NULL;
		int (*unload2)(struct tep_handle *) = h2 ? dlsym(h2, "tep_plugin_unloader") : NULL;
		struct tep_handle *tep = new_tep(false);
		struct exit_rec r = rec(KVM_EXIT_ID, 1, EXIT_REASON_HLT, 3);
		char *out;

		CHECK(load1 && load2 && unload1 && unload2, "order %d: both plugins load", order);
		if (!load1 || !load2 || !unload1 || !unload2)
			break;
		parse(tep, fmt);
		load1(tep);
		load2(tep);
		r.guest_rip = 0xffffffff81a3c5e2;
		r.guest_cr3 = 0x8000000012346801;
		out = print_record(tep, &r, PATCHED_SIZE);
		if (order) {
			CHECK(out && !strcmp(out, "vcpu 3 reason HLT rip 0xffffffff81a3c5e2 cr3 0x12346000 (raw 0x8000000012346801) " ZERO_INFO),
			      "plugin_kvm then vmctx: vmctx's line, got '%s'", out ? out : "(null)");
		} else {
			/* plugin_kvm's own line: the reason by name and the guest RIP */
			CHECK(out && strstr(out, "reason HLT") && strstr(out, "rip 0xffffffff81a3c5e2") &&
			      !strstr(out, "cr3 0x12346000"),
			      "vmctx then plugin_kvm: plugin_kvm's line, got '%s'", out ? out : "(null)");
		}
		free(out);
		unload2(tep);
		unload1(tep);
		out = print_record(tep, &r, PATCHED_SIZE);
		CHECK(out && strstr(out, "guest_cr3 0x8000000012346801"),
		      "order %d: unloaded, the format's own line, got '%s'", order,
		      out ? out : "(null)");
		free(out);
		tep_free(tep);
		dlclose(h2);
		dlclose(h1);
	}
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
	coexists_with_plugin_kvm_either_order();
	{
		char dir[] = "/tmp/test-plugin.XXXXXX", bundle[PATH_MAX];

		if (!mkdtemp(dir)) {
			CHECK(0, "temporary directory");
		} else {
			snprintf(bundle, sizeof(bundle), "%s/guest.vmctx", dir);
			write_guest_bundle(bundle);
			bundle_names_guest_process_and_function(bundle);
			unlink(bundle);
			rmdir(dir);
		}
	}
	return tap_result("test-plugin");
}
