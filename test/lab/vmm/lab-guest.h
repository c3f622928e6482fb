/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory map of the lab's L2 guest, shared by guest.S and vmm.c.
 * Guest physical == guest virtual (identity map with 2 MiB pages).
 */
#ifndef LAB_GUEST_H
#define LAB_GUEST_H

#define GUEST_MEM_SIZE	0x600000

/* each root: PML4 at +0, PDPT at +0x1000, PD at +0x2000 */
#define ROOT_A		0x10000
#define ROOT_B		0x14000

/*
 * Run configuration, written by the VMM before the vCPUs start (and CFG_STOP
 * while they run); the guest's kernel loop reads it every round.
 */
#define CFG_ADDR	0x7000
#define CFG_NPROCS	0x00		/* 1: process A only; 2: A and B */
#define CFG_HALTS	0x08		/* HLTs at the end of each round */
#define CFG_STOP	0x10		/* non-zero: halt for good (idle) */
#define CFG_ENTRY_B	0x18		/* process B's user entry point */
#define CFG_STACK_B	0x20		/* process B's user stack top (vCPU 0) */
#define CFG_ROUNDS	0x28		/* non-zero: report done after this many rounds */
#define CFG_CR3_A	0x30		/* CR3 for process A: ROOT_A, | PCID 1 with PCID */
#define CFG_CR3_B	0x38		/* CR3 for process B: ROOT_B, | PCID 2 with PCID */
#define CFG_CPUID_B	0x40		/* CPUIDs (VM exits) process B makes per round,
					 * | HOSTILE_* << 32 */

/*
 * A hostile stack for process B to build each round (b_hostile), for the
 * call-chain walk to stop at: a frame linked to itself, a frame linked to
 * the guest's kernel half, a frame linked to memory root B does not map,
 * or a chain of HOSTILE_DEPTH frames.
 */
#define HOSTILE_LOOP		1
#define HOSTILE_KERNEL		2
#define HOSTILE_UNMAPPED	3
#define HOSTILE_DEEP		4
#define HOSTILE_KERNEL_ADDR	0xffff888000001000
#define HOSTILE_UNMAPPED_ADDR	0x700000
#define HOSTILE_DEPTH		10000

#define GDT_ADDR	0x8000
#define IDT_ADDR	0x9000
#define TSS_ADDR	0xa000		/* one 0x100-byte TSS per vCPU */
#define TSS_STRIDE	0x100

#define KSTACK_BASE	0x40000		/* vCPU n: top at BASE + (n + 1) * SIZE */
#define KSTACK_SIZE	0x4000
#define MAX_VCPUS	8

#define KTEXT_ADDR	0x100000
#define UTEXT_A_ADDR	0x200000
#define UTEXT_B_ADDR	0x400000
#define REGION_SIZE	0x200000

/* user stacks: vCPU n at TOP + (n << USTACK_SHIFT) */
#define USTACK_SHIFT	16
#define USTACK_A_TOP	0x310000
#define USTACK_B_TOP	0x510000

#define UTEXT_A_ENTRY	UTEXT_A_ADDR	/* a_main is first in .utext_a */
#define UTEXT_B_ENTRY	UTEXT_B_ADDR	/* b_main is first in .utext_b */

#define SEL_KCODE	0x08
#define SEL_KDATA	0x10
#define SEL_UDATA	0x18
#define SEL_UCODE	0x20
#define SEL_TSS		0x28

#define PORT_FAULT	0xf4
#define PORT_DONE	0xf5		/* the vCPU did CFG_ROUNDS rounds */

/*
 * The guest's own measure of its work: each busy loop adds the TSC ticks
 * it took to its function's slot, one 8-byte slot per function and one
 * row of STATS_SLOTS per vCPU (vCPU n at + (n << STATS_SHIFT)).  The
 * kernel's functions (kwork_a 0, kwork_b 1) count at KSTATS_ADDR; each
 * program's two user functions (slots 0 and 1, in the order of the mix)
 * count in its own region, at USTATS_OFF from its start, writable in
 * ring 3 and private to its root: a second instance of A's program (-S)
 * counts in its copy, at B's physical region.
 */
#define KSTATS_ADDR	0xb000
#define USTATS_OFF	0x1f0000
#define STATS_SHIFT	6
#define STATS_SLOTS	(1 << (STATS_SHIFT - 3))

/* busy-loop lengths (dec/jnz iterations, the mean over rounds: guest.S BUSY) */
#define KWORK_LOOPS	200000
#define ULOOPS		200000

#endif
