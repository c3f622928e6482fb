// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Timeline engine and reports against the paper's scenarios.  Expected
 * counts are derived here from each schedule's parameters (see
 * scenarios.h), not taken from the engine's output.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rss.h"
#include "scenarios.h"
#include "check.h"

static struct vmctx_table *table(struct scen *sc, enum vmctx_view view, int vm_tgid, int vcpu)
{
	struct vmctx_table *t = vmctx_table_new(sc->s, view, vm_tgid, vcpu);

	CHECK(t, "table view %d vm_tgid %d vcpu %d", view, vm_tgid, vcpu);
	return t;
}

/* The streams below name VM1 (tgid VM_PID(1)); a session knows only declared VMs. */
static void declare_vm1(struct vmctx_session *s)
{
	CHECK(vmctx_session_add_vm(s, VM_PID(1), NULL) == 1, "VM1 declared as vm_nr 1");
}

static uint64_t guest_ticks(uint64_t n)		/* running ticks -> user ticks */
{
	return n / MIX_LEN * (MIX_LEN - MIX_KERNEL);
}

/* Figure 9: 2 pCPUs, VM1 with one vCPU, VM2 with two, no pinning. */
static void fig9_blank_time_goes_to_who_ran_instead(void)
{
	const int K = 100, L = 10;
	struct vmctx_table *t;
	struct scen sc;

	CHECK(!scen_init(&sc, SCEN_TICK_NS) && !scen_fig9(&sc, K, L), "fig9 stream accepted");

	/* guestA's vCPU runs 2 slots of 3; in the third, guestB's vcpu0 holds its pCPU */
	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), -1);
	CHECK_EQ(vmctx_table_total(t), 3 * K * L, "VM1 virtual ticks cover the whole window");
	CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_USER), guest_ticks(2 * K * L), "VM1 user");
	CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_OS), 2 * K * L / MIX_LEN, "VM1 kernel");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(VM2)"), K * L, "VM1 stolen by VM2");
	CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_STEAL), K * L, "VM1 steal is only VM2");
	CHECK_EQ(vmctx_table_lookup(t, "quantum_toffoli", "libquantum"),
		 2 * K * L / MIX_LEN * MIX_TOFFOLI, "VM1 toffoli");
	vmctx_table_free(t);

	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(2), 0);
	CHECK_EQ(vmctx_table_total(t), 3 * K * L, "VM2 vcpu0 ticks");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(on vcpu1)"), K * L, "vcpu0 stolen by vcpu1");
	CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_STEAL), K * L, "vcpu0 steal");
	CHECK_EQ(vmctx_table_lookup(t, NULL, "libquantum(1)"), guest_ticks(2 * K * L),
		 "vcpu0 runs libquantum(1) only");
	vmctx_table_free(t);

	/* vcpu1 first runs in slot 1: one rotation fewer of waiting */
	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(2), 1);
	CHECK_EQ(vmctx_table_total(t), 3 * K * L - L, "VM2 vcpu1 ticks from its first sample");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(VM1)"), (K - 1) * L, "vcpu1 stolen by VM1");
	CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_STEAL), (K - 1) * L, "vcpu1 steal");
	vmctx_table_free(t);

	/* the per-vCPU view: one row per vCPU, in id order, with its own classes */
	t = table(&sc, VMCTX_VIEW_VCPUS, VM_PID(2), -1);
	CHECK_EQ(vmctx_table_nrows(t), 2, "per-vCPU view rows");
	{
		const char *f0 = NULL, *f1 = NULL;
		uint64_t n0 = 0, n1 = 0;

		vmctx_table_row(t, 0, &n0, &f0, NULL);
		vmctx_table_row(t, 1, &n1, &f1, NULL);
		CHECK(f0 && f1 && !strcmp(f0, "vcpu0") && !strcmp(f1, "vcpu1"), "rows by vCPU id");
		CHECK_EQ(n0, 3 * K * L, "vcpu0 row");
		CHECK_EQ(n1, 3 * K * L - L, "vcpu1 row");
		CHECK_EQ(vmctx_table_row_class(t, 1, VMCTX_CLASS_STEAL), (K - 1) * L, "vcpu1 steal");
		CHECK_EQ(vmctx_table_row_class(t, 0, VMCTX_CLASS_STEAL), K * L, "vcpu0 steal");
	}
	vmctx_table_free(t);

	t = table(&sc, VMCTX_VIEW_HOST, -1, -1);
	CHECK_EQ(vmctx_table_total(t), 6 * K * L, "host: every pCPU sample");
	CHECK_EQ(vmctx_table_lookup(t, "[guestA]", "(VM1)"), 2 * K * L, "host: VM1 row");
	CHECK_EQ(vmctx_table_lookup(t, "[guestB]", "(VM2)"), 4 * K * L, "host: VM2 row");
	vmctx_table_free(t);

	t = table(&sc, VMCTX_VIEW_UNIFIED, -1, -1);
	CHECK_EQ(vmctx_table_lookup(t, "quantum_toffoli", "libquantum(2) (VM2)"),
		 2 * K * L / MIX_LEN * MIX_TOFFOLI, "unified: guest function of VM2's process 2");
	vmctx_table_free(t);
	scen_fini(&sc);
}

/* Table 7: two identical processes in one VM split 50/50, function by function. */
static void two_processes_stay_apart(void)
{
	const int C = 50, L = 20;
	static const char *const fn[] = { "quantum_toffoli", "quantum_sigma_x", "quantum_cnot",
					  "quantum_swaptheleads" };
	static const int share[] = { MIX_TOFFOLI, MIX_SIGMA_X, MIX_CNOT, MIX_SWAP };
	struct vmctx_table *t;
	struct scen sc;
	int i;

	CHECK(!scen_init(&sc, SCEN_TICK_NS) && !scen_two_procs(&sc, C, L), "stream accepted");
	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), -1);
	for (i = 0; i < 4; i++) {
		CHECK_EQ(vmctx_table_lookup(t, fn[i], "libquantum(1)"),
			 (uint64_t)C * L / MIX_LEN * share[i], fn[i]);
		CHECK_EQ(vmctx_table_lookup(t, fn[i], "libquantum(2)"),
			 (uint64_t)C * L / MIX_LEN * share[i], fn[i]);
	}
	CHECK_EQ(vmctx_table_lookup(t, NULL, "libquantum"), 0, "no unnumbered process");
	CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_STEAL), 0, "one vCPU alone has no steal");
	vmctx_table_free(t);
	scen_fini(&sc);
}

/* The exit reason of slot s in scen_two_vcpus(). */
static uint64_t slot_exit(int s)
{
	return s % 5 == 4 ? VMX_APIC : VMX_EXTINT;
}

/* Tables 8/9: two vCPUs on one pCPU each see ~50% [steal] (on the other). */
static void two_vcpus_steal_from_each_other(void)
{
	const int C = 50, L = 20;
	uint64_t want_ext = 0, want_apic = 0, reason, n;
	struct vmctx_table *t;
	struct scen sc;
	size_t i;
	int s;

	CHECK(!scen_init(&sc, SCEN_TICK_NS) && !scen_two_vcpus(&sc, C, L), "stream accepted");
	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), 0);
	CHECK_EQ(vmctx_table_total(t), 2 * C * L, "vcpu0 ticks");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(on vcpu1)"), C * L, "vcpu0 stolen by vcpu1");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(outside)"), C, "vcpu0 KVM exit handling");
	CHECK_EQ(vmctx_table_lookup(t, NULL, "libquantum(1)") + vmctx_table_class(t, VMCTX_CLASS_OS),
		 C * (L - 1), "vcpu0 guest ticks");
	/* steal by exit: each own slot s gives 1 host tick, then L waiting ticks, at slot_exit(s) */
	for (s = 0; s < 2 * C; s += 2) {
		uint64_t k = 1 + (s + 1 < 2 * C ? L : 0);

		if (slot_exit(s) == VMX_APIC)
			want_apic += k;
		else
			want_ext += k;
	}
	for (i = 0; i < vmctx_table_nsteal_reasons(t); i++) {
		vmctx_table_steal_reason(t, i, &reason, &n);
		if (reason == VMX_APIC)
			CHECK_EQ(n, want_apic, "vcpu0 steal after APIC_ACCESS");
		else
			CHECK(reason == VMX_EXTINT && n == want_ext,
			      "vcpu0 steal after EXTERNAL_INTERRUPT: reason %" PRIu64 " n %" PRIu64
			      " want %" PRIu64, reason, n, want_ext);
	}
	CHECK_EQ(vmctx_table_nsteal_reasons(t), 2, "two exit reasons behind steal");
	vmctx_table_free(t);

	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), 1);
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(on vcpu0)"), (C - 1) * L,
		 "vcpu1 stolen by vcpu0 after its first slot");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(outside)"), C, "vcpu1 KVM exit handling");
	vmctx_table_free(t);
	scen_fini(&sc);
}

/* Tables 12/13: a guest's steal is what the host level gives everyone else. */
static void three_vms_steal_equals_host_share_of_others(void)
{
	const int C = 100, L = 20;
	struct vmctx_table *g, *h;
	double steal, others;
	struct scen sc;

	CHECK(!scen_init(&sc, SCEN_TICK_NS) && !scen_three_vms(&sc, C, L), "stream accepted");
	g = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), -1);
	h = table(&sc, VMCTX_VIEW_HOST, -1, -1);
	/* VM1 exists from tick 1 (tick 0 is the first kworker tick) */
	CHECK_EQ(vmctx_table_total(g), 3 * C * L - 1, "VM1 ticks");
	CHECK_EQ(vmctx_table_lookup(g, "[steal]", "(VM2)"), C * (L - 1), "VM1 stolen by VM2");
	CHECK_EQ(vmctx_table_lookup(g, "[steal]", "(VM3)"), C * (L - 1), "VM1 stolen by VM3");
	CHECK_EQ(vmctx_table_lookup(g, "[steal]", "(outside)"), 3 * C - 1, "VM1 stolen by kworker");
	CHECK_EQ(vmctx_table_lookup(h, "[guestOS2]", "(VM2)"), C * (L - 1), "host: VM2 row");
	CHECK_EQ(vmctx_table_lookup(h, "process_one_work", "vmlinux"), 3 * C, "host: kworker");
	steal = 100.0 * vmctx_table_class(g, VMCTX_CLASS_STEAL) / vmctx_table_total(g);
	others = 100.0 * (vmctx_table_total(h) - vmctx_table_lookup(h, "[guestOS1]", "(VM1)")) /
		 vmctx_table_total(h);
	CHECK(steal - others < 0.1 && others - steal < 0.1,
	      "guest steal %.3f%% equals host share of the others %.3f%% (within 0.1pp)", steal,
	      others);
	CHECK(steal > 66.0 && steal < 69.0, "steal is about 2/3: %.2f%%", steal);
	vmctx_table_free(g);
	vmctx_table_free(h);
	scen_fini(&sc);
}

