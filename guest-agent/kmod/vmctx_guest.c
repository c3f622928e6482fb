// SPDX-License-Identifier: GPL-2.0
/*
 * vmctx_guest: tell a guest agent which page-table root each task uses.
 *
 * A host profiler sees only the guest CR3 of each sample.  This module lets
 * vmctx-agent(8) name those values: /proc/vmctx_guest/tasks lists every task
 * with the physical address of its page-table root, and
 * /proc/vmctx_guest/events replays fork, exec and exit events from a bounded
 * ring, so that processes that live only briefly are named too.  With each
 * exec and each process exit it logs the process's executable file
 * mappings, while its memory still exists: a process gone before the agent
 * read its /proc/PID/maps keeps its code.  While /proc/vmctx_guest/switches
 * is open, each CPU's context switches go into a ring of that CPU's, so
 * that the host can tell which task a guest CPU ran at any time.
 *
 * The files are read-only and need CAP_SYS_ADMIN: physical addresses of
 * page tables are as sensitive as the PFNs of /proc/PID/pagemap.
 *
 * The file formats are described in vmctx_guest(4).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/dcache.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/proc_fs.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <linux/version.h>
#include <linux/uaccess.h>
#include <asm/mem_encrypt.h>
#include <asm/msr.h>
#include <asm/pgtable.h>
#include <asm/tsc.h>

#if !defined(CONFIG_X86_64)
#error "vmctx_guest reads x86-64 page-table roots and the TSC"
#endif
#if !defined(CONFIG_TRACEPOINTS)
#error "vmctx_guest needs CONFIG_TRACEPOINTS for the sched_process_* tracepoints"
#endif

#define VG_FORMAT_VERSION	2	/* 2: "map" events */
#define VG_NO_ROOT		U64_MAX
/* Escaped comm: every byte may become "%XX". */
#define VG_COMM_ESC		(TASK_COMM_LEN * 3)
/* Paths of mappings up to this length; longer ones are not logged. */
#define VG_PATH_MAX		256
/* Executable mappings logged per process and event, at most. */
#define VG_MAPS_MAX		32
/* Longest events line: numbers at their widest, an escaped path, separators. */
#define VG_LINE_MAX		(3 * VG_PATH_MAX + 256)
#define VG_READ_BATCH		64

static unsigned int ring_size = 16384;
module_param(ring_size, uint, 0444);
MODULE_PARM_DESC(ring_size, "events kept for readers (rounded up to a power of two, 64..1048576)");

/* Read at each open of the switches file, so that root may change it loaded. */
static unsigned int switch_ring_size = 4096;
module_param(switch_ring_size, uint, 0644);
MODULE_PARM_DESC(switch_ring_size, "context switches kept per CPU while switches is open (rounded up to a power of two, 64..1048576)");

/* Longest switches line: numbers at their widest, an escaped comm, separators. */
#define VG_SW_LINE_MAX		(VG_COMM_ESC + 96)
#define VG_SW_READ_LINES	256

enum vg_event_type {
	VG_FORK,
	VG_EXEC,
	VG_EXIT,
	VG_MAP,
};

static const char * const vg_event_names[] = {
	[VG_FORK] = "fork",
	[VG_EXEC] = "exec",
	[VG_EXIT] = "exit",
	[VG_MAP] = "map",
};

struct vg_event {
	u64 tsc;
	u64 ns;
	u64 start_ns;
	u64 root;
	u64 user_root;
	pid_t pid;
	pid_t tgid;
	pid_t other;		/* fork: parent pid; exec: pid before exec */
	u32 type;
	char comm[TASK_COMM_LEN];
	/* VG_MAP: one executable file mapping of the task's mm */
	u64 start;
	u64 end;
	u64 pgoff;		/* in bytes */
	char path[VG_PATH_MAX];
};

/*
 * The ring overwrites its oldest event when full.  @head counts every event
 * ever logged, so event number s lives in slot s & (size - 1) while
 * head - size <= s < head.  Probes run with preemption disabled and readers
 * in process context; no user is in interrupt context, so a plain spinlock
 * suffices.
 */
struct vg_ring {
	spinlock_t lock;	/* protects head and events */
	u64 head;
	u32 size;
	struct vg_event *events;
};

static struct vg_ring vg_ring = {
	.lock = __SPIN_LOCK_UNLOCKED(vg_ring.lock),
};

