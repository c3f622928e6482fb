/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lab's one reader of lab-record's sample text (record.c writes it):
 *
 *   S cpu pid tid time ip cpumode cr3 asid exit_reason vcpu_id flags [cookie]
 *   L lost_count
 *   D cpu pid tid time cookie cpumode nr ip...             (lab-record -g)
 *   C cpu pid tid time vcpu_id cookie cpl end walk_ns nr ip...   (-g)
 *
 * (record.c's header comment says what each field is.)  An S line of
 * lab-record -g, and of the NMI module, ends with the cookie of its
 * deferred guest call chain, 0 for none; other S lines have no cookie
 * (read as 0).  lab-check and lab-linux-check read samples through it.  The flags are
 * the PERF_GUEST_CTX_* of the patched uapi header, so the checkers are
 * built against the lab's kernel tree (-I$tree/tools/include/uapi), as
 * lab-record is: a flag the series changes changes here too.
 */
#ifndef LAB_SAMPLES_H
#define LAB_SAMPLES_H

#include <stdint.h>
#include <stdio.h>
#include <linux/perf_event.h>

#ifndef PERF_GUEST_CTX_VALID
#error "this <linux/perf_event.h> has no PERF_GUEST_CTX_* flags: build with -I<patched tree>/tools/include/uapi (a tree with kernel-patches/ applied)"
#endif

/* One S line.  misc is perf's cpumode (PERF_RECORD_MISC_*). */
struct lab_sample {
	uint64_t time;
	uint64_t ip;
	uint64_t cr3;
	unsigned int cpu;
	unsigned int pid;
	unsigned int tid;
	unsigned int misc;
	uint32_t asid;
	uint32_t exit_reason;
	uint32_t vcpu_id;
	uint32_t flags;
	uint64_t cookie;	/* its PERF_RECORD_CALLCHAIN_DEFERRED's, 0: none */
};

/*
 * One D line: a PERF_RECORD_CALLCHAIN_DEFERRED record, its ips whole: the
 * guest's context (PERF_CONTEXT_GUEST_USER or _KERNEL), the guest's
 * frames, then the host's, each part after its PERF_CONTEXT_* marker.
 * Room for a whole guest part, a host kernel and a host user part, and
 * their markers (perf_event_max_contexts_per_stack, 8 by default).
 */
#define LAB_DEFERRED_MAX	(3 * PERF_MAX_STACK_DEPTH + 16)
struct lab_deferred {
	uint64_t time;
	uint64_t cookie;
	uint64_t ips[LAB_DEFERRED_MAX];
	unsigned int cpu;
	unsigned int pid;
	unsigned int tid;
	unsigned int misc;	/* PERF_RECORD_MISC_GUEST_USER or _KERNEL */
	unsigned int nr;
};

/*
 * One C line: a walk of a guest's stack as kvm:kvm_guest_callchain shows
 * it (a debugging aid beside the D records: why the walk ended, how long
 * it held the vCPU), with the cookie of its D records.
 */
#define LAB_CHAIN_MAX	PERF_MAX_STACK_DEPTH
struct lab_chain {
	uint64_t time;
	uint64_t ips[LAB_CHAIN_MAX];
	unsigned int cpu;
	unsigned int pid;
	unsigned int tid;
	uint64_t cookie;
	unsigned int vcpu_id;
	unsigned int cpl;
	unsigned int end;	/* KVM_GUEST_CHAIN_END_* of arch/x86/kvm/trace.h */
	unsigned int walk_ns;
	unsigned int nr;
};

/*
 * One U line: a PERF_RECORD_GUEST_USER_STACK record (lab-record -G): the
 * guest's BP, SP and IP at the sample, the stack's size and how many of its
 * bytes were read (dyn_size), and those bytes as 64-bit words from SP up.
 */
#define LAB_STACK_MAX_WORDS	1024
struct lab_stack {
	uint64_t time;
	uint64_t cookie;
	uint64_t abi;
	uint64_t bp, sp, ip;
	uint64_t size;
	uint64_t dyn_size;
	uint64_t words[LAB_STACK_MAX_WORDS];
	unsigned int cpu;
	unsigned int pid;
	unsigned int tid;
	unsigned int nr_words;
};

enum lab_record {
	LAB_RECORD_END,		/* end of file */
	LAB_RECORD_SAMPLE,	/* an S line, in *sample */
	LAB_RECORD_LOST,	/* an L line, its count in *lost */
	LAB_RECORD_CHAIN,	/* a C line, in *chain */
	LAB_RECORD_DEFERRED,	/* a D line, in *deferred */
	LAB_RECORD_STACK,	/* a U line, in *stack */
};

/*
 * The next sample or lost record of @f, opened by the caller; other lines
 * (the header comment, anything malformed) are skipped.
 */
enum lab_record lab_samples_next(FILE *f, struct lab_sample *sample, uint64_t *lost);

/* The same, and C and D lines too, into *chain and *deferred. */
enum lab_record lab_samples_next_chain(FILE *f, struct lab_sample *sample, uint64_t *lost,
				       struct lab_chain *chain, struct lab_deferred *deferred);

/* The same, and U lines too, into *stack. */
enum lab_record lab_samples_next_stack(FILE *f, struct lab_sample *sample, uint64_t *lost,
				       struct lab_chain *chain, struct lab_deferred *deferred,
				       struct lab_stack *stack);

/* The guest CPL in a sample's flags (meaningful with GUEST_MODE). */
static inline int lab_sample_cpl(const struct lab_sample *s)
{
	return (s->flags & PERF_GUEST_CTX_CPL_MASK) >> PERF_GUEST_CTX_CPL_SHIFT;
}

#endif
