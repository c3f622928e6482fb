// SPDX-License-Identifier: LGPL-2.1-only
/*
 * libFuzzer harness for plugin_vmctx's record handler.  The plugin's source
 * is built into the harness, and its loader registers the handler on four
 * libtraceevent handles: the vmctx-patched kvm_exit format and Linux 6.18's
 * real one (test/data), each without bundles and with a bundle whose
 * comm, symbol and path strings are control bytes and spaces (and, for
 * one, a guest clock offset).  Any record bytes must print one bounded
 * line without a control byte, a crash, a sanitizer report or a leak; so
 * must the plugin's answer to plugin_kvm's tep_plugin_kvm_get_func() hook.
 *
 * Input: byte 0 picks the handle (bits 0-1) and whether the record's
 * common_type is forced to kvm_exit (bit 2); bytes 1-8 are the record's
 * host time stamp; the rest, up to 512 bytes, is the record.
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The plugin's loader and its plugin_kvm hook, built into this harness. */
int TEP_PLUGIN_LOADER(struct tep_handle *tep);
const char *tep_plugin_kvm_get_func(struct tep_event *event, struct tep_record *record,
				    unsigned long long *val);

#define KVM_EXIT_ID	103
#define RECORD_MAX	512
/* The longest line the handler may print: its fields and four escaped guest strings. */
#define LINE_MAX_LEN	2048

/* kvm_exit with patch 0007's guest_cr3, as the kernel lays it out. */
static const char patched_format[] =
	"name: kvm_exit\nID: 103\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long guest_rip;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:u32 isa;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:u64 info1;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 info2;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\tfield:u32 intr_info;\toffset:48;\tsize:4;\tsigned:0;\n"
	"\tfield:u32 error_code;\toffset:52;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int vcpu_id;\toffset:56;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long guest_cr3;\toffset:64;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"vcpu %u rip 0x%lx guest_cr3 0x%lx\", REC->vcpu_id, REC->guest_rip, "
	"REC->guest_cr3\n";

static struct tep_handle *teps[4];

/* Roots and addresses the seeds use (test/fuzz/corpus-plugin). */
static char *write_bundle(void)
{
	static char path[] = "/tmp/fuzz-plugin.XXXXXX";
	struct vmctx_bundle *b = vmctx_bundle_new();
	int fd = mkstemp(path);
	int t, o, ok;

	if (!b || fd < 0)
		return NULL;
	close(fd);
	t = vmctx_bundle_add_task(b, 0x1000, 1, 1, "\x1b]0;t\x07 \r\n", 0, VMCTX_TIME_NONE);
	o = vmctx_bundle_add_object(b, "/bin/\x1b[2J a", NULL);
	ok = t >= 0 && o >= 0;
	ok = ok && vmctx_bundle_add_symbol(b, o, 0x400000, 0x100, "s\x07\x7f y") == 0;
	ok = ok && vmctx_bundle_add_map(b, t, 0x400000, 0x500000, 0, 0, o, "/bin/\x1b[2J a") == 0;
	ok = ok && vmctx_bundle_add_task(b, 0x2000, 2, 2, "a\xc2\x9b", 100, 200) >= 0;
	ok = ok && vmctx_bundle_add_task(b, 0x2000, 3, 3, "b\r", 300, VMCTX_TIME_NONE) >= 0;
	ok = ok && vmctx_bundle_add_ksym(b, 0xffffffff81000000ULL, "k\x1b", NULL) == 0;
	ok = ok && vmctx_bundle_seal(b) == 0 && vmctx_bundle_write_file(b, path) == 0;
	vmctx_bundle_free(b);
	return ok ? path : NULL;
}

static char *read_format(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static struct tep_handle *new_tep(const char *format, const char *maps, const char *offset)
{
	struct tep_handle *tep = tep_alloc();

	if (!tep)
		abort();
	tep_set_long_size(tep, 8);
	tep_set_page_size(tep, 4096);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	if (maps)
		setenv("VMCTX_GUEST_MAPS", maps, 1);
	if (offset)
		setenv("VMCTX_GUEST_OFFSET", offset, 1);
	TEP_PLUGIN_LOADER(tep);
	unsetenv("VMCTX_GUEST_MAPS");
	unsetenv("VMCTX_GUEST_OFFSET");
	if (tep_parse_event(tep, format, strlen(format), "kvm"))
		abort();
	return tep;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *real = read_format(TOP_SRCDIR "/test/data/kvm_exit-linux-6.18.format");
	char *maps = write_bundle();

	(void)argc;
	(void)argv;
	if (!real || !maps)
		abort();
	teps[0] = new_tep(patched_format, NULL, NULL);
	teps[1] = new_tep(patched_format, maps, NULL);
	teps[2] = new_tep(patched_format, maps, "-1000");
	teps[3] = new_tep(real, maps, NULL);
	/* the plugin holds the bundle in memory now */
	unlink(maps);
	return 0;
}

/* plugin_kvm's question, "the function at this RIP?", for a record. */
static void check_hook(struct tep_handle *tep, struct tep_record *rec)
{
	struct tep_event *event = tep_find_event(tep, KVM_EXIT_ID);
	unsigned long long rip = 0;
	const char *func;
	size_t i;

	if (!event)
		abort();
	if (rec->size >= 24)
		memcpy(&rip, (const char *)rec->data + 16, sizeof(rip));
	func = tep_plugin_kvm_get_func(event, rec, &rip);
	if (!func)
		return;
	for (i = 0; func[i]; i++)
		if (i >= LINE_MAX_LEN || (unsigned char)func[i] < 0x20 || func[i] == 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tep_record rec = { .cpu = 0 };
	struct tep_handle *tep;
	struct trace_seq s;
	uint8_t *copy;
	bool forced, is_exit;
	size_t i;

	if (size < 9)
		return 0;
	tep = teps[data[0] & 3];
	forced = data[0] & 4;
	memcpy(&rec.ts, data + 1, sizeof(rec.ts));
	size -= 9;
	if (size > RECORD_MAX)
		size = RECORD_MAX;
	/* exactly the record's bytes, so that ASan sees a read past them */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 9, size);
	if (forced && size >= 2) {
		copy[0] = KVM_EXIT_ID & 0xff;
		copy[1] = KVM_EXIT_ID >> 8;
	}
	rec.data = copy;
	rec.size = (int)size;
	is_exit = size >= 2 && copy[0] == (KVM_EXIT_ID & 0xff) && copy[1] == KVM_EXIT_ID >> 8;

	trace_seq_init(&s);
	tep_print_event(tep, &s, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	/* the handler's own line: bounded, and nothing a terminal obeys */
	if (is_exit) {
		if (s.len >= LINE_MAX_LEN)
			abort();
		for (i = 0; i < s.len; i++)
			if ((unsigned char)s.buffer[i] < 0x20 || s.buffer[i] == 0x7f)
				abort();
	}
	trace_seq_destroy(&s);
	if (is_exit)
		check_hook(tep, &rec);
	free(copy);
	return 0;
}