/* One open file of /proc/vmctx_guest/events: where its reader stands. */
struct vg_reader {
	struct mutex lock;	/* serialises read() on one file */
	u64 next;
	struct vg_event batch[VG_READ_BATCH];
	char text[(VG_READ_BATCH + 1) * VG_LINE_MAX];
};

struct vg_task {
	u64 start_ns;
	u64 root;
	u64 user_root;
	pid_t pid;
	pid_t tgid;
	char comm[TASK_COMM_LEN];
};

/* A snapshot of the task list, taken when /proc/vmctx_guest/tasks is opened. */
struct vg_snapshot {
	u64 tsc;
	u64 ns;
	size_t count;
	struct vg_task tasks[];
};

enum vg_switch_kind {
	VG_SW_TASK,
	VG_SW_KTHREAD,
	VG_SW_IDLE,
	VG_SW_LOST,
};

static const char * const vg_switch_kinds[] = {
	[VG_SW_TASK] = "task",
	[VG_SW_KTHREAD] = "kthread",
	[VG_SW_IDLE] = "idle",
};

/* One slot of a CPU's switch ring: the task the CPU switched to, or a loss. */
struct vg_switch {
	u64 ns;			/* VG_SW_LOST: of the first switch lost */
	u64 lost_to;		/* VG_SW_LOST: of the last switch lost */
	pid_t pid;
	pid_t tgid;
	u32 kind;
	u32 nlost;		/* VG_SW_LOST */
	char comm[TASK_COMM_LEN];
};

/*
 * One CPU's switches, while the switches file is open.  Only that CPU
 * writes the slots, head and the loss (its sched_switch probe and
 * vg_sw_mark(), both with interrupts off there), and only the one reader
 * moves tail: no lock.  head and tail count every slot ever written and
 * read.  A full ring drops the new switch, not an old one, and counts it:
 * the next switch that fits is preceded by a VG_SW_LOST slot saying which
 * were lost, and a reader that catches up with a loss still under way is
 * told of it.
 */
struct vg_sw_ring {
	u32 size;		/* slots, a power of two */
	u32 nlost;		/* switches dropped since the last VG_SW_LOST slot */
	u64 head;
	u64 lost_from;
	u64 lost_to;
	u64 tail ____cacheline_aligned;
	struct vg_switch slots[] ____cacheline_aligned;
};

/* The reader of the switches file: one at a time. */
struct vg_sw_reader {
	struct mutex lock;	/* serialises read() */
	unsigned int cpu;	/* the sweep's CPU */
	u32 taken;		/* slots taken from it in this sweep */
	char text[VG_SW_READ_LINES * VG_SW_LINE_MAX];
};

static struct tracepoint *vg_sw_tp;	/* sched_switch */

/*
 * The switch probe's place among sched_switch's probes: after every other
 * (they run by descending priority, TRACEPOINT_DEFAULT_PRIO 10).  The
 * previous task stays current until the probes return, so the last one
 * reads the time nearest the switch itself.
 */
#define VG_SW_PRIO	INT_MIN
static struct vg_sw_ring **vg_sw_rings;	/* by CPU, while the file is open */
static unsigned long vg_sw_busy;	/* bit 0: the file is open */

static struct proc_dir_entry *vg_dir;

static const char * const vg_tp_names[] = {
	"sched_process_fork",
	"sched_process_exec",
	"sched_process_exit",
};

static struct tracepoint *vg_tps[ARRAY_SIZE(vg_tp_names)];

/*
 * Physical address of @mm's page-table root as the kernel writes it to CR3
 * (before the PCID and SME bits), and the PTI user half when PTI is on.
 */
static void vg_mm_roots(struct mm_struct *mm, u64 *root, u64 *user_root)
{
	*root = VG_NO_ROOT;
	*user_root = VG_NO_ROOT;
	if (!mm)
		return;
	*root = __pa(mm->pgd);
#ifdef CONFIG_PAGE_TABLE_ISOLATION
	if (static_cpu_has(X86_FEATURE_PTI))
		*user_root = __pa(kernel_to_user_pgdp(mm->pgd));
#endif
}

/*
 * Fill the next slot from @t (and @mm's roots) and @fill's fields; called
 * from the probes, never sleeps.
 */