/*
 * Tables 14/15: busy for a third, then halted.  With cpu-clock the idle pCPU
 * keeps sampling; with a PMU it does not, and idle comes from elapsed time
 * between the halt evidence and the wake-up.  Both must agree.
 */
static void halt_is_idle_not_steal(bool pmu_idle)
{
	const int N = 3000, W = 100, busy = N / 3, wakes = (N - busy) / W;
	struct vmctx_table *g, *h;
	struct scen sc;

	CHECK(!scen_init(&sc, SCEN_TICK_NS) && !scen_halt(&sc, N, W, pmu_idle), "stream accepted");
	g = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), -1);
	CHECK_EQ(vmctx_table_total(g), N, pmu_idle ? "pmu: ticks" : "cpu-clock: ticks");
	CHECK_EQ(vmctx_table_class(g, VMCTX_CLASS_IDLE), N - busy - wakes,
		 pmu_idle ? "pmu: idle" : "cpu-clock: idle");
	CHECK_EQ(vmctx_table_class(g, VMCTX_CLASS_STEAL), 0, pmu_idle ? "pmu: steal" : "steal");
	CHECK_EQ(vmctx_table_class(g, VMCTX_CLASS_OS), busy / MIX_LEN + wakes, "guest kernel");
	CHECK_EQ(vmctx_table_lookup(g, "[idle]", "(halt_exit)"), N - busy - wakes, "idle row");
	if (!pmu_idle) {
		struct vmctx_table *u = table(&sc, VMCTX_VIEW_UNIFIED, -1, -1);
		int c;

		h = table(&sc, VMCTX_VIEW_HOST, -1, -1);
		CHECK_EQ(vmctx_table_class(h, VMCTX_CLASS_IDLE), N - busy - 2 * wakes, "host idle");
		/* the two host-wide views agree on every class, the VM's time included */
		CHECK_EQ(vmctx_table_total(u), vmctx_table_total(h), "unified and host: total");
		for (c = 0; c < VMCTX_CLASS_MAX; c++)
			CHECK(vmctx_table_class(u, c) == vmctx_table_class(h, c),
			      "unified and host agree on class %d: %" PRIu64 " and %" PRIu64, c,
			      vmctx_table_class(u, c), vmctx_table_class(h, c));
		vmctx_table_free(u);
		/* KVM's work for the vCPU (its HLT exits) is the VM's in the host view */
		CHECK_EQ(vmctx_table_lookup(h, "vmx_vcpu_run", NULL), 0, "host: no KVM row");
		CHECK_EQ(vmctx_table_class(h, VMCTX_CLASS_VM), busy + 2 * wakes,
			 "host: guest code and HLT exits");
		CHECK_EQ(vmctx_table_lookup(h, "[guestOS1]", "(VM1)"), busy + 2 * wakes, "host: VM row");
		vmctx_table_free(h);
		/* ... and a host function in the unified view */
		h = table(&sc, VMCTX_VIEW_UNIFIED, -1, -1);
		CHECK_EQ(vmctx_table_lookup(h, "vmx_vcpu_run", "kvm_intel (VM1)"), wakes,
			 "unified: HLT exits, KVM's work for VM1");
		CHECK_EQ(vmctx_table_lookup(h, "vmx_vcpu_run", "kvm_intel"), 0,
			 "unified: no KVM row without its VM");
		CHECK_EQ(vmctx_table_class(h, VMCTX_CLASS_VM), busy + 2 * wakes,
			 "unified: guest code and HLT exits");
		vmctx_table_free(h);
	}
	vmctx_table_free(g);
	scen_fini(&sc);
}

static struct vmctx_sample gsample(uint64_t tick, int vcpu)
{
	struct vmctx_sample s = {
		.sz = sizeof(s), .time = tick * SCEN_TICK_NS, .cpu = 0, .pid = VM_PID(1),
		.tid = VM_PID(1) + 1 + vcpu, .vm_tgid = VM_PID(1), .vcpu = vcpu,
		.flags = VMCTX_SAMPLE_GUEST, .cpl = 0, .isa = VMCTX_ISA_SVM,
		.cr3 = ROOT(0), .ip = 0xffffffff81001000ULL, .exit_reason = 0x60,
	};

	return s;
}

struct stream_sum {
	uint64_t ticks[2][VMCTX_CLASS_MAX];
	uint64_t last_time[2];
	bool ordered;
};

static void on_tick(const struct vmctx_tick *t, void *ctx)
{
	struct stream_sum *sum = ctx;

	if (t->vcpu < 0 || t->vcpu > 1 || t->vm_tgid != VM_PID(1))
		return;
	sum->ticks[t->vcpu][t->cls] += t->count;
	if (t->time < sum->last_time[t->vcpu])
		sum->ordered = false;
	sum->last_time[t->vcpu] = t->time;
}

/*
 * Lost samples: vcpu1 waits from tick 9 to 30 while vcpu0 runs, and 5 of
 * those ticks were lost.  They are [lost] for both vCPUs, never steal.
 */
static void lost_samples_are_never_steal(bool record_lost)
{
	struct stream_sum sum = { .ordered = true };
	struct vmctx_sample smp;
	struct vmctx_table *t;
	struct scen sc;
	int i;

	CHECK(!scen_init(&sc, SCEN_TICK_NS), "session");
	declare_vm1(sc.s);
	vmctx_session_set_stream(sc.s, on_tick, &sum);
	for (i = 0; i < 40; i++) {
		if (i >= 20 && i < 25)
			continue;	/* the ring overflowed */
		smp = gsample(i, i < 10 || i >= 30 ? 1 : 0);
		CHECK(!vmctx_session_sample(sc.s, &smp), "sample %d", i);
		if (i == 19 && record_lost)
			CHECK(!vmctx_session_lost(sc.s, 25 * SCEN_TICK_NS - 1, 0, 5), "lost record");
	}
	CHECK(!vmctx_session_finish(sc.s, 39 * SCEN_TICK_NS), "finish");
	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), 1);
	if (record_lost) {
		CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_LOST), 5, "waiting vCPU: lost");
		CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(on vcpu0)"), 15, "waiting vCPU: steal");
		CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_STEAL), 15, "lost is not steal");
	} else {
		/* without the record, the gap is unexplained time: steal (outside) */
		CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(outside)"), 5, "gap filled as steal");
	}
	CHECK_EQ(vmctx_table_total(t), 40, "vcpu1 has a tick for every tick of the window");
	vmctx_table_free(t);
	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), 0);
	CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_LOST), record_lost ? 5 : 0, "running vCPU: lost");
	CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_OS), 15, "running vCPU: real ticks");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(on vcpu1)"), 10, "running vCPU: last slot");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", NULL), record_lost ? 10 : 15,
		 "running vCPU: steal");
	vmctx_table_free(t);

	/* the per-vCPU stream carries exactly what the tables count, in time order */
	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), 1);
	CHECK_EQ(sum.ticks[1][VMCTX_CLASS_STEAL] + sum.ticks[1][VMCTX_CLASS_LOST] +
		 sum.ticks[1][VMCTX_CLASS_OS], vmctx_table_total(t), "stream total of vcpu1");
	CHECK(sum.ordered, "stream runs are in host time order per vCPU");
	vmctx_table_free(t);
	scen_fini(&sc);
}

/*
 * The VMM's work in a vCPU's thread: two vCPUs of VM1 take turns on one
 * pCPU in slots of L ticks, each slot L - 1 guest ticks (last exit the
 * guest's) and then a tick of the thread with no vCPU loaded (QEMU's
 * device emulation: no ISA, no exit).  That tick is the vCPU's own host
 * work, "(outside)", and the other vCPU's steal "(on vcpuN)", so each
 * vCPU's ticks sum to its time; and it leaves the last exit as it was.
 */
static void vmm_work_in_a_vcpu_thread(void)
{
	const int C = 40, L = 10;
	struct vmctx_table *t;
	uint64_t reason, n;
	struct scen sc;
	int i;

	CHECK(!scen_init(&sc, SCEN_TICK_NS), "session");
	declare_vm1(sc.s);
	for (i = 0; i < 2 * C * L; i++) {
		int vcpu = i / L % 2;
		struct vmctx_sample smp = gsample(i, vcpu);

		if (i % L == L - 1) {
			smp.flags = 0;
			smp.isa = VMCTX_ISA_NONE;
			smp.exit_reason = 0;
			smp.cr3 = 0;
			smp.ip = 0x555555554000ULL;
		}
		CHECK(!vmctx_session_sample(sc.s, &smp), "sample %d", i);
	}
	CHECK(!vmctx_session_finish(sc.s, (2 * C * L - 1) * SCEN_TICK_NS), "finish");
	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), 0);
	CHECK_EQ(vmctx_table_total(t), 2 * C * L, "vcpu0: a tick for every tick");
	CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_OS), C * (L - 1), "vcpu0: guest ticks");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(outside)"), C, "vcpu0: its VMM's ticks");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(on vcpu1)"), C * L,
		 "vcpu0: vcpu1's slots, its VMM's tick with them");
	CHECK_EQ(vmctx_table_nsteal_reasons(t), 1, "vcpu0: one exit behind its steal");
	vmctx_table_steal_reason(t, 0, &reason, &n);
	CHECK(reason == 0x60 && n == (uint64_t)C * L + C,
	      "vcpu0: steal after the guest's last exit, not the VMM's tick's: reason %#" PRIx64
	      " n %" PRIu64, reason, n);
	vmctx_table_free(t);
	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), 1);
	CHECK_EQ(vmctx_table_total(t), 2 * C * L - L, "vcpu1: a tick for every tick from its first");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(on vcpu0)"), (C - 1) * L, "vcpu1: vcpu0's slots");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(outside)"), C, "vcpu1: its VMM's ticks");
	vmctx_table_free(t);
	scen_fini(&sc);
}

/*
 * A vCPU's thread ends: vcpu0 runs 10 ticks, a host task then has the
 * pCPU to the end (tick 40).  Ended at once, vcpu0 has its 10 ticks; ended
 * at tick 20 while it waits, 10 ticks of steal too; never ended (as
 * before vmctx_session_vcpu_end()), it waits to the end, 40 in all.  A
 * sample of it after its end starts it afresh.
 */
