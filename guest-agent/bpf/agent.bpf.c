// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF backend of vmctx-agent: what vmctx_guest.ko gives, from BTF
 * hooks instead of a module.  Each task's page-table root is __pa(mm->pgd),
 * computed as the kernel does for the direct map (pgd - page_offset_base);
 * fork, exec and exit come from the scheduler's tp_btf tracepoints; and
 * each file-backed executable mapping is logged as it is made, from
 * perf_event_mmap(), which mmap(2), mprotect(2) and the ELF loader all call
 * with the new vma (the hook perf's own mmap records come from), while the
 * memory exists.  That hook is an fentry where BPF trampolines work, else a
 * kprobe.  The agent's task iterator lists the tasks alive at start.
 *
 * With record --switches, sched_switch logs each task a CPU switches to
 * into that CPU's ring, which the agent maps; the agent runs
 * vmctx_switch_mark on each CPU first, so that a CPU's log starts with
 * the task it runs.  Neither is loaded otherwise.
 */
#include "kernel-types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "agent-bpf-event.h"

char LICENSE[] SEC("license") = "GPL";

#define PF_EXITING	0x00000004
#define PF_KTHREAD	0x00200000
#define VM_EXEC		0x00000004
#define MAX_ERRNO	4095

/* x86-64's direct map without KASLR; the kernel's own value when it has one. */
const volatile __u64 default_page_offset = 0xffff888000000000ULL;
extern const void page_offset_base __ksym __weak;
/* AMD SME's encryption bit, which the kernel sets in CR3 beside the root */
extern const void sme_me_mask __ksym __weak;

/* sme_me_mask as the task iterator last read it (0 without SME), for the agent */
__u64 cr3_mask;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

/* events the ring had no room for */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* Slots of each CPU's switch ring, a power of two: the agent's, before loading. */
const volatile __u32 switch_slots = 1;

/* The agent sets their sizes: CPUs * switch_slots, and CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct agent_bpf_switch);
} switches SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct agent_bpf_switch_ring);
} switch_rings SEC(".maps");

static __u64 page_offset(void)
{
	__u64 v = 0;

	if (&page_offset_base && !bpf_probe_read_kernel(&v, sizeof(v), &page_offset_base) && v)
		return v;
	return default_page_offset;
}

static __u64 task_root(struct task_struct *t)
{
	struct mm_struct *mm;
	__u64 pgd;

	if (BPF_CORE_READ(t, flags) & PF_KTHREAD)
		return AGENT_BPF_NO_ROOT;
	mm = BPF_CORE_READ(t, mm);
	if (!mm)
		return AGENT_BPF_NO_ROOT;
	pgd = (__u64)BPF_CORE_READ(mm, pgd);
	if (!pgd)
		return AGENT_BPF_NO_ROOT;
	return pgd - page_offset();
}

static void fill_task(struct agent_bpf_task *d, struct task_struct *t)
{
	d->pid = BPF_CORE_READ(t, pid);
	d->tgid = BPF_CORE_READ(t, tgid);
	d->start_ns = BPF_CORE_READ(t, start_time);
	d->root = task_root(t);
	BPF_CORE_READ_STR_INTO(&d->comm, t, comm);
}

static void count_lost(void)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&lost, &k);

	if (n)
		__sync_fetch_and_add(n, 1);
}

static int log_task(__u32 type, struct task_struct *t, int other)
{
	struct agent_bpf_event *e;

	e = bpf_ringbuf_reserve(&events, __builtin_offsetof(struct agent_bpf_event, start), 0);
	if (!e) {
		count_lost();
		return 0;
	}
	e->type = type;
	e->other = other;
	e->ns = bpf_ktime_get_ns();
	fill_task(&e->task, t);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(vmctx_fork, struct task_struct *parent, struct task_struct *child)
{
	return log_task(AGENT_BPF_FORK, child, BPF_CORE_READ(parent, pid));
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(vmctx_exec, struct task_struct *p, int old_pid, struct linux_binprm *bprm)
{
	return log_task(AGENT_BPF_EXEC, p, old_pid);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(vmctx_exit, struct task_struct *p)
{
	return log_task(AGENT_BPF_EXIT, p, 0);
}

/*
 * The path of @f as names leaf first, crossing mount points upwards: the
 * agent joins them.  A path deeper than AGENT_BPF_DEPTH is marked truncated.
 * The offset in names[] is kept in the event, not in a register, so that
 * every way through an iteration ends in the same verifier state: tracked
 * precisely, the offsets of 2^depth paths would each be explored (more than
 * a million instructions on Linux 6.12).
 */
static void walk_path(struct agent_bpf_event *e, struct file *f)
{
	struct dentry *d = BPF_CORE_READ(f, f_path.dentry), *parent;
	struct vfsmount *vm = BPF_CORE_READ(f, f_path.mnt);
	struct mount *mnt = (void *)vm - bpf_core_field_offset(struct mount, mnt);
	__u32 off, i;
	long n;

	e->depth = 0;
	e->names_len = 0;
	e->truncated = 1;
	for (i = 0; i < AGENT_BPF_DEPTH; i++) {
		struct dentry *mroot = BPF_CORE_READ(mnt, mnt.mnt_root);

		if (d == mroot) {
			struct mount *up = BPF_CORE_READ(mnt, mnt_parent);

			if (up == mnt) {
				e->truncated = 0;
				break;
			}
			d = BPF_CORE_READ(mnt, mnt_mountpoint);
			mnt = up;
			continue;
		}
		parent = BPF_CORE_READ(d, d_parent);
		if (parent == d) {
			e->truncated = 0;
			break;
		}
		off = *(volatile __u32 *)&e->names_len;
		if (off >= AGENT_BPF_NAMES)
			break;
		n = bpf_probe_read_kernel_str(&e->names[off & (AGENT_BPF_NAMES - 1)],
					      AGENT_BPF_NAME_MAX, BPF_CORE_READ(d, d_name.name));
		if (n <= 0)
			break;
		e->names_len = off + n;
		e->depth++;
		d = parent;
	}
}

/* A new or changed vma of the current process: logged if it maps a file executable. */
static int log_map(struct vm_area_struct *vma)
{
	struct task_struct *t = (void *)bpf_get_current_task_btf();
	struct file *file = BPF_CORE_READ(vma, vm_file);
	struct agent_bpf_event *e;

	if (!file || !(BPF_CORE_READ(vma, vm_flags) & VM_EXEC) ||
	    BPF_CORE_READ(vma, vm_mm) != BPF_CORE_READ(t, mm))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		return 0;
	}
	e->type = AGENT_BPF_MAP;
	e->other = 0;
	e->ns = bpf_ktime_get_ns();
	fill_task(&e->task, t);
	e->start = BPF_CORE_READ(vma, vm_start);
	e->end = BPF_CORE_READ(vma, vm_end);
	e->pgoff = BPF_CORE_READ(vma, vm_pgoff) << 12;
	walk_path(e, file);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("fentry/perf_event_mmap")
int BPF_PROG(vmctx_mmap, struct vm_area_struct *vma)
{
	return log_map(vma);
}

/* the same where fentry does not load; the agent enables one of the two */
SEC("kprobe/perf_event_mmap")
int BPF_KPROBE(vmctx_mmap_kprobe, struct vm_area_struct *vma)
{
	return log_map(vma);
}

static struct agent_bpf_switch *switch_slot(__u32 cpu, __u64 i)
{
	__u32 k = cpu * switch_slots + ((__u32)i & (switch_slots - 1));

	return bpf_map_lookup_elem(&switches, &k);
}

static __u32 switch_kind(struct task_struct *t)
{
	if (!BPF_CORE_READ(t, pid))
		return AGENT_BPF_SW_IDLE;
	return (BPF_CORE_READ(t, flags) & PF_KTHREAD) ? AGENT_BPF_SW_KTHREAD : AGENT_BPF_SW_TASK;
}

/*
 * This CPU runs @t from now on.  Only this CPU writes its ring, with
 * interrupts (sched_switch) or preemption (the mark) off, and the agent
 * only its tail: no lock.  x86 keeps stores in order, so a compiler
 * barrier puts a slot before the head that shows it, and a slot is
 * written only after the tail read shows the agent has taken it.  A full
 * ring drops the new switch and counts it, and the next switch that fits
 * comes after a slot that says which were lost.
 *
 * A switch's time is read last, as close to the switch itself as the
 * probe gets: the previous task runs until the probes return, and a
 * sample taken while this one runs belongs to it.  Unlike the module's
 * probe, a program cannot choose its place among the tracepoint's probes:
 * it runs after those attached before it.
 */
static int log_switch(struct task_struct *t)
{
	__u32 cpu = bpf_get_smp_processor_id(), nlost;
	struct agent_bpf_switch_ring *r = bpf_map_lookup_elem(&switch_rings, &cpu);
	__u64 head, tail;
	struct agent_bpf_switch *s;

	if (!r)
		return 0;
	head = r->head;
	nlost = r->nlost;
	tail = *(volatile __u64 *)&r->tail;
	asm volatile("" ::: "memory");
	if (switch_slots - (head - tail) < (nlost ? 2 : 1)) {
		__u64 ns = bpf_ktime_get_ns();

		if (!nlost)
			r->lost_from = ns;
		r->lost_to = ns;
		asm volatile("" ::: "memory");
		*(volatile __u32 *)&r->nlost = nlost + 1;
		return 0;
	}
	if (nlost) {
		s = switch_slot(cpu, head);
		if (!s)
			return 0;
		s->ns = r->lost_from;
		s->lost_to = r->lost_to;
		s->pid = 0;
		s->tgid = 0;
		s->kind = AGENT_BPF_SW_LOST;
		s->nlost = nlost;
		s->comm[0] = '\0';
		head++;
	}
	s = switch_slot(cpu, head);
	if (!s)
		return 0;
	s->lost_to = 0;
	s->pid = BPF_CORE_READ(t, pid);
	s->tgid = BPF_CORE_READ(t, tgid);
	s->kind = switch_kind(t);
	s->nlost = 0;
	BPF_CORE_READ_STR_INTO(&s->comm, t, comm);
	s->ns = bpf_ktime_get_ns();
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&r->head = head + 1;
	if (nlost) {
		asm volatile("" ::: "memory");
		*(volatile __u32 *)&r->nlost = 0;
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(vmctx_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return log_switch(next);
}

/*
 * What this CPU runs now, for the start of its log: never attached, the
 * agent runs it on each CPU (BPF_F_TEST_RUN_ON_CPU), from an IPI that
 * interrupts the running task, or on its own CPU with preemption off.
 */
SEC("raw_tp")
int vmctx_switch_mark(void *ctx)
{
	return log_switch((struct task_struct *)bpf_get_current_task());
}

/* The tasks alive now, one record each, through bpf_iter_create(). */
SEC("iter/task")
int vmctx_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct agent_bpf_task d = {};

	if (&sme_me_mask)
		bpf_probe_read_kernel(&cr3_mask, sizeof(cr3_mask), &sme_me_mask);
	/* as the module's table: a task is gone once its exit event is logged */
	if (!t || (BPF_CORE_READ(t, flags) & PF_EXITING))
		return 0;
	fill_task(&d, t);
	bpf_seq_write(ctx->meta->seq, &d, sizeof(d));
	return 0;
}
