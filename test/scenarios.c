// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Synthetic streams for the paper's scenarios; see scenarios.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "scenarios.h"

#define EXE_BASE	0x400000ULL
#define SYM_TOFFOLI	0x401000ULL
#define SYM_SIGMA_X	0x401100ULL
#define SYM_CNOT	0x401200ULL
#define SYM_SWAP	0x401300ULL
#define LIBC_BASE	0x7f0000000000ULL
#define KSYM_APIC	0xffffffff81001000ULL
#define HOST_TID	50		/* a host kworker */

/* Per (VM, process) position in the function mix. */
static int mixpos[16][8];

struct vmctx_bundle *scen_guest_bundle(const char *hostname, int nprocs)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int exe, libc, p;

	if (!b)
		return NULL;
	if (vmctx_bundle_set_identity(b, hostname, "6.1.0-synthetic", "00000000-boot"))
		goto fail;
	exe = vmctx_bundle_add_object(b, "/usr/bin/libquantum", "aa01");
	libc = vmctx_bundle_add_object(b, "/lib/x86_64-linux-gnu/libc.so.6", "cc02");
	if (exe < 0 || libc < 0 ||
	    vmctx_bundle_add_symbol(b, exe, SYM_TOFFOLI, 0x100, "quantum_toffoli") ||
	    vmctx_bundle_add_symbol(b, exe, SYM_SIGMA_X, 0x100, "quantum_sigma_x") ||
	    vmctx_bundle_add_symbol(b, exe, SYM_CNOT, 0x100, "quantum_cnot") ||
	    vmctx_bundle_add_symbol(b, exe, SYM_SWAP, 0x80, "quantum_swaptheleads") ||
	    vmctx_bundle_add_symbol(b, libc, 0x1000, 0x100, "memcpy"))
		goto fail;
	for (p = 0; p < nprocs; p++) {
		int t = vmctx_bundle_add_task(b, ROOT(p), 200 + p, 200 + p, "libquantum", 0,
					      VMCTX_TIME_NONE);

		if (t < 0 ||
		    vmctx_bundle_add_map(b, t, EXE_BASE, EXE_BASE + 0x2000, 0, 0, exe,
					 "/usr/bin/libquantum") ||
		    vmctx_bundle_add_map(b, t, LIBC_BASE, LIBC_BASE + 0x10000, 0, LIBC_BASE, libc,
					 "/lib/x86_64-linux-gnu/libc.so.6"))
			goto fail;
	}
	if (vmctx_bundle_add_ksym(b, KSYM_APIC, "apic_timer_interrupt", NULL) ||
	    vmctx_bundle_add_ksym(b, KSYM_APIC + 0x1000, "native_apic_mem_write", NULL) ||
	    vmctx_bundle_add_ksym(b, KSYM_APIC + 0x100000, "_etext", NULL) ||
	    vmctx_bundle_seal(b))
		goto fail;
	return b;
fail:
	vmctx_bundle_free(b);
	return NULL;
}

int scen_init(struct scen *sc, uint64_t tick_ns)
{
	struct vmctx_session_opts o = { .sz = sizeof(o), .tick_ns = tick_ns };

	memset(sc, 0, sizeof(*sc));
	memset(mixpos, 0, sizeof(mixpos));
	sc->s = vmctx_session_new(&o);
	return sc->s ? 0 : -errno;
}

void scen_fini(struct scen *sc)
{
	int i;

	vmctx_session_free(sc->s);
	for (i = 0; i < sc->nbundles; i++)
		vmctx_bundle_free(sc->bundles[i]);
	sc->s = NULL;
	sc->nbundles = 0;
}

int scen_vm(struct scen *sc, int n, const char *name, int nprocs)
{
	struct vmctx_bundle *b;
	int err;

	if (sc->nbundles >= 8)
		return -E2BIG;
	err = vmctx_session_add_vm(sc->s, VM_PID(n), name);
	if (err < 0)
		return err;
	b = scen_guest_bundle(name, nprocs);
	if (!b)
		return -ENOMEM;
	sc->bundles[sc->nbundles++] = b;
	return vmctx_session_attach_bundle(sc->s, VM_PID(n), b, 0);
}

