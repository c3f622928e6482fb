/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * libvmctx: unified profiling of a KVM host and its guests.
 *
 * The data flow is capture (host samples carrying guest context), resolve
 * (guest CR3 and IP to guest process and symbol, through a guest's bundle),
 * interpolate (one virtual stream per vCPU on host time, blank time filled
 * as [steal] or [idle]), aggregate, and present (paper-style tables).
 *
 * Conventions: functions returning int give 0 (or a non-negative value) on
 * success and a negative errno or a negative VMCTX_E_* code on failure.
 * Functions returning pointers give NULL and set errno.  Free functions
 * accept NULL.  The library never prints; see vmctx_set_log().
 */
#ifndef VMCTX_H
#define VMCTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Errors ----------------------------------------------------------- */

/* vmctx's own codes, returned negated, beyond the errno range. */
enum vmctx_error {
	VMCTX_E_BASE = 4000,
	VMCTX_E_MAGIC = VMCTX_E_BASE,	/* not a vmctx bundle */
	VMCTX_E_VERSION,		/* unsupported bundle version */
	VMCTX_E_CHECKSUM,		/* checksum or length mismatch */
	VMCTX_E_TRUNCATED,		/* data ends early */
	VMCTX_E_CORRUPT,		/* compressed stream is damaged */
	VMCTX_E_SYNTAX,			/* malformed record */
	VMCTX_E_LIMIT,			/* count, string or size beyond a limit */
	VMCTX_E_RANGE,			/* unsorted or overlapping ranges */
	VMCTX_E_REF,			/* reference to a missing record */
	VMCTX_E_MAX,
};

/* Describe @err (negative or positive; errno values too). Never NULL. */
const char *vmctx_strerror(int err);

enum vmctx_log_level {
	VMCTX_LOG_WARN,
	VMCTX_LOG_INFO,
	VMCTX_LOG_DEBUG,
};

typedef void (*vmctx_log_fn)(enum vmctx_log_level level, const char *msg, void *ctx);

/*
 * Route the library's diagnostics (for example the line and reason a bundle
 * was rejected) to @fn.  NULL, the default, discards them.  Process-wide.
 */
void vmctx_set_log(vmctx_log_fn fn, void *ctx);

/* ---- Exit reasons (one table for the whole project) ---------------------- */

enum vmctx_isa {
	VMCTX_ISA_NONE = 0,
	VMCTX_ISA_VMX = 1,	/* Intel VT-x, exit_reason.full */
	VMCTX_ISA_SVM = 2,	/* AMD-V, VMCB exit_code */
};

/*
 * Name of a VM-exit reason as Linux 6.1 spells it ("HLT", "EXTERNAL_INTERRUPT",
 * "hlt", "interrupt", ...), or NULL when the code is unknown.  For VMX only the
 * basic reason (bits 15:0) is looked up.
 */
const char *vmctx_exit_reason_name(enum vmctx_isa isa, uint64_t reason);

/* True when @reason is the guest executing HLT (VMX 12, SVM 0x78). */
bool vmctx_exit_reason_is_halt(enum vmctx_isa isa, uint64_t reason);

/* Number of named reasons for @isa, and the @i'th of them, in code order. */
size_t vmctx_exit_reason_count(enum vmctx_isa isa);
int vmctx_exit_reason_at(enum vmctx_isa isa, size_t i, uint64_t *reason, const char **name);

/* ---- Guest-map bundle (.vmctx) ------------------------------------------- */

/*
 * A bundle is what a guest agent knows and the host cannot see: the task
 * table (page-table roots), memory maps, symbols, kernel symbols and clock
 * data.  It comes from a guest, so reading one treats every byte as hostile.
 */
struct vmctx_bundle;

/* Guest time value meaning "still alive at the end of the recording". */
#define VMCTX_TIME_NONE UINT64_MAX

struct vmctx_read_opts {
	size_t sz;			/* sizeof(struct vmctx_read_opts) */
	uint64_t max_size;		/* decompressed bytes; 0: 64 MiB */
};

struct vmctx_bundle *vmctx_bundle_alloc(void);
void vmctx_bundle_free(struct vmctx_bundle *b);

int vmctx_bundle_read_mem(const void *buf, size_t len, const struct vmctx_read_opts *opts,
			  struct vmctx_bundle **out);
int vmctx_bundle_read_file(const char *path, const struct vmctx_read_opts *opts,
			   struct vmctx_bundle **out);
/* On success *buf is malloc'ed and owned by the caller. */
int vmctx_bundle_write_mem(struct vmctx_bundle *b, void **buf, size_t *len);
int vmctx_bundle_write_file(struct vmctx_bundle *b, const char *path);

/* Building a bundle.  Strings are copied. */
int vmctx_bundle_set_identity(struct vmctx_bundle *b, const char *hostname,
			      const char *release, const char *boot_id);
/* Guest TSC frequency and one simultaneous (guest TSC, guest CLOCK_MONOTONIC ns) pair. */
int vmctx_bundle_set_clock(struct vmctx_bundle *b, uint64_t tsc_khz, uint64_t tsc, uint64_t ns);
/* Extra CR3 bits to ignore, such as the guest's SME encryption mask. */
int vmctx_bundle_set_cr3_mask(struct vmctx_bundle *b, uint64_t ignore_mask);
/* Returns the task's index.  @exit_ns is VMCTX_TIME_NONE while the task lives. */
int vmctx_bundle_add_task(struct vmctx_bundle *b, uint64_t root, int pid, int tgid,
			  const char *comm, uint64_t start_ns, uint64_t exit_ns);
/*
 * Returns the object's index.  Objects are deduplicated by build-id: adding
 * one whose build-id is known returns the existing index, so its symbols
 * need adding once.  @build_id is lowercase hex, or NULL.
 */
int vmctx_bundle_add_object(struct vmctx_bundle *b, const char *path, const char *build_id);
/* Number of symbols @object holds so far. */
int vmctx_bundle_object_nsyms(const struct vmctx_bundle *b, int object);
int vmctx_bundle_add_symbol(struct vmctx_bundle *b, int object, uint64_t start, uint64_t size,
			    const char *name);
/*
 * Map [start, end) of @task's address space to @object (-1 if none).
 * An IP in the map is the object's ELF virtual address ip - @bias.
 */
int vmctx_bundle_add_map(struct vmctx_bundle *b, int task, uint64_t start, uint64_t end,
			 uint64_t pgoff, uint64_t bias, int object, const char *path);
int vmctx_bundle_add_kmodule(struct vmctx_bundle *b, const char *name, uint64_t start,
			     uint64_t size);
/* A guest kernel symbol; @module is NULL for vmlinux. */
int vmctx_bundle_add_ksym(struct vmctx_bundle *b, uint64_t addr, const char *name,
			  const char *module);

/* Inspecting a bundle. Strings belong to the bundle. */
const char *vmctx_bundle_hostname(const struct vmctx_bundle *b);
const char *vmctx_bundle_release(const struct vmctx_bundle *b);
const char *vmctx_bundle_boot_id(const struct vmctx_bundle *b);
int vmctx_bundle_clock(const struct vmctx_bundle *b, uint64_t *tsc_khz, uint64_t *tsc,
		       uint64_t *ns);
size_t vmctx_bundle_ntasks(const struct vmctx_bundle *b);
int vmctx_bundle_task(const struct vmctx_bundle *b, size_t i, uint64_t *root, int *pid,
		      int *tgid, const char **comm, uint64_t *start_ns, uint64_t *exit_ns);
size_t vmctx_bundle_nobjects(const struct vmctx_bundle *b);
size_t vmctx_bundle_nmaps(const struct vmctx_bundle *b);
size_t vmctx_bundle_nksyms(const struct vmctx_bundle *b);

/*
 * Guest CLOCK_MONOTONIC ns at guest TSC value @guest_tsc, from the bundle's
 * clock pair and TSC frequency: how a host that knows the guest's TSC (host
 * TSC plus KVM's TSC offset) relates guest times to its own.  -ENODATA when
 * the bundle has no clock data, -ERANGE when the result does not fit.
 */
int vmctx_bundle_guest_ns(const struct vmctx_bundle *b, uint64_t guest_tsc, uint64_t *ns);

/* ---- Resolution: CR3 to guest process, IP to symbol ---------------------- */

/*
 * Reduce a raw guest CR3 to the page-table root's physical address: drop
 * PCID/flag bits (11:0), the PTI user-root bit (12), bit 63 (no-flush),
 * bits above the architectural 52-bit limit, and @ignore_mask (for example
 * an SME/SEV encryption bit).
 */
uint64_t vmctx_cr3_normalize(uint64_t cr3, uint64_t ignore_mask);

/*
 * Index of the task that owned @cr3 at guest time @guest_ns, or -ENOENT.
 * A root freed and reused by a later process resolves by lifetime, so an
 * old sample never resolves to the new owner.  With @guest_ns
 * VMCTX_TIME_NONE (guest time unknown) a root resolves only if a single
 * process ever owned it.
 */
int vmctx_bundle_find_task(struct vmctx_bundle *b, uint64_t cr3, uint64_t guest_ns);

/*
 * Task label as the paper prints it: "comm", or "comm(N)" when several
 * processes of the bundle share the comm (N counts them in start order).
 */
const char *vmctx_bundle_task_label(struct vmctx_bundle *b, int task);

/*
 * Resolve a guest user IP in @task's address space.  *sym is NULL when the
 * IP is mapped but no symbol covers it.  *dso is the mapped file's base name.
 * Returns -ENOENT when nothing is mapped at @ip.
 */
int vmctx_bundle_resolve_user(struct vmctx_bundle *b, int task, uint64_t ip, const char **sym,
			      const char **dso);
/* Resolve a guest kernel IP; *module is "vmlinux" or the module's name. */
int vmctx_bundle_resolve_kernel(struct vmctx_bundle *b, uint64_t ip, const char **sym,
				const char **module);

/* ---- Clock fit: host time to guest time, from the samples ----------------- */

/*
 * When nothing relates the host's clock to a guest's, the samples can: a
 * sample must fall inside the lifetime of one of its page-table root's
 * owners.  Offer every guest sample (host time and raw
 * CR3) of one VM, then ask for the offset (guest ns = host ns + offset) that
 * the most samples agree with, to pass to vmctx_session_attach_bundle().
 * Needs processes that start or exit while sampled; memory is O(tasks).
 * Offer guest user-mode samples only: guest kernel threads and the idle
 * task run on the last process's page tables (lazy TLB), so a kernel-mode
 * CR3 can be the root of a process that has exited.
 */
struct vmctx_clock_fit;

struct vmctx_clock_fit *vmctx_clock_fit_new(struct vmctx_bundle *b);
void vmctx_clock_fit_free(struct vmctx_clock_fit *f);
int vmctx_clock_fit_add(struct vmctx_clock_fit *f, uint64_t host_ns, uint64_t cr3);
/*
 * -ENODATA when no offered sample had a root the bundle knows.  *agree:
 * samples consistent with *offset; *used: samples of roots the bundle knows.
 */
int vmctx_clock_fit_offset(const struct vmctx_clock_fit *f, int64_t *offset, uint64_t *agree,
			   uint64_t *used);

/* ---- Session: timeline engine and aggregation ---------------------------- */

/*
 * A session consumes one time-ordered stream of host events and keeps, per
 * vCPU, a virtual sample stream on host time.  Memory is bounded by the
 * number of vCPUs, pCPUs and distinct symbols, never by the sample count.
 */
struct vmctx_session;

struct vmctx_session_opts {
	size_t sz;		/* sizeof(struct vmctx_session_opts) */
	uint64_t tick_ns;	/* nominal sampling interval; 0 disables time-based gap fill */
	/*
	 * Bounds on what an event stream may declare, since perf.data is
	 * untrusted: pCPU numbers below max_pcpus (0: 1024) and at most
	 * max_vcpus distinct vCPUs (0: 4096).  Memory is O(pCPUs x vCPUs).
	 */
	uint32_t max_pcpus;
	uint32_t max_vcpus;
	uint32_t flags;		/* VMCTX_SESSION_* */
};

/*
 * For clock events (cpu-clock, task-clock), whose timer fires every tick_ns
 * whatever the CPU does: a sample that comes n ticks after the previous one
 * on its pCPU stands for n ticks.  The timer was held off (interrupts off,
 * or a nested host's own vCPU was not running), and the ticks it missed
 * belong to what the pCPU was doing when it finally fired.  Without this
 * flag, ticks no pCPU sampled are filled as blank time (a PMU stops in idle).
 * Needs tick_ns.
 */
#define VMCTX_SESSION_WEIGHT_BY_TIME	(1u << 0)

struct vmctx_session *vmctx_session_new(const struct vmctx_session_opts *opts);
void vmctx_session_free(struct vmctx_session *s);

/*
 * Declare a VM (its QEMU process, host tgid @pid) and its name.  Returns the
 * VM number k used in "(VMk)" labels: 1, 2, ... in declaration order.  VMs
 * first seen in a sample are declared automatically, named "pid<tgid>".
 */
int vmctx_session_add_vm(struct vmctx_session *s, int pid, const char *name);

/*
 * Resolve VM @pid's guest samples through @b, which the caller keeps and
 * frees after the session.  @guest_ns_offset is added to host time to get
 * the guest time used for task lifetimes; VMCTX_OFFSET_UNKNOWN when the two
 * clocks cannot be related, and then roots resolve only when a single
 * process ever owned them (see vmctx_bundle_find_task()).
 */
#define VMCTX_OFFSET_UNKNOWN INT64_MIN
int vmctx_session_attach_bundle(struct vmctx_session *s, int pid, struct vmctx_bundle *b,
				int64_t guest_ns_offset);

/* Sample flags. */
#define VMCTX_SAMPLE_GUEST	(1u << 0)	/* taken while the CPU ran guest code */
#define VMCTX_SAMPLE_HOST_VCPU	(1u << 1)	/* host code run for a loaded vCPU */
#define VMCTX_SAMPLE_IDLE	(1u << 2)	/* host idle task */
#define VMCTX_SAMPLE_USER	(1u << 3)	/* host user mode (for host samples) */

struct vmctx_sample {
	size_t sz;		/* sizeof(struct vmctx_sample) */
	uint64_t time;		/* host time, ns */
	uint32_t cpu;		/* physical CPU */
	int32_t pid, tid;	/* host process and thread */
	int32_t vm;		/* host tgid of the VM, or -1 */
	int32_t vcpu;		/* vCPU id, or -1 */
	uint32_t flags;		/* VMCTX_SAMPLE_* */
	uint32_t cpl;		/* guest CPL, for guest samples */
	enum vmctx_isa isa;
	uint64_t cr3;		/* raw guest CR3 */
	uint64_t ip;		/* guest IP for guest samples, else host IP */
	uint64_t exit_reason;	/* last VM exit of the vCPU */
	/* Host symbol and module, resolved by the caller; must outlive the session. */
	const char *host_sym;
	const char *host_dso;
};

int vmctx_session_sample(struct vmctx_session *s, const struct vmctx_sample *smp);

/* A vCPU thread switched out (@preempt: still runnable) or in on @cpu. */
int vmctx_session_switch(struct vmctx_session *s, uint64_t time, uint32_t cpu, int vm, int vcpu,
			 bool out, bool preempt);
/* Halt evidence: the vCPU halted (HLT exit), or woke (kvm_vcpu_wakeup). */
int vmctx_session_halt(struct vmctx_session *s, uint64_t time, int vm, int vcpu, bool halted);
/* @count samples were lost on @cpu ending at @time. */
int vmctx_session_lost(struct vmctx_session *s, uint64_t time, uint32_t cpu, uint64_t count);
/* End of the recording: close every open blank interval at @time. */
int vmctx_session_finish(struct vmctx_session *s, uint64_t time);

/* What a tick of a vCPU's virtual stream is. */
enum vmctx_class {
	VMCTX_CLASS_OS,		/* guest kernel (host kernel in host views) */
	VMCTX_CLASS_USER,	/* guest user (host user in host views) */
	VMCTX_CLASS_STEAL,	/* runnable but not running */
	VMCTX_CLASS_IDLE,	/* halted (host idle in host views) */
	VMCTX_CLASS_LOST,	/* samples lost: never steal */
	VMCTX_CLASS_VM,		/* host views: guest code of a VM (host view: and
				   KVM's work for its loaded vCPUs) */
	VMCTX_CLASS_MAX,
};

/* One run of a vCPU's virtual stream, handed to a vmctx_stream_fn. */
struct vmctx_tick {
	size_t sz;
	uint64_t time;		/* host time of the run's last tick */
	int vm;			/* VM number */
	int vcpu;
	enum vmctx_class cls;
	uint64_t count;		/* ticks in this run */
	const char *function;	/* symbol, or "[steal]", "[idle]", "[lost]" */
	const char *module;	/* module, process label, or "(on vcpu1)", "(VM2)", ... */
	uint64_t exit_reason;	/* steal and idle: the vCPU's last exit */
};

typedef void (*vmctx_stream_fn)(const struct vmctx_tick *tick, void *ctx);

/* Observe every vCPU's virtual stream as it is produced (optional). */
void vmctx_session_set_stream(struct vmctx_session *s, vmctx_stream_fn fn, void *ctx);

/* ---- Reports -------------------------------------------------------------- */

enum vmctx_view {
	VMCTX_VIEW_UNIFIED,	/* host functions and guest functions together */
	VMCTX_VIEW_HOST,	/* each VM is one row "[name] (VMk)" */
	VMCTX_VIEW_GUEST,	/* one VM's virtual time, all vCPUs or one */
	VMCTX_VIEW_VCPUS,	/* one row per vCPU of a VM: "vcpuN", its class shares */
};

struct vmctx_table;

/*
 * Build a table.  @vm is a VM number for VMCTX_VIEW_GUEST and
 * VMCTX_VIEW_VCPUS (ignored otherwise); @vcpu is -1 for all vCPUs.
 */
struct vmctx_table *vmctx_session_table(struct vmctx_session *s, enum vmctx_view view, int vm,
					int vcpu);
void vmctx_table_free(struct vmctx_table *t);

uint64_t vmctx_table_total(const struct vmctx_table *t);
uint64_t vmctx_table_class(const struct vmctx_table *t, enum vmctx_class cls);
size_t vmctx_table_nrows(const struct vmctx_table *t);
/* Rows are sorted by samples, descending. */
int vmctx_table_row(const struct vmctx_table *t, size_t i, uint64_t *samples,
		    const char **function, const char **module);
/* Samples of class @cls in row @i (VMCTX_VIEW_VCPUS rows carry classes). */
uint64_t vmctx_table_row_class(const struct vmctx_table *t, size_t i, enum vmctx_class cls);
/* Samples of the row matching @function and @module (NULL matches any). */
uint64_t vmctx_table_lookup(const struct vmctx_table *t, const char *function, const char *module);
/*
 * Steal broken down by the vCPU's last exit reason, descending.  Codes
 * without a name for the vCPU's ISA share the row VMCTX_EXIT_OTHER.
 */
#define VMCTX_EXIT_OTHER UINT64_C(0xfffffffffffffffe)
size_t vmctx_table_nsteal_reasons(const struct vmctx_table *t);
int vmctx_table_steal_reason(const struct vmctx_table *t, size_t i, uint64_t *reason,
			     uint64_t *samples);

/*
 * Render @t as text: the "Total samples: N  OS:USER:steal:idle = ..." header,
 * then "Samples %Ratio Function Module" rows (at most @max_rows; 0: all),
 * then the steal breakdown.  *out is malloc'ed and owned by the caller.
 */
int vmctx_table_format(const struct vmctx_table *t, size_t max_rows, char **out);

/* Number of VMs, a VM's name and vCPU count, for iterating views. */
int vmctx_session_nvms(const struct vmctx_session *s);
const char *vmctx_session_vm_name(const struct vmctx_session *s, int vm);
int vmctx_session_vm_nvcpus(const struct vmctx_session *s, int vm);
/* The @i'th vCPU id of VM @vm, in id order. */
int vmctx_session_vm_vcpu(const struct vmctx_session *s, int vm, int i);

#ifdef __cplusplus
}
#endif

#endif /* VMCTX_H */