static void a_vcpu_ends_with_its_thread(int end_at)
{
	struct vmctx_table *t;
	struct scen sc;
	int i;

	CHECK(!scen_init(&sc, SCEN_TICK_NS), "session");
	declare_vm1(sc.s);
	for (i = 0; i < 40; i++) {
		struct vmctx_sample smp = gsample(i, 0);

		if (i == end_at)
			CHECK(!vmctx_session_vcpu_end(sc.s, i * SCEN_TICK_NS - 500, VM_PID(1), 0),
			      "vcpu0 ends before tick %d", i);
		if (i >= 10) {
			smp.pid = smp.tid = 4242;
			smp.vm_tgid = smp.vcpu = -1;
			smp.flags = 0;
			smp.isa = VMCTX_ISA_NONE;
		}
		CHECK(!vmctx_session_sample(sc.s, &smp), "sample %d", i);
	}
	CHECK(!vmctx_session_finish(sc.s, 39 * SCEN_TICK_NS), "finish");
	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), 0);
	CHECK(vmctx_table_total(t) == (uint64_t)(end_at < 0 ? 40 : end_at),
	      "vcpu0 ended at %d: %" PRIu64 " ticks", end_at, vmctx_table_total(t));
	CHECK(vmctx_table_class(t, VMCTX_CLASS_STEAL) == (uint64_t)(end_at < 0 ? 30 : end_at - 10),
	      "vcpu0 ended at %d: %" PRIu64 " ticks of steal", end_at,
	      vmctx_table_class(t, VMCTX_CLASS_STEAL));
	vmctx_table_free(t);
	scen_fini(&sc);
}

/*
 * vcpu0 of VM1 runs ticks 0-9 on pCPU 0, sampled 0.1 tick after each (tick
 * 9 @tick9 after it), and is preempted at 9.5; weighing by time or not.
 */
static struct vmctx_session *ten_ticks_then_preempted(bool weight, uint64_t tick9)
{
	struct vmctx_session_opts o = {
		.sz = sizeof(o), .tick_ns = SCEN_TICK_NS,
		.flags = weight ? VMCTX_SESSION_WEIGHT_BY_TIME : 0,
	};
	const uint64_t T = SCEN_TICK_NS;
	struct vmctx_session *s = vmctx_session_new(&o);
	struct vmctx_sample smp;
	int i;

	CHECK(s, "session");
	declare_vm1(s);
	for (i = 0; i < 10; i++) {
		smp = gsample(i, 0);
		smp.time = i * T + (i == 9 ? tick9 : T / 10);
		CHECK(!vmctx_session_sample(s, &smp), "tick %d", i);
	}
	CHECK(!vmctx_session_switch(s, 9 * T + T / 2, 0, VM_PID(1), 0, true, true), "preempted");
	return s;
}

/*
 * A switch-in counts no tick twice.  pCPU 0's timer fires about 0.1 tick
 * after each tick (tick 9's early, at 9.02): vcpu0 runs ticks 0-9, is
 * preempted, a host task has tick 10, and vcpu0 is switched in at 11.05,
 * 2.03 ticks after its last sample, its next sample coming at 11.1.  It
 * waited one tick (10): a
 * count of whole ticks since its last sample said two, and gave it a tick
 * of "(outside)" that tick 11's sample counts again.  Weighing by time
 * or not, vcpu0 has ticks 0-11, 12.
 */
static void a_switch_in_counts_no_tick_twice(bool weight)
{
	const uint64_t T = SCEN_TICK_NS;
	struct vmctx_session *s = ten_ticks_then_preempted(weight, T / 50);
	struct vmctx_sample smp;
	struct vmctx_table *t;

	smp = gsample(10, 0);
	smp.time = 10 * T + T / 10;
	smp.pid = smp.tid = 4242;
	smp.vm_tgid = smp.vcpu = -1;
	smp.flags = 0;
	smp.isa = VMCTX_ISA_NONE;
	CHECK(!vmctx_session_sample(s, &smp), "the host task's tick");
	CHECK(!vmctx_session_switch(s, 11 * T + T / 20, 0, VM_PID(1), 0, false, false), "switch-in");
	smp = gsample(11, 0);
	smp.time = 11 * T + T / 10;
	CHECK(!vmctx_session_sample(s, &smp), "tick 11");
	CHECK(!vmctx_session_finish(s, smp.time), "finish");
	t = vmctx_table_new(s, VMCTX_VIEW_GUEST, VM_PID(1), 0);
	CHECK(t, "table");
	CHECK(vmctx_table_total(t) == 12 && vmctx_table_class(t, VMCTX_CLASS_STEAL) == 1,
	      "vcpu0 (%s): %" PRIu64 " ticks, %" PRIu64 " of steal (want 12, 1)",
	      weight ? "weighed" : "not weighed", vmctx_table_total(t),
	      vmctx_table_class(t, VMCTX_CLASS_STEAL));
	vmctx_table_free(t);
	vmctx_session_free(s);
}

/*
 * A late timer's sample is the only count of the ticks it missed.  pCPU
 * 0's timer fires 0.1 tick after each tick; vcpu0 runs ticks 0-9, is
 * preempted at 9.5 and switched in again at 11.3, and the timer, late,
 * fires next at 14.1: one sample for ticks 10-14.  vcpu0 lived ticks 0-14,
 * 15 ticks.  Its switch-in used to count tick 10 as its wait, which the
 * late sample's weight counts again: 16.
 */
static void a_late_sample_after_a_switch_in(void)
{
	const uint64_t T = SCEN_TICK_NS;
	struct vmctx_session *s = ten_ticks_then_preempted(true, T / 10);
	struct vmctx_sample smp;
	struct vmctx_table *t;

	CHECK(!vmctx_session_switch(s, 11 * T + 3 * T / 10, 0, VM_PID(1), 0, false, false),
	      "switch-in");
	smp = gsample(14, 0);
	smp.time = 14 * T + T / 10;
	CHECK(!vmctx_session_sample(s, &smp), "the late tick");
	CHECK(vmctx_session_sample_weight(s) == 5, "the late sample weighs %" PRIu64 " (want 5)",
	      vmctx_session_sample_weight(s));
	CHECK(!vmctx_session_finish(s, smp.time), "finish");
	t = vmctx_table_new(s, VMCTX_VIEW_GUEST, VM_PID(1), 0);
	CHECK(t, "table");
	CHECK(vmctx_table_total(t) == 15, "vcpu0: %" PRIu64 " ticks (want 15)",
	      vmctx_table_total(t));
	vmctx_table_free(t);
	vmctx_session_free(s);
}

/* vcpu0 of VM1 runs guest code on pCPU 0 for @n ticks from @tick. */
static int run_guest(struct scen *sc, int tick, int n)
{
	struct vmctx_sample smp;
	int i;

	for (i = 0; i < n; i++, tick++) {
		smp = gsample(tick, 0);
		CHECK(!vmctx_session_sample(sc->s, &smp), "guest sample");
	}
	return tick;
}

/* vcpu0's thread switches out (@out) or in, half a microsecond before @tick. */
static void switch_vcpu0(struct scen *sc, int tick, bool out)
{
	CHECK(!vmctx_session_switch(sc->s, tick * SCEN_TICK_NS - 500, 0, VM_PID(1), 0, out, false),
	      out ? "blocking switch-out" : "switch-in");
}

/*
 * A halt that no sample caught: the vCPU runs (last exit an interrupt),
 * its thread blocks, the pCPU idles, kvm_vcpu_wakeup says the halt ended,
 * and the pCPU runs something else before the vCPU is switched back in.
 * The blocked wait up to the wake-up is [idle], the rest [steal]; without
 * the wake-up nothing says the guest halted, so it is all steal.
 */
static void wakeup_ends_an_unseen_halt(bool wakeup)
{
	const int RUN = 10, IDLE = 20, STEAL = 5;
	struct vmctx_table *t;
	struct scen sc;
	int i, tick = 0;

	CHECK(!scen_init(&sc, SCEN_TICK_NS), "session");
	declare_vm1(sc.s);
	tick = run_guest(&sc, tick, RUN);
	switch_vcpu0(&sc, tick, true);
	for (i = 0; i < IDLE + STEAL; i++, tick++) {
		struct vmctx_sample h = {
			.sz = sizeof(h), .time = tick * SCEN_TICK_NS, .cpu = 0,
			.pid = i < IDLE ? 0 : 2000, .tid = i < IDLE ? 0 : 2000, .vm_tgid = -1,
			.vcpu = -1, .flags = i < IDLE ? VMCTX_SAMPLE_IDLE : VMCTX_SAMPLE_USER,
			.ip = 0x401000, .host_sym = i < IDLE ? "default_idle" : "main",
			.host_dso = i < IDLE ? "[kernel.kallsyms]" : "make",
		};

		if (i == IDLE && wakeup)
			CHECK(!vmctx_session_halt(sc.s, tick * SCEN_TICK_NS - 500, VM_PID(1), 0,
						  false), "kvm_vcpu_wakeup");
		CHECK(!vmctx_session_sample(sc.s, &h), "host sample");
	}
	switch_vcpu0(&sc, tick, false);
	tick = run_guest(&sc, tick, RUN);
	CHECK(!vmctx_session_finish(sc.s, (tick - 1) * SCEN_TICK_NS), "finish");
	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), 0);
	CHECK_EQ(vmctx_table_total(t), 2 * RUN + IDLE + STEAL, "a tick for every tick of the window");
	CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_IDLE), wakeup ? IDLE : 0,
		 wakeup ? "woken: the blocked wait was idle" : "no wake-up: no idle");
	CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_STEAL), wakeup ? STEAL : IDLE + STEAL,
		 wakeup ? "runnable after the wake-up: steal" : "no wake-up: all steal");
	vmctx_table_free(t);
	scen_fini(&sc);
}

/*
 * The usual order on a real host: the halted vCPU's thread is switched
 * back in first, and kvm_vcpu_wakeup fires after that, as the thread
 * leaves kvm_vcpu_halt().  The held wait is then idle, also when a tick
 * of the vCPU's thread (last exit HLT) comes first; a vCPU that blocked
 * on something else (no wake-up, no HLT) was not halted: steal.
 */
static void wakeup_after_the_switch_in(bool wakeup, bool hlt_sample)
{
	const int RUN = 10, IDLE = 20;
	struct vmctx_table *t;
	struct scen sc;
	int i, tick = 0;

	CHECK(!scen_init(&sc, SCEN_TICK_NS), "session");
	declare_vm1(sc.s);
	tick = run_guest(&sc, tick, RUN);
	switch_vcpu0(&sc, tick, true);
	for (i = 0; i < IDLE; i++, tick++) {
		struct vmctx_sample h = {
			.sz = sizeof(h), .time = tick * SCEN_TICK_NS, .cpu = 0, .vm_tgid = -1,
			.vcpu = -1, .flags = VMCTX_SAMPLE_IDLE, .host_sym = "default_idle",
		};

		CHECK(!vmctx_session_sample(sc.s, &h), "idle sample");
	}
	switch_vcpu0(&sc, tick, false);
	if (hlt_sample) {
		/* a tick lands before the wake-up: host code for the vCPU, last exit HLT */
		struct vmctx_sample h = gsample(tick - 1, 0);

		h.time = tick * SCEN_TICK_NS - 450;
		h.flags = VMCTX_SAMPLE_HOST_VCPU;
		h.exit_reason = 0x78;	/* SVM hlt */
		CHECK(!vmctx_session_sample(sc.s, &h), "host-for-vCPU sample");
	}
	if (wakeup)
		CHECK(!vmctx_session_halt(sc.s, tick * SCEN_TICK_NS - 400, VM_PID(1), 0, false),
		      "kvm_vcpu_wakeup after the switch-in");
	tick = run_guest(&sc, tick, RUN);
	CHECK(!vmctx_session_finish(sc.s, (tick - 1) * SCEN_TICK_NS), "finish");
	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), 0);
	CHECK_EQ(vmctx_table_total(t), 2 * RUN + IDLE + hlt_sample,
		 "a tick for every tick of the window");
	/* the HLT sample is itself a tick of the halt: idle */
	CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_IDLE), wakeup || hlt_sample ? IDLE + hlt_sample : 0,
		 wakeup || hlt_sample ? "woken after the switch-in: idle" :
		 "blocked, never woken: no idle");
	CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_STEAL), wakeup || hlt_sample ? 0 : IDLE,
		 wakeup || hlt_sample ? "no steal" : "blocked, never woken: steal");
	vmctx_table_free(t);
	scen_fini(&sc);
}