static uint64_t tick_time(int i, int cpu)
{
	return (uint64_t)i * SCEN_TICK_NS + (uint64_t)cpu * 1000;
}

static void feed(struct scen *sc, const struct vmctx_sample *smp)
{
	int err = vmctx_session_sample(sc->s, smp);

	if (err && !sc->err)
		sc->err = err;
}

/* A sample of VM @vm's vCPU @vcpu thread at tick @i. */
static struct vmctx_sample vcpu_sample(int i, int cpu, int vm, int vcpu, uint32_t flags,
				       uint64_t exit)
{
	struct vmctx_sample smp = {
		.sz = sizeof(smp),
		.time = tick_time(i, cpu),
		.cpu = cpu,
		.pid = VM_PID(vm),
		.tid = VM_PID(vm) + 1 + vcpu,
		.vm_tgid = VM_PID(vm),
		.vcpu = vcpu,
		.flags = flags,
		.isa = VMCTX_ISA_VMX,
		.exit_reason = exit,
	};

	return smp;
}

/* One guest tick of process @proc of VM @vm, next in that process's mix. */
static void guest(struct scen *sc, int i, int cpu, int vm, int vcpu, int proc, uint64_t exit)
{
	struct vmctx_sample smp = vcpu_sample(i, cpu, vm, vcpu, VMCTX_SAMPLE_GUEST, exit);
	int j = mixpos[vm][proc]++ % MIX_LEN;

	/* PTI user half and a PCID, as a real guest's user-mode CR3 looks. */
	smp.cpl = 3;
	smp.cr3 = ROOT(proc) | 0x1000 | (proc + 1);
	if (j < MIX_TOFFOLI)
		smp.ip = SYM_TOFFOLI + 0x10;
	else if (j < MIX_TOFFOLI + MIX_SIGMA_X)
		smp.ip = SYM_SIGMA_X + 0x20;
	else if (j < MIX_TOFFOLI + MIX_SIGMA_X + MIX_CNOT)
		smp.ip = SYM_CNOT + 0x30;
	else if (j < MIX_LEN - MIX_KERNEL)
		smp.ip = SYM_SWAP + 0x8;
	else {
		smp.ip = KSYM_APIC + 0x40;
		smp.cpl = 0;
		smp.cr3 = ROOT(proc) | (proc + 1);
	}
	feed(sc, &smp);
}

static void guest_kernel(struct scen *sc, int i, int cpu, int vm, int vcpu, uint64_t exit)
{
	struct vmctx_sample smp = vcpu_sample(i, cpu, vm, vcpu, VMCTX_SAMPLE_GUEST, exit);

	smp.cr3 = ROOT(0);
	smp.ip = KSYM_APIC + 0x40;
	feed(sc, &smp);
}

/* KVM handling an exit of the vCPU: host code in the vCPU's thread. */
static void host_vcpu(struct scen *sc, int i, int cpu, int vm, int vcpu, uint64_t exit)
{
	struct vmctx_sample smp = vcpu_sample(i, cpu, vm, vcpu, VMCTX_SAMPLE_HOST_VCPU, exit);

	smp.ip = 0xffffffffc0001000ULL;
	smp.host_sym = "vmx_vcpu_run";
	smp.host_dso = "kvm_intel";
	feed(sc, &smp);
}

static void host(struct scen *sc, int i, int cpu, bool idle)
{
	struct vmctx_sample smp = {
		.sz = sizeof(smp),
		.time = tick_time(i, cpu),
		.cpu = cpu,
		.pid = idle ? 0 : HOST_TID,
		.tid = idle ? 0 : HOST_TID,
		.vm_tgid = -1,
		.vcpu = -1,
		.flags = idle ? VMCTX_SAMPLE_IDLE : 0,
		.ip = 0xffffffff81000000ULL,
		.host_sym = idle ? "poll_idle" : "process_one_work",
		.host_dso = "vmlinux",
	};

	feed(sc, &smp);
}

static int finish(struct scen *sc, int last_tick, int last_cpu)
{
	int err = vmctx_session_finish(sc->s, tick_time(last_tick, last_cpu));

	return sc->err ? sc->err : err;
}