static void vg_log_event(u32 type, struct task_struct *t, pid_t other, struct mm_struct *mm,
			 const struct vg_event *fill)
{
	struct vg_ring *r = &vg_ring;
	struct vg_event *e;

	spin_lock(&r->lock);
	e = &r->events[r->head & (r->size - 1)];
	r->head++;
	if (fill) {
		e->start = fill->start;
		e->end = fill->end;
		e->pgoff = fill->pgoff;
		memcpy(e->path, fill->path, sizeof(e->path));
	}
	e->type = type;
	e->pid = t->pid;
	e->tgid = t->tgid;
	e->other = other;
	e->start_ns = t->start_time;
	memcpy(e->comm, t->comm, TASK_COMM_LEN);
	e->comm[TASK_COMM_LEN - 1] = '\0';
	vg_mm_roots((t->flags & PF_KTHREAD) ? NULL : mm, &e->root, &e->user_root);
	/* Taken under the lock, so that event order is time order. */
	e->tsc = rdtsc_ordered();
	e->ns = ktime_get_ns();
	spin_unlock(&r->lock);
}

static void vg_log(u32 type, struct task_struct *t, pid_t other, struct mm_struct *mm)
{
	vg_log_event(type, t, other, mm, NULL);
}

/* A per-CPU scratch event for vg_log_maps(): the probes run with preemption off. */
static DEFINE_PER_CPU(struct vg_event, vg_scratch);

/*
 * Log @t's executable file mappings, read from @mm, which the caller keeps
 * alive.  The probes cannot sleep, so the mmap lock is only tried: a
 * process whose mappings are being changed at that moment is skipped, and
 * the agent falls back to /proc/PID/maps.
 */
static void vg_log_maps(struct task_struct *t, struct mm_struct *mm, bool at_exit)
{
	struct vg_event *m = this_cpu_ptr(&vg_scratch);
	struct vm_area_struct *vma;
	int n = 0;
	VMA_ITERATOR(vmi, mm, 0);

	if (!mm || (t->flags & PF_KTHREAD) || !mmap_read_trylock(mm))
		return;
	for_each_vma(vmi, vma) {
		char *p;

		if (!(vma->vm_flags & VM_EXEC) || !vma->vm_file)
			continue;
		if (n++ == VG_MAPS_MAX)
			break;
		/* a path too long for the slot is left to /proc/PID/maps */
		p = d_path(&vma->vm_file->f_path, m->path, sizeof(m->path));
		if (IS_ERR(p))
			continue;
		memmove(m->path, p, strlen(p) + 1);
		m->start = vma->vm_start;
		m->end = vma->vm_end;
		m->pgoff = (u64)vma->vm_pgoff << PAGE_SHIFT;
		vg_log_event(VG_MAP, t, at_exit, mm, m);
	}
	mmap_read_unlock(mm);
}

/*
 * The child is not running yet and its mm is set (shared for CLONE_VM), so
 * nothing changes it under us.
 */
static void vg_probe_fork(void *data, struct task_struct *parent, struct task_struct *child)
{
	vg_log(VG_FORK, child, parent->pid, child->mm);
}

/* Runs in the exec'ing task after the new mm and comm are installed. */
static void vg_probe_exec(void *data, struct task_struct *p, pid_t old_pid,
			  struct linux_binprm *bprm)
{
	vg_log(VG_EXEC, p, old_pid, p->mm);
	/* the program and its interpreter; libraries come later, at exit */
	vg_log_maps(p, p->mm, false);
}

/*
 * do_exit() of a process's last live thread, before exit_mm(): its mm,
 * with every library it mapped, still exists.
 */
static int vg_kprobe_exit(struct kprobe *kp, struct pt_regs *regs)
{
	struct task_struct *t = current;

	if (t->mm && !(t->flags & PF_KTHREAD) && t->signal &&
	    atomic_read(&t->signal->live) == 1)
		vg_log_maps(t, t->mm, true);
	return 0;
}

static struct kprobe vg_exit_kprobe = {
	.symbol_name = "do_exit",
	.pre_handler = vg_kprobe_exit,
};

/* Whether mappings are logged at exit (the kernel has kprobes). */
static int vg_exit_maps;

static void vg_register_exit_maps(void)
{
	int err = -EOPNOTSUPP;

	if (IS_ENABLED(CONFIG_KPROBES))
		err = register_kprobe(&vg_exit_kprobe);
	if (err)
		pr_warn("no mappings at exit (kprobe on do_exit: %d): processes that exit before the agent reads their maps keep only their program\n",
			err);
	vg_exit_maps = !err;
}

static void vg_unregister_exit_maps(void)
{
	if (vg_exit_maps)
		unregister_kprobe(&vg_exit_kprobe);
	vg_exit_maps = 0;
}

