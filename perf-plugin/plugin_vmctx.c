// SPDX-License-Identifier: LGPL-2.1-only
/*
 * plugin_vmctx: a libtraceevent plugin that prints the guest context of a
 * KVM exit (kvm:kvm_exit, kvm:kvm_nested_vmexit) for trace-cmd report and
 * perf script: vCPU, exit reason named for the vCPU's ISA, guest RIP, the
 * guest CR3 as a page-table root (the vmctx patch series adds guest_cr3;
 * stock kernels have none, and it is then left out) and the exit info.
 *
 * Names and CR3 normalisation come from libvmctx, so the plugin says what
 * vmctx's reports say.  Records come from files, so every field is looked
 * up by name and bounds-checked against the record: a missing field is
 * left out, a record too short for a field ends the line with
 * "[truncated]".  The handler always returns 0, so libtraceevent never
 * appends its own print-format output to a partial line.
 *
 * Given a guest's bundle (the plugin option vmctx:maps=FILE, as in
 * 'trace-cmd report -O vmctx:maps=FILE', or $VMCTX_GUEST_MAPS for perf
 * script, which has no plugin options), the line also names the guest
 * process that owns guest_cr3 ("guest=comm[pid]") and the function at the
 * guest RIP ("func=name").  A record's time is the host's trace clock, not
 * the guest's, so a root that several processes owned in turn names none
 * of them ("guest=?"): the plugin never guesses.  Guest names go through
 * vmctx_escape(), and their spaces become "\x20", so that a guest can
 * neither drive the terminal nor add items to the line.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <asm/vmx.h>	/* VMX_EXIT_REASON_FLAGS, as the kernel prints them */

#include <event-parse.h>
#include <trace-seq.h>

#include "vmctx.h"

/* kvm_exit's "isa" field (KVM_ISA_VMX, KVM_ISA_SVM in arch/x86/kvm/trace.h). */
#define KVM_ISA_VMX	1
#define KVM_ISA_SVM	2

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Events with the kvm_exit layout (TRACE_EVENT_KVM_EXIT in the kernel). */
static const char *const exit_events[] = { "kvm_exit", "kvm_nested_vmexit" };

struct vmx_flag {
	uint32_t bit;
	const char *name;
};

static const struct vmx_flag vmx_flags[] = { VMX_EXIT_REASON_FLAGS };

/* The bundle that names guest processes: plugin option, or this variable. */
#define MAPS_ENV	"VMCTX_GUEST_MAPS"

int TEP_PLUGIN_LOADER(struct tep_handle *tep);
int TEP_PLUGIN_UNLOADER(struct tep_handle *tep);
extern struct tep_plugin_option TEP_PLUGIN_OPTIONS[];

/* A string option: libtraceevent replaces the value when it is given. */
struct tep_plugin_option TEP_PLUGIN_OPTIONS[] = {
	{
		.name = "maps",
		.plugin_alias = "vmctx",
		.description = "vmctx bundle (vmctx-bundle(5)) naming guest processes and functions",
		.value = "",
	},
	{
		.name = NULL,
	},
};

/*
 * The bundle, read at the first exit record (libtraceevent may set the
 * option after loading the plugin) and shared by every handle that loaded
 * the plugin; freed with the last of them.
 */
static struct {
	struct vmctx_bundle *bundle;
	bool tried;
	int users;
} maps;

static const char *maps_path(void)
{
	const char *path = TEP_PLUGIN_OPTIONS[0].value;

	if (!path || !*path)
		path = getenv(MAPS_ENV);
	return path && *path ? path : NULL;
}

static struct vmctx_bundle *get_bundle(void)
{
	const char *path;
	int err;

