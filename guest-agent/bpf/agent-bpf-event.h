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

#endif
