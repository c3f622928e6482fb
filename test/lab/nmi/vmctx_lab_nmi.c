// SPDX-License-Identifier: GPL-2.0
/*
 * vmctx lab only, not part of the series: the PMI path from a real NMI.
 *
 * Neither emulator the lab runs on (QEMU TCG, bochs) has a PMU, so no PMI
 * ever takes a sample there.  This file sends NMIs to a CPU that runs a vCPU
 * and, in the NMI handler, asks perf's guest callbacks what a PMI's sample
 * would get: perf_guest_state(), perf_guest_get_ip() and
 * perf_guest_get_ctx(), the same calls perf_prepare_sample() and
 * perf_misc_flags() make.  For an NMI in guest mode it also takes the
 * sample's call chain the way a sample does, with perf_callchain() on a
 * kernel counter made for the write (a disabled cpu-clock event on the
 * target CPU with PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_GUEST_CTX and
 * defer_callchain): perf asks KVM for the guest's chain, takes a reference
 * on the counter for KVM, and the chain is PERF_CONTEXT_GUEST_DEFERRED and
 * a cookie, which the NMI's line keeps.  KVM walks the guest's stack before
 * handling the exit and writes the chain to the counter, which has no
 * ring buffer, so it goes nowhere; the walk shows,
 * with its cookie, as kvm:kvm_guest_callchain if that is enabled.  The
 * counter is released once the NMIs have been sent; KVM may hold it until
 * its walk.  KVM sees an NMI that arrives in guest mode as an NMI exit and
 * handles it with kvm_before_interrupt(KVM_HANDLING_NMI), the window a PMI
 * is handled in.
 *
 * build-kernel.sh copies it into kernel/events/ of the lab's L1 tree (both
 * flavours; without PERF_SAMPLE_GUEST_CTX it is empty).  Interface:
 *   echo "CPU COUNT GAP_US" > /proc/vmctx_lab_nmi   send COUNT NMIs to CPU,
 *                                                    one at a time
 *   cat /proc/vmctx_lab_nmi   one line per NMI, in lab-record -g's format:
 *   S cpu pid tid time ip misc cr3 asid exit_reason vcpu_id flags cookie
 * (cookie: that of the NMI's deferred guest call chain, 0 for none).
 */
#include <linux/delay.h>
#include <linux/init.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/proc_fs.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <asm/apic.h>
#include <asm/nmi.h>

#ifdef PERF_GUEST_CTX_VALID

#define VMCTX_LAB_NMI_RECS	8192

struct vmctx_lab_nmi_rec {
	u64	time;
	u64	ip;
	u32	cpu;
	u32	pid;
	u32	tid;
	u32	misc;
	struct perf_guest_ctx ctx;
	u64	cookie;
};

static struct vmctx_lab_nmi_rec *recs;
static atomic_t nr_recs;
static int target_cpu = -1;
static atomic_t pending;
static DEFINE_MUTEX(vmctx_lab_nmi_lock);

/* The kernel counter the NMI handler takes call chains with, during a write. */
static struct perf_event *chain_event;

/* Make the counter for CPU, for the NMIs a write sends it. */
static int vmctx_lab_nmi_chain_start(unsigned int cpu)
{
	struct perf_event_attr attr = {
		.type		= PERF_TYPE_SOFTWARE,
		.size		= sizeof(attr),
		.config		= PERF_COUNT_SW_CPU_CLOCK,
		.sample_period	= NSEC_PER_MSEC,	/* never runs: disabled */
		.sample_type	= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				  PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_GUEST_CTX,
		.disabled	= 1,
		.sample_id_all	= 1,
		.defer_callchain = 1,
		/* as perf_event_open() sets it; KVM walks this many frames */
		.sample_max_stack = READ_ONCE(sysctl_perf_event_max_stack),
	};
	struct perf_event *event;

	event = perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);
	if (IS_ERR(event))
		return PTR_ERR(event);
	WRITE_ONCE(chain_event, event);
	return 0;
}

/*
 * Release the counter.  No NMI handler takes it once it is NULL and those
 * that did have returned (they run as RCU readers); KVM may still hold it
 * for a walk, with the reference perf_callchain() took for it.
 */
static void vmctx_lab_nmi_chain_stop(void)
{
	struct perf_event *event = chain_event;

	WRITE_ONCE(chain_event, NULL);
	synchronize_rcu();
	perf_event_release_kernel(event);
}

/*
 * The sample's chain, as perf_prepare_sample() takes it: for a guest-mode
 * NMI perf asks KVM, and a chain of two, PERF_CONTEXT_GUEST_DEFERRED and
 * a cookie, says KVM will walk the guest's stack; its cookie, 0 if not.
 */
static u64 vmctx_lab_nmi_chain(struct pt_regs *regs)
{
	struct perf_event *event = READ_ONCE(chain_event);
	struct perf_callchain_entry *callchain;

	if (!event)
		return 0;
	callchain = perf_callchain(event, regs);
	if (callchain && callchain->nr == 2 && callchain->ip[0] == PERF_CONTEXT_GUEST_DEFERRED)
		return callchain->ip[1];
	return 0;
}