/*
 * A nested host's timer misses ticks while the host runs guest code (its
 * own vCPU was not running), not while it idles.  1 ms ticks; the guest
 * runs for 298 ms but is sampled every 3 ms, then halts for 600 ms that
 * are sampled every 1 ms.  Weighted by time, each late sample stands for
 * the ticks since the last one on its pCPU; without the weighting, those
 * ticks are filled as blank time (steal), as for a PMU.
 */
static void clock_samples_weighted_by_time(bool weight)
{
	const uint64_t MS = 1000000;
	struct vmctx_session_opts o = {
		.sz = sizeof(o), .tick_ns = MS,
		.flags = weight ? VMCTX_SESSION_WEIGHT_BY_TIME : 0,
	};
	struct vmctx_session *s = vmctx_session_new(&o);
	struct vmctx_sample smp;
	struct vmctx_table *t;
	uint64_t ms;

	CHECK(s, "session");
	if (!s)
		return;
	declare_vm1(s);
	for (ms = 1; ms <= 298; ms += 3) {
		smp = gsample(0, 0);
		smp.time = ms * MS;
		smp.flags = VMCTX_SAMPLE_GUEST;
		smp.cpl = 3;
		CHECK(!vmctx_session_sample(s, &smp), "guest sample");
	}
	smp = gsample(0, 0);
	smp.time = 299 * MS;
	smp.flags = VMCTX_SAMPLE_HOST_VCPU;
	smp.exit_reason = 0x78;		/* SVM hlt */
	CHECK(!vmctx_session_sample(s, &smp), "HLT exit");
	CHECK(!vmctx_session_switch(s, 299 * MS + MS / 2, 0, VM_PID(1), 0, true, false), "block");
	for (ms = 300; ms < 900; ms++) {
		struct vmctx_sample h = {
			.sz = sizeof(h), .time = ms * MS, .cpu = 0, .vm_tgid = -1, .vcpu = -1,
			.flags = VMCTX_SAMPLE_IDLE, .host_sym = "default_idle",
		};

		CHECK(!vmctx_session_sample(s, &h), "idle sample");
	}
	CHECK(!vmctx_session_finish(s, 899 * MS), "finish");
	t = vmctx_table_new(s, VMCTX_VIEW_GUEST, VM_PID(1), -1);
	CHECK(t, "guest table");
	if (t) {
		CHECK_EQ(vmctx_table_total(t), 899, "a tick per ms of the window");
		CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_USER), weight ? 298 : 100,
			 weight ? "late samples stand for the ticks they missed" : "one tick each");
		CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_STEAL), weight ? 0 : 198,
			 weight ? "no false steal" : "missed ticks filled as steal");
		CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_IDLE), 601, "the halt is idle");
	}
	vmctx_table_free(t);
	t = vmctx_table_new(s, VMCTX_VIEW_HOST, -1, -1);
	CHECK(t, "host table");
	if (t)
		/* + 1: the HLT exit, KVM's work for the vCPU, is the VM's too */
		CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_VM), (weight ? 298 : 100) + 1,
			 "host view weights guest samples the same way");
	vmctx_table_free(t);
	vmctx_session_free(s);
}

/* The host view of @s: @vm ticks of guest code (@what) and @lost lost ones. */
static void host_vm_and_lost(struct vmctx_session *s, uint64_t vm, uint64_t lost, const char *what)
{
	struct vmctx_table *t = vmctx_table_new(s, VMCTX_VIEW_HOST, -1, -1);

	CHECK(t, "host table");
	if (t) {
		CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_VM), vm, what);
		CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_LOST), lost, "lost ticks counted once");
	}
	vmctx_table_free(t);
}

/* Weighting needs the tick; a lost record restarts it; flags are checked. */
static void weighting_is_bounded(void)
{
	struct vmctx_session_opts o = { .sz = sizeof(o), .flags = VMCTX_SESSION_WEIGHT_BY_TIME };
	struct vmctx_session *s;
	struct vmctx_sample smp;

	errno = 0;
	CHECK(!vmctx_session_new(&o) && errno == EINVAL, "weighting without tick_ns: EINVAL");
	o.tick_ns = 1000;
	o.flags = 0x80;
	errno = 0;
	CHECK(!vmctx_session_new(&o) && errno == EINVAL, "unknown flag: EINVAL");
	o.flags = VMCTX_SESSION_WEIGHT_BY_TIME;
	s = vmctx_session_new(&o);
	CHECK(s, "session");
	if (!s)
		return;
	declare_vm1(s);
	smp = gsample(0, 0);
	smp.time = 1000;
	CHECK(!vmctx_session_sample(s, &smp), "first sample");
	CHECK(!vmctx_session_lost(s, 5000, 0, 3), "lost record");
	smp.time = 6000;
	CHECK(!vmctx_session_sample(s, &smp), "after the loss");
	smp.time = 6000 + 1000 * 2000000ULL;	/* a clock jump, not a late timer */
	CHECK(!vmctx_session_sample(s, &smp), "after a jump");
	host_vm_and_lost(s, 3, 3, "one tick each after a loss or a jump");
	vmctx_session_free(s);
}

static void report_has_the_papers_header(void)
{
	VMCTX_OPTS(vmctx_format_opts, five, .max_rows = 5);
	struct vmctx_table *t;
	struct scen sc;
	char *text = NULL;

	CHECK(!scen_init(&sc, SCEN_TICK_NS) && !scen_two_vcpus(&sc, 50, 20), "stream accepted");
	t = table(&sc, VMCTX_VIEW_GUEST, VM_PID(1), 0);
	CHECK(!vmctx_table_format(t, &five, &text) && text, "format");
	/* 2000 ticks: 1000 (on vcpu1) + 50 (outside) steal; guest 950, 1/20 of it kernel */
	CHECK(text && strstr(text, "Total samples: 2000  OS:USER:steal:idle = "
			     "2.35%:45.15%:52.50%:0.00%\n"), "header:\n%s", text ? text : "");
	CHECK(text && strstr(text, "   Samples  %Ratio  Function"), "column header");
	CHECK(text && strstr(text, "1000   50.00  [steal]"), "steal row");
	CHECK(text && strstr(text, "Steal by exit reason: EXTERNAL_INTERRUPT"), "exit breakdown");
	free(text);
	vmctx_table_free(t);
	t = table(&sc, VMCTX_VIEW_HOST, -1, -1);
	CHECK(!vmctx_table_format(t, NULL, &text) && text &&
	      strstr(text, "[guestOS1]                       (VM1)"), "host row for the VM");
	free(text);
	vmctx_table_free(t);
	scen_fini(&sc);
}

/*
 * A VM is its tgid and must be declared: a call naming an undeclared VM
 * (a VM number passed as a tgid, say) fails and creates nothing.
 */
static void undeclared_vms_are_refused(void)
{
	struct vmctx_bundle *b = scen_guest_bundle("g", 1);
	struct vmctx_sample smp = gsample(0, 0);
	struct vmctx_session *s = vmctx_session_new(NULL);
	struct vmctx_table *t;

	CHECK_EQ(vmctx_session_sample(s, &smp), -ENOENT, "sample of an undeclared VM");
	CHECK_EQ(vmctx_session_switch(s, 1, 0, VM_PID(1), 0, true, false), -ENOENT,
		 "switch of an undeclared VM");
	CHECK_EQ(vmctx_session_halt(s, 1, VM_PID(1), 0, true), -ENOENT, "halt of an undeclared VM");
	CHECK_EQ(vmctx_session_attach_bundle(s, VM_PID(1), b, 0), -ENOENT,
		 "bundle for an undeclared VM");
	CHECK_EQ(vmctx_session_nvms(s), 0, "nothing was declared on the way");
	declare_vm1(s);
	CHECK_EQ(vmctx_session_add_vm(s, VM_PID(2), "two"), 2, "the next VM is vm_nr 2");
	CHECK_EQ(vmctx_session_add_vm(s, VM_PID(1), "one"), 1, "declaring again renames");
	CHECK_EQ(vmctx_session_attach_bundle(s, VM_PID(1), b, 0), 0, "bundle for VM1");
	CHECK(!vmctx_session_sample(s, &smp), "sample of VM1");
	smp.vm_tgid = 1;
	CHECK_EQ(vmctx_session_sample(s, &smp), -ENOENT, "a vm_nr is not a vm_tgid");
	CHECK_EQ(vmctx_session_vm_tgid(s, 2), VM_PID(2), "vm_nr 2 is VM_PID(2)");
	CHECK_EQ(vmctx_session_vm_nr(s, VM_PID(1)), 1, "VM_PID(1) is vm_nr 1");
	CHECK_EQ(vmctx_session_vm_tgid(s, 3), -ENOENT, "no vm_nr 3");
	CHECK_EQ(vmctx_session_vm_nr(s, 1), -ENOENT, "no VM of tgid 1");
	CHECK(!strcmp(vmctx_session_vm_name(s, VM_PID(1)), "one"), "VM1 keeps its given name");
	CHECK(!vmctx_session_vm_name(s, 1) && errno == ENOENT, "no name for tgid 1");
	CHECK_EQ(vmctx_session_vm_nvcpus(s, VM_PID(1)), 1, "VM1 has one vCPU");
	CHECK_EQ(vmctx_session_vm_nvcpus(s, 1), 0, "no vCPUs for tgid 1");
	CHECK_EQ(vmctx_session_vm_vcpu(s, VM_PID(1), 0), 0, "VM1's vcpu0");
	errno = 0;
	CHECK(!vmctx_table_new(s, VMCTX_VIEW_GUEST, 1, -1) && errno == ENOENT,
	      "no guest table for tgid 1");
	t = vmctx_table_new(s, VMCTX_VIEW_GUEST, VM_PID(2), -1);
	CHECK(t && !vmctx_table_total(t), "a declared VM without samples has an empty table");
	vmctx_table_free(t);
	vmctx_session_free(s);
	vmctx_bundle_free(b);
}