/*
 * In 6.1 do_exit() calls exit_mm() before this tracepoint, so p->mm is
 * already NULL.  exit_mm() keeps the old mm as active_mm, pinned by mmgrab()
 * until the task's last switch away, so its pgd is still valid here.
 */
static void vg_probe_exit(void *data, struct task_struct *p)
{
	vg_log(VG_EXIT, p, 0, p->active_mm);
}

static void *const vg_tp_probes[ARRAY_SIZE(vg_tp_names)] = {
	(void *)vg_probe_fork,
	(void *)vg_probe_exec,
	(void *)vg_probe_exit,
};

static u32 vg_sw_kind(const struct task_struct *t)
{
	if (!t->pid)
		return VG_SW_IDLE;
	return (t->flags & PF_KTHREAD) ? VG_SW_KTHREAD : VG_SW_TASK;
}

/*
 * This CPU runs @t from now on; interrupts are off, @r is this CPU's.
 * The switch's time is read last, as close to the switch as the probe
 * gets: the previous task runs until the probes return.
 */
static void vg_sw_log(struct vg_sw_ring *r, struct task_struct *t)
{
	u64 head = r->head;
	struct vg_switch *s;

	/* Acquire: the reader is done with a slot before its tail passes it. */
	if (r->size - (head - smp_load_acquire(&r->tail)) < (r->nlost ? 2 : 1)) {
		u64 ns = ktime_get_ns();

		if (!r->nlost)
			r->lost_from = ns;
		r->lost_to = ns;
		/* Release: lost_from is set before a reader sees nlost. */
		smp_store_release(&r->nlost, r->nlost == U32_MAX ? U32_MAX : r->nlost + 1);
		return;
	}
	if (r->nlost) {
		s = &r->slots[head++ & (r->size - 1)];
		s->ns = r->lost_from;
		s->lost_to = r->lost_to;
		s->kind = VG_SW_LOST;
		s->nlost = r->nlost;
	}
	s = &r->slots[head++ & (r->size - 1)];
	s->pid = t->pid;
	s->tgid = t->tgid;
	s->kind = vg_sw_kind(t);
	memcpy(s->comm, t->comm, TASK_COMM_LEN);
	s->comm[TASK_COMM_LEN - 1] = '\0';
	s->ns = ktime_get_ns();
	/* Release: the slots are written before the reader sees head. */
	smp_store_release(&r->head, head);
	if (r->nlost)
		WRITE_ONCE(r->nlost, 0);
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 18, 0)
static void vg_probe_switch(void *data, bool preempt, struct task_struct *prev,
			    struct task_struct *next, unsigned int prev_state)
#else
static void vg_probe_switch(void *data, bool preempt, struct task_struct *prev,
			    struct task_struct *next)
#endif
{
	vg_sw_log(vg_sw_rings[smp_processor_id()], next);
}

/*
 * What this CPU runs now: from an IPI, the task it interrupted (or the
 * idle task), or on the opener's CPU the opener, interrupts off.
 */
static void vg_sw_mark(void *unused)
{
	vg_sw_log(vg_sw_rings[smp_processor_id()], current);
}

/*
 * "%XX" for bytes outside '!'..'~' and for '%', as vmctx-bundle(5) does, up
 * to @len bytes or a NUL.
 */
static void vg_escape(char *dst, const char *src, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < len && src[i]; i++) {
		unsigned char c = src[i];

		if (c <= ' ' || c > '~' || c == '%') {
			*dst++ = '%';
			*dst++ = hex[c >> 4];
			*dst++ = hex[c & 15];
		} else {
			*dst++ = c;
		}
	}
	*dst = '\0';
}

/* Roots print as hex, or "-" for none. */
static int vg_fmt_root(char *buf, size_t len, u64 root)
{
	if (root == VG_NO_ROOT)
		return scnprintf(buf, len, "-");
	return scnprintf(buf, len, "0x%llx", root);
}

static void vg_clock_pair(u64 *tsc, u64 *ns)
{
	unsigned long flags;

	local_irq_save(flags);
	*tsc = rdtsc_ordered();
	*ns = ktime_get_ns();
	local_irq_restore(flags);
}

static void vg_fill_task(struct vg_task *vt, struct task_struct *t)
{
	vt->pid = t->pid;
	vt->tgid = t->tgid;
	vt->start_ns = t->start_time;
	/* task_lock() keeps ->mm and ->comm stable, and the mm alive. */
	task_lock(t);
	vg_mm_roots((t->flags & PF_KTHREAD) ? NULL : t->mm, &vt->root, &vt->user_root);
	memcpy(vt->comm, t->comm, TASK_COMM_LEN);
	task_unlock(t);
	vt->comm[TASK_COMM_LEN - 1] = '\0';
}