static u32 vmctx_lab_nmi_misc(unsigned int state, struct pt_regs *regs)
{
	if (state & PERF_GUEST_ACTIVE)
		return state & PERF_GUEST_USER ? PERF_RECORD_MISC_GUEST_USER :
						 PERF_RECORD_MISC_GUEST_KERNEL;
	return user_mode(regs) ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL;
}

static int vmctx_lab_nmi_handler(unsigned int cmd, struct pt_regs *regs)
{
	struct vmctx_lab_nmi_rec *r;
	unsigned int state;
	int i;

	if (smp_processor_id() != READ_ONCE(target_cpu) ||
	    atomic_dec_if_positive(&pending) < 0)
		return NMI_DONE;

	i = atomic_inc_return(&nr_recs) - 1;
	if (i >= VMCTX_LAB_NMI_RECS)
		return NMI_HANDLED;
	r = &recs[i];
	state = perf_guest_state();
	r->misc = vmctx_lab_nmi_misc(state, regs);
	r->ip = state & PERF_GUEST_ACTIVE ? perf_guest_get_ip() : instruction_pointer(regs);
	memset(&r->ctx, 0, sizeof(r->ctx));
	perf_guest_get_ctx(&r->ctx);
	r->cookie = 0;
	if (r->ctx.flags & PERF_GUEST_CTX_GUEST_MODE)
		r->cookie = vmctx_lab_nmi_chain(regs);
	r->time = local_clock();
	r->cpu = smp_processor_id();
	r->pid = current->tgid;
	r->tid = current->pid;
	return NMI_HANDLED;
}

static ssize_t vmctx_lab_nmi_write(struct file *file, const char __user *ubuf,
				   size_t len, loff_t *off)
{
	unsigned int cpu, count, gap_us, n, waited;
	char buf[64];
	int err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%u %u %u", &cpu, &count, &gap_us) != 3 ||
	    cpu >= nr_cpu_ids || !cpu_online(cpu) || cpu == raw_smp_processor_id())
		return -EINVAL;

	mutex_lock(&vmctx_lab_nmi_lock);
	err = vmctx_lab_nmi_chain_start(cpu);
	if (err) {
		mutex_unlock(&vmctx_lab_nmi_lock);
		return err;
	}
	atomic_set(&nr_recs, 0);
	WRITE_ONCE(target_cpu, cpu);
	for (n = 0; n < count; n++) {
		atomic_set(&pending, 1);
		__apic_send_IPI(cpu, NMI_VECTOR);
		/* one NMI in flight at a time, so each is recorded once */
		for (waited = 0; atomic_read(&pending) && waited < 100000; waited++)
			udelay(1);
		usleep_range(gap_us, gap_us + 10);
	}
	atomic_set(&pending, 0);
	WRITE_ONCE(target_cpu, -1);
	vmctx_lab_nmi_chain_stop();
	mutex_unlock(&vmctx_lab_nmi_lock);
	return len;
}

static int vmctx_lab_nmi_show(struct seq_file *m, void *v)
{
	int i, n = min(atomic_read(&nr_recs), VMCTX_LAB_NMI_RECS);

	for (i = 0; i < n; i++) {
		const struct vmctx_lab_nmi_rec *r = &recs[i];

		seq_printf(m, "S %u %u %u %llu 0x%llx %u 0x%llx %u 0x%x %u 0x%x %llu\n",
			   r->cpu, r->pid, r->tid, r->time, r->ip, r->misc,
			   r->ctx.cr3, r->ctx.asid, r->ctx.exit_reason,
			   r->ctx.vcpu_id, r->ctx.flags, r->cookie);
	}
	return 0;
}

static int vmctx_lab_nmi_open(struct inode *inode, struct file *file)
{
	return single_open(file, vmctx_lab_nmi_show, NULL);
}

static const struct proc_ops vmctx_lab_nmi_ops = {
	.proc_open	= vmctx_lab_nmi_open,
	.proc_read	= seq_read,
	.proc_write	= vmctx_lab_nmi_write,
	.proc_lseek	= seq_lseek,
	.proc_release	= single_release,
};

static int __init vmctx_lab_nmi_init(void)
{
	recs = kvcalloc(VMCTX_LAB_NMI_RECS, sizeof(*recs), GFP_KERNEL);
	if (!recs)
		return -ENOMEM;
	if (register_nmi_handler(NMI_LOCAL, vmctx_lab_nmi_handler, 0, "vmctx_lab"))
		return -EBUSY;
	if (!proc_create("vmctx_lab_nmi", 0600, NULL, &vmctx_lab_nmi_ops))
		return -ENOMEM;
	return 0;
}
late_initcall(vmctx_lab_nmi_init);

#endif /* PERF_GUEST_CTX_VALID */
