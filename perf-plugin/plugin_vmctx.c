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
 * appends its own print-format output to a partial line.  Besides numbers
 * and libvmctx's static names, the line holds names from a guest's bundle
 * only through vmctx_escape(), with spaces as "\x20" and a length cap, so
 * that neither a record nor a bundle can drive the terminal or add items.
 *
 * With guest bundles (-O vmctx:maps=FILE[:FILE...] in trace-cmd, or
 * $VMCTX_GUEST_MAPS for perf script, which has no plugin options) the line
 * also names the guest process that owned guest_cr3 and the function at the
 * guest RIP.  The record's time is the host's trace clock and a bundle's
 * times are the guest's, so a root is named only when the answer cannot
 * be wrong: the root had one owner in the whole bundle, or the user gave
 * the guest-minus-host offset (vmctx:offset=NS) and one owner's lifetime
 * covers the record.  Otherwise the line says "guest=?".
 */
#include <errno.h>
#include <limits.h>
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

/* A guest string is cut to this many bytes once escaped, so a line stays bounded. */
#define GUEST_STR_MAX	128

/* The bundles one tep handle resolves through. */
struct maps {
	struct maps *next;
	struct tep_handle *tep;
	struct vmctx_bundle **bundles;
	size_t nbundles;
	bool have_offset;
	long long offset;	/* guest ns minus host trace-clock ns */
};

/* Handles with the plugin loaded; the printing hooks find theirs by event->tep. */
static struct maps *all_maps;

/* trace-cmd -O vmctx:maps=FILE: a string option needs a non-NULL default. */
struct tep_plugin_option TEP_PLUGIN_OPTIONS[] = {
	{
		.name = "maps",
		.plugin_alias = "vmctx",
		.description = "guest bundles (.vmctx), separated by ':', naming guest processes",
		.value = "",
	},
	{
		.name = "offset",
		.plugin_alias = "vmctx",
		.description = "guest clock minus host trace clock in ns, to pick a root's owner by time",
		.value = "",
	},
	{ .name = NULL },
};

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

/* Append @c to the @size-byte buffer @out holding @*len bytes; always terminated. */
static void put_char(char *out, size_t size, size_t *len, char c)
{
	if (*len + 1 < size) {
		out[(*len)++] = c;
		out[*len] = '\0';
	}
}

static void put_str(char *out, size_t size, size_t *len, const char *str)
{
	while (*str)
		put_char(out, size, len, *str++);
}

/*
 * A guest's string, escaped by vmctx_escape() and with spaces as "\x20",
 * so that it can neither drive a terminal nor add fields to the line.
 */
static void put_guest(char *out, size_t size, size_t *len, const char *str)
{
	char esc[GUEST_STR_MAX + 1];
	int n = vmctx_escape(esc, sizeof(esc), str ? str : "");
	size_t i;

	if (n < 0) {
		put_char(out, size, len, '?');
		return;
	}
	for (i = 0; esc[i]; i++) {
		if (esc[i] == ' ')
			put_str(out, size, len, "\\x20");
		else
			put_char(out, size, len, esc[i]);
	}
	if ((size_t)n >= sizeof(esc))
		put_str(out, size, len, "...");
}

static struct maps *maps_of(const struct tep_event *event)
{
	struct maps *m;

	for (m = all_maps; m; m = m->next)
		if (m->tep == event->tep)
			return m;
	return NULL;
}

/* The guest's kernel is the upper half of the address space on x86-64. */
static bool is_kernel_ip(uint64_t ip)
{
	return ip >= 0xffff800000000000ULL;
}

/* "SYM (OBJ)", "? (OBJ)" or nothing, for @rip in @task (-1: none) of @b. */
static void put_function(char *out, size_t size, size_t *len, const struct vmctx_bundle *b,
			 int task, uint64_t rip)
{
	const char *sym = NULL, *obj = NULL;

	if (is_kernel_ip(rip)) {
		if (vmctx_bundle_resolve_kernel(b, rip, &sym, &obj) || !sym)
			return;
	} else if (task < 0 || vmctx_bundle_resolve_user(b, task, rip, &sym, &obj)) {
		return;
	}
	put_str(out, size, len, " func=");
	if (sym)
		put_guest(out, size, len, sym);
	else
		put_char(out, size, len, '?');
	if (obj) {
		put_str(out, size, len, " (");
		put_guest(out, size, len, obj);
		put_char(out, size, len, ')');
	}
}