	if (maps.tried)
		return maps.bundle;
	maps.tried = true;
	path = maps_path();
	if (!path)
		return NULL;
	err = vmctx_bundle_read_file(path, NULL, &maps.bundle);
	if (err) {
		char buf[256];

		/* one line, once: the exits still print, without guest names */
		fprintf(stderr, "plugin_vmctx: %s: %s; guest processes are not named\n",
			vmctx_escape(buf, sizeof(buf), path) < 0 ? "?" : buf, vmctx_strerror(err));
		maps.bundle = NULL;
	}
	return maps.bundle;
}

/* One record being printed: items are separated by one space. */
struct line {
	struct trace_seq *s;
	struct tep_event *event;
	struct tep_record *record;
	bool started;
	bool truncated;
};

/*
 * The sequence to print the next item to.  Plain trace_seq_printf() rather
 * than a variadic wrapper: perf built with its own libtraceevent exports
 * only the few trace_seq_* and tep_* functions its plugins use.
 */
static struct trace_seq *item(struct line *l)
{
	if (l->started)
		trace_seq_putc(l->s, ' ');
	l->started = true;
	return l->s;
}

/*
 * Read the number field @name.  False when the format has no such field, or
 * not as a 1, 2, 4 or 8-byte number, or when the record ends before it
 * (which also marks the line truncated).  libtraceevent reads fields
 * without looking at the record's size; this does.
 */
static bool get(struct line *l, const char *name, unsigned long long *val)
{
	struct tep_format_field *field = tep_find_field(l->event, name);
	const struct tep_record *r = l->record;

	if (!field || field->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC))
		return false;
	if (field->size != 1 && field->size != 2 && field->size != 4 && field->size != 8)
		return false;
	if (!r->data || r->size < 0 || field->offset < 0 ||
	    field->offset > r->size || field->size > r->size - field->offset) {
		l->truncated = true;
		return false;
	}
	return tep_read_number_field(field, r->data, val) == 0;
}

/* "reason HLT", "reason INVALID_STATE FAILED_VMENTRY", "reason 0x45" */
static void put_reason(struct line *l)
{
	enum vmctx_isa visa = VMCTX_ISA_NONE;
	unsigned long long reason, isa, rest;
	const char *name;
	size_t i;

	if (!get(l, "exit_reason", &reason))
		return;
	if (!get(l, "isa", &isa))
		isa = 0;
	if (isa == KVM_ISA_VMX)
		visa = VMCTX_ISA_VMX;
	else if (isa == KVM_ISA_SVM)
		visa = VMCTX_ISA_SVM;

	name = vmctx_exit_reason_name(visa, reason);
	if (name)
		trace_seq_printf(item(l), "reason %s", name);
	else
		trace_seq_printf(item(l), "reason 0x%llx",
				 visa == VMCTX_ISA_VMX ? reason & 0xffff : reason);
	if (visa == VMCTX_ISA_NONE && isa)
		trace_seq_printf(item(l), "(isa %llu)", isa);
	if (visa != VMCTX_ISA_VMX)
		return;

	/* VMX keeps flags above the basic reason; print them as the kernel does. */
	rest = reason & ~0xffffULL;
	for (i = 0; i < ARRAY_SIZE(vmx_flags); i++) {
		if (rest & vmx_flags[i].bit) {
			trace_seq_puts(item(l), vmx_flags[i].name);
			rest &= ~(unsigned long long)vmx_flags[i].bit;
		}
	}
	if (rest)
		trace_seq_printf(item(l), "0x%llx", rest);
}

/*
 * A guest name escaped by vmctx_escape(), and its spaces as "\x20", so that
 * it can neither drive a terminal nor add items to the line ("x func=y");
 * cut short at a whole escape when it does not fit, "?" when nothing does.
 */
static const char *esc(const char *name, char *buf, size_t size)
{
	char tmp[256];
	size_t i, n = 0;

	if (vmctx_escape(tmp, sizeof(tmp), name) < 0 || !size)
		return "?";
	for (i = 0; tmp[i]; i++) {
		bool space = tmp[i] == ' ';

		if (n + (space ? 4 : 1) >= size)
			break;
		if (space) {
			memcpy(buf + n, "\\x20", 4);
			n += 4;
		} else {
			buf[n++] = tmp[i];
		}
	}
	buf[n] = '\0';
	return buf;
}