/*
 * A VM's vCPUs come back in id order whatever order they were met in,
 * from a const session, as often as asked.
 */
static void vcpus_are_listed_in_id_order(void)
{
	static const int met[] = { 5, 2, 7, 0, 3 }, sorted[] = { 0, 2, 3, 5, 7 };
	struct vmctx_session *s = vmctx_session_new(NULL);
	const struct vmctx_session *cs = s;
	size_t i;

	declare_vm1(s);
	for (i = 0; i < sizeof(met) / sizeof(met[0]); i++) {
		struct vmctx_sample smp = gsample(i, met[i]);

		CHECK(!vmctx_session_sample(s, &smp), "sample of vcpu%d", met[i]);
	}
	CHECK_EQ(vmctx_session_vm_nvcpus(cs, VM_PID(1)), 5, "five vCPUs seen");
	for (i = 0; i < 5; i++) {
		CHECK(vmctx_session_vm_vcpu(cs, VM_PID(1), i) == sorted[i], "vCPU at position %zu", i);
		CHECK(vmctx_session_vm_vcpu(cs, VM_PID(1), i) == sorted[i], "position %zu again", i);
	}
	CHECK_EQ(vmctx_session_vm_vcpu(cs, VM_PID(1), 5), -ENOENT, "past the last vCPU");
	CHECK_EQ(vmctx_session_vm_vcpu(cs, 1, 0), -ENOENT, "no vCPU of an unknown VM");
	CHECK_EQ(vmctx_session_vm_vcpu(NULL, VM_PID(1), 0), -ENOENT, "NULL session");
	vmctx_session_free(s);
}

/* A VM named by default takes its bundle's host name; a given name stays. */
static void bundles_name_vms_named_by_default(void)
{
	struct vmctx_bundle *b = scen_guest_bundle("guest-host", 1);
	struct vmctx_bundle *u = vmctx_bundle_new();
	struct vmctx_session *s = vmctx_session_new(NULL);

	CHECK_EQ(vmctx_session_add_vm(s, VM_PID(1), NULL), 1, "VM1 declared");
	CHECK_EQ(vmctx_session_add_vm(s, VM_PID(2), "pidgin"), 2, "VM2 declared");
	CHECK(!strcmp(vmctx_session_vm_name(s, VM_PID(1)), "pid1001"), "default name");
	CHECK_EQ(vmctx_session_attach_bundle(s, VM_PID(1), u, 0), -VMCTX_E_UNSEALED,
		 "an unsealed bundle is refused");
	CHECK(!vmctx_session_attach_bundle(s, VM_PID(1), b, 0) &&
	      !vmctx_session_attach_bundle(s, VM_PID(2), b, 0), "bundles attached");
	CHECK(!strcmp(vmctx_session_vm_name(s, VM_PID(1)), "guest-host"),
	      "the bundle names a VM named by default");
	CHECK(!strcmp(vmctx_session_vm_name(s, VM_PID(2)), "pidgin"), "a given name stays");
	vmctx_session_free(s);
	vmctx_bundle_free(u);
	vmctx_bundle_free(b);
}

/*
 * A bundle with one process a root: @n processes at ROOT(roots[i]), each
 * running function names[i] at 0x400010.
 */
static struct vmctx_bundle *bundle_of(int n, const int *roots, const char *const *names)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int i, ok = b != NULL;

	for (i = 0; ok && i < n; i++) {
		char path[32];
		int o, t;

		snprintf(path, sizeof(path), "/usr/bin/p%d", i);
		o = vmctx_bundle_add_object(b, path, NULL);
		t = vmctx_bundle_add_task(b, ROOT(roots[i]), 300 + i, 300 + i, names[i], 0,
					  VMCTX_TIME_NONE);
		ok = o >= 0 && t >= 0 && !vmctx_bundle_add_symbol(b, o, 0x10, 0x100, names[i]) &&
		     !vmctx_bundle_add_map(b, t, 0x400000, 0x402000, 0, 0x400000, o, path);
	}
	if (ok && !vmctx_bundle_seal(b))
		return b;
	vmctx_bundle_free(b);
	return NULL;
}

/*
 * A bundle attached again to a VM resolves the VM's next samples: a vCPU
 * that resolved a root through the first does not keep its answer.  (The
 * root is the first bundle's first task and the second's second.)
 */
static void a_bundle_attached_again_resolves(void)
{
	static const int roots_a[] = { 0 }, roots_b[] = { 1, 0 };
	static const char *const names_a[] = { "in_first" }, *const names_b[] = { "other", "in_second" };
	struct vmctx_bundle *a = bundle_of(1, roots_a, names_a), *b = bundle_of(2, roots_b, names_b);
	struct vmctx_session *s = vmctx_session_new(NULL);
	struct vmctx_table *t;
	const char *f = NULL;
	int i, err = 0;

	declare_vm1(s);
	CHECK(a && b && !vmctx_session_attach_bundle(s, VM_PID(1), a, 0), "first bundle attached");
	for (i = 0; i < 20; i++) {
		struct vmctx_sample smp = gsample(i, 0);

		if (i == 10 && vmctx_session_attach_bundle(s, VM_PID(1), b, 0))
			err = -1;
		smp.cpl = 3;
		smp.ip = 0x400010;
		err = err ? err : vmctx_session_sample(s, &smp);
	}
	CHECK(!err && !vmctx_session_finish(s, 20 * SCEN_TICK_NS), "samples through both bundles");
	t = vmctx_table_new(s, VMCTX_VIEW_GUEST, VM_PID(1), -1);
	for (i = 0; t && i < (int)vmctx_table_nrows(t); i++) {
		uint64_t n;

		vmctx_table_row(t, i, &n, &f, NULL);
		CHECK(!strcmp(f, "in_first") || !strcmp(f, "in_second"),
		      "row %d: %" PRIu64 " samples in %s, a function no task at the root ran", i, n, f);
	}
	CHECK(t && vmctx_table_nrows(t) == 2, "two rows, one a bundle (%zu)", vmctx_table_nrows(t));
	vmctx_table_free(t);
	vmctx_session_free(s);
	vmctx_bundle_free(a);
	vmctx_bundle_free(b);
}

/*
 * A vCPU's user samples name the function of the task that ran them at
 * that IP, whatever its sample before named: two tasks map two objects at
 * the same addresses, and the samples go back and forth between the tasks
 * and between two functions of each.  (The session keeps a vCPU's last
 * map and symbol, which must not outlive their task.)
 */
static void user_names_follow_the_task_and_ip(void)
{
	static const struct {
		int task;
		uint64_t ip;
	} seq[] = {
		{ 0, 0x401010 }, { 0, 0x401110 }, { 0, 0x401010 }, { 1, 0x401010 },
		{ 1, 0x401110 }, { 0, 0x401110 }, { 0, 0x500000 }, { 1, 0x401020 },
	};
	static const char *const fn[2][2] = { { "a_one", "a_two" }, { "b_one", "b_two" } };
	struct vmctx_bundle *b = vmctx_bundle_new();
	struct vmctx_session *s = vmctx_session_new(NULL);
	uint64_t want[2][2] = { { 0 } }, unresolved = 0;
	struct vmctx_table *t;
	int i, task, obj, err = !b;

	for (task = 0; task < 2 && !err; task++) {
		obj = vmctx_bundle_add_object(b, task ? "/usr/bin/b" : "/usr/bin/a",
					      task ? "bb" : "aa");
		err = obj < 0 ||
		      vmctx_bundle_add_symbol(b, obj, 0x401000, 0x100, fn[task][0]) ||
		      vmctx_bundle_add_symbol(b, obj, 0x401100, 0x100, fn[task][1]);
		i = err ? -1 : vmctx_bundle_add_task(b, ROOT(task), 300 + task, 300 + task,
						     task ? "b" : "a", 0, VMCTX_TIME_NONE);
		err = err || i < 0 ||
		      vmctx_bundle_add_map(b, i, 0x400000, 0x402000, 0, 0, obj,
					   task ? "/usr/bin/b" : "/usr/bin/a");
	}
	CHECK(!err && !vmctx_bundle_seal(b), "two tasks, two objects at the same addresses");
	declare_vm1(s);
	CHECK(!vmctx_session_attach_bundle(s, VM_PID(1), b, 0), "bundle attached");
	for (i = 0; i < (int)(sizeof(seq) / sizeof(seq[0])); i++) {
		struct vmctx_sample smp = gsample(i, 0);

		smp.cpl = 3;
		smp.cr3 = ROOT(seq[i].task);
		smp.ip = seq[i].ip;
		CHECK(!vmctx_session_sample(s, &smp), "sample %d", i);
		if (seq[i].ip >= 0x402000)
			unresolved++;
		else
			want[seq[i].task][(seq[i].ip - 0x401000) / 0x100]++;
	}
	CHECK(!vmctx_session_finish(s, i * SCEN_TICK_NS), "finished");
	t = vmctx_table_new(s, VMCTX_VIEW_GUEST, VM_PID(1), -1);
	for (task = 0; task < 2; task++)
		for (i = 0; i < 2; i++)
			CHECK(vmctx_table_lookup(t, fn[task][i], NULL) == want[task][i],
			      "%" PRIu64 " samples of %s, want %" PRIu64,
			      vmctx_table_lookup(t, fn[task][i], NULL), fn[task][i], want[task][i]);
	CHECK(vmctx_table_class(t, VMCTX_CLASS_USER) == sizeof(seq) / sizeof(seq[0]),
	      "every sample is user code, %" PRIu64 " of them outside any map", unresolved);
	vmctx_table_free(t);
	vmctx_session_free(s);
	vmctx_bundle_free(b);
}

static void bad_input_is_refused(void)
{
	struct vmctx_sample smp = gsample(0, 0);
	struct vmctx_session *s = vmctx_session_new(NULL);

	declare_vm1(s);
	smp.vm_tgid = -1;
	CHECK(vmctx_session_sample(s, &smp) == -EINVAL, "guest sample without a VM");
	smp = gsample(0, 0);
	smp.cpu = 1u << 30;
	CHECK(vmctx_session_sample(s, &smp) == -EINVAL, "absurd pCPU number");
	smp = gsample(0, 0);
	smp.vcpu = 1 << 30;
	CHECK(vmctx_session_sample(s, &smp) == -EINVAL, "absurd vCPU id");
	smp = gsample(0, 0);
	smp.sz = 8;
	CHECK(vmctx_session_sample(s, &smp) == -EINVAL, "short struct");
	CHECK(!vmctx_table_new(s, VMCTX_VIEW_GUEST, 7, -1) && errno == ENOENT, "unknown VM");
	CHECK(!vmctx_table_new(s, 42, -1, -1) && errno == EINVAL, "unknown view");
	CHECK(!vmctx_session_finish(s, 0), "finish");
	smp = gsample(1, 0);
	CHECK(vmctx_session_sample(s, &smp) == -EINVAL, "no samples after finish");
	vmctx_session_free(s);
	vmctx_session_free(NULL);
	vmctx_table_free(NULL);
}