int scen_fig9(struct scen *sc, int cycles, int slot)
{
	/* (vm, vcpu, process) of the three vCPUs, in rotation order */
	static const int order[3][3] = { { 1, 0, 0 }, { 2, 0, 0 }, { 2, 1, 1 } };
	int s, k, err;

	err = scen_vm(sc, 1, "guestA", 1);
	if (!err)
		err = scen_vm(sc, 2, "guestB", 2);
	if (err)
		return err;
	for (s = 0; s < 3 * cycles; s++) {
		const int *r0 = order[s % 3], *r1 = order[(s + 1) % 3];

		for (k = 0; k < slot; k++) {
			int i = s * slot + k;

			guest(sc, i, 0, r0[0], r0[1], r0[2], VMX_EXTINT);
			guest(sc, i, 1, r1[0], r1[1], r1[2], VMX_EXTINT);
		}
	}
	return finish(sc, 3 * cycles * slot - 1, 1);
}

int scen_two_procs(struct scen *sc, int cycles, int slot)
{
	int s, k, err;

	err = scen_vm(sc, 1, "guestOS1", 2);
	if (err)
		return err;
	for (s = 0; s < 2 * cycles; s++)
		for (k = 0; k < slot; k++)
			guest(sc, s * slot + k, 0, 1, 0, s % 2, VMX_EXTINT);
	return finish(sc, 2 * cycles * slot - 1, 0);
}

int scen_two_vcpus(struct scen *sc, int cycles, int slot)
{
	int s, k, err;

	err = scen_vm(sc, 1, "guestOS1", 2);
	if (err)
		return err;
	for (s = 0; s < 2 * cycles; s++) {
		uint64_t exit = s % 5 == 4 ? VMX_APIC : VMX_EXTINT;
		int v = s % 2;

		host_vcpu(sc, s * slot, 0, 1, v, exit);
		for (k = 1; k < slot; k++)
			guest(sc, s * slot + k, 0, 1, v, v, exit);
	}
	return finish(sc, 2 * cycles * slot - 1, 0);
}

int scen_three_vms(struct scen *sc, int cycles, int slot)
{
	int s, k, err = 0;

	err = scen_vm(sc, 1, "guestOS1", 1);
	if (!err)
		err = scen_vm(sc, 2, "guestOS2", 1);
	if (!err)
		err = scen_vm(sc, 3, "guestOS3", 1);
	if (err)
		return err;
	for (s = 0; s < 3 * cycles; s++) {
		host(sc, s * slot, 0, false);
		for (k = 1; k < slot; k++)
			guest(sc, s * slot + k, 0, s % 3 + 1, 0, 0, VMX_EXTINT);
	}
	return finish(sc, 3 * cycles * slot - 1, 0);
}

int scen_halt(struct scen *sc, int ticks, int wake, bool pmu_idle)
{
	int busy = ticks / 3, i, err;

	err = scen_vm(sc, 1, "guestOS1", 1);
	if (err)
		return err;
	for (i = 0; i < busy; i++)
		guest(sc, i, 0, 1, 0, 0, VMX_EXTINT);
	for (i = busy; i < ticks; i++) {
		int r = (i - busy) % wake;

		if (r == 0) {
			host_vcpu(sc, i, 0, 1, 0, VMX_HLT);
			if (pmu_idle) {
				/* the vCPU thread blocks in kvm_vcpu_halt() */
				vmctx_session_halt(sc->s, tick_time(i, 0) + 100, VM_PID(1), 0, true);
				vmctx_session_switch(sc->s, tick_time(i, 0) + 200, 0, VM_PID(1), 0,
						     true, false);
			}
		} else if (r == wake - 1) {
			if (pmu_idle) {
				uint64_t t = tick_time(i, 0) - SCEN_TICK_NS / 2;

				vmctx_session_halt(sc->s, t, VM_PID(1), 0, false);
				vmctx_session_switch(sc->s, t + 100, 0, VM_PID(1), 0, false, false);
			}
			guest_kernel(sc, i, 0, 1, 0, VMX_HLT);
		} else if (!pmu_idle) {
			host(sc, i, 0, true);
		}
	}
	return finish(sc, ticks - 1, 0);
}