/*
 * "guest=comm[pid] func=name": the process that owns @cr3 in the bundle,
 * and the function at the guest RIP, in its mappings or else in the guest
 * kernel.  Nothing without a bundle; "guest=?" for a root the bundle does
 * not give to exactly one process; "func=?" for an address no symbol covers.
 */
static void put_guest(struct line *l, unsigned long long cr3)
{
	const struct vmctx_bundle *b = get_bundle();
	const char *comm = NULL, *sym = NULL;
	unsigned long long rip;
	char cbuf[256], sbuf[512];
	bool have_rip;
	int task, tgid;

	if (!b)
		return;
	have_rip = get(l, "guest_rip", &rip);
	task = vmctx_bundle_find_task(b, cr3, VMCTX_TIME_NONE);
	if (task >= 0 &&
	    vmctx_bundle_task(b, task, NULL, NULL, &tgid, &comm, NULL, NULL) == 0 && comm)
		trace_seq_printf(item(l), "guest=%s[%d]", esc(comm, cbuf, sizeof(cbuf)), tgid);
	else
		trace_seq_puts(item(l), "guest=?");
	if (!have_rip)
		return;
	if (task < 0 || vmctx_bundle_resolve_user(b, task, rip, &sym, NULL))
		vmctx_bundle_resolve_kernel(b, rip, &sym, NULL);
	trace_seq_printf(item(l), "func=%s", sym ? esc(sym, sbuf, sizeof(sbuf)) : "?");
}

static int kvm_exit_handler(struct trace_seq *s, struct tep_record *record,
			    struct tep_event *event, void *context)
{
	struct line l = { .s = s, .event = event, .record = record };
	unsigned long long val;

	if (get(&l, "vcpu_id", &val))
		trace_seq_printf(item(&l), "vcpu %llu", val);
	put_reason(&l);
	if (get(&l, "guest_rip", &val))
		trace_seq_printf(item(&l), "rip 0x%llx", val);
	/* The root is what a guest's bundle lists; the raw value keeps PCID and flags. */
	if (get(&l, "guest_cr3", &val)) {
		trace_seq_printf(item(&l), "cr3 0x%llx (raw 0x%llx)",
				 (unsigned long long)vmctx_cr3_normalize(val, 0), val);
		put_guest(&l, val);
	}
	if (get(&l, "info1", &val))
		trace_seq_printf(item(&l), "info1 0x%016llx", val);
	if (get(&l, "info2", &val))
		trace_seq_printf(item(&l), "info2 0x%016llx", val);
	if (get(&l, "intr_info", &val))
		trace_seq_printf(item(&l), "intr_info 0x%08llx", val);
	if (get(&l, "error_code", &val))
		trace_seq_printf(item(&l), "error_code 0x%08llx", val);
	if (l.truncated)
		trace_seq_puts(item(&l), "[truncated]");
	return 0;
}

int TEP_PLUGIN_LOADER(struct tep_handle *tep)
{
	size_t i;

	maps.users++;
	for (i = 0; i < ARRAY_SIZE(exit_events); i++)
		tep_register_event_handler(tep, -1, "kvm", exit_events[i], kvm_exit_handler, NULL);
	return 0;
}

int TEP_PLUGIN_UNLOADER(struct tep_handle *tep)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(exit_events); i++)
		tep_unregister_event_handler(tep, -1, "kvm", exit_events[i], kvm_exit_handler,
					     NULL);
	if (maps.users > 0 && --maps.users == 0) {
		vmctx_bundle_free(maps.bundle);
		maps.bundle = NULL;
		maps.tried = false;
	}
	return 0;
}