/* A hostile stream cannot make the session grow without bound. */
static void hostile_streams_are_bounded(void)
{
	struct vmctx_session_opts o = { .sz = sizeof(o), .tick_ns = SCEN_TICK_NS,
					.max_pcpus = 4, .max_vcpus = 3 };
	struct vmctx_session *s = vmctx_session_new(&o);
	struct vmctx_sample smp;
	struct vmctx_table *t;
	int i, err;

	declare_vm1(s);
	smp = gsample(0, 0);
	smp.cpu = 4;
	CHECK(vmctx_session_sample(s, &smp) == -EINVAL, "pCPU beyond max_pcpus");
	for (i = 0; i < 3; i++) {
		smp = gsample(i, i);
		CHECK(!vmctx_session_sample(s, &smp), "vCPU %d within max_vcpus", i);
	}
	smp = gsample(3, 3);
	err = vmctx_session_sample(s, &smp);
	CHECK(err == -E2BIG, "a vCPU beyond max_vcpus is refused (got %d)", err);
	/* 1000 distinct unnamed exit reasons: one "other" row, not 1000 */
	for (i = 0; i < 1000; i++) {
		smp = gsample(10 + 2 * i, i % 2);
		smp.flags = VMCTX_SAMPLE_HOST_VCPU;
		smp.exit_reason = 0x100000 + i;
		CHECK(!vmctx_session_sample(s, &smp), "host sample %d", i);
	}
	CHECK(!vmctx_session_finish(s, 3000 * SCEN_TICK_NS), "finish");
	t = vmctx_table_new(s, VMCTX_VIEW_GUEST, VM_PID(1), -1);
	CHECK_EQ(vmctx_table_nsteal_reasons(t), 2, "unnamed exits share a row (plus intr)");
	{
		uint64_t reason = 0, n = 0;

		vmctx_table_steal_reason(t, 0, &reason, &n);
		CHECK(reason == VMCTX_EXIT_OTHER, "the biggest steal row is 'other'");
	}
	vmctx_table_free(t);
	vmctx_session_free(s);
}

/*
 * A new session of vm1's vcpu0, sampled on pCPU 0 at @ms[] ms; before
 * sample @lost_at, a lost record of @lost ticks at 10 ms.
 */
static struct vmctx_session *samples_at_ms(bool weight, const int *ms, size_t n,
					   size_t lost_at, uint64_t lost)
{
	struct vmctx_session_opts o = {
		.sz = sizeof(o), .tick_ns = SCEN_TICK_NS,
		.flags = weight ? VMCTX_SESSION_WEIGHT_BY_TIME : 0,
	};
	struct vmctx_session *s = vmctx_session_new(&o);
	size_t i;

	CHECK(s, "session");
	if (!s)
		return NULL;
	declare_vm1(s);
	for (i = 0; i < n; i++) {
		struct vmctx_sample smp = gsample(ms[i], 0);

		if (i == lost_at)
			CHECK(!vmctx_session_lost(s, 10 * SCEN_TICK_NS, 0, lost), "lost record");
		CHECK(!vmctx_session_sample(s, &smp), "sample at %d ms", ms[i]);
	}
	return s;
}

/*
 * Found by fuzz-session: a stream that goes back in time and forward again
 * counted the same ticks twice, as weight (a sample stood for the ticks
 * since an earlier sample of its pCPU) and as filled blank time.  vcpu0
 * is sampled at 0, 10, 0 and 10 ms on one pCPU: the window is 11 ticks.
 * Weighted by time, the two samples that come with no new time fall in
 * slots already counted and weigh nothing; one tick a sample, they are a
 * tick each.
 */
static void time_going_back_is_counted_once(bool weight)
{
	static const int ms[] = { 0, 10, 0, 10 };
	struct vmctx_session *s;
	struct vmctx_table *t;

	s = samples_at_ms(weight, ms, sizeof(ms) / sizeof(ms[0]), SIZE_MAX, 0);
	if (!s)
		return;
	CHECK(!vmctx_session_finish(s, 10 * SCEN_TICK_NS), "finish");
	t = vmctx_table_new(s, VMCTX_VIEW_HOST, -1, -1);
	/* weighted: 1 + 10 + 0 + 0, the 11 slots; else one tick a sample */
	CHECK_EQ(vmctx_table_total(t), weight ? 11 : 4, "host view: the pCPU's time once");
	vmctx_table_free(t);
	t = vmctx_table_new(s, VMCTX_VIEW_GUEST, VM_PID(1), 0);
	CHECK_EQ(vmctx_table_total(t), weight ? 11 : 11 + 2,
		 "vcpu0: the window once (and two repeated samples, unweighted)");
	vmctx_table_free(t);
	vmctx_session_free(s);
}

/*
 * Found by fuzz-session: a sample from before the first one of its pCPU
 * started the count of tick slots over at its own time, and the next
 * sample then weighed again every slot up to it.  vcpu0 is sampled at 5
 * and 10 ms, then at 0 and 10 ms, on one pCPU; then, after a lost record
 * of 2 ticks at 10 ms, at 1 ms (late) and 12 ms.  Weighted by time the
 * samples at 5 and 10 ms weigh 1 and 5, the slots from 5 to 10 ms; the
 * three that come with no new time, at 0, 10 and 1 ms, nothing; the one
 * at 12 ms starts the count again after the loss, 1: 7 in all, and the 2
 * lost ticks.  Counting from each new start again, the second 10 ms
 * sample weighed 10 and the 12 ms one 11: 29.
 */
static void time_before_the_origin_is_counted_once(void)
{
	static const int ms[] = { 5, 10, 0, 10, 1, 12 };
	struct vmctx_session *s = samples_at_ms(true, ms, sizeof(ms) / sizeof(ms[0]), 4, 2);

	if (!s)
		return;
	CHECK(!vmctx_session_finish(s, 12 * SCEN_TICK_NS), "finish");
	host_vm_and_lost(s, 7, 2, "each slot once");
	vmctx_session_free(s);
}

/*
 * A clock whose timer fires late, then on time: vcpu0 runs on one pCPU,
 * sampled at 0, then 1.6 and 2 ticks, 3.6 and 4, ... up to 200 ticks, and
 * its host sample every other slot (the same pattern, KVM's work for it).
 * Weighted by time, the pCPU spans slots 0..200: the host view, and the
 * vCPU's stream, are 201 ticks whatever the jitter; one tick a sample, the
 * host view is as many as there were samples.  Then random gaps of 0.3 to 1.7 ticks: the
 * weights still sum to the slots spanned.
 */
static void late_ticks_sum_to_the_time(bool weight)
{
	struct vmctx_session_opts o = {
		.sz = sizeof(o), .tick_ns = SCEN_TICK_NS,
		.flags = weight ? VMCTX_SESSION_WEIGHT_BY_TIME : 0,
	};
	struct vmctx_session *s = vmctx_session_new(&o);
	uint64_t t0 = 0, sum = 0, rnd = 7, n = 0, i, last = 0;
	struct vmctx_sample smp;
	struct vmctx_table *t;

	CHECK(s, "session");
	if (!s)
		return;
	declare_vm1(s);
	for (i = 0; i <= 200; i += 2) {
		smp = gsample(0, 0);
		smp.time = i * SCEN_TICK_NS;
		CHECK(!vmctx_session_sample(s, &smp), "sample at %" PRIu64 " ticks", i);
		n++;
		if (i == 200)
			break;
		smp.time += SCEN_TICK_NS + SCEN_TICK_NS * 6 / 10;
		if (i % 4)
			smp.flags = VMCTX_SAMPLE_HOST_VCPU;
		CHECK(!vmctx_session_sample(s, &smp), "late sample");
		n++;
	}
	CHECK(!vmctx_session_finish(s, 200 * SCEN_TICK_NS), "finish");
	t = vmctx_table_new(s, VMCTX_VIEW_HOST, -1, -1);
	CHECK_EQ(vmctx_table_total(t), weight ? 201 : n, "host view: the pCPU's slots, once");
	vmctx_table_free(t);
	t = vmctx_table_new(s, VMCTX_VIEW_GUEST, VM_PID(1), 0);
	/* unweighted, the slot each late sample skipped is filled as blank */
	CHECK_EQ(vmctx_table_total(t), weight ? 201 : n + 100, "vcpu0: the same slots");
	vmctx_table_free(t);
	vmctx_session_free(s);
	if (!weight)
		return;

	/* random gaps: each weight as vmctx_session_sample_weight() says */
	s = vmctx_session_new(&o);
	CHECK(s, "session");
	if (!s)
		return;
	declare_vm1(s);
	t0 = 5 * SCEN_TICK_NS + 123;
	for (i = 0; i < 5000; i++) {
		rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
		last = i ? last + SCEN_TICK_NS * 3 / 10 + (rnd >> 33) % (SCEN_TICK_NS * 14 / 10)
			 : t0;
		smp = gsample(0, 0);
		smp.time = last;
		CHECK(!vmctx_session_sample(s, &smp), "sample %" PRIu64, i);
		sum += vmctx_session_sample_weight(s);
	}
	/* slots of the first sample's: the span, to the nearest tick, and its own */
	CHECK_EQ(sum, (last - t0 + SCEN_TICK_NS / 2) / SCEN_TICK_NS + 1,
		 "random gaps: the weights sum to the slots spanned");
	CHECK(!vmctx_session_finish(s, last), "finish");
	t = vmctx_table_new(s, VMCTX_VIEW_HOST, -1, -1);
	CHECK_EQ(vmctx_table_total(t), sum, "the host view is the weights");
	vmctx_table_free(t);
	vmctx_session_free(s);
}

/*
 * Experiment 4's shape with a jittery timer: three VMs take turns on one
 * pCPU, R ticks each for N rounds, each sample but the first up to 0.45
 * ticks off its tick, so in its own slot.  A VM's wait is exactly the other VMs' ticks:
 * its steal names them, tick for tick, and nothing is "(outside)".  The
 * vCPU's gaps rounded on their own, against the pCPU's slots, once moved a
 * tick now and then between the VMs and "(outside)" (the lab's exp4 found
 * 2-4 points of the wait there).
 */