/*
 * Copy the task list.  Count first, allocate outside RCU (it may sleep),
 * then fill; retry if tasks appeared in between.
 */
static struct vg_snapshot *vg_snapshot_take(void)
{
	struct task_struct *g, *t;
	struct vg_snapshot *s;
	size_t n, cap, tries;

	for (tries = 0; tries < 8; tries++) {
		n = 0;
		rcu_read_lock();
		for_each_process_thread(g, t)
			n++;
		rcu_read_unlock();

		cap = n + n / 8 + 64;
		s = kvzalloc(struct_size(s, tasks, cap), GFP_KERNEL);
		if (!s)
			return ERR_PTR(-ENOMEM);

		n = 0;
		rcu_read_lock();
		for_each_process_thread(g, t) {
			if (n == cap) {
				n++;
				break;
			}
			vg_fill_task(&s->tasks[n++], t);
		}
		rcu_read_unlock();
		if (n <= cap) {
			s->count = n;
			vg_clock_pair(&s->tsc, &s->ns);
			return s;
		}
		kvfree(s);
	}
	return ERR_PTR(-EAGAIN);
}

/* Position 0 is the header line, position i + 1 is task i. */
static void *vg_tasks_start(struct seq_file *m, loff_t *pos)
{
	struct vg_snapshot *s = m->private;

	if (*pos == 0)
		return SEQ_START_TOKEN;
	if (*pos > s->count)
		return NULL;
	return &s->tasks[*pos - 1];
}

static void *vg_tasks_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return vg_tasks_start(m, pos);
}

static void vg_tasks_stop(struct seq_file *m, void *v)
{
}

static int vg_tasks_show(struct seq_file *m, void *v)
{
	struct vg_snapshot *s = m->private;
	char root[24], user_root[24], comm[VG_COMM_ESC + 1];
	struct vg_task *t = v;
	int pti = 0;

	if (v == SEQ_START_TOKEN) {
#ifdef CONFIG_PAGE_TABLE_ISOLATION
		pti = static_cpu_has(X86_FEATURE_PTI);
#endif
		seq_printf(m, "vmctx_guest %d tsc_khz=%u tsc=%llu ns=%llu pti=%d cr3_mask=0x%llx tasks=%zu exit_maps=%d\n",
			   VG_FORMAT_VERSION, tsc_khz, s->tsc, s->ns, pti, sme_get_me_mask(),
			   s->count, vg_exit_maps);
		return 0;
	}
	vg_fmt_root(root, sizeof(root), t->root);
	vg_fmt_root(user_root, sizeof(user_root), t->user_root);
	vg_escape(comm, t->comm, TASK_COMM_LEN);
	seq_printf(m, "%d %d %llu %s %s %s\n", t->pid, t->tgid, t->start_ns, root, user_root,
		   comm);
	return 0;
}

static const struct seq_operations vg_tasks_seq_ops = {
	.start = vg_tasks_start,
	.next = vg_tasks_next,
	.stop = vg_tasks_stop,
	.show = vg_tasks_show,
};

static int vg_tasks_open(struct inode *inode, struct file *file)
{
	struct vg_snapshot *s;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	s = vg_snapshot_take();
	if (IS_ERR(s))
		return PTR_ERR(s);
	err = seq_open(file, &vg_tasks_seq_ops);
	if (err) {
		kvfree(s);
		return err;
	}
	((struct seq_file *)file->private_data)->private = s;
	return 0;
}

static int vg_tasks_release(struct inode *inode, struct file *file)
{
	struct seq_file *m = file->private_data;

	kvfree(m->private);
	return seq_release(inode, file);
}

static const struct proc_ops vg_tasks_ops = {
	.proc_open = vg_tasks_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = vg_tasks_release,
};

/*
 * A new reader starts at the oldest event still held, so that it also sees
 * what happened shortly before it opened the file.
 */
static int vg_events_open(struct inode *inode, struct file *file)
{
	struct vg_reader *r;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	r = kvzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	mutex_init(&r->lock);
	spin_lock(&vg_ring.lock);
	r->next = vg_ring.head > vg_ring.size ? vg_ring.head - vg_ring.size : 0;
	spin_unlock(&vg_ring.lock);
	file->private_data = r;
	return stream_open(inode, file);
}

