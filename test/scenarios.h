/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * Synthetic host event streams reproducing the scenarios of Yamamoto et al.
 * (IJNC 2016, section 4).  Every stream is built on a 1 ms tick grid from a
 * schedule whose expected per-vCPU counts follow from the parameters alone,
 * so tests compare libvmctx's output with numbers derived independently.
 */
#ifndef VMCTX_SCENARIOS_H
#define VMCTX_SCENARIOS_H

#include "vmctx.h"

#define SCEN_TICK_NS	1000000ULL

/* Guest function mix, per 20 guest ticks of one process (see mix_ip()). */
#define MIX_LEN		20
#define MIX_TOFFOLI	12
#define MIX_SIGMA_X	4
#define MIX_CNOT	2
#define MIX_SWAP	1
#define MIX_KERNEL	1	/* apic_timer_interrupt, in the guest kernel */

/* Exit reasons the generator uses for host ticks of vCPU threads. */
#define VMX_EXTINT	1
#define VMX_HLT		12
#define VMX_APIC	44

/* QEMU pids (vm_tgid) of the synthetic VMs: VM n is declared n'th, so its vm_nr is n. */
#define VM_PID(n)	(1000 + (n))

/* Guest page-table roots: process p of a guest. */
#define ROOT(p)		(0x10000000ULL + (uint64_t)(p) * 0x200000ULL)

struct scen {
	struct vmctx_session *s;
	struct vmctx_bundle *bundles[8];
	int nbundles;
	int err;	/* first error of the stream */
};

/* Make a sealed guest bundle with @nprocs "libquantum" processes at ROOT(0..). */
struct vmctx_bundle *scen_guest_bundle(const char *hostname, int nprocs);

int scen_init(struct scen *sc, uint64_t tick_ns);
void scen_fini(struct scen *sc);
/* Declare VM n (pid VM_PID(n)) named @name, with a bundle of @nprocs processes. */
int scen_vm(struct scen *sc, int n, const char *name, int nprocs);

/*
 * Figure 9: two pCPUs, VM1 "guestA" with one vCPU, VM2 "guestB" with two.
 * The three vCPUs rotate over the two pCPUs in slots of @slot ticks, for
 * @cycles rotations of three slots.
 */
int scen_fig9(struct scen *sc, int cycles, int slot);

/*
 * Table 7: one VM, one vCPU, two libquantum processes switching every
 * @slot ticks, @cycles times each.
 */
int scen_two_procs(struct scen *sc, int cycles, int slot);

/*
 * Tables 8/9: one VM with two vCPUs on one pCPU, alternating in slots of
 * @slot ticks (@cycles pairs).  Each slot starts with one host tick of the
 * vCPU's thread (KVM exit handling): EXTERNAL_INTERRUPT in four slots of
 * five, APIC_ACCESS in the fifth.
 */
int scen_two_vcpus(struct scen *sc, int cycles, int slot);

/*
 * Tables 12/13: three one-vCPU VMs on one pCPU in round-robin slots of
 * @slot ticks; each slot has one tick of host work (a kworker) first.
 */
int scen_three_vms(struct scen *sc, int cycles, int slot);

/*
 * Tables 14/15: one VM, one vCPU, one pCPU, @ticks in all.  Busy for the
 * first third, then halted: a HLT exit, then host idle samples, woken by a
 * guest timer tick every @wake ticks (one guest kernel tick, one HLT exit).
 * @pmu_idle: the pCPU takes no samples while idle, as a PMU cycles event
 * would, so idle must come from elapsed time.
 */
int scen_halt(struct scen *sc, int ticks, int wake, bool pmu_idle);

#endif
