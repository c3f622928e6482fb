// SPDX-License-Identifier: LGPL-2.1-only
/*
 * libFuzzer harness for the session: the input is a sequence of events
 * (samples, switches, halts, losses) for two VMs sharing a few pCPUs, one
 * with a bundle, pushed through the public API as perf would, then
 * finished, rendered in every view and exported in both formats.  Every
 * call must return 0 or a negative error code, without a crash, a
 * sanitizer report or a leak.
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

static void event(struct vmctx_session *s, struct input *in, uint64_t *now)
{
	uint8_t op = take(in, 1);
	uint32_t cpu = take(in, 1) % 20;	/* a few beyond max_pcpus */
	int vm = take(in, 1) & 1 ? VM2 : VM1;
	int vcpu = (int)(take(in, 1) % 40) - 2;	/* -2..37: some invalid */
	struct vmctx_sample smp = { .sz = sizeof(smp) };

	/* mostly forward, sometimes back */
	*now += (int16_t)take(in, 2) * 1000LL;
	switch (op % 5) {
	case 0:
	case 1:
		smp.time = *now;
		smp.cpu = cpu;
		smp.vm_tgid = op & 0x80 ? -1 : vm;
		smp.vcpu = op & 0x40 ? -1 : vcpu;
		smp.flags = take(in, 1) & 0xf;
		smp.cpl = take(in, 1) & 1 ? 3 : 0;
		smp.isa = take(in, 1) & 1 ? VMCTX_ISA_SVM : VMCTX_ISA_VMX;
		smp.cr3 = ROOT | (take(in, 1) & 0x3) << 12;
		smp.ip = take(in, 1) & 1 ? 0x400000 + take(in, 2) :
			 0xffffffff81000000ULL + (take(in, 1) << 32);
		smp.exit_reason = take(in, 1);
		smp.host_sym = "host_fn";
		smp.host_dso = "[kernel.kallsyms]";
		check(vmctx_session_sample(s, &smp));
		break;
	case 2:
		check(vmctx_session_switch(s, *now, cpu, vm, vcpu, op & 0x80, op & 0x40));
		break;
	case 3:
		check(vmctx_session_halt(s, *now, vm, vcpu, op & 0x80));
		break;
	case 4:
		check(vmctx_session_lost(s, *now, cpu, take(in, 1)));
		break;
	}
}

static void render(const struct vmctx_session *s, enum vmctx_view view, int vm, int vcpu)
{
	struct vmctx_table *t = vmctx_table_new(s, view, vm, vcpu);
	char *out = NULL;

	if (!t)
		return;
	check(vmctx_table_format(t, 20, &out));
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct vmctx_session_opts so = { .sz = sizeof(so), .max_pcpus = 16, .max_vcpus = 32 };
	struct vmctx_session *s;
	uint64_t now = 1000000;

	so.tick_ns = take(&in, 1) * 100000;
	so.flags = so.tick_ns && take(&in, 1) & 1 ? VMCTX_SESSION_WEIGHT_BY_TIME : 0;
	s = vmctx_session_new(&so);
	if (!s)
		abort();
	if (vmctx_session_add_vm(s, VM1, "one") != 1 || vmctx_session_add_vm(s, VM2, NULL) != 2)
		abort();
	check(vmctx_session_attach_bundle(s, VM1, bundle(), take(&in, 1) & 1 ?
						       VMCTX_OFFSET_UNKNOWN : 0));
	while (in.n)
		event(s, &in, &now);
	check(vmctx_session_finish(s, now));
	render(s, VMCTX_VIEW_UNIFIED, -1, -1);
	render(s, VMCTX_VIEW_HOST, -1, -1);
	render(s, VMCTX_VIEW_GUEST, VM1, -1);
	render(s, VMCTX_VIEW_GUEST, VM2, 0);
	render(s, VMCTX_VIEW_VCPUS, VM1, -1);
	export(s, 0);
	export(s, VMCTX_EXPORT_NO_HOST);
	vmctx_session_free(s);
	return 0;
}
