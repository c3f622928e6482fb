// SPDX-License-Identifier: LGPL-2.1-only
/*
 * libFuzzer harness for the session: the input is a sequence of events
 * (samples, switches, halts, losses) for two VMs sharing a few pCPUs, one
 * with a bundle, pushed through the public API as perf would, then
 * finished, rendered in every view and exported in both formats.  Every
 * call must return 0 or a negative error code, without a crash, a
 * sanitizer report or a leak, and the tables must stay within what the
 * input allows (issue #12): the host view within the samples offered (with
 * weighting by time, the tick slots their pCPU spanned, each counted once)
 * and the losses, each vCPU's stream within that plus the ticks of the window, and
 * a table's rows within the vCPUs' and symbols' number, not their pairs
 * nor the input's length, so that memory is O(input) whatever it says.
 *
 * Times, pCPUs, vCPU ids, flags, CR3s and IPs all come from the input, so
 * the stream may go backwards in time, switch vCPUs in twice or lose
 * samples on pCPUs never seen.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define VM1	1001
#define VM2	1002
#define ROOT	0x10000000ULL
#define NCPUS	20	/* pCPU numbers the input uses, a few beyond max_pcpus */
#define NVCPUS	40	/* vCPU ids, -2..37 */

/* What the input offered: the bounds on every table. */
struct offered {
	uint64_t tick_ns;
	uint64_t samples, lost, events;
	uint64_t first[NCPUS], last[NCPUS];	/* sample times per pCPU, 0: none */
	uint64_t min_time, max_time;		/* of every event */
};

struct input {
	const uint8_t *p;
	size_t n;
};

/* The next @len bytes as a little-endian number; 0 once the input runs out. */
static uint64_t take(struct input *in, size_t len)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < len && in->n; i++, in->p++, in->n--)
		v |= (uint64_t)*in->p << (8 * i);
	return v;
}

/* A small bundle: two processes on one root one after the other, a module. */
static struct vmctx_bundle *bundle(void)
{
	static struct vmctx_bundle *b;
	int obj, t;

	if (b)
		return b;
	b = vmctx_bundle_new();
	obj = vmctx_bundle_add_object(b, "/bin/app", "00ff");
	vmctx_bundle_add_symbol(b, obj, 0x1000, 0x100, "main");
	t = vmctx_bundle_add_task(b, ROOT, 10, 10, "a", 0, 5000);
	vmctx_bundle_add_map(b, t, 0x400000, 0x402000, 0, 0x3ff000, obj, "/bin/app");
	vmctx_bundle_add_task(b, ROOT, 11, 11, "b", 5000, VMCTX_TIME_NONE);
	vmctx_bundle_add_task(b, ROOT, 12, 11, "b", 6000, VMCTX_TIME_NONE);
	vmctx_bundle_add_kmodule(b, "m", 0xffffffffc0000000ULL, 0x1000);
	vmctx_bundle_add_ksym(b, 0xffffffff81000000ULL, "_stext", NULL);
	vmctx_bundle_add_ksym(b, 0xffffffffc0000000ULL, "m_fn", "m");
	if (vmctx_bundle_seal(b))
		abort();
	return b;
}

static void check(int err)
{
	if (err > 0)
		abort();
}

static void note_time(struct offered *o, uint64_t t)
{
	if (!o->events++ || t < o->min_time)
		o->min_time = t;
	if (t > o->max_time)
		o->max_time = t;
}

static void event(struct vmctx_session *s, struct input *in, uint64_t *now, struct offered *o)
{
	uint8_t op = take(in, 1);
	uint32_t cpu = take(in, 1) % NCPUS;
	int vm = take(in, 1) & 1 ? VM2 : VM1;
	int vcpu = (int)(take(in, 1) % 40) - 2;	/* -2..37: some invalid */
	struct vmctx_sample smp = { .sz = sizeof(smp) };

	/* mostly forward, sometimes back */
	*now += (int16_t)take(in, 2) * 1000LL;
	note_time(o, *now);
	switch (op % 5) {
	case 0:
	case 1:
		smp.time = *now;
		smp.cpu = cpu;
		smp.vm_tgid = op & 0x80 ? -1 : vm;
		smp.vcpu = op & 0x40 ? -1 : vcpu;
		smp.flags = take(in, 1) & 0xf;
		smp.cpl = take(in, 1) & 1 ? 3 : 0;
		smp.isa = take(in, 1) % 3;	/* NONE: a vCPU thread's VMM work */
		smp.cr3 = ROOT | (take(in, 1) & 0x3) << 12;
		smp.ip = take(in, 1) & 1 ? 0x400000 + take(in, 2) :
			 0xffffffff81000000ULL + (take(in, 1) << 32);
		smp.exit_reason = take(in, 1);
		smp.host_sym = "host_fn";
		smp.host_dso = "[kernel.kallsyms]";
		check(vmctx_session_sample(s, &smp));
		o->samples++;
		if (!o->first[cpu] || smp.time < o->first[cpu])
			o->first[cpu] = smp.time;
		if (smp.time > o->last[cpu])
			o->last[cpu] = smp.time;
		break;
	case 2:
		check(vmctx_session_switch(s, *now, cpu, vm, vcpu, op & 0x80, op & 0x40));
		break;
	case 3:
		if (op & 0x20)
			check(vmctx_session_vcpu_end(s, *now, vm, vcpu));
		else
			check(vmctx_session_halt(s, *now, vm, vcpu, op & 0x80));
		break;
	case 4: {
		uint64_t n = take(in, 1);

		check(vmctx_session_lost(s, *now, cpu, n));
		o->lost += n;
		break;
	}
	}
}