static int vg_events_release(struct inode *inode, struct file *file)
{
	struct vg_reader *r = file->private_data;

	mutex_destroy(&r->lock);
	kvfree(r);
	return 0;
}

static size_t vg_format_map(char *buf, u64 seq, const struct vg_event *e)
{
	char path[3 * VG_PATH_MAX + 1];

	vg_escape(path, e->path, VG_PATH_MAX);
	return scnprintf(buf, VG_LINE_MAX, "%llu map %llu %llu %d %d %s 0x%llx 0x%llx 0x%llx %s\n",
			 seq, e->tsc, e->ns, e->pid, e->tgid, e->other ? "exit" : "exec", e->start,
			 e->end, e->pgoff, path);
}

static size_t vg_format_event(char *buf, u64 seq, const struct vg_event *e)
{
	char root[24], user_root[24], comm[VG_COMM_ESC + 1];

	if (e->type == VG_MAP)
		return vg_format_map(buf, seq, e);

	vg_fmt_root(root, sizeof(root), e->root);
	vg_fmt_root(user_root, sizeof(user_root), e->user_root);
	vg_escape(comm, e->comm, TASK_COMM_LEN);
	return scnprintf(buf, VG_LINE_MAX, "%llu %s %llu %llu %d %d %d %llu %s %s %s\n", seq,
			 vg_event_names[e->type], e->tsc, e->ns, e->pid, e->tgid, e->other,
			 e->start_ns, root, user_root, comm);
}

/*
 * Copy out whole lines only: as many events as the buffer surely holds,
 * preceded by "lost N" when the ring overwrote events this reader had not
 * read.  Returns 0 when the reader has caught up; it never blocks.
 */
static ssize_t vg_events_read(struct file *file, char __user *buf, size_t count, loff_t *ppos)
{
	struct vg_reader *r = file->private_data;
	struct vg_ring *ring = &vg_ring;
	size_t want, n, i, len = 0;
	u64 oldest, first, lost = 0;
	ssize_t ret;

	if (count < 2 * VG_LINE_MAX)
		return -EINVAL;
	want = min_t(size_t, count / VG_LINE_MAX - 1, VG_READ_BATCH);

	mutex_lock(&r->lock);
	spin_lock(&ring->lock);
	oldest = ring->head > ring->size ? ring->head - ring->size : 0;
	if (r->next < oldest) {
		lost = oldest - r->next;
		r->next = oldest;
	}
	n = min_t(u64, ring->head - r->next, want);
	for (i = 0; i < n; i++)
		r->batch[i] = ring->events[(r->next + i) & (ring->size - 1)];
	first = r->next;
	r->next += n;
	spin_unlock(&ring->lock);

	if (lost)
		len += scnprintf(r->text, VG_LINE_MAX, "lost %llu\n", lost);
	for (i = 0; i < n; i++)
		len += vg_format_event(r->text + len, first + i, &r->batch[i]);
	ret = len;
	if (len && copy_to_user(buf, r->text, len))
		ret = -EFAULT;
	mutex_unlock(&r->lock);
	return ret;
}

static const struct proc_ops vg_events_ops = {
	.proc_open = vg_events_open,
	.proc_read = vg_events_read,
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
	/* from 6.12 on, no proc_lseek is what makes the file unseekable */
	.proc_lseek = no_llseek,
#endif
	.proc_release = vg_events_release,
};

static void vg_sw_free_rings(void)
{
	unsigned int cpu;

	if (!vg_sw_rings)
		return;
	for_each_possible_cpu(cpu)
		kvfree(vg_sw_rings[cpu]);
	kfree(vg_sw_rings);
	vg_sw_rings = NULL;
}

static int vg_sw_alloc_rings(u32 size)
{
	unsigned int cpu;

	vg_sw_rings = kcalloc(nr_cpu_ids, sizeof(*vg_sw_rings), GFP_KERNEL);
	if (!vg_sw_rings)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct vg_sw_ring *r;

		r = kvzalloc_node(struct_size(r, slots, size), GFP_KERNEL, cpu_to_node(cpu));
		if (!r) {
			vg_sw_free_rings();
			return -ENOMEM;
		}
		r->size = size;
		vg_sw_rings[cpu] = r;
	}
	return 0;
}

/*
 * Opening starts the log: rings of switch_ring_size slots for every CPU,
 * the probe, and in each online CPU's ring first the task it runs now.
 * Closing ends it.  One reader at a time: the rings have one tail.
 */