static void turns_on_a_jittery_clock(void)
{
	enum { R = 7, N = 30 };
	struct vmctx_session_opts o = {
		.sz = sizeof(o), .tick_ns = SCEN_TICK_NS, .flags = VMCTX_SESSION_WEIGHT_BY_TIME,
	};
	struct vmctx_session *s = vmctx_session_new(&o);
	uint64_t rnd = 11, t = 0, i;
	int vm, k;

	CHECK(s, "session");
	if (!s)
		return;
	for (vm = 1; vm <= 3; vm++)
		CHECK(vmctx_session_add_vm(s, VM_PID(vm), NULL) == vm, "VM%d declared", vm);
	for (i = 0; i < 3 * R * N; i++) {
		struct vmctx_sample smp = gsample(0, 0);

		vm = 1 + (int)(i / R % 3);
		rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
		/* the first on its tick: the pCPU's slots are the ticks */
		t = (i + 1) * SCEN_TICK_NS;
		if (i)
			t += (rnd >> 33) % (SCEN_TICK_NS * 9 / 10) - SCEN_TICK_NS * 45 / 100;
		smp.time = t;
		smp.pid = smp.vm_tgid = VM_PID(vm);
		smp.tid = VM_PID(vm) + 1;
		CHECK(!vmctx_session_sample(s, &smp), "sample %" PRIu64, i);
	}
	CHECK(!vmctx_session_finish(s, t), "finish");
	for (vm = 1; vm <= 3; vm++) {
		struct vmctx_table *g = vmctx_table_new(s, VMCTX_VIEW_GUEST, VM_PID(vm), -1);

		for (k = 1; k <= 3; k++) {
			char by[8];
			/* a VM after this one in a round ran once more in its window */
			uint64_t want = k == vm ? 0 : (uint64_t)R * (k > vm ? N : N - 1);

			snprintf(by, sizeof(by), "(VM%d)", k);
			CHECK_EQ(vmctx_table_lookup(g, "[steal]", by), want, "steal of one VM by another");
		}
		CHECK_EQ(vmctx_table_lookup(g, "[steal]", "(outside)"), 0, "no tick outside");
		vmctx_table_free(g);
	}
	vmctx_session_free(s);
}

/*
 * A vCPU waits while 40 others of its VM take one tick each of its pCPU.
 * Its blank time is exact; the owners named are bounded, as libvmctx(3)
 * says: the pCPU remembers its last 32 runs, and a vCPU names 16 owners.
 * So vcpu1..8 are before the ring, vcpu9..24 named (oldest first) and
 * vcpu25..40 past the 16: 24 "(others)", 16 "(on vcpuN)" rows of one tick.
 */
static void steal_names_a_bounded_number_of_owners(void)
{
	const int OTHERS = 40;
	struct vmctx_session *s = vmctx_session_new(NULL);
	struct vmctx_table *t;
	int i;

	declare_vm1(s);
	for (i = 0; i <= OTHERS + 1; i++) {
		/* vcpu0, then vcpu1..40, then vcpu0 again */
		struct vmctx_sample smp = gsample(i, i <= OTHERS ? i : 0);

		CHECK(!vmctx_session_sample(s, &smp), "sample %d", i);
	}
	CHECK(!vmctx_session_finish(s, (OTHERS + 1) * SCEN_TICK_NS), "finish");
	t = vmctx_table_new(s, VMCTX_VIEW_GUEST, VM_PID(1), 0);
	CHECK_EQ(vmctx_table_class(t, VMCTX_CLASS_STEAL), OTHERS, "the wait is exact");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(others)"), OTHERS - 16, "owners not named");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(on vcpu8)"), 0, "vcpu8 is before the ring");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(on vcpu9)"), 1, "vcpu9 is named");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(on vcpu24)"), 1, "vcpu24 is named");
	CHECK_EQ(vmctx_table_lookup(t, "[steal]", "(on vcpu25)"), 0, "vcpu25 is the 17th");
	CHECK_EQ(vmctx_table_nrows(t), 1 + 1 + 16, "its code, (others) and 16 owners");
	vmctx_table_free(t);
	vmctx_session_free(s);
}

/*
 * Issue #12: one VM of 4,096 vCPUs, each sampled once, one tick apart, on
 * one pCPU (a 328 KB perf.data).  Every vCPU is runnable and waits from
 * its sample to the end, stolen from by each later one.  It took 36 s and
 * 3.0 GiB (a count per owner in every vCPU's snapshot, and a table row per
 * pair of vCPUs); the tables must be what the 4,096 samples allow, fast
 * and in bounded memory.
 */
static void many_vcpus_on_one_pcpu_are_bounded(bool weight)
{
	const int V = 4096;
	struct vmctx_session_opts o = {
		.sz = sizeof(o), .tick_ns = SCEN_TICK_NS,
		.flags = weight ? VMCTX_SESSION_WEIGHT_BY_TIME : 0,
	};
	struct vmctx_session *s;
	struct vmctx_table *t;
	uint64_t window = 0, steal = 0, n;
	long rss0 = reset_peak_rss() ? peak_rss_kib() : -1;
	bool within = true;
	int i, err = 0;

	s = vmctx_session_new(&o);
	CHECK(s, "session");
	if (!s)
		return;
	declare_vm1(s);
	for (i = 0; i < V && !err; i++) {
		struct vmctx_sample smp = gsample(i, i);

		err = vmctx_session_sample(s, &smp);
	}
	CHECK(!err, "4,096 samples of 4,096 vCPUs accepted (%d)", err);
	CHECK(!vmctx_session_finish(s, (V - 1) * SCEN_TICK_NS), "finish");

	/* the physical view is the samples, one tick each (one tick apart) */
	t = vmctx_table_new(s, VMCTX_VIEW_HOST, -1, -1);
	CHECK(t && vmctx_table_total(t) == (uint64_t)V, "host view: the 4,096 samples");
	vmctx_table_free(t);

	/* vcpu i's stream covers ticks i..V-1 of the window, one tick each */
	t = vmctx_table_new(s, VMCTX_VIEW_VCPUS, VM_PID(1), -1);
	CHECK(t && vmctx_table_nrows(t) == (size_t)V, "a row per vCPU");
	for (i = 0; t && i < V && i < (int)vmctx_table_nrows(t); i++) {
		vmctx_table_row(t, i, &n, NULL, NULL);
		within &= n <= (uint64_t)(V - i);
		window += V - i;
		steal += vmctx_table_row_class(t, i, VMCTX_CLASS_STEAL);
	}
	CHECK(within, "no vCPU has more ticks than its window");
	/* steal: each tick of a vCPU's wait is a later vCPU's sample */
	CHECK(steal <= window - V, "steal %" PRIu64 " within the waits %" PRIu64, steal,
	      window - V);
	vmctx_table_free(t);

	t = vmctx_table_new(s, VMCTX_VIEW_GUEST, VM_PID(1), -1);
	CHECK(t && vmctx_table_total(t) <= window,
	      "guest view: %" PRIu64 " ticks, at most the vCPUs' windows (%" PRIu64 ")",
	      vmctx_table_total(t), window);
	/* every vCPU names at most a few owners: rows stay O(vCPUs), not O(vCPUs^2) */
	CHECK(t && vmctx_table_nrows(t) <= (size_t)V + 3, "guest view: %zu rows",
	      vmctx_table_nrows(t));
	vmctx_table_free(t);
	vmctx_session_free(s);
	/*
	 * pCPU x vCPU state took 3 GiB here; O(vCPUs) takes 15 MiB.  The bound
	 * only tells the two apart, with room for valgrind and ASan: speed and
	 * memory figures are test/bench's (bench-timeline prints them).
	 */
	if (rss0 >= 0)
		CHECK(peak_rss_kib() - rss0 < 1024 * 1024, "4,096 vCPUs took %ld MiB (3 GiB before)",
		      (peak_rss_kib() - rss0) / 1024);
}

/* Every row of @a and @b, view by view: the same text and counts. */
static bool same_tables(struct vmctx_session *a, struct vmctx_session *b, enum vmctx_view view,
			int vm_tgid, int vcpu)
{
	struct vmctx_table *ta = vmctx_table_new(a, view, vm_tgid, vcpu);
	struct vmctx_table *tb = vmctx_table_new(b, view, vm_tgid, vcpu);
	bool same = ta && tb && vmctx_table_nrows(ta) == vmctx_table_nrows(tb);
	size_t i;
	int c;

	for (i = 0; same && i < vmctx_table_nrows(ta); i++) {
		const char *fa, *fb, *ma, *mb;
		uint64_t na, nb;

		vmctx_table_row(ta, i, &na, &fa, &ma);
		vmctx_table_row(tb, i, &nb, &fb, &mb);
		same = na == nb && !strcmp(fa ?: "", fb ?: "") && !strcmp(ma ?: "", mb ?: "");
		for (c = 0; same && c < VMCTX_CLASS_MAX; c++)
			same = vmctx_table_row_class(ta, i, c) == vmctx_table_row_class(tb, i, c);
	}
	vmctx_table_free(ta);
	vmctx_table_free(tb);
	return same;
}

/*
 * What a stream said, for comparing two: its ticks, and a hash of every
 * run; and the same of its blank runs alone, and how many runs of guest
 * code it had.
 */
struct stream_hash {
	uint64_t ticks;
	uint64_t hash;
	uint64_t blank_ticks;
	uint64_t blank_hash;
	uint64_t code_runs;
};

static void hash_bytes(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		*h = (*h ^ *c++) * 0x100000001b3ULL;	/* FNV-1a */
}

/* Every run's time, VM, vCPU, class and count; a blank run's names too. */
static void sum_ticks(const struct vmctx_tick *t, void *ctx)
{
	struct stream_hash *sum = ctx;
	uint64_t f[5] = { t->time, (uint64_t)t->vm_tgid, (uint64_t)t->vcpu, t->cls, t->count };

	sum->ticks += t->count;
	hash_bytes(&sum->hash, f, sizeof(f));
	if (t->cls == VMCTX_CLASS_STEAL || t->cls == VMCTX_CLASS_IDLE ||
	    t->cls == VMCTX_CLASS_LOST) {
		hash_bytes(&sum->hash, t->function ?: "", strlen(t->function ?: "") + 1);
		hash_bytes(&sum->hash, t->module ?: "", strlen(t->module ?: "") + 1);
		sum->blank_ticks += t->count;
		hash_bytes(&sum->blank_hash, f, sizeof(f));
		hash_bytes(&sum->blank_hash, t->function ?: "", strlen(t->function ?: "") + 1);
		hash_bytes(&sum->blank_hash, t->module ?: "", strlen(t->module ?: "") + 1);
	} else {
		sum->code_runs++;
	}
}

/*
 * Watching the vCPUs' streams must change no count: the timeline charges
 * a wait owner by owner when someone watches, and counts the usual wait
 * (steal by owners the vCPU already names) in place when nobody does; and
 * the usual sample (the vCPU runs on, a tick later) in short when nobody
 * does.  A random schedule of 12 vCPUs in two VMs on 3 pCPUs, with
 * migrations, halts and wake-ups, switches, host work, gaps, late
 * samples and lost records, goes to a session with a watcher and to one
 * without; every table must come out the same.  @weighted: weights by
 * time; @resolved: bundles name the guests' processes and functions.
 */
