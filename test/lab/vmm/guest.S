/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lab's L2 guest: a tiny 64-bit "kernel" that runs two "processes", each
 * under its own page-table root, in ring 3, and does ring 0 work for each of
 * them under that root.  Every instruction lies in a function with a size, so
 * the test VMM can list exact code ranges (name, ring, root) from the ELF.
 *
 * Memory (identity mapped, 2 MiB pages; see lab-guest.h):
 *   0x000000-0x1fffff  kernel: tables, GDT/IDT/TSS, .ktext, kernel stacks
 *   0x200000-0x3fffff  process A: .utext_a and its user stacks (root A only)
 *   0x400000-0x5fffff  process B: .utext_b and its user stacks (root B only)
 *
 * Entry: rdi = vCPU index, rsp = that vCPU's kernel stack top (also TSS.RSP0).
 * rbx, r11 and r12-r15 belong to the kernel loop; user code leaves them alone.
 * Process B gets in rdi how many CPUIDs to make each round: each one is a
 * VM exit (KVM intercepts CPUID) whose guest RIP lies in b_main; and in
 * rdi's upper half a hostile stack to build (HOSTILE_*).  User code
 * reads r15 (the vCPU) for its busy loops' counters (BUSY).
 * The loop reads its run configuration (lab-guest.h, CFG_*) every round.
 *
 * Call chains: every function that calls or is called keeps a frame
 * pointer (push %rbp; mov %rsp, %rbp), and the two outermost functions,
 * kernel_entry and each process's entry point (a_main, b_main), run with
 * %rbp = 0 and no frame of their own, as _start does, so a walk of the
 * frame pointers ends there.  The call graph (the lab's chain check):
 *   ring 0: kernel_entry -> kwork_a, kwork_b
 *   A:      a_main -> a_run -> a_compute, a_hash
 *   B:      b_main -> b_scan, b_sort, b_hostile -> b_deep -> b_deep ...
 */
#include "lab-guest.h"

	/*
	 * n iterations on average over the rounds: (n / 16) times this round's
	 * length factor, an odd number from 1 to 31 in %r11d (kernel_loop).
	 * The TSC ticks the loop took go to this vCPU's (%r15) slot at
	 * stats (lab-guest.h): what the function really cost, which under an
	 * emulator strays from its iterations (where the host happened to
	 * place the translated loop, for one).  Clobbers rax, rcx, rdx, r9, r10.
	 */
	.macro BUSY n, stats
	.if (\n) % 16
	.error "BUSY: the loop count must be a multiple of 16"
	.endif
	rdtsc
	shl	$32, %rdx
	or	%rdx, %rax
	mov	%rax, %r9
	mov	$((\n) / 16), %ecx
	imul	%r11d, %ecx
1:	dec	%ecx
	jnz	1b
	rdtsc
	shl	$32, %rdx
	or	%rdx, %rax
	sub	%r9, %rax
	mov	%r15, %r10
	shl	$STATS_SHIFT, %r10
	add	%rax, \stats(%r10)
	.endm

	.section .ktext, "ax"
	.code64

	.globl	kernel_entry
	.type	kernel_entry, @function
kernel_entry:
	mov	%rdi, %r15			/* vCPU index */
	mov	%rsp, %r13			/* kernel stack top */
	mov	%r15, %rax
	shl	$USTACK_SHIFT, %rax
	mov	%rax, %r12			/* per-vCPU user stack offset */
	xor	%ebx, %ebx			/* rounds done */
	xor	%ebp, %ebp			/* the outermost frame */
kernel_loop:
	cmpq	$0, CFG_ADDR + CFG_STOP
	jne	idle_forever
	mov	CFG_ADDR + CFG_ROUNDS, %rax
	test	%rax, %rax
	jz	1f
	cmp	%rax, %rbx
	jae	rounds_done
1:
	/*
	 * This round's length factor, 2k + 1 for k the top four bits of the
	 * round number times 2^32 / golden ratio: odd, 1 to 31, 16 on average,
	 * evenly spread over any run of rounds.  Every busy loop of the round
	 * scales by it, so the mix within a round stays exact, while rounds of
	 * varying length keep the host's sampling timer from locking onto one
	 * phase of the round (under TCG a fixed round once skewed the mix of
	 * experiment 1 by 4.5 points).  User code leaves %r11 alone.
	 */
	imul	$0x9e3779b1, %ebx, %eax
	shr	$28, %eax
	lea	1(%rax,%rax), %r11d
	/* process A: switch root, kernel work for A, then A's user code */
	mov	CFG_ADDR + CFG_CR3_A, %rax
	mov	%rax, %cr3
	call	kwork_a
	lea	after_a(%rip), %r14
	mov	$UTEXT_A_ENTRY, %rdx
	lea	USTACK_A_TOP(%r12), %rsi
	jmp	enter_user
after_a:
	cmpq	$2, CFG_ADDR + CFG_NPROCS
	jb	after_b
	mov	CFG_ADDR + CFG_CR3_B, %rax
	mov	%rax, %cr3
	call	kwork_b
	lea	after_b(%rip), %r14
	mov	CFG_ADDR + CFG_ENTRY_B, %rdx
	mov	CFG_ADDR + CFG_STACK_B, %rsi
	add	%r12, %rsi
	mov	CFG_ADDR + CFG_CPUID_B, %rdi	/* b_main's CPUID count */
	jmp	enter_user
after_b:
	inc	%rbx
	/* idle: a few HLTs, each one an exit the VMM answers after a pause */
	mov	CFG_ADDR + CFG_HALTS, %rcx
2:	test	%rcx, %rcx
	jz	kernel_loop
	hlt
	dec	%rcx
	jmp	2b

rounds_done:
	mov	$PORT_DONE, %dx
	out	%al, %dx
idle_forever:
	sti
	hlt
	jmp	idle_forever

	/* rdx = user rip, rsi = user rsp; comes back through int $0x80 */
enter_user:
	mov	%r13, %rsp
	push	$(SEL_UDATA | 3)
	push	%rsi
	/*
	 * IF set: nothing is ever injected, but bochs only notices a pending
	 * host interrupt (the exit that takes the sample) in a guest with
	 * IF clear at a few instructions such as INT, which skews sampling.
	 */
	push	$0x202
	push	$(SEL_UCODE | 3)
	push	%rdx
	iretq
	.size	kernel_entry, . - kernel_entry

	/*
	 * int $0x80 from ring 3: drop the frame, continue the kernel loop with
	 * IF set again (the gate cleared it), as in enter_user.
	 */
	.globl	syscall_entry
	.type	syscall_entry, @function
syscall_entry:
	mov	%r13, %rsp
	xor	%ebp, %ebp
	sti
	jmp	*%r14
	.size	syscall_entry, . - syscall_entry

	/* any other exception: stop the vCPU with a recognisable port write */
	.globl	fault_entry
	.type	fault_entry, @function
fault_entry:
	mov	$PORT_FAULT, %dx
	out	%al, %dx
	hlt
	jmp	fault_entry
	.size	fault_entry, . - fault_entry

	.globl	kwork_a
	.type	kwork_a, @function
kwork_a:
	push	%rbp
	mov	%rsp, %rbp
	BUSY	KWORK_LOOPS, KSTATS_ADDR
	pop	%rbp
	ret
	.size	kwork_a, . - kwork_a

	.globl	kwork_b
	.type	kwork_b, @function
kwork_b:
	push	%rbp
	mov	%rsp, %rbp
	BUSY	KWORK_LOOPS, KSTATS_ADDR + 8
	pop	%rbp
	ret
	.size	kwork_b, . - kwork_b

/* process A, ring 3: two functions of different weight */
	.section .utext_a, "ax"
	.globl	a_main
	.type	a_main, @function
a_main:
	call	a_run
	int	$0x80
	.size	a_main, . - a_main

	.globl	a_run
	.type	a_run, @function
a_run:
	push	%rbp
	mov	%rsp, %rbp
	call	a_compute
	call	a_hash
	pop	%rbp
	ret
	.size	a_run, . - a_run

	.globl	a_compute
	.type	a_compute, @function
a_compute:
	push	%rbp
	mov	%rsp, %rbp
	BUSY	(2 * ULOOPS), UTEXT_A_ADDR + USTATS_OFF
	pop	%rbp
	ret
	.size	a_compute, . - a_compute

	.globl	a_hash
	.type	a_hash, @function
a_hash:
	push	%rbp
	mov	%rsp, %rbp
	BUSY	ULOOPS, UTEXT_A_ADDR + USTATS_OFF + 8
	pop	%rbp
	ret
	.size	a_hash, . - a_hash

/* process B, ring 3 */
	.section .utext_b, "ax"
	.globl	b_main
	.type	b_main, @function
b_main:
	mov	%rdi, %r8
	shr	$32, %rdi			/* HOSTILE_*, 0 for none */
	jz	3f
	call	b_hostile
3:	mov	%r8d, %r8d			/* the CPUID count */
	call	b_scan
	call	b_sort
	test	%r8, %r8
	jz	2f
	push	%rbx			/* CPUID writes ebx */
1:	xor	%eax, %eax
	cpuid
	dec	%r8
	jnz	1b
	pop	%rbx
2:	int	$0x80
	.size	b_main, . - b_main

	.globl	b_scan
	.type	b_scan, @function
b_scan:
	push	%rbp
	mov	%rsp, %rbp
	BUSY	ULOOPS, UTEXT_B_ADDR + USTATS_OFF
	pop	%rbp
	ret
	.size	b_scan, . - b_scan

	.globl	b_sort
	.type	b_sort, @function
b_sort:
	push	%rbp
	mov	%rsp, %rbp
	BUSY	ULOOPS, UTEXT_B_ADDR + USTATS_OFF + 8
	pop	%rbp
	ret
	.size	b_sort, . - b_sort

	/*
	 * rdi = HOSTILE_*: busy with a stack that a walk of the frame pointers
	 * must not follow far, the saved %rbp of this frame (b_main's 0)
	 * replaced by a link to itself (a loop), to the guest's kernel half,
	 * or to memory root B does not map; or, for HOSTILE_DEEP, busy at the
	 * bottom of HOSTILE_DEPTH nested frames (one vCPU only: the frames
	 * take 16 bytes each, more than the 64 KiB between vCPUs' stacks).
	 * Counts in B's third slot.  Keeps r8.
	 */
	.globl	b_hostile
	.type	b_hostile, @function
b_hostile:
	push	%rbp
	mov	%rsp, %rbp
	cmp	$HOSTILE_DEEP, %edi
	je	4f
	mov	(%rbp), %rsi			/* the real link, put back below */
	mov	%rbp, %rax			/* HOSTILE_LOOP */
	cmp	$HOSTILE_KERNEL, %edi
	jne	1f
	movabs	$HOSTILE_KERNEL_ADDR, %rax
1:	cmp	$HOSTILE_UNMAPPED, %edi
	jne	2f
	mov	$HOSTILE_UNMAPPED_ADDR, %eax
2:	mov	%rax, (%rbp)
	BUSY	ULOOPS, UTEXT_B_ADDR + USTATS_OFF + 16
	mov	%rsi, (%rbp)
	pop	%rbp
	ret
4:	mov	$HOSTILE_DEPTH, %edi
	call	b_deep
	pop	%rbp
	ret
	.size	b_hostile, . - b_hostile

	/* rdi frames down from here, then busy */
	.globl	b_deep
	.type	b_deep, @function
b_deep:
	push	%rbp
	mov	%rsp, %rbp
	dec	%edi
	jz	1f
	call	b_deep
	pop	%rbp
	ret
1:	BUSY	ULOOPS, UTEXT_B_ADDR + USTATS_OFF + 16
	pop	%rbp
	ret
	.size	b_deep, . - b_deep