/*
 * Ticks the samples may stand for: one each, and with weighting by time
 * the tick slots their pCPU spanned, each counted once, plus one a restart
 * (the first sample, and the first after a loss or a clock jump).
 */
static uint64_t host_bound(const struct offered *o, bool weighted)
{
	uint64_t n = o->samples + o->lost;
	int cpu;

	for (cpu = 0; weighted && cpu < NCPUS; cpu++)
		if (o->first[cpu])
			n += (o->last[cpu] - o->first[cpu]) / o->tick_ns;
	return n;
}

/*
 * A vCPU's stream: what its pCPUs sampled or lost, plus the ticks of the
 * window filled from time, each fill rounded to the nearest tick.
 */
static uint64_t vcpu_bound(const struct offered *o, bool weighted)
{
	uint64_t n = host_bound(o, weighted);

	if (o->tick_ns)
		n += (o->max_time - o->min_time) / o->tick_ns + o->events + 1;
	return n;
}

/*
 * A table's rows are bounded by what the session declares, not by the
 * input's length: the host-wide views name each VM's processes and
 * symbols (the bundle's 3 tasks, 3 symbols and a module, the host's one
 * function) under a few classes, and a guest view a vCPU's rows at most
 * (see check_vcpus()) for each vCPU.  Memory follows the rows.
 */
#define HOST_ROWS	100
#define VCPU_ROWS	40

static void render(const struct vmctx_session *s, enum vmctx_view view, int vm, int vcpu,
		   uint64_t bound, size_t max_rows)
{
	VMCTX_OPTS(vmctx_format_opts, o, .max_rows = 20);
	struct vmctx_table *t = vmctx_table_new(s, view, vm, vcpu);
	char *out = NULL;

	if (!t)
		return;
	if (vmctx_table_total(t) > bound || vmctx_table_nrows(t) > max_rows)
		abort();
	check(vmctx_table_format(t, &o, &out));
	free(out);
	vmctx_table_free(t);
}

/* Both export formats, as perf report --guest-export would write them. */
static void export(const struct vmctx_session *s, uint32_t flags)
{
	struct vmctx_export_opts o = { .sz = sizeof(o), .flags = flags };
	struct vmctx_export *x = vmctx_export_new(s, &o);
	void *buf = NULL;
	size_t len;

	if (!x)
		return;
	check(vmctx_export_write_mem(x, VMCTX_EXPORT_PPROF, &buf, &len));
	free(buf);
	buf = NULL;
	check(vmctx_export_write_mem(x, VMCTX_EXPORT_FOLDED, &buf, &len));
	free(buf);
	vmctx_export_free(x);
}

/*
 * Every vCPU of @vm within vcpu_bound(), and its rows few: its own code,
 * [idle], [lost] and steal by at most 16 named owners, the outside and
 * "(others)" (symbols: the bundle's 3 and the host's 1, under 2 classes).
 */
static void check_vcpus(const struct vmctx_session *s, int vm, uint64_t bound)
{
	size_t i, n = vmctx_session_vm_nvcpus(s, vm);
	struct vmctx_table *t;

	for (i = 0; i < n; i++) {
		int id = vmctx_session_vm_vcpu(s, vm, i);

		t = vmctx_table_new(s, VMCTX_VIEW_GUEST, vm, id);
		if (!t)
			continue;
		if (vmctx_table_total(t) > bound || vmctx_table_nrows(t) > VCPU_ROWS)
			abort();
		vmctx_table_free(t);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct vmctx_session_opts so = { .sz = sizeof(so), .max_pcpus = 16, .max_vcpus = 32 };
	struct offered o = { 0 };
	struct vmctx_session *s;
	uint64_t now = 1000000, bound;
	bool weighted;

	so.tick_ns = take(&in, 1) * 100000;
	so.flags = so.tick_ns && take(&in, 1) & 1 ? VMCTX_SESSION_WEIGHT_BY_TIME : 0;
	o.tick_ns = so.tick_ns;
	weighted = so.flags & VMCTX_SESSION_WEIGHT_BY_TIME;
	s = vmctx_session_new(&so);
	if (!s)
		abort();
	if (vmctx_session_add_vm(s, VM1, "one") != 1 || vmctx_session_add_vm(s, VM2, NULL) != 2)
		abort();
	check(vmctx_session_attach_bundle(s, VM1, bundle(), take(&in, 1) & 1 ?
						       VMCTX_OFFSET_UNKNOWN : 0));
	while (in.n)
		event(s, &in, &now, &o);
	note_time(&o, now);
	check(vmctx_session_finish(s, now));
	bound = vcpu_bound(&o, weighted);
	render(s, VMCTX_VIEW_UNIFIED, -1, -1, host_bound(&o, weighted), HOST_ROWS);
	render(s, VMCTX_VIEW_HOST, -1, -1, host_bound(&o, weighted), HOST_ROWS);
	render(s, VMCTX_VIEW_GUEST, VM1, -1, bound * NVCPUS, VCPU_ROWS * NVCPUS);
	render(s, VMCTX_VIEW_GUEST, VM2, 0, bound, VCPU_ROWS);
	render(s, VMCTX_VIEW_VCPUS, VM1, -1, bound * NVCPUS, NVCPUS);
	check_vcpus(s, VM1, bound);
	check_vcpus(s, VM2, bound);
	export(s, 0);
	export(s, VMCTX_EXPORT_NO_HOST);
	vmctx_session_free(s);
	return 0;
}