static void watching_the_streams_changes_no_count(bool weighted, bool resolved)
{
	enum { VMS = 2, VCPUS = 6, PCPUS = 3, TICKS = 20000 };
	struct vmctx_session_opts o = {
		.sz = sizeof(o), .tick_ns = SCEN_TICK_NS,
		.flags = weighted ? VMCTX_SESSION_WEIGHT_BY_TIME : 0,
	};
	struct vmctx_session_opts ot = {
		.sz = sizeof(ot), .tick_ns = SCEN_TICK_NS,
		.flags = o.flags | VMCTX_SESSION_NO_TABLE,
	};
	struct vmctx_session_opts ob = {
		.sz = sizeof(ob), .tick_ns = SCEN_TICK_NS,
		.flags = ot.flags | VMCTX_SESSION_BLANK_STREAM,
	};
	struct vmctx_session *s[4] = {
		vmctx_session_new(&o), vmctx_session_new(&o), vmctx_session_new(&ot),
		vmctx_session_new(&ob),
	};
	struct stream_hash with_table = {
		.hash = 0xcbf29ce484222325ULL, .blank_hash = 0xcbf29ce484222325ULL,
	}, no_table = with_table, blank = with_table;
	uint64_t weights[4] = { 0 };
	struct vmctx_bundle *b[VMS] = { NULL };
	int cur[PCPUS] = { 0, 4, 8 }, i, k, vm, err = 0;
	uint64_t rnd = 12345, tick, named = 0;
	struct vmctx_table *none;
	bool same = true;

	CHECK(s[0] && s[1] && s[2] && s[3], "sessions");
	if (!s[0] || !s[1] || !s[2] || !s[3])
		return;
	vmctx_session_set_stream(s[1], sum_ticks, &with_table);
	/*
	 * s[2] keeps no table (VMCTX_SESSION_NO_TABLE), as perf script does:
	 * its stream must be s[1]'s, run for run.
	 */
	vmctx_session_set_stream(s[2], sum_ticks, &no_table);
	/*
	 * s[3] takes only the blank runs (VMCTX_SESSION_BLANK_STREAM), as
	 * perf does: they must be s[1]'s blank runs, run for run, and every
	 * sample's weight s[0]'s.
	 */
	vmctx_session_set_stream(s[3], sum_ticks, &blank);
	for (vm = 1; vm <= VMS; vm++) {
		if (resolved)
			b[vm - 1] = scen_guest_bundle(vm == 1 ? "guest1" : "guest2", 4);
		for (k = 0; k < 4; k++) {
			vmctx_session_add_vm(s[k], VM_PID(vm), NULL);
			if (b[vm - 1])
				vmctx_session_attach_bundle(s[k], VM_PID(vm), b[vm - 1], 0);
		}
	}
	for (tick = 0; tick < TICKS && !err; tick++) {
		for (i = 0; i < PCPUS && !err; i++) {
			int g;
			struct vmctx_sample smp;

			rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
			if ((rnd >> 60) == 0)
				continue;			/* a gap: no sample */
			if ((rnd >> 58 & 3) == 0)
				cur[i] = (rnd >> 32) % (VMS * VCPUS);	/* another vCPU, maybe a migrant */
			g = cur[i];
			smp = gsample(tick, g % VCPUS);
			/* up to 0.7 ticks late: gaps of 0.3 to 1.7 ticks */
			smp.time += i + (rnd >> 24 & 7) * (SCEN_TICK_NS / 10);
			smp.cpu = i;
			smp.pid = smp.vm_tgid = VM_PID(1 + g / VCPUS);
			smp.tid = smp.pid + 1 + g % VCPUS;
			if (resolved && (rnd >> 20 & 3)) {	/* user code, a process a while */
				smp.cpl = 3;
				smp.cr3 = ROOT((g + tick / 500) % 4);
				smp.ip = 0x401000 + (rnd >> 16 & 3) * 0x100 + 0x10;
			}
			if ((rnd >> 52 & 31) == 0) {		/* KVM's work, at a HLT now and then */
				smp.flags = VMCTX_SAMPLE_HOST_VCPU;
				smp.exit_reason = rnd >> 51 & 1 ? 0x78 : 0x60;
				smp.host_sym = "svm_vcpu_run";
				smp.host_dso = "kvm_amd";
			} else if ((rnd >> 52 & 31) == 1) {	/* the host's own work */
				smp.flags = 0;
				smp.vm_tgid = -1;
				smp.vcpu = -1;
				smp.pid = smp.tid = 7;
				smp.host_sym = "schedule";
				smp.host_dso = "[kernel.kallsyms]";
			}
			for (k = 0; k < 4 && !err; k++) {
				err = vmctx_session_sample(s[k], &smp);
				/* a weight's place counts: (tick, pCPU) */
				weights[k] = weights[k] * 31 + vmctx_session_sample_weight(s[k]);
				if (!err && (rnd >> 40 & 1023) == 0)
					err = vmctx_session_lost(s[k], smp.time, i, 3);
				/* the vCPU thread switches out now and then, or wakes */
				if (!err && smp.vcpu >= 0 && (rnd >> 8 & 63) == 0)
					err = vmctx_session_switch(s[k], smp.time + 1, i, smp.vm_tgid,
								   smp.vcpu, true, rnd >> 14 & 1);
				if (!err && smp.vcpu >= 0 && (rnd >> 8 & 63) == 1)
					err = vmctx_session_halt(s[k], smp.time + 1, smp.vm_tgid,
								 smp.vcpu, false);
			}
		}
	}
	CHECK(!err, "the stream was taken (%d)", err);
	for (k = 0; k < 4; k++)
		CHECK(!vmctx_session_finish(s[k], (TICKS + 1) * SCEN_TICK_NS), "finish");
	none = vmctx_table_new(s[2], VMCTX_VIEW_HOST, -1, -1);
	CHECK(!none && errno == EINVAL, "a session without a table makes no table");
	CHECK(!vmctx_export_new(s[2], NULL) && errno == EINVAL,
	      "a session without a table makes no export");
	same &= same_tables(s[0], s[1], VMCTX_VIEW_HOST, -1, -1);
	same &= same_tables(s[0], s[1], VMCTX_VIEW_UNIFIED, -1, -1);
	for (vm = 1; vm <= VMS; vm++) {
		struct vmctx_table *t = vmctx_table_new(s[0], VMCTX_VIEW_GUEST, VM_PID(vm), -1);

		named += t ? vmctx_table_lookup(t, "quantum_toffoli", NULL) : 0;
		vmctx_table_free(t);
		same &= same_tables(s[0], s[1], VMCTX_VIEW_VCPUS, VM_PID(vm), -1);
		for (i = -1; i < VCPUS; i++)
			same &= same_tables(s[0], s[1], VMCTX_VIEW_GUEST, VM_PID(vm), i);
	}
	CHECK(same, "every table the same, watched or not (%s, %s)",
	      weighted ? "weighted by time" : "a tick a sample",
	      resolved ? "resolved through bundles" : "no bundles");
	CHECK(with_table.ticks > TICKS, "the watcher saw the streams (%" PRIu64 " ticks)",
	      with_table.ticks);
	CHECK(!resolved || named > TICKS / 20, "the bundles named guest functions (%" PRIu64 ")",
	      named);
	vmctx_session_free(s[0]);
	vmctx_session_free(s[1]);
	vmctx_session_free(s[2]);
	vmctx_session_free(s[3]);
	CHECK(no_table.ticks == with_table.ticks && no_table.hash == with_table.hash,
	      "without a table, the stream is the same run for run (%" PRIu64 " and %" PRIu64
	      " ticks)", no_table.ticks, with_table.ticks);
	CHECK(with_table.code_runs > TICKS && with_table.blank_ticks > TICKS / 20,
	      "the watcher saw runs of guest code (%" PRIu64 ") and blank ticks (%" PRIu64 ")",
	      with_table.code_runs, with_table.blank_ticks);
	CHECK(!blank.code_runs && blank.ticks == with_table.blank_ticks &&
	      blank.hash == with_table.blank_hash,
	      "a blank stream is the blank runs alone, run for run (%" PRIu64 " runs of code, %"
	      PRIu64 " and %" PRIu64 " blank ticks)", blank.code_runs, blank.ticks,
	      with_table.blank_ticks);
	CHECK(weights[1] == weights[0] && weights[2] == weights[0] && weights[3] == weights[0],
	      "every sample weighs the same, watched or not");
	for (vm = 0; vm < VMS; vm++)
		vmctx_bundle_free(b[vm]);
}

int main(void)
{
	fig9_blank_time_goes_to_who_ran_instead();
	two_processes_stay_apart();
	two_vcpus_steal_from_each_other();
	vmm_work_in_a_vcpu_thread();
	a_vcpu_ends_with_its_thread(10);
	a_vcpu_ends_with_its_thread(20);
	a_vcpu_ends_with_its_thread(-1);
	a_switch_in_counts_no_tick_twice(false);
	a_switch_in_counts_no_tick_twice(true);
	a_late_sample_after_a_switch_in();
	three_vms_steal_equals_host_share_of_others();
	halt_is_idle_not_steal(false);
	halt_is_idle_not_steal(true);
	lost_samples_are_never_steal(true);
	lost_samples_are_never_steal(false);
	wakeup_ends_an_unseen_halt(true);
	wakeup_ends_an_unseen_halt(false);
	wakeup_after_the_switch_in(true, false);
	wakeup_after_the_switch_in(false, false);
	wakeup_after_the_switch_in(true, true);
	wakeup_after_the_switch_in(false, true);
	clock_samples_weighted_by_time(true);
	clock_samples_weighted_by_time(false);
	weighting_is_bounded();
	report_has_the_papers_header();
	undeclared_vms_are_refused();
	vcpus_are_listed_in_id_order();
	bundles_name_vms_named_by_default();
	a_bundle_attached_again_resolves();
	user_names_follow_the_task_and_ip();
	bad_input_is_refused();
	hostile_streams_are_bounded();
	steal_names_a_bounded_number_of_owners();
	time_going_back_is_counted_once(false);
	time_going_back_is_counted_once(true);
	time_before_the_origin_is_counted_once();
	late_ticks_sum_to_the_time(false);
	late_ticks_sum_to_the_time(true);
	turns_on_a_jittery_clock();
	many_vcpus_on_one_pcpu_are_bounded(false);
	many_vcpus_on_one_pcpu_are_bounded(true);
	watching_the_streams_changes_no_count(false, false);
	watching_the_streams_changes_no_count(true, false);
	watching_the_streams_changes_no_count(false, true);
	watching_the_streams_changes_no_count(true, true);
	return check_result("test-timeline");
}