static int vg_sw_open(struct inode *inode, struct file *file)
{
	unsigned int size = READ_ONCE(switch_ring_size);
	struct vg_sw_reader *rd;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (size < 64 || size > (1U << 20))
		return -EINVAL;
	if (test_and_set_bit_lock(0, &vg_sw_busy))
		return -EBUSY;
	err = -ENOMEM;
	rd = kvzalloc(sizeof(*rd), GFP_KERNEL);
	if (!rd)
		goto err_busy;
	mutex_init(&rd->lock);
	err = vg_sw_alloc_rings(roundup_pow_of_two(size));
	if (err)
		goto err_reader;
	err = tracepoint_probe_register_prio(vg_sw_tp, (void *)vg_probe_switch, NULL,
					     VG_SW_PRIO);
	if (err)
		goto err_rings;
	on_each_cpu(vg_sw_mark, NULL, 1);
	file->private_data = rd;
	return stream_open(inode, file);

err_rings:
	vg_sw_free_rings();
err_reader:
	mutex_destroy(&rd->lock);
	kvfree(rd);
err_busy:
	clear_bit_unlock(0, &vg_sw_busy);
	return err;
}

/* The reverse of vg_sw_open(); no probe runs once it has waited for them. */
static int vg_sw_release(struct inode *inode, struct file *file)
{
	struct vg_sw_reader *rd = file->private_data;

	tracepoint_probe_unregister(vg_sw_tp, (void *)vg_probe_switch, NULL);
	tracepoint_synchronize_unregister();
	vg_sw_free_rings();
	mutex_destroy(&rd->lock);
	kvfree(rd);
	clear_bit_unlock(0, &vg_sw_busy);
	return 0;
}

static size_t vg_sw_format(char *buf, unsigned int cpu, const struct vg_switch *s)
{
	char comm[VG_COMM_ESC + 1];

	if (s->kind == VG_SW_LOST)
		return scnprintf(buf, VG_SW_LINE_MAX, "lost %u %llu %llu %u\n", cpu, s->ns,
				 s->lost_to, s->nlost);
	vg_escape(comm, s->comm, TASK_COMM_LEN);
	return scnprintf(buf, VG_SW_LINE_MAX, "switch %u %llu %d %d %s %s\n", cpu, s->ns, s->pid,
			 s->tgid, vg_switch_kinds[s->kind], comm);
}

/*
 * Move @cpu's slots into @buf while @room lasts, at most one ring's worth
 * a sweep.  Once caught up, a loss still under way is told ("lost CPU FROM
 * - N") and the CPU is *@done for this sweep.  Returns the bytes written.
 */
static size_t vg_sw_take(struct vg_sw_reader *rd, unsigned int cpu, char *buf, size_t room,
			 bool *done)
{
	struct vg_sw_ring *r = vg_sw_rings[cpu];
	u64 tail = r->tail, head;
	size_t len = 0;
	u32 nlost;

	*done = true;
	while (rd->taken < r->size) {
		if (len + VG_SW_LINE_MAX > room) {
			*done = false;
			break;
		}
		/* Acquire: the slots before head are written (vg_sw_log()). */
		head = smp_load_acquire(&r->head);
		if (tail != head) {
			struct vg_switch s = r->slots[tail & (r->size - 1)];

			/* Release: the slot is copied before the CPU may write it again. */
			smp_store_release(&r->tail, ++tail);
			rd->taken++;
			len += vg_sw_format(buf + len, cpu, &s);
			continue;
		}
		/* Acquire: lost_from is set once nlost is (vg_sw_log()). */
		nlost = smp_load_acquire(&r->nlost);
		if (nlost) {
			u64 from = READ_ONCE(r->lost_from);

			/* the loss may have been logged since: take its slot instead */
			if (smp_load_acquire(&r->head) != head)
				continue;
			len += scnprintf(buf + len, VG_SW_LINE_MAX, "lost %u %llu - %u\n", cpu,
					 from, nlost);
		}
		break;
	}
	return len;
}

/*
 * A sweep over the CPUs, in as many reads as it takes, ends with a read
 * of 0; the next read starts the next sweep.  Whole lines only, and never
 * blocks.
 */
