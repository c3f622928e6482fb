/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What agent.bpf.c hands the agent through its ring buffer and task
 * iterator.  Shared by the BPF program and the agent: fixed-size fields
 * only.  Times are the guest's CLOCK_MONOTONIC (bpf_ktime_get_ns(), the
 * module's ktime_get_ns()); roots are physical, as the module gives them.
 */
#ifndef VMCTX_AGENT_BPF_EVENT_H
#define VMCTX_AGENT_BPF_EVENT_H

#define AGENT_BPF_NO_ROOT	(~0ULL)
#define AGENT_BPF_NAMES		4096	/* path components, leaf first */
#define AGENT_BPF_NAME_MAX	256
#define AGENT_BPF_DEPTH		32	/* components followed, mount points included */

enum agent_bpf_type {
	AGENT_BPF_FORK = 1,
	AGENT_BPF_EXEC,
	AGENT_BPF_EXIT,
	AGENT_BPF_MAP,		/* a file-backed executable mapping, just made */
};

struct agent_bpf_task {
	__s32 pid;
	__s32 tgid;
	__u64 start_ns;
	__u64 root;		/* AGENT_BPF_NO_ROOT: no mm (kernel thread, exiting) */
	char comm[16];
};

struct agent_bpf_event {
	__u32 type;
	__s32 other;		/* fork: parent pid; exec: pid before exec */
	__u64 ns;
	struct agent_bpf_task task;
	/* AGENT_BPF_MAP */
	__u64 start;
	__u64 end;
	__u64 pgoff;
	__u32 depth;		/* components in names[], leaf first */
	__u32 truncated;	/* the walk stopped before the root */
	__u32 names_len;	/* bytes of names[] filled */
	char names[AGENT_BPF_NAMES + AGENT_BPF_NAME_MAX];
};

/*
 * The switch log (record --switches): each CPU's ring is switch_slots
 * slots of the switches map from cpu * switch_slots on, and its state one
 * element of switch_rings; the agent maps both.  A slot is the task the
 * CPU switched to, or the switches it lost, as the module's rings have
 * them (vmctx_guest(4)).
 */
enum agent_bpf_switch_kind {
	AGENT_BPF_SW_TASK,
	AGENT_BPF_SW_KTHREAD,
	AGENT_BPF_SW_IDLE,
	AGENT_BPF_SW_LOST,
};

struct agent_bpf_switch {
	__u64 ns;		/* AGENT_BPF_SW_LOST: of the first switch lost */
	__u64 lost_to;		/* AGENT_BPF_SW_LOST: of the last */
	__s32 pid;
	__s32 tgid;
	__u32 kind;
	__u32 nlost;		/* AGENT_BPF_SW_LOST */
	char comm[16];
};

/*
 * Written by the CPU's programs only: head (slots ever written) and the
 * loss under way (nlost switches since lost_from, the last at lost_to).
 * Written by the agent only, on a cache line of its own: tail (slots ever
 * read).
 */
struct agent_bpf_switch_ring {
	__u64 head;
	__u64 lost_from;
	__u64 lost_to;
	__u32 nlost;
	__u32 pad0;
	__u64 pad1[4];
	__u64 tail;
	__u64 pad2[7];
};

#endif