/* Guest ns of host trace-clock @ts: false before the guest's 0 or past its range. */
static bool guest_time(unsigned long long ts, long long offset, uint64_t *when)
{
	unsigned long long mag;

	if (offset >= 0) {
		mag = (unsigned long long)offset;
		if (ts >= VMCTX_TIME_NONE - mag)
			return false;
		*when = ts + mag;
		return true;
	}
	mag = -(unsigned long long)offset;
	if (ts < mag)
		return false;
	*when = ts - mag;
	return true;
}

/*
 * "guest=comm[pid] func=SYM (OBJ)" for a root and RIP, or "guest=?" when no
 * bundle, or more than one, can name the root's owner at this time.  The
 * root picks the VM's bundle; in it, the task is vmctx_bundle_owner()'s:
 * the one its switch log says ran on guest CPU @vcpu (-1: unknown) then,
 * a kernel thread or the idle task included, else the root's owner.
 * False when no bundle is loaded.
 */
static bool describe_guest(const struct maps *m, unsigned long long ts, int vcpu, uint64_t cr3,
			   uint64_t rip, char *out, size_t size)
{
	uint64_t when = VMCTX_TIME_NONE;
	const struct vmctx_bundle *b = NULL;
	VMCTX_OPTS(vmctx_owner, o);
	int found = 0, t;
	bool skip;
	size_t i, len = 0;

	out[0] = '\0';
	if (!m || !m->nbundles)
		return false;
	/* with an offset, a guest time out of the clock's range has no owner */
	skip = m->have_offset && !guest_time(ts, m->offset, &when);
	for (i = 0; found < 2 && i < m->nbundles && !skip; i++) {
		t = vmctx_bundle_find_task(m->bundles[i], cr3, when);
		if (t < 0)
			continue;
		found++;
		b = m->bundles[i];
	}
	if (found != 1 || vmctx_bundle_owner(b, vcpu, cr3, when, !is_kernel_ip(rip), &o) ||
	    o.by == VMCTX_OWNER_NONE) {
		put_str(out, size, &len, "guest=?");
		/* a kernel RIP still has a name when one VM is traced */
		if (m->nbundles == 1)
			put_function(out, size, &len, m->bundles[0], -1, rip);
		return true;
	}
	put_str(out, size, &len, "guest=");
	put_guest(out, size, &len, o.comm);
	snprintf(out + len, size - len, "[%d]", o.pid);
	len = strlen(out);
	put_function(out, size, &len, b, o.task, rip);
	return true;
}

static int kvm_exit_handler(struct trace_seq *s, struct tep_record *record,
			    struct tep_event *event, void *context)
{
	struct line l = { .s = s, .event = event, .record = record };
	unsigned long long val, rip = 0, cr3 = 0, vcpu = 0;
	bool have_rip, have_cr3, have_vcpu;
	char guest[1024];

	have_vcpu = get(&l, "vcpu_id", &vcpu);
	if (have_vcpu)
		trace_seq_printf(item(&l), "vcpu %llu", vcpu);
	put_reason(&l);
	have_rip = get(&l, "guest_rip", &rip);
	if (have_rip)
		trace_seq_printf(item(&l), "rip 0x%llx", rip);
	/* The root is what a guest's bundle lists; the raw value keeps PCID and flags. */
	have_cr3 = get(&l, "guest_cr3", &cr3);
	if (have_cr3)
		trace_seq_printf(item(&l), "cr3 0x%llx (raw 0x%llx)",
				 (unsigned long long)vmctx_cr3_normalize(cr3, 0), cr3);
	if (have_rip && have_cr3 &&
	    describe_guest(context, record->ts, have_vcpu && vcpu <= INT_MAX ? (int)vcpu : -1,
			   cr3, rip, guest, sizeof(guest)))
		trace_seq_puts(item(&l), guest);
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

/*
 * Hook of libtraceevent's plugin_kvm: its kvm_exit line calls this for the
 * guest RIP.  It binds to this definition only where the program defines
 * none (perf script does not, trace-cmd does) and this plugin was loaded
 * first; then plugin_kvm's handler is the one printing, and the guest's
 * name still reaches the line.  The string is this thread's, so
 * plugin_kvm's put hook, which stays its own no-op, has nothing to free.
 */
const char *tep_plugin_kvm_get_func(struct tep_event *event, struct tep_record *record,
				    unsigned long long *val);

const char *tep_plugin_kvm_get_func(struct tep_event *event, struct tep_record *record,
				    unsigned long long *val)
{
	static __thread char buf[1024];
	struct line l = { .event = event, .record = record };
	unsigned long long cr3, vcpu;
	int cpu;

	if (!event || !record || !val || !get(&l, "guest_cr3", &cr3))
		return NULL;
	cpu = get(&l, "vcpu_id", &vcpu) && vcpu <= INT_MAX ? (int)vcpu : -1;
	if (!describe_guest(maps_of(event), record->ts, cpu, cr3, *val, buf, sizeof(buf)))
		return NULL;
	return buf;
}

static void maps_free(struct maps *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nbundles; i++)
		vmctx_bundle_free(m->bundles[i]);
	free(m->bundles);
	free(m);
}