static ssize_t vg_sw_read(struct file *file, char __user *buf, size_t count, loff_t *ppos)
{
	struct vg_sw_reader *rd = file->private_data;
	size_t room, len = 0;
	ssize_t ret;

	if (count < 2 * VG_SW_LINE_MAX)
		return -EINVAL;
	room = min(count, sizeof(rd->text));
	mutex_lock(&rd->lock);
	while (rd->cpu < nr_cpu_ids && len + VG_SW_LINE_MAX <= room) {
		bool done = true;

		if (vg_sw_rings[rd->cpu])
			len += vg_sw_take(rd, rd->cpu, rd->text + len, room - len, &done);
		if (done) {
			rd->cpu++;
			rd->taken = 0;
		}
	}
	if (!len)
		rd->cpu = 0;
	ret = len;
	if (len && copy_to_user(buf, rd->text, len))
		ret = -EFAULT;
	mutex_unlock(&rd->lock);
	return ret;
}

static const struct proc_ops vg_sw_ops = {
	.proc_open = vg_sw_open,
	.proc_read = vg_sw_read,
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
	.proc_lseek = no_llseek,
#endif
	.proc_release = vg_sw_release,
};

static void vg_find_tp(struct tracepoint *tp, void *priv)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vg_tp_names); i++)
		if (!strcmp(tp->name, vg_tp_names[i]))
			vg_tps[i] = tp;
	if (!strcmp(tp->name, "sched_switch"))
		vg_sw_tp = tp;
}

static void vg_unregister_probes(size_t n)
{
	while (n--)
		tracepoint_probe_unregister(vg_tps[n], vg_tp_probes[n], NULL);
	tracepoint_synchronize_unregister();
}

/* The sched_process_* tracepoints are not exported; find them by name. */
static int vg_register_probes(void)
{
	size_t i;
	int err;

	for_each_kernel_tracepoint(vg_find_tp, NULL);
	for (i = 0; i < ARRAY_SIZE(vg_tp_names); i++) {
		if (!vg_tps[i]) {
			pr_err("tracepoint %s not found\n", vg_tp_names[i]);
			return -ENOENT;
		}
	}
	/* attached only while the switches file is open */
	if (!vg_sw_tp) {
		pr_err("tracepoint sched_switch not found\n");
		return -ENOENT;
	}
	for (i = 0; i < ARRAY_SIZE(vg_tp_names); i++) {
		err = tracepoint_probe_register(vg_tps[i], vg_tp_probes[i], NULL);
		if (err) {
			pr_err("cannot attach to %s: %d\n", vg_tp_names[i], err);
			vg_unregister_probes(i);
			return err;
		}
	}
	return 0;
}

static int __init vg_init(void)
{
	int err;

	if (ring_size < 64 || ring_size > (1U << 20)) {
		pr_err("ring_size must be 64..1048576\n");
		return -EINVAL;
	}
	vg_ring.size = roundup_pow_of_two(ring_size);
	vg_ring.events = kvcalloc(vg_ring.size, sizeof(*vg_ring.events), GFP_KERNEL);
	if (!vg_ring.events)
		return -ENOMEM;

	err = vg_register_probes();
	if (err)
		goto err_free;
	vg_register_exit_maps();

	err = -ENOMEM;
	vg_dir = proc_mkdir("vmctx_guest", NULL);
	if (!vg_dir)
		goto err_probes;
	if (!proc_create("tasks", 0400, vg_dir, &vg_tasks_ops) ||
	    !proc_create("events", 0400, vg_dir, &vg_events_ops) ||
	    !proc_create("switches", 0400, vg_dir, &vg_sw_ops))
		goto err_proc;
	pr_info("logging fork/exec/exit%s into %u events; context switches while switches is open\n",
		vg_exit_maps ? " and mappings at exec and exit" : " and mappings at exec",
		vg_ring.size);
	return 0;

err_proc:
	proc_remove(vg_dir);
err_probes:
	vg_unregister_exit_maps();
	vg_unregister_probes(ARRAY_SIZE(vg_tp_names));
err_free:
	kvfree(vg_ring.events);
	return err;
}

/*
 * The reverse of vg_init(); proc_remove() waits for readers to leave, and
 * releases the files still open (the switches file detaches its probe).
 */
static void __exit vg_exit(void)
{
	proc_remove(vg_dir);
	vg_unregister_exit_maps();
	vg_unregister_probes(ARRAY_SIZE(vg_tp_names));
	kvfree(vg_ring.events);
}

module_init(vg_init);
module_exit(vg_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("vmctx developers");
MODULE_DESCRIPTION("Page-table roots, process events and context switches for the vmctx guest agent");
