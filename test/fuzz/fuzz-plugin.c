// SPDX-License-Identifier: LGPL-2.1-only
/*
 * libFuzzer harness for plugin_vmctx's record handler: any bytes as a
 * kvm_exit record, printed through libtraceevent with the plugin loaded,
 * as trace-cmd report and perf script print a file's records.  The plugin
 * (perf-plugin/plugin_vmctx.c) is compiled into the harness, so its code is
 * instrumented, and a small guest bundle is given to it, so that the guest
 * naming path runs too.
 *
 * The first input byte chooses the format (the vmctx-patched kvm_exit with
 * guest_cr3, or one whose fields overlap and run past the record, as a
 * crafted trace.dat may declare) and whether the bundle's roots are planted
 * in the record; the rest is the record, of any length.  Every record must
 * print without a crash or a sanitizer report, with at most MAX_LINE bytes,
 * and with no control byte: whatever a guest named its processes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "vmctx.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int tep_plugin_loader(struct tep_handle *tep);

#define KVM_EXIT_ID	103
#define MAX_LINE	4096
#define ROOT		0x12346000ULL

static const char fields_patched[] =
	"\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long guest_rip;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:u32 isa;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:u64 info1;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 info2;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\tfield:u32 intr_info;\toffset:48;\tsize:4;\tsigned:0;\n"
	"\tfield:u32 error_code;\toffset:52;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int vcpu_id;\toffset:56;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long guest_cr3;\toffset:64;\tsize:8;\tsigned:0;\n";

/* Fields that overlap, reach past any short record, and have odd sizes. */
static const char fields_crafted[] =
	"\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long guest_rip;\toffset:10;\tsize:8;\tsigned:0;\n"
	"\tfield:u32 isa;\toffset:9;\tsize:4;\tsigned:0;\n"
	"\tfield:u64 info1;\toffset:4000;\tsize:8;\tsigned:0;\n"
	"\tfield:u16 info2;\toffset:12;\tsize:3;\tsigned:0;\n"
	"\tfield:unsigned int vcpu_id;\toffset:8;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned long guest_cr3;\toffset:16;\tsize:8;\tsigned:0;\n";

static struct tep_handle *teps[2];

static struct tep_handle *make_tep(const char *fields)
{
	static const char head[] =
		"name: kvm_exit\nID: 103\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";
	static const char tail[] = "\nprint fmt: \"vcpu %u\", REC->vcpu_id\n";
	struct tep_handle *tep = tep_alloc();
	char fmt[4096];

	if (!tep)
		abort();
	tep_set_long_size(tep, 8);
	tep_set_page_size(tep, 4096);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	snprintf(fmt, sizeof(fmt), "%s%s%s", head, fields, tail);
	if (tep_parse_event(tep, fmt, strlen(fmt), "kvm"))
		abort();
	tep_plugin_loader(tep);
	return tep;
}

/*
 * A bundle whose names are hostile: the process's comm and symbol hold
 * terminal control sequences, and a second root was owned twice.
 */
static void write_bundle(const char *path)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int task, obj;

	if (!b)
		abort();
	task = vmctx_bundle_add_task(b, ROOT, 7, 7, "a\x1b]0;t\x07\r\n", 0, VMCTX_TIME_NONE);
	obj = vmctx_bundle_add_object(b, "/bin/\x1b[2Jx", NULL);
	if (task < 0 || obj < 0 ||
	    vmctx_bundle_add_symbol(b, obj, 0x401000, 0x1000, "f\x1b[31m\x7f") < 0 ||
	    vmctx_bundle_add_map(b, task, 0x400000, 0x403000, 0, 0, obj, "/bin/\x1b[2Jx") < 0 ||
	    vmctx_bundle_add_task(b, ROOT + 0x1000, 8, 8, "one", 0, 10) < 0 ||
	    vmctx_bundle_add_task(b, ROOT + 0x1000, 9, 9, "two", 20, VMCTX_TIME_NONE) < 0 ||
	    vmctx_bundle_add_ksym(b, 0xffffffff81000000ULL, "k\x1b", NULL) < 0 ||
	    vmctx_bundle_seal(b) || vmctx_bundle_write_file(b, path))
		abort();
	vmctx_bundle_free(b);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[] = "/tmp/fuzz-plugin.XXXXXX";
	int fd = mkstemp(path);

	(void)argc;
	(void)argv;
	if (fd < 0)
		abort();
	close(fd);
	write_bundle(path);
	setenv("VMCTX_GUEST_MAPS", path, 1);
	teps[0] = make_tep(fields_patched);
	teps[1] = make_tep(fields_crafted);
	/* the plugin reads the bundle at its first record, then keeps it */
	unlink(path);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tep_record rec = { .cpu = 0 };
	struct trace_seq s;
	uint8_t *buf;
	size_t i;

	/* libtraceevent reads the common fields without a size check */
	if (size < 1 + 8)
		return 0;
	buf = malloc(size - 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	rec.data = buf;
	rec.size = (int)(size - 1);
	/* the record is a kvm_exit, so that the plugin's handler gets it */
	buf[0] = KVM_EXIT_ID & 0xff;
	buf[1] = KVM_EXIT_ID >> 8;
	/* plant a root the bundle knows, so that names get printed */
	if ((data[0] & 2) && size - 1 >= 72)
		memcpy(buf + 64, &(uint64_t){ ROOT | (data[0] >> 2) }, 8);

	trace_seq_init(&s);
	tep_print_event(teps[data[0] & 1], &s, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	if (s.len > MAX_LINE)
		abort();
	for (i = 0; i < s.len; i++)
		if ((unsigned char)s.buffer[i] < 0x20 || (unsigned char)s.buffer[i] == 0x7f)
			abort();
	trace_seq_destroy(&s);
	free(buf);
	return 0;
}