/* Read each ':'-separated bundle of @list; a bundle that fails is said on stderr and left out. */
static int maps_read(struct maps *m, const char *list)
{
	char *copy = strdup(list), *path, *save = NULL;
	struct vmctx_bundle *b, **grown;
	int err;

	if (!copy)
		return -ENOMEM;
	for (path = strtok_r(copy, ":", &save); path; path = strtok_r(NULL, ":", &save)) {
		err = vmctx_bundle_read_file(path, NULL, &b);
		if (err) {
			fprintf(stderr, "plugin_vmctx: %s: %s\n", path, vmctx_strerror(err));
			continue;
		}
		grown = realloc(m->bundles, (m->nbundles + 1) * sizeof(*grown));
		if (!grown) {
			vmctx_bundle_free(b);
			free(copy);
			return -ENOMEM;
		}
		m->bundles = grown;
		m->bundles[m->nbundles++] = b;
	}
	free(copy);
	return 0;
}

/* The options of trace-cmd -O win over the environment. */
static struct maps *maps_new(struct tep_handle *tep)
{
	const char *list = TEP_PLUGIN_OPTIONS[0].value, *off = TEP_PLUGIN_OPTIONS[1].value;
	struct maps *m = calloc(1, sizeof(*m));
	char *end;

	if (!m)
		return NULL;
	m->tep = tep;
	if (!list || !*list)
		list = getenv("VMCTX_GUEST_MAPS");
	if (!off || !*off)
		off = getenv("VMCTX_GUEST_OFFSET");
	if (list && *list && maps_read(m, list)) {
		maps_free(m);
		return NULL;
	}
	if (off && *off) {
		errno = 0;
		m->offset = strtoll(off, &end, 0);
		if (errno || *end)
			fprintf(stderr, "plugin_vmctx: offset %s: not a number of ns, ignored\n", off);
		else
			m->have_offset = true;
	}
	return m;
}

int TEP_PLUGIN_LOADER(struct tep_handle *tep);
int TEP_PLUGIN_UNLOADER(struct tep_handle *tep);

int TEP_PLUGIN_LOADER(struct tep_handle *tep)
{
	struct maps *m = maps_new(tep);
	size_t i;

	if (m) {
		m->next = all_maps;
		all_maps = m;
	} else {
		fprintf(stderr, "plugin_vmctx: out of memory, guest names left out\n");
	}
	for (i = 0; i < ARRAY_SIZE(exit_events); i++)
		tep_register_event_handler(tep, -1, "kvm", exit_events[i], kvm_exit_handler, m);
	return 0;
}

int TEP_PLUGIN_UNLOADER(struct tep_handle *tep)
{
	struct maps **p, *m = NULL;
	size_t i;

	for (p = &all_maps; *p; p = &(*p)->next) {
		if ((*p)->tep == tep) {
			m = *p;
			*p = m->next;
			break;
		}
	}
	for (i = 0; i < ARRAY_SIZE(exit_events); i++)
		tep_unregister_event_handler(tep, -1, "kvm", exit_events[i], kvm_exit_handler, m);
	maps_free(m);
	return 0;
}
