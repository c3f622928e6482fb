/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * libvmctx: unified profiling of a KVM host and its guests.
 *
 * The data flow is capture (host samples carrying guest context), resolve
 * (guest CR3 and IP to guest process and symbol, through a guest's bundle),
 * interpolate (one virtual stream per vCPU on host time, blank time filled
 * as [steal] or [idle]), aggregate, and present (paper-style tables) or
 * export (pprof, folded stacks).
 *
 * Conventions: functions returning int give 0 (or a non-negative value) on
 * success and a negative errno or a negative VMCTX_E_* code on failure.
 * Functions returning pointers give NULL and set errno (to an errno value
 * or a VMCTX_E_* code).  Every handle has one lifetime pair, _new() and
 * _free(): they handle memory only, and _free() accepts NULL.  Options
 * structures (and the other structures a caller hands in one at a time)
 * start with size_t sz, the caller's sizeof, so that they can grow: an
 * older, smaller structure is accepted, its missing fields taken as
 * defaults, and a newer one only if the bytes this library does not know
 * are all zero; too short for the structure's first version fails with
 * -EINVAL.  Declare them with VMCTX_OPTS().  Records that come in arrays
 * (struct vmctx_frame, struct vmctx_label) have a fixed layout instead.
 * The library never prints; see vmctx_set_log().
 *
 * The kernel-doc comments below are each call's contract; the man pages
 * say it in prose, and test/check-api-doc.pl holds their prototypes and
 * error codes to these.
 *
 * Man pages: libvmctx(3) for the overview, then one page per group below:
 * vmctx_strerror(3), vmctx_exit_reason(3), vmctx_bundle(3),
 * vmctx_bundle_add(3), vmctx_bundle_info(3), vmctx_fetch(3), vmctx_resolve(3),
 * vmctx_clock(3), vmctx_clock_fit(3), vmctx_session(3), vmctx_table(3),
 * vmctx_export(3), vmctx_profile(3), vmctx_escape(3).
 */
#ifndef VMCTX_H
#define VMCTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Declare the options structure @NAME of type struct @TYPE, its sz set and
 * every field not named zero, its padding too, as far as C lets a macro
 * (libbpf's LIBBPF_OPTS() does the same): a newer struct is accepted only
 * if the bytes this library does not know are zero.
 * VMCTX_OPTS(vmctx_read_opts, o, .max_size = N);
 */
#define VMCTX_OPTS(TYPE, NAME, ...)						\
	struct TYPE NAME = ({							\
		memset(&NAME, 0, sizeof(struct TYPE));				\
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };	\
	})

/* ---- Errors and diagnostics (vmctx_strerror(3)) ---------------------------- */

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
	VMCTX_E_SEALED,			/* the bundle is sealed: it no longer changes */
	VMCTX_E_UNSEALED,		/* the bundle is not sealed yet */
	VMCTX_E_GAP,			/* the guest's switch log lost that time */
	VMCTX_E_MAX,
};

/**
 * vmctx_strerror() - Describe an error code
 * @err: a libvmctx return value: a negative errno or VMCTX_E_* code; the
 *	positive value (errno after a pointer function failed) is accepted too
 *
 * Return: a description that is never NULL.  It is either static or held
 * in thread-local storage until the thread's next call.
 */
const char *vmctx_strerror(int err);

enum vmctx_log_level {
	VMCTX_LOG_WARN,
	VMCTX_LOG_INFO,
	VMCTX_LOG_DEBUG,
};

typedef void (*vmctx_log_fn)(enum vmctx_log_level level, const char *msg, void *ctx);

/**
 * vmctx_set_log() - Route the library's diagnostics to a callback
 * @fn: called with each message (for example the line and the reason a
 *	bundle was rejected); NULL, the default, discards them
 * @ctx: passed to @fn as is
 *
 * The setting is process-wide.  @msg is valid during the call only.
 */
void vmctx_set_log(vmctx_log_fn fn, void *ctx);

/* ---- Exit reasons: one table for the whole project (vmctx_exit_reason(3)) -- */

enum vmctx_isa {
	VMCTX_ISA_NONE = 0,
	VMCTX_ISA_VMX = 1,	/* Intel VT-x, exit_reason.full */
	VMCTX_ISA_SVM = 2,	/* AMD-V, VMCB exit_code */
};

/**
 * vmctx_exit_reason_name() - Name a VM-exit reason
 * @isa: VMCTX_ISA_VMX or VMCTX_ISA_SVM
 * @reason: the exit code; for VMX only the basic reason (bits 15:0) counts
 *
 * Return: the name as Linux 6.1 spells it ("HLT", "EXTERNAL_INTERRUPT",
 * "hlt", "interrupt", ...), static, or NULL when the code has no name.
 */
const char *vmctx_exit_reason_name(enum vmctx_isa isa, uint64_t reason);

/**
 * vmctx_exit_reason_is_halt() - Tell whether an exit is the guest executing HLT
 * @isa: VMCTX_ISA_VMX or VMCTX_ISA_SVM
 * @reason: the exit code
 *
 * Return: true for VMX 12 and SVM 0x78, false otherwise.
 */
bool vmctx_exit_reason_is_halt(enum vmctx_isa isa, uint64_t reason);

/**
 * vmctx_exit_reason_count() - Count the named exit reasons of an ISA
 * @isa: VMCTX_ISA_VMX or VMCTX_ISA_SVM
 *
 * Return: the number of entries vmctx_exit_reason_at() walks; 0 for an
 * unknown @isa.
 */
size_t vmctx_exit_reason_count(enum vmctx_isa isa);

/**
 * vmctx_exit_reason_at() - Get one named exit reason, in code order
 * @isa: VMCTX_ISA_VMX or VMCTX_ISA_SVM
 * @i: position, below vmctx_exit_reason_count()
 * @reason: set to the code (may be NULL)
 * @name: set to its static name (may be NULL)
 *
 * Return: 0, or -ENOENT when @i is out of range.
 */
int vmctx_exit_reason_at(enum vmctx_isa isa, size_t i, uint64_t *reason, const char **name);

/* ---- Guest-map bundle (.vmctx) (vmctx_bundle(3)) --------------------------- */

/*
 * A bundle is what a guest agent knows and the host cannot see: the task
 * table (page-table roots), memory maps, symbols, kernel symbols and clock
 * data.  It comes from a guest, so reading one treats every byte as hostile.
 *
 * A bundle is built, then sealed once: vmctx_bundle_new(), the
 * vmctx_bundle_set_*() and vmctx_bundle_add_*() calls, then
 * vmctx_bundle_seal(), which checks the whole bundle, sorts it and indexes
 * it.  Reading a bundle seals it.  A sealed bundle never changes: adding
 * to it fails with -VMCTX_E_SEALED, and writing, resolution, the clock fit
 * and sessions take it as const and refuse an unsealed one with
 * -VMCTX_E_UNSEALED.  The inspectors (vmctx_bundle_hostname() ...
 * vmctx_bundle_switch_gap()) work on both.
 */
struct vmctx_bundle;

/* Guest time value meaning "still alive at the end of the recording". */
#define VMCTX_TIME_NONE UINT64_MAX

/* What a guest CPU ran, in a bundle's switch log (vmctx_bundle_add_switch()). */
enum vmctx_task_kind {
	VMCTX_TASK_USER,	/* a task with user space ("task" in the file) */
	VMCTX_TASK_KTHREAD,	/* a kernel thread */
	VMCTX_TASK_IDLE,	/* the CPU's idle task: pid 0 */
};

struct vmctx_read_opts {
	size_t sz;			/* sizeof(struct vmctx_read_opts) */
	uint64_t max_size;		/* decompressed bytes; 0: 64 MiB */
};

/**
 * vmctx_bundle_new() - Allocate an empty bundle to build
 *
 * Return: an unsealed bundle that the caller owns and frees with
 * vmctx_bundle_free(), or NULL with errno ENOMEM.
 */
struct vmctx_bundle *vmctx_bundle_new(void);

/**
 * vmctx_bundle_free() - Free a bundle and every string it holds
 * @b: the bundle, or NULL
 *
 * Strings and labels the bundle handed out become invalid, so free it
 * after every session and clock fit that uses it.
 */
void vmctx_bundle_free(struct vmctx_bundle *b);

/**
 * vmctx_bundle_seal() - Check, sort and index a built bundle, once
 * @b: the bundle
 *
 * Maps are sorted and must not overlap; symbols are sorted, aliases at the
 * same address are pruned (the longest wins), zero-sized symbols reach to
 * the next one and overlaps are clipped; kernel symbols are sorted; the
 * switch log is sorted by CPU and time (stably) and its gaps by CPU and
 * start; process labels, the index by page-table root and the switch log's
 * index by CPU are built.  Sealing a sealed bundle does nothing.  On
 * failure the bundle stays unsealed, and can only be freed.
 *
 * Return: 0; -EINVAL for a NULL bundle; -VMCTX_E_RANGE for overlapping
 * maps, clock pairs that do not rise in both TSC and ns, overlapping gaps
 * of one CPU, or a switch or gap outside the window (the log says which);
 * -VMCTX_E_SYNTAX for a build-id or a module name twice; -ENOMEM.
 */
int vmctx_bundle_seal(struct vmctx_bundle *b);

/**
 * vmctx_bundle_read_mem() - Read a bundle from memory
 * @buf: the file's bytes (a gzip member, see vmctx-bundle(5))
 * @len: their number
 * @opts: limits, or NULL for the defaults
 * @out: set to the new, sealed bundle on success only
 *
 * Every byte is treated as hostile: the decompressed size is capped, and
 * every record, reference and range is checked.  The log callback gets the
 * line and the reason of a rejection.
 *
 * Return: 0; -EINVAL (also @opts with sz 0 or a set field this library does
 * not know); -ENOMEM; or the VMCTX_E_* code of what is wrong.
 */
int vmctx_bundle_read_mem(const void *buf, size_t len, const struct vmctx_read_opts *opts,
			  struct vmctx_bundle **out);

/**
 * vmctx_bundle_read_file() - Read a bundle from a file
 * @path: the file
 * @opts: limits, or NULL for the defaults
 * @out: set to the new, sealed bundle on success only
 *
 * As vmctx_bundle_read_mem(); a file larger than any bundle within the
 * size limit is refused before it is read.
 *
 * Return: 0; -errno of open() or read(); -EISDIR; or as
 * vmctx_bundle_read_mem().
 */
int vmctx_bundle_read_file(const char *path, const struct vmctx_read_opts *opts,
			   struct vmctx_bundle **out);

/**
 * vmctx_bundle_write_mem() - Write a sealed bundle to memory
 * @b: the sealed bundle
 * @buf: set to the malloc'ed bytes, which the caller frees
 * @len: set to their number
 *
 * The output is canonical: a bundle read and written again gives the same
 * bytes.
 *
 * Return: 0; -EINVAL; -VMCTX_E_UNSEALED; -ENOMEM.
 */
int vmctx_bundle_write_mem(const struct vmctx_bundle *b, void **buf, size_t *len);

/**
 * vmctx_bundle_write_file() - Write a sealed bundle to a file, atomically
 * @b: the sealed bundle
 * @path: the file, replaced whole: readers never see a partial bundle;
 *        created with mode 0600, as it holds the guest's addresses
 *
 * Return: 0; -errno of the file operations; or as vmctx_bundle_write_mem().
 */
int vmctx_bundle_write_file(const struct vmctx_bundle *b, const char *path);

/* ---- Fetching a bundle from a guest's agent (vmctx_fetch(3)) -------------- */

/* The vsock port vmctx-agent serve answers on by default. */
#define VMCTX_FETCH_PORT	30317

struct vmctx_fetch_opts {
	size_t sz;			/* sizeof(struct vmctx_fetch_opts) */
	unsigned int cid;		/* the guest's vsock CID (not 0, 1 or 2) */
	unsigned int port;		/* 0: VMCTX_FETCH_PORT */
	const char *unix_path;		/* a Unix socket instead of vsock; cid ignored */
	uint64_t span_ns;		/* the last span of guest time wanted; 0: all kept */
	unsigned int timeout_ms;	/* the whole exchange; 0: 5000 */
	uint64_t max_size;		/* the bundle's bytes; 0: 64 MiB */
};

/**
 * vmctx_fetch() - Ask a guest's agent for the bundle of its last span of time
 * @opts: where the agent listens, what to ask for, and the bounds
 * @data: set to the malloc'ed bundle bytes (gzip, vmctx-bundle(5)), which
 *	  the caller frees, on success only
 * @len: set to their number
 *
 * Connects, sends one request and reads the reply, all within the
 * timeout.  The bytes come from the guest: read them with
 * vmctx_bundle_read_mem(), which checks them.  An error the agent
 * answered is logged (vmctx_set_log()), escaped.
 *
 * Return: 0; -EINVAL; -errno of socket(), connect(), send() or recv()
 * (-ECONNREFUSED: nothing listens; -ETIMEDOUT: the timeout passed);
 * -EREMOTEIO: the agent answered an error; -VMCTX_E_SYNTAX: no reply of
 * this protocol; -VMCTX_E_LIMIT: a bundle over @opts->max_size;
 * -VMCTX_E_TRUNCATED: the reply ended early; -ENOMEM.
 */
int vmctx_fetch(const struct vmctx_fetch_opts *opts, void **data, size_t *len);

/**
 * vmctx_fetch_read_request() - Read a fetch request, as an agent does
 * @fd: a connected stream socket
 * @timeout_ms: for the whole request; 0: 5000
 * @span_ns: set to the span of guest time asked for (0: all kept)
 *
 * Return: 0; -EINVAL; -errno of recv(); -ETIMEDOUT;
 * -VMCTX_E_TRUNCATED: the peer closed first; -VMCTX_E_SYNTAX: not a
 * request of this protocol, or a line over 128 bytes.
 */
int vmctx_fetch_read_request(int fd, unsigned int timeout_ms, uint64_t *span_ns);

/**
 * vmctx_fetch_write_reply() - Answer a fetch request, as an agent does
 * @fd: the connected stream socket the request came on
 * @data: the bundle's bytes (vmctx_bundle_write_mem()), when @err is 0
 * @len: their number
 * @err: 0, or why there is no bundle: the reply then says
 *	 vmctx_strerror(@err)
 * @timeout_ms: for the whole reply; 0: 5000
 *
 * Return: 0; -EINVAL; -errno of send(); -ETIMEDOUT.
 */
int vmctx_fetch_write_reply(int fd, const void *data, size_t len, int err,
			    unsigned int timeout_ms);

/*
 * Building a bundle (vmctx_bundle_add(3)).  Strings are copied.  Every
 * call refuses a sealed bundle with -VMCTX_E_SEALED, and strings beyond
 * the limits of vmctx-bundle(5) with -VMCTX_E_LIMIT.
 */

/**
 * vmctx_bundle_set_identity() - Set the guest's identity
 * @b: the bundle
 * @hostname: the guest's host name (NULL: empty)
 * @release: its kernel release (NULL: empty)
 * @boot_id: its boot id (NULL: empty)
 *
 * Return: 0; -EINVAL; -VMCTX_E_SEALED; -VMCTX_E_LIMIT; -ENOMEM.
 */
int vmctx_bundle_set_identity(struct vmctx_bundle *b, const char *hostname,
			      const char *release, const char *boot_id);

/**
 * vmctx_bundle_set_agent() - Say what wrote the bundle, and how
 * @b: the bundle
 * @agent: for example "vmctx-agent 0.2.0 backend=bpf" (NULL: not said)
 *
 * Return: 0; -EINVAL; -VMCTX_E_SEALED; -VMCTX_E_LIMIT; -ENOMEM.
 */
int vmctx_bundle_set_agent(struct vmctx_bundle *b, const char *agent);

/**
 * vmctx_bundle_set_clock() - Set the guest clock data
 * @b: the bundle
 * @tsc_khz: the guest TSC frequency (0: unknown)
 * @tsc: a guest TSC value
 * @ns: guest CLOCK_MONOTONIC ns at the same moment as @tsc
 *
 * Return: 0; -EINVAL; -VMCTX_E_SEALED.
 */
int vmctx_bundle_set_clock(struct vmctx_bundle *b, uint64_t tsc_khz, uint64_t tsc, uint64_t ns);

/**
 * vmctx_bundle_set_window() - Set the window the bundle describes
 * @b: the bundle
 * @start_ns: guest CLOCK_MONOTONIC ns when the recording began
 * @end_ns: guest CLOCK_MONOTONIC ns when it ended, not less than @start_ns
 *
 * A bundle knows each root's owners only within its window: tasks alive at
 * the end have no exit time, and processes that lived only outside the
 * window are missing.  A bundle with a window resolves no root outside it
 * (vmctx_bundle_find_task()); one without (older agents) resolves as if its
 * window were unbounded.
 *
 * Return: 0; -EINVAL (also when @end_ns < @start_ns or is VMCTX_TIME_NONE);
 * -VMCTX_E_SEALED.
 */
int vmctx_bundle_set_window(struct vmctx_bundle *b, uint64_t start_ns, uint64_t end_ns);

/**
 * vmctx_bundle_add_clock_pair() - Add a guest TSC/ns pair
 * @b: the bundle
 * @tsc: a guest TSC value
 * @ns: guest CLOCK_MONOTONIC ns at the same moment as @tsc
 *
 * Pairs taken over the whole window relate the guest's TSC to its clock
 * even where the clock's rate drifts or is slewed: vmctx_bundle_guest_ns()
 * interpolates between them.  Sealing sorts them; both TSC and ns must
 * then strictly increase.
 *
 * Return: 0; -EINVAL; -VMCTX_E_SEALED; -VMCTX_E_LIMIT beyond 2^20 pairs;
 * -ENOMEM.
 */
int vmctx_bundle_add_clock_pair(struct vmctx_bundle *b, uint64_t tsc, uint64_t ns);

/**
 * vmctx_bundle_set_cr3_mask() - Set extra CR3 bits to ignore
 * @b: the bundle
 * @ignore_mask: bits such as the guest's SME encryption bit
 *
 * Return: 0; -EINVAL; -VMCTX_E_SEALED.
 */
int vmctx_bundle_set_cr3_mask(struct vmctx_bundle *b, uint64_t ignore_mask);

/**
 * vmctx_bundle_add_task() - Add a task: one page-table root over one lifetime
 * @b: the bundle
 * @root: the root's physical address, or a raw CR3 value
 * @pid: the guest pid
 * @tgid: the guest tgid; threads share their process's root
 * @comm: the task's name (NULL: empty)
 * @start_ns: guest CLOCK_MONOTONIC ns when the root became the task's
 * @exit_ns: when the task ended, or VMCTX_TIME_NONE while it lives
 *
 * Return: the task's index (0, 1, ... in order of addition); -EINVAL
 * (negative ids, or @exit_ns before @start_ns); -VMCTX_E_SEALED;
 * -VMCTX_E_LIMIT; -ENOMEM.
 */
int vmctx_bundle_add_task(struct vmctx_bundle *b, uint64_t root, int pid, int tgid,
			  const char *comm, uint64_t start_ns, uint64_t exit_ns);

/**
 * vmctx_bundle_add_object() - Add an ELF object, deduplicated by build-id
 * @b: the bundle
 * @path: the object's path in the guest
 * @build_id: lowercase hex, an even number of 2 to 128 digits, or NULL
 *
 * Adding an object whose build-id is known returns the existing index, so
 * its symbols need adding once (see vmctx_bundle_object_nsyms()).
 *
 * Return: the object's index; -EINVAL; -VMCTX_E_SEALED; -VMCTX_E_LIMIT;
 * -ENOMEM.
 */
int vmctx_bundle_add_object(struct vmctx_bundle *b, const char *path, const char *build_id);

/**
 * vmctx_bundle_object_nsyms() - Count the symbols an object holds
 * @b: the bundle, sealed or not
 * @object: the object's index
 *
 * Sealing prunes aliases, so the count may drop when the bundle is sealed.
 *
 * Return: the count; 0 for a missing object or a NULL bundle.
 */
size_t vmctx_bundle_object_nsyms(const struct vmctx_bundle *b, int object);

/**
 * vmctx_bundle_add_symbol() - Add a symbol to an object
 * @b: the bundle
 * @object: the object's index
 * @start: the symbol's ELF virtual address
 * @size: its size; 0 reaches to the next symbol once sealed
 * @name: its name, not empty
 *
 * Return: 0; -EINVAL; -VMCTX_E_SEALED; -VMCTX_E_LIMIT; -ENOMEM.
 */
int vmctx_bundle_add_symbol(struct vmctx_bundle *b, int object, uint64_t start, uint64_t size,
			    const char *name);

/* An object's unwind table: which ELF section it is. */
enum vmctx_unwind_kind {
	VMCTX_UNWIND_EH_FRAME_HDR,	/* .eh_frame_hdr: the sorted index */
	VMCTX_UNWIND_EH_FRAME,		/* .eh_frame: the CFI */
	VMCTX_UNWIND_DEBUG_FRAME,	/* .debug_frame: CFI where there is no .eh_frame */
	VMCTX_UNWIND_KINDS,
};

/**
 * vmctx_bundle_add_unwind() - Add one of an object's unwind tables
 * @b: the bundle
 * @object: the object's index
 * @kind: which section
 * @vaddr: the section's ELF virtual address (its sh_addr; 0 for
 *	.debug_frame, which is not loaded)
 * @data: its bytes, copied
 * @size: how many, at least 1
 *
 * The tables let a host unwind a guest stack copied without frame
 * pointers.  An object has each kind once; objects deduplicated by
 * build-id need theirs added once.  A section is at most 16 MiB, and all
 * of a bundle's together at most 32 MiB: the bundle's text holds them in
 * base64, within a reader's default size cap.
 *
 * Return: 0; -EINVAL; -EEXIST when the object has that kind already;
 * -VMCTX_E_SEALED; -VMCTX_E_LIMIT; -ENOMEM.
 */
int vmctx_bundle_add_unwind(struct vmctx_bundle *b, int object, enum vmctx_unwind_kind kind,
			    uint64_t vaddr, const void *data, size_t size);

/**
 * vmctx_bundle_add_map() - Map part of a task's address space
 * @b: the bundle
 * @task: the task's index
 * @start: the first address of the mapping
 * @end: the address after it
 * @pgoff: the file offset of @start
 * @bias: an IP in the map is the object's ELF virtual address ip - @bias
 * @object: the mapped object's index, or -1 if none
 * @path: the mapped file's path (NULL: empty)
 *
 * A task without maps resolves through its thread group leader's.
 *
 * Return: 0; -EINVAL; -VMCTX_E_SEALED; -VMCTX_E_LIMIT; -ENOMEM.
 */
int vmctx_bundle_add_map(struct vmctx_bundle *b, int task, uint64_t start, uint64_t end,
			 uint64_t pgoff, uint64_t bias, int object, const char *path);

/**
 * vmctx_bundle_add_kmodule() - Add a guest kernel module
 * @b: the bundle
 * @name: the module's name, unique in the bundle
 * @start: its first address
 * @size: its size
 *
 * Return: the module's index; -EINVAL; -EEXIST for a known name;
 * -VMCTX_E_SEALED; -VMCTX_E_LIMIT; -ENOMEM.
 */
int vmctx_bundle_add_kmodule(struct vmctx_bundle *b, const char *name, uint64_t start,
			     uint64_t size);

/**
 * vmctx_bundle_add_ksym() - Add a guest kernel symbol
 * @b: the bundle
 * @addr: the symbol's address
 * @name: its name, not empty
 * @module: the name of a module added before, or NULL for vmlinux
 *
 * Return: 0; -EINVAL; -ENOENT for an unknown module; -VMCTX_E_SEALED;
 * -VMCTX_E_LIMIT; -ENOMEM.
 */
int vmctx_bundle_add_ksym(struct vmctx_bundle *b, uint64_t addr, const char *name,
			  const char *module);

/**
 * vmctx_bundle_add_switch() - Log that a guest CPU started running a task
 * @b: the bundle
 * @cpu: the guest CPU, as the guest numbers them; below 8192
 * @ns: guest CLOCK_MONOTONIC ns of the switch
 * @pid: the task's pid; 0 for the idle task, and only for it
 * @tgid: its tgid; 0 for the idle task, and only for it
 * @kind: VMCTX_TASK_USER, VMCTX_TASK_KTHREAD or VMCTX_TASK_IDLE
 * @comm: the task's name (NULL: empty)
 *
 * The switch log says who ran on each guest CPU (vmctx_bundle_running()).
 * Switches may be added in any order: sealing sorts them by CPU and time,
 * and of several at one time on one CPU the last added is the one that
 * ran.  Each distinct comm and task is kept once.
 *
 * Return: 0; -EINVAL (also an unknown @kind, negative ids, or a pid or
 * tgid 0 that is not the idle task's or not 0 for it); -VMCTX_E_SEALED;
 * -VMCTX_E_LIMIT for @cpu, beyond 2^23 switches, or @comm beyond 256
 * bytes; -ENOMEM.
 */
int vmctx_bundle_add_switch(struct vmctx_bundle *b, unsigned int cpu, uint64_t ns, int pid,
			    int tgid, enum vmctx_task_kind kind, const char *comm);

/**
 * vmctx_bundle_add_switch_gap() - Log that a guest CPU's switches were lost
 * @b: the bundle
 * @cpu: the guest CPU; below 8192
 * @start_ns: guest CLOCK_MONOTONIC ns from which switches may be missing
 * @end_ns: the ns up to which they may be, not less than @start_ns
 *
 * Where the agent's ring overran, the log does not know who ran: from
 * @start_ns until the CPU's next switch after @end_ns, vmctx_bundle_running()
 * answers -VMCTX_E_GAP.  A CPU's gaps must not overlap (sealing refuses
 * them).
 *
 * Return: 0; -EINVAL (also @end_ns < @start_ns); -VMCTX_E_SEALED;
 * -VMCTX_E_LIMIT for @cpu or beyond 2^20 gaps; -ENOMEM.
 */
int vmctx_bundle_add_switch_gap(struct vmctx_bundle *b, unsigned int cpu, uint64_t start_ns,
				uint64_t end_ns);

/* Inspecting a bundle, sealed or not (vmctx_bundle_info(3)).  Strings belong to the bundle. */

/**
 * vmctx_bundle_hostname() - Get the guest's host name
 * @b: the bundle
 *
 * Return: the name ("" when unset), or NULL with errno EINVAL when @b is NULL.
 */
const char *vmctx_bundle_hostname(const struct vmctx_bundle *b);

/**
 * vmctx_bundle_release() - Get the guest's kernel release
 * @b: the bundle
 *
 * Return: the release ("" when unset), or NULL with errno EINVAL when @b
 * is NULL.
 */
const char *vmctx_bundle_release(const struct vmctx_bundle *b);

/**
 * vmctx_bundle_boot_id() - Get the guest's boot id
 * @b: the bundle
 *
 * Return: the boot id ("" when unset), or NULL with errno EINVAL when @b
 * is NULL.
 */
const char *vmctx_bundle_boot_id(const struct vmctx_bundle *b);

/**
 * vmctx_bundle_agent() - Get what wrote the bundle, and how
 * @b: the bundle
 *
 * Return: the writer's words, such as "vmctx-agent 0.2.0 backend=bpf" (""
 * when it said nothing), or NULL with errno EINVAL when @b is NULL.
 */
const char *vmctx_bundle_agent(const struct vmctx_bundle *b);

/**
 * vmctx_bundle_window() - Get the window the bundle describes
 * @b: the bundle
 * @start_ns: set to the guest ns the window began (may be NULL)
 * @end_ns: set to the guest ns it ended (may be NULL)
 *
 * Return: 0; -ENOENT when the bundle has no window (nothing is set);
 * -EINVAL when @b is NULL.
 */
int vmctx_bundle_window(const struct vmctx_bundle *b, uint64_t *start_ns, uint64_t *end_ns);

/**
 * vmctx_bundle_clock() - Get the guest clock data
 * @b: the bundle
 * @tsc_khz: set to the guest TSC frequency, 0 if unknown (may be NULL)
 * @tsc: set to the guest TSC of the clock pair (may be NULL)
 * @ns: set to the guest ns of the clock pair (may be NULL)
 *
 * Return: 0, or -EINVAL when @b is NULL.
 */
int vmctx_bundle_clock(const struct vmctx_bundle *b, uint64_t *tsc_khz, uint64_t *tsc,
		       uint64_t *ns);

/**
 * vmctx_bundle_ntasks() - Count the tasks
 * @b: the bundle
 *
 * Return: the number of tasks; 0 when @b is NULL.
 */
size_t vmctx_bundle_ntasks(const struct vmctx_bundle *b);

/**
 * vmctx_bundle_task() - Get a task's fields
 * @b: the bundle
 * @task: the task's index, below vmctx_bundle_ntasks()
 * @root: set to the root as added (not normalised) (may be NULL)
 * @pid: set to the guest pid (may be NULL)
 * @tgid: set to the guest tgid (may be NULL)
 * @comm: set to the task's name, owned by the bundle (may be NULL)
 * @start_ns: set to its start in guest ns (may be NULL)
 * @exit_ns: set to its exit, or VMCTX_TIME_NONE (may be NULL)
 *
 * Return: 0, or -EINVAL for a missing task.
 */
int vmctx_bundle_task(const struct vmctx_bundle *b, int task, uint64_t *root, int *pid,
		      int *tgid, const char **comm, uint64_t *start_ns, uint64_t *exit_ns);

/**
 * vmctx_bundle_task_map() - Get one of a task's maps
 * @b: the bundle
 * @task: the task's index, below vmctx_bundle_ntasks()
 * @i: the map's index among the task's own maps, from 0
 * @start: set to its first address (may be NULL)
 * @end: set to the address after it (may be NULL)
 * @pgoff: set to the file offset mapped at @start (may be NULL)
 * @path: set to the mapped file's path, owned by the bundle (may be NULL)
 *
 * The maps a task was given, in the order added; sealed, in address order.
 * A thread's maps are its process's, which this does not follow (see
 * vmctx_bundle_task_maps_owner()).  O(1).
 *
 * Return: 0; -ENOENT when the task has no map @i; -EINVAL for a missing task.
 */
int vmctx_bundle_task_map(const struct vmctx_bundle *b, int task, size_t i, uint64_t *start,
			  uint64_t *end, uint64_t *pgoff, const char **path);

/**
 * vmctx_bundle_task_map_object() - Get what one of a task's maps maps
 * @b: the bundle
 * @task: the task's index, below vmctx_bundle_ntasks()
 * @i: the map's index among the task's own maps, as for vmctx_bundle_task_map()
 * @object: set to the mapped object's index, or -1 if none (may be NULL)
 * @bias: set to the map's bias: an IP in it is the object's ELF virtual
 *	address ip - bias (may be NULL)
 *
 * O(1).
 *
 * Return: 0; -ENOENT when the task has no map @i; -EINVAL for a missing task.
 */
int vmctx_bundle_task_map_object(const struct vmctx_bundle *b, int task, size_t i, int *object,
				 uint64_t *bias);

/**
 * vmctx_bundle_task_maps_owner() - Find the task whose maps a task uses
 * @b: the sealed bundle
 * @task: the task's index, below vmctx_bundle_ntasks()
 *
 * Sealing picks, for each task, the maps that resolve its IPs: its own, or,
 * for a thread that has none, its process leader's (the task with pid ==
 * tgid, the same tgid and the same root) when the leader has some.
 * vmctx_bundle_resolve_user() uses that task's maps.  O(1).
 *
 * Return: the index of @task or of its leader; -EINVAL for a NULL bundle
 * or a missing task; -VMCTX_E_UNSEALED.
 */
int vmctx_bundle_task_maps_owner(const struct vmctx_bundle *b, int task);

/**
 * vmctx_bundle_nobjects() - Count the ELF objects
 * @b: the bundle
 *
 * Return: the number of objects; 0 when @b is NULL.
 */
size_t vmctx_bundle_nobjects(const struct vmctx_bundle *b);

/**
 * vmctx_bundle_object() - Get an ELF object's path and build-id
 * @b: the bundle
 * @object: the object's index, below vmctx_bundle_nobjects()
 * @path: set to the object's path in the guest, owned by the bundle (may
 *	be NULL)
 * @build_id: set to its build-id in lowercase hex, owned by the bundle, or
 *	to NULL when it has none (may be NULL)
 *
 * Return: 0, or -EINVAL for a missing object.
 */
int vmctx_bundle_object(const struct vmctx_bundle *b, int object, const char **path,
			const char **build_id);

/**
 * vmctx_bundle_object_symbol() - Get one of an object's symbols
 * @b: the bundle
 * @object: the object's index, below vmctx_bundle_nobjects()
 * @i: the symbol's index, below vmctx_bundle_object_nsyms()
 * @start: set to its first ELF virtual address (may be NULL)
 * @end: set to the address after it (may be NULL)
 * @name: set to its name, owned by the bundle (may be NULL)
 *
 * Sealed, the symbols are in address order, one per address, apart, and
 * each has its end: a zero-sized one reaches to the next (the last, one
 * byte).  Unsealed, they are as added, and a zero-sized symbol's @end is
 * its @start.  O(1).
 *
 * Return: 0; -ENOENT when the object has no symbol @i; -EINVAL for a
 * missing object.
 */
int vmctx_bundle_object_symbol(const struct vmctx_bundle *b, int object, size_t i,
			       uint64_t *start, uint64_t *end, const char **name);

/**
 * vmctx_bundle_object_unwind() - Get one of an object's unwind tables
 * @b: the bundle
 * @object: the object's index, below vmctx_bundle_nobjects()
 * @kind: which section
 * @vaddr: set to the section's ELF virtual address (may be NULL)
 * @data: set to its bytes, owned by the bundle (may be NULL)
 * @size: set to how many (may be NULL)
 *
 * The bytes are as the guest gave them: CFI a reader must check as it
 * reads (offsets, lengths, loops), as any unwinder of untrusted input.
 *
 * Return: 0; -ENOENT when the object has no table of @kind; -EINVAL for
 * a missing object or kind.
 */
int vmctx_bundle_object_unwind(const struct vmctx_bundle *b, int object,
			       enum vmctx_unwind_kind kind, uint64_t *vaddr, const void **data,
			       size_t *size);

/**
 * vmctx_bundle_nmaps() - Count the maps of all tasks together
 * @b: the bundle
 *
 * Return: the number of maps; 0 when @b is NULL.
 */
size_t vmctx_bundle_nmaps(const struct vmctx_bundle *b);

/**
 * vmctx_bundle_nkmodules() - Count the guest kernel modules
 * @b: the bundle
 *
 * Return: the number of modules; 0 when @b is NULL.
 */
size_t vmctx_bundle_nkmodules(const struct vmctx_bundle *b);

/**
 * vmctx_bundle_kmodule() - Get a guest kernel module
 * @b: the bundle
 * @module: the module's index, below vmctx_bundle_nkmodules(): the one
 *	vmctx_bundle_add_kmodule() returned, which sealing does not change
 * @name: set to its name, owned by the bundle (may be NULL)
 * @start: set to its first address (may be NULL)
 * @end: set to the address after it (may be NULL)
 *
 * Return: 0, or -EINVAL for a missing module.
 */
int vmctx_bundle_kmodule(const struct vmctx_bundle *b, int module, const char **name,
			 uint64_t *start, uint64_t *end);

/**
 * vmctx_bundle_nksyms() - Count the guest kernel symbols
 * @b: the bundle
 *
 * Return: the number of kernel symbols; 0 when @b is NULL.
 */
size_t vmctx_bundle_nksyms(const struct vmctx_bundle *b);

/**
 * vmctx_bundle_ksym() - Get a guest kernel symbol
 * @b: the bundle
 * @i: the symbol's index, below vmctx_bundle_nksyms()
 * @addr: set to its address (may be NULL)
 * @name: set to its name, owned by the bundle (may be NULL)
 * @module: set to its module's index for vmctx_bundle_kmodule(), or -1 for
 *	vmlinux (may be NULL)
 *
 * The kernel symbols as added; sealed, in address order.  O(1).
 *
 * Return: 0; -ENOENT when the bundle has no kernel symbol @i; -EINVAL when
 * @b is NULL.
 */
int vmctx_bundle_ksym(const struct vmctx_bundle *b, size_t i, uint64_t *addr, const char **name,
		      int *module);

/**
 * vmctx_bundle_nclock_pairs() - Count the guest TSC/ns pairs
 * @b: the bundle
 *
 * Return: the number of pairs added with vmctx_bundle_add_clock_pair();
 * 0 when @b is NULL.
 */
size_t vmctx_bundle_nclock_pairs(const struct vmctx_bundle *b);

/**
 * vmctx_bundle_guest_ns() - Turn a guest TSC value into guest time
 * @b: the bundle
 * @guest_tsc: a guest TSC value (host TSC plus KVM's TSC offset)
 * @ns: set to guest CLOCK_MONOTONIC ns at @guest_tsc
 *
 * With two or more clock pairs, interpolates between the two around
 * @guest_tsc; outside the pairs, goes on at the TSC frequency if the
 * bundle has one, else at the rate of the nearest two.  With fewer pairs,
 * uses the one pair (or the clock record's) and the TSC frequency.  O(log
 * pairs).
 *
 * Return: 0; -EINVAL; -VMCTX_E_UNSEALED for an unsealed bundle with pairs;
 * -ENODATA when the bundle has too little clock data; -ERANGE when the
 * result does not fit.
 */
int vmctx_bundle_guest_ns(const struct vmctx_bundle *b, uint64_t guest_tsc, uint64_t *ns);

/**
 * vmctx_bundle_nswitches() - Count the switches of the switch log
 * @b: the bundle
 *
 * Return: the number of switches, of all CPUs; 0 when @b is NULL.
 */
size_t vmctx_bundle_nswitches(const struct vmctx_bundle *b);

/**
 * vmctx_bundle_switch() - Get one switch of the switch log
 * @b: the bundle
 * @i: the switch's position, below vmctx_bundle_nswitches()
 * @cpu: set to the guest CPU (may be NULL)
 * @ns: set to the guest ns of the switch (may be NULL)
 * @pid: set to the pid of the task it ran, 0 for the idle task (may be NULL)
 * @tgid: set to the task's tgid (may be NULL)
 * @kind: set to what the task is (may be NULL)
 * @comm: set to its name, owned by the bundle (may be NULL)
 *
 * The switches as added; sealed, by CPU, then time (of several at one
 * time, the one that ran last).  O(1).
 *
 * Return: 0; -ENOENT when the log has no switch @i; -EINVAL when @b is
 * NULL.
 */
int vmctx_bundle_switch(const struct vmctx_bundle *b, size_t i, unsigned int *cpu, uint64_t *ns,
			int *pid, int *tgid, enum vmctx_task_kind *kind, const char **comm);

/**
 * vmctx_bundle_nswitch_gaps() - Count the gaps of the switch log
 * @b: the bundle
 *
 * Return: the number of gaps, of all CPUs; 0 when @b is NULL.
 */
size_t vmctx_bundle_nswitch_gaps(const struct vmctx_bundle *b);

/**
 * vmctx_bundle_switch_gap() - Get one gap of the switch log
 * @b: the bundle
 * @i: the gap's position, below vmctx_bundle_nswitch_gaps()
 * @cpu: set to the guest CPU (may be NULL)
 * @start_ns: set to the guest ns from which switches may be missing (may be NULL)
 * @end_ns: set to the ns up to which they may be (may be NULL)
 *
 * The gaps as added; sealed, by CPU, then start.  O(1).
 *
 * Return: 0; -ENOENT when the log has no gap @i; -EINVAL when @b is NULL.
 */
int vmctx_bundle_switch_gap(const struct vmctx_bundle *b, size_t i, unsigned int *cpu,
			    uint64_t *start_ns, uint64_t *end_ns);

/* ---- Resolution: CR3 to guest process, IP to symbol (vmctx_resolve(3)) ----- */

/**
 * vmctx_cr3_normalize() - Reduce a raw guest CR3 to the page-table root
 * @cr3: the raw value
 * @ignore_mask: extra bits to drop, for example an SME/SEV encryption bit
 *
 * Drops the PCID/flag bits (11:0), the PTI user-root bit (12), bit 63
 * (no-flush) and bits above the architectural 52-bit limit.
 *
 * Return: the root's physical address.
 */
uint64_t vmctx_cr3_normalize(uint64_t cr3, uint64_t ignore_mask);

/**
 * vmctx_bundle_find_task() - Find the task that owned a root at a guest time
 * @b: the sealed bundle
 * @cr3: a raw guest CR3 value, normalised with the bundle's CR3 mask
 * @guest_ns: the guest time of the sample, or VMCTX_TIME_NONE when unknown
 *
 * A root freed and reused by a later process resolves by lifetime, so an
 * old sample never resolves to the new owner.  Threads share their
 * process's root: the process leader is preferred.  With @guest_ns
 * VMCTX_TIME_NONE a root resolves only if a single process ever owned it.
 * A time outside the bundle's window (vmctx_bundle_window()), when it has
 * one, resolves to nobody: the bundle does not know who owned a root then.
 *
 * Return: the task's index; -ENOENT when nobody owned the root then, or
 * @guest_ns lies outside the window;
 * -EINVAL; -VMCTX_E_UNSEALED.
 */
int vmctx_bundle_find_task(const struct vmctx_bundle *b, uint64_t cr3, uint64_t guest_ns);

/**
 * vmctx_bundle_running() - Find the task a guest CPU ran at a guest time
 * @b: the sealed bundle
 * @cpu: the guest CPU, as the guest numbers them
 * @ns: guest CLOCK_MONOTONIC ns
 * @pid: set to the task's pid, 0 for the idle task (may be NULL)
 * @tgid: set to its tgid (may be NULL)
 * @kind: set to what it is: a task with user space, a kernel thread or
 *	the idle task (may be NULL)
 * @comm: set to its name, owned by the bundle (may be NULL)
 *
 * The task of @cpu's last switch at or before @ns in the switch log (of
 * several at one time, the last).  Unlike vmctx_bundle_find_task(), which
 * names the owner of the loaded page tables, this names kernel threads,
 * the idle task and each thread.  Where the agent lost switches, from a
 * gap's start until the CPU's next switch after the gap, the log does not
 * know.  O(log n) in the CPU's switches and gaps.  On failure nothing is set.
 *
 * Return: 0; -ENOENT when the log has nothing of @cpu, @ns comes before
 * @cpu's first switch, or @ns lies outside the bundle's window;
 * -VMCTX_E_GAP when switches of @cpu were lost between its last one and
 * @ns; -EINVAL; -VMCTX_E_UNSEALED.
 */
int vmctx_bundle_running(const struct vmctx_bundle *b, unsigned int cpu, uint64_t ns, int *pid,
			 int *tgid, enum vmctx_task_kind *kind, const char **comm);

/* How vmctx_bundle_owner() named a guest sample's task. */
enum vmctx_owner_by {
	VMCTX_OWNER_NONE,	/* nobody: the log and the root both failed */
	VMCTX_OWNER_SWITCH,	/* the task the switch log says ran */
	VMCTX_OWNER_ROOT,	/* the owner of the loaded page-table root */
};

/* The task a guest sample belongs to (vmctx_bundle_owner()). */
struct vmctx_owner {
	size_t sz;		/* sizeof(struct vmctx_owner), set by the caller */
	enum vmctx_owner_by by;
	int task;		/* the bundle's task whose address space ran, or -1 */
	int pid, tgid;		/* the task: 0 and 0 for the idle task */
	enum vmctx_task_kind kind;
	const char *comm;	/* its name, owned by the bundle */
	int log_err;		/* why the log did not decide (by ROOT or NONE):
				 * -ENOENT (no log, no CPU, before its first
				 * switch, unknown time), -VMCTX_E_GAP; or 0 */
	bool disagree;		/* a user-mode sample whose root's owner is not
				 * the process the log says ran */
	/*
	 * The same cpu, cr3 and user get this answer at any guest time in
	 * [valid_from, valid_until): empty (0, 0) for an unknown time.
	 */
	uint64_t valid_from, valid_until;
};

/**
 * vmctx_bundle_owner() - Find the task a guest sample belongs to
 * @b: the sealed bundle
 * @cpu: the guest CPU the sample's vCPU is, as the guest numbers them;
 *	-1 when unknown
 * @cr3: the sample's raw guest CR3; 0 when unknown (a nested or
 *	protected guest's)
 * @ns: the sample's guest CLOCK_MONOTONIC ns; VMCTX_TIME_NONE when unknown
 * @user: the sample was taken in guest user mode
 * @o: the answer; its sz set by the caller (VMCTX_OPTS(vmctx_owner, o))
 *
 * The one step from a guest sample to its task, for every reader.  Where
 * the bundle has a switch log that covers @cpu at @ns, the task that ran:
 * a kernel-mode sample goes to it, a kernel thread's and the idle task's
 * included, as a host kernel sample goes to current.  A user-mode sample
 * ran in the address space of the root's owner, which decides its
 * process and maps; it takes the running thread's pid when that thread
 * belongs to the same process (and the process's comm from the bundle's
 * task, which follows an exec that the log's comm, taken at the switch,
 * missed), and is flagged @o->disagree when the log
 * names another process (a vCPU that is not that guest CPU, or a clock
 * off by more than the time between switches).  Without the log, in one
 * of its gaps, or for an unknown @cpu or time, the root's owner decides
 * (the page tables loaded: a kernel thread and the idle task borrow the
 * last process's), and @o->log_err says why.
 *
 * @o->valid_from and @o->valid_until bound the guest times at which the
 * same question, but for the time, gets the same answer: the time between
 * the CPU's switches, within the lifetime of the root's owner and before
 * the next task on the root starts, so that a caller can keep the last
 * answer of each CPU and skip the lookups while the time stays inside.
 * The range always holds @ns when it is known; it may be shorter than
 * where the answer holds (a single ns where the log lost switches), never
 * longer.  A caller's older structure without them is filled as far as
 * it goes.
 *
 * Return: 0 with @o filled (@o->by NONE and @o->task -1 when neither
 * knew); -EINVAL for a NULL or short @o; -VMCTX_E_UNSEALED.
 */
int vmctx_bundle_owner(const struct vmctx_bundle *b, int cpu, uint64_t cr3, uint64_t ns,
		       bool user, struct vmctx_owner *o);

/**
 * vmctx_bundle_task_label() - Get a task's label as the paper prints it
 * @b: the sealed bundle
 * @task: the task's index
 *
 * Return: "comm", or "comm(N)" when several processes of the bundle share
 * the comm (N counts them in start order); threads carry their process's
 * label.  The string belongs to the bundle.  NULL with errno ENOENT for a
 * missing task, EINVAL, or VMCTX_E_UNSEALED.
 */
const char *vmctx_bundle_task_label(const struct vmctx_bundle *b, int task);

/**
 * vmctx_bundle_resolve_user() - Resolve a guest user IP in a task's address space
 * @b: the sealed bundle
 * @task: the task's index
 * @ip: the guest IP
 * @sym: set to the symbol's name, or NULL when the IP is mapped but no
 *	symbol covers it (may be NULL)
 * @dso: set to the mapped file's base name (may be NULL)
 *
 * Return: 0; -ENOENT when nothing is mapped at @ip or the task is
 * missing; -EINVAL; -VMCTX_E_UNSEALED.
 */
int vmctx_bundle_resolve_user(const struct vmctx_bundle *b, int task, uint64_t ip,
			      const char **sym, const char **dso);

/**
 * vmctx_bundle_resolve_kernel() - Resolve a guest kernel IP
 * @b: the sealed bundle
 * @ip: the guest IP
 * @sym: set to the kernel symbol's name, or NULL if none covers @ip (may
 *	be NULL)
 * @module: set to "vmlinux" or the module's name (may be NULL); to
 *	VMCTX_EARLY_BOOT, with no symbol, for an IP below the kernel's first
 *	symbol and every module: the guest's boot before its kernel runs
 *	(the decompressor, firmware)
 *
 * Return: 0; -EINVAL; -VMCTX_E_UNSEALED.
 */
int vmctx_bundle_resolve_kernel(const struct vmctx_bundle *b, uint64_t ip, const char **sym,
				const char **module);

/* The module vmctx_bundle_resolve_kernel() names for the guest's early boot. */
#define VMCTX_EARLY_BOOT	"[early boot]"

/* ---- Guest clock: a guest's time on the host's axis (vmctx_clock(3)) -------- */

/*
 * A guest's task lifetimes are in its CLOCK_MONOTONIC; samples are in the
 * host's perf time.  A page-table root is reused by later processes almost
 * at once, so resolving a sample needs its guest time.  A struct
 * vmctx_clock holds the relation, for vmctx_session_set_clock().
 */
struct vmctx_clock;

enum vmctx_clock_kind {
	VMCTX_CLOCK_UNKNOWN,	/* nothing relates the clocks */
	VMCTX_CLOCK_LINEAR,	/* an offset and a rate (the clock fit, or the caller's) */
	VMCTX_CLOCK_TSC,	/* the exact chain through the host and guest TSC */
};

/*
 * The exact chain.  perf's PERF_RECORD_TIME_CONV relates the host's perf
 * time to the host TSC: host ns = time_zero + ((host TSC * time_mult) >>
 * time_shift).  KVM's per-vCPU TSC offset and scaling ratio (its debugfs
 * files tsc-offset, tsc-scaling-ratio, tsc-scaling-ratio-frac-bits) relate
 * the host TSC to the guest's: guest TSC = ((host TSC * tsc_ratio) >>
 * tsc_frac_bits) + tsc_offset.  The bundle's clock pairs relate the guest
 * TSC to the guest's clock (vmctx_bundle_guest_ns()).
 */
struct vmctx_clock_tsc {
	size_t sz;		/* sizeof(struct vmctx_clock_tsc) */
	uint64_t time_zero;
	uint32_t time_mult;	/* not 0 */
	uint16_t time_shift;	/* at most 63 */
	int64_t tsc_offset;
	uint64_t tsc_ratio;	/* 0: no scaling */
	uint32_t tsc_frac_bits;	/* at most 63 */
	/*
	 * The host perf time from which KVM's fields hold; 0: the whole
	 * recording.  A VM that starts while perf records gets its final
	 * offset only when QEMU resets its vCPUs; a guest may also write
	 * its TSC.  Host times before it have no guest time.
	 */
	uint64_t from;
};

/**
 * vmctx_clock_new() - Allocate a guest clock relation
 *
 * Return: the clock, of kind VMCTX_CLOCK_UNKNOWN, which the caller frees
 * with vmctx_clock_free(), or NULL with errno ENOMEM.
 */
struct vmctx_clock *vmctx_clock_new(void);

/**
 * vmctx_clock_free() - Free a guest clock relation
 * @c: the clock, or NULL
 */
void vmctx_clock_free(struct vmctx_clock *c);

/**
 * vmctx_clock_set_linear() - Relate the clocks by an offset and a rate
 * @c: the clock
 * @host_ref: the host time at which @offset holds exactly
 * @offset: guest ns = host ns + @offset at @host_ref
 * @rate_ppb: how much faster the guest clock runs, in parts per billion:
 *	guest = host + @offset + (host - @host_ref) * @rate_ppb / 10^9
 *
 * Return: 0; -EINVAL for an offset of INT64_MIN or a rate of 100% or more.
 */
int vmctx_clock_set_linear(struct vmctx_clock *c, uint64_t host_ref, int64_t offset,
			   int64_t rate_ppb);

/**
 * vmctx_clock_set_tsc() - Relate the clocks exactly, through the TSC
 * @c: the clock
 * @p: perf's time conversion and KVM's TSC offset and scaling (copied)
 * @b: the guest's sealed bundle, whose clock pairs give guest ns; it must
 *	outlive @c and every session @c is given to
 *
 * Return: 0; -EINVAL for a short @p, a zero time_mult or a shift over 63;
 * -VMCTX_E_UNSEALED; -ENODATA when the bundle has neither two clock pairs
 * nor a TSC frequency.  vmctx_clock_guest_ns() then gives -ERANGE for a
 * host time before @p->from.
 */
int vmctx_clock_set_tsc(struct vmctx_clock *c, const struct vmctx_clock_tsc *p,
			const struct vmctx_bundle *b);

/**
 * vmctx_clock_kind() - Say how a clock relates host and guest time
 * @c: the clock
 *
 * Return: its kind; VMCTX_CLOCK_UNKNOWN for NULL.
 */
enum vmctx_clock_kind vmctx_clock_kind(const struct vmctx_clock *c);

/**
 * vmctx_clock_linear() - Get a linear clock's parameters
 * @c: the clock
 * @host_ref: set to its reference host time (may be NULL)
 * @offset: set to its offset at @host_ref (may be NULL)
 * @rate_ppb: set to its rate (may be NULL)
 *
 * Return: 0; -EINVAL; -ENODATA when @c is not VMCTX_CLOCK_LINEAR.
 */
int vmctx_clock_linear(const struct vmctx_clock *c, uint64_t *host_ref, int64_t *offset,
		       int64_t *rate_ppb);

/**
 * vmctx_clock_guest_ns() - Put a host time on the guest's clock
 * @c: the clock
 * @host_ns: a host perf time
 * @guest_ns: set to the guest CLOCK_MONOTONIC time at @host_ns
 *
 * O(1) for a linear clock, O(log pairs) through the TSC.
 *
 * Return: 0; -EINVAL; -ENODATA for an unknown clock; -ERANGE when the
 * result does not fit.
 */
int vmctx_clock_guest_ns(const struct vmctx_clock *c, uint64_t host_ns, uint64_t *guest_ns);

/* ---- Clock fit: host time to guest time, from the samples (vmctx_clock_fit(3)) */

/*
 * When nothing relates the host's clock to a guest's, the samples can: a
 * sample must fall inside the lifetime of one of its page-table root's
 * owners.  Offer every guest sample (host time and raw CR3) of one VM,
 * then ask for the offset (guest ns = host ns + offset) that the most
 * samples agree with, to pass to vmctx_session_attach_bundle().  Needs
 * processes that start or exit while sampled; memory is O(tasks).  Offer
 * guest user-mode samples only: guest kernel threads and the idle task
 * run on the last process's page tables (lazy TLB), so a kernel-mode CR3
 * can be the root of a process that has exited.
 */
struct vmctx_clock_fit;

/**
 * vmctx_clock_fit_new() - Allocate a clock fit for one VM's bundle
 * @b: the VM's sealed bundle, which must outlive the fit
 *
 * Return: the fit, which the caller frees with vmctx_clock_fit_free(), or
 * NULL with errno EINVAL, VMCTX_E_UNSEALED or ENOMEM.
 */
struct vmctx_clock_fit *vmctx_clock_fit_new(const struct vmctx_bundle *b);

/**
 * vmctx_clock_fit_free() - Free a clock fit
 * @f: the fit, or NULL
 */
void vmctx_clock_fit_free(struct vmctx_clock_fit *f);

/**
 * vmctx_clock_fit_add() - Offer one guest user-mode sample
 * @f: the fit
 * @host_ns: the sample's host time
 * @cr3: its raw guest CR3
 *
 * Samples of roots the bundle does not know are counted and ignored.
 *
 * Return: 0, or -EINVAL.
 */
int vmctx_clock_fit_add(struct vmctx_clock_fit *f, uint64_t host_ns, uint64_t cr3);

/**
 * vmctx_clock_fit_offset() - Find the offset the most samples agree with
 * @f: the fit
 * @offset: set to the offset, guest ns = host ns + @offset
 * @agree: set to the number of samples consistent with @offset (may be NULL)
 * @used: set to the number of samples of roots the bundle knows (may be NULL)
 *
 * Return: 0; -EINVAL; -ENODATA when no offered sample had a root the
 * bundle knows; -ERANGE; -ENOMEM.
 */
int vmctx_clock_fit_offset(const struct vmctx_clock_fit *f, int64_t *offset, uint64_t *agree,
			   uint64_t *used);

/**
 * vmctx_clock_fit_solve() - Fit an offset and a rate
 * @f: the fit
 * @c: set to the linear relation found
 * @agree: set to the number of samples consistent with it (may be NULL)
 * @used: set to the number of samples of roots the bundle knows (may be NULL)
 *
 * Fits the offset on each half of the samples (split at the median host
 * time) and takes the rate between the two, when at least half of each
 * half's samples agree, the rate is under 1% and at least as many samples
 * agree with it as with the offset alone; otherwise the rate is 0.  A
 * nested guest's clock was measured drifting 811 ppm against its host's.
 *
 * Return: 0; -EINVAL; -ENODATA when no offered sample had a root the
 * bundle knows; -ERANGE; -ENOMEM.
 */
int vmctx_clock_fit_solve(const struct vmctx_clock_fit *f, struct vmctx_clock *c,
			  uint64_t *agree, uint64_t *used);

/* ---- Session: timeline engine and aggregation (vmctx_session(3)) ----------- */

/*
 * A session consumes one time-ordered stream of host events and keeps, per
 * vCPU, a virtual sample stream on host time.  Memory is bounded by the
 * number of vCPUs, pCPUs and distinct symbols, never by the sample count.
 *
 * A VM is its QEMU process: its identity in every call is that process's
 * host tgid, called vm_tgid.  A VM is declared with vmctx_session_add_vm()
 * before any event names it; a call naming a VM the session does not know
 * fails with -ENOENT.  Declaration also numbers VMs 1, 2, ... (vm_nr): the
 * k of the "(VMk)" labels, and the way to iterate over VMs
 * (vmctx_session_vm_tgid()).  vCPUs are known by their id within their VM
 * and need no declaration.
 */
struct vmctx_session;

struct vmctx_session_opts {
	size_t sz;		/* sizeof(struct vmctx_session_opts) */
	uint64_t tick_ns;	/* nominal sampling interval; 0 disables time-based gap fill */
	/*
	 * Bounds on what an event stream may declare, since perf.data is
	 * untrusted: pCPU numbers below max_pcpus (0: 1024) and at most
	 * max_vcpus distinct vCPUs (0: 4096).  Memory is O(pCPUs + vCPUs).
	 */
	uint32_t max_pcpus;
	uint32_t max_vcpus;
	uint32_t flags;		/* VMCTX_SESSION_* */
};

/*
 * For clock events (cpu-clock, task-clock), whose timer fires every tick_ns
 * whatever the CPU does: a sample stands for the tick slots of its pCPU
 * since the last slot counted (slot k: the times that round to k ticks
 * after the pCPU's first sample), so that a pCPU's samples sum to its time.
 * A sample n ticks late stands for n + 1, and the next, in a slot already
 * counted, for none.  The timer was held off (interrupts off, or a nested
 * host's own vCPU was not running), and the ticks it missed belong to what
 * the pCPU was doing when it finally fired.  Without this
 * flag, ticks no pCPU sampled are filled as blank time (a PMU stops in idle).
 * Needs tick_ns.
 */
#define VMCTX_SESSION_WEIGHT_BY_TIME	(1u << 0)

/*
 * For a caller that reads only the stream (vmctx_session_set_stream()), as
 * perf script and perf inject do for the vCPUs' blank time: the session
 * keeps no table of counts and names no guest code.  It saves the memory
 * of the table (a row for each task, function and vCPU) and a guest
 * sample's lookups.  Runs of guest code come to the stream with NULL
 * function and module; vmctx_table_new() and vmctx_export_new() refuse the
 * session (EINVAL).
 */
#define VMCTX_SESSION_NO_TABLE		(1u << 1)

/*
 * For a caller whose stream wants only the vCPUs' blank time, as perf's
 * do: only runs of VMCTX_CLASS_STEAL, _IDLE and _LOST reach the stream,
 * the same runs, in the same order, as without the flag.  A sample of
 * guest code then costs what it costs with nobody watching: most take
 * the session's short path, which a stream of every run rules out.
 */
#define VMCTX_SESSION_BLANK_STREAM	(1u << 2)

/**
 * vmctx_session_new() - Allocate a session
 * @opts: options, or NULL for the defaults (no tick, default bounds)
 *
 * Return: the session, which the caller frees with vmctx_session_free(),
 * or NULL with errno EINVAL (a short @opts, an unknown flag, or
 * VMCTX_SESSION_WEIGHT_BY_TIME without tick_ns) or ENOMEM.
 */
struct vmctx_session *vmctx_session_new(const struct vmctx_session_opts *opts);

/**
 * vmctx_session_free() - Free a session
 * @s: the session, or NULL
 *
 * Tables made from the session stay valid; bundles attached to it are the
 * caller's to free, after this.
 */
void vmctx_session_free(struct vmctx_session *s);

/**
 * vmctx_session_add_vm() - Declare a VM, or rename a declared one
 * @s: the session
 * @vm_tgid: the host tgid of the VM's QEMU process
 * @name: its name, copied; NULL names a new VM "pid<tgid>" and leaves a
 *	declared VM's name alone
 *
 * A VM named by default takes its bundle's host name when one is attached.
 *
 * Return: the VM's number vm_nr (1, 2, ... in declaration order); -EINVAL;
 * -ENOMEM.
 */
int vmctx_session_add_vm(struct vmctx_session *s, int vm_tgid, const char *name);

/*
 * Offset for vmctx_session_attach_bundle() when the host and guest clocks
 * cannot be related.
 */
#define VMCTX_OFFSET_UNKNOWN INT64_MIN

/**
 * vmctx_session_attach_bundle() - Resolve a VM's guest samples through a bundle
 * @s: the session
 * @vm_tgid: a declared VM
 * @b: its sealed bundle, which the caller keeps and frees after the session
 * @guest_ns_offset: added to host time to get the guest time used for task
 *	lifetimes; VMCTX_OFFSET_UNKNOWN, and then roots resolve only when a
 *	single process ever owned them (see vmctx_bundle_find_task())
 *
 * Return: 0; -EINVAL; -ENOENT for an undeclared VM; -VMCTX_E_UNSEALED;
 * -ENOMEM.
 */
int vmctx_session_attach_bundle(struct vmctx_session *s, int vm_tgid,
				const struct vmctx_bundle *b, int64_t guest_ns_offset);

/**
 * vmctx_session_set_clock() - Relate a VM's guest time to host time
 * @s: the session
 * @vm_tgid: a declared VM
 * @c: the relation, copied (a TSC clock's bundle is borrowed); NULL: unknown
 *
 * Replaces the offset given to vmctx_session_attach_bundle(): the host time
 * of each guest sample goes through @c to the guest time at which its
 * page-table root's owner is looked up.  Samples whose time @c cannot
 * convert resolve as with an unknown clock.
 *
 * Return: 0; -EINVAL; -ENOENT for an undeclared VM.
 */
int vmctx_session_set_clock(struct vmctx_session *s, int vm_tgid, const struct vmctx_clock *c);

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
	int32_t vm_tgid;	/* a declared VM whose vCPU was loaded or whose
				 * vCPU thread this is (isa NONE), or -1 */
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

/**
 * vmctx_session_sample() - Take one host sample
 * @s: the session
 * @smp: the sample; events come in host time order
 *
 * Return: 0; -EINVAL (a short @smp, a guest sample without a vCPU, a pCPU
 * beyond max_pcpus, an absurd vCPU id, or after vmctx_session_finish());
 * -ENOENT for an undeclared VM; -E2BIG beyond max_vcpus; -ENOMEM.
 */
int vmctx_session_sample(struct vmctx_session *s, const struct vmctx_sample *smp);

/**
 * vmctx_session_sample_weight() - Get the ticks the last sample stands for
 * @s: the session
 *
 * What the session counted the sample last given to vmctx_session_sample()
 * as, for a caller that keeps its own counts in the same clock (perf report
 * multiplies the sample's period by it): 1, or with
 * VMCTX_SESSION_WEIGHT_BY_TIME the tick slots of its pCPU that the sample
 * is the first to reach, 0 for a sample in a slot already counted, so that
 * a pCPU's weights sum to its time.  1 after a sample the session refused.
 *
 * Return: the weight; 0 when @s is NULL.
 */
uint64_t vmctx_session_sample_weight(const struct vmctx_session *s);

/**
 * vmctx_session_switch() - Take a context switch of a vCPU thread
 * @s: the session
 * @time: host time, ns
 * @cpu: the pCPU
 * @vm_tgid: the declared VM
 * @vcpu: the vCPU id
 * @out: the thread switched out (else in)
 * @preempt: switched out while still runnable (else it blocked)
 *
 * Return: as vmctx_session_sample().
 */
int vmctx_session_switch(struct vmctx_session *s, uint64_t time, uint32_t cpu, int vm_tgid,
			 int vcpu, bool out, bool preempt);

/**
 * vmctx_session_halt() - Take halt evidence of a vCPU
 * @s: the session
 * @time: host time, ns
 * @vm_tgid: the declared VM
 * @vcpu: the vCPU id
 * @halted: the vCPU halted (an HLT exit), or woke (kvm_vcpu_wakeup)
 *
 * Return: as vmctx_session_sample().
 */
int vmctx_session_halt(struct vmctx_session *s, uint64_t time, int vm_tgid, int vcpu,
		       bool halted);

/**
 * vmctx_session_vcpu_end() - Take the end of a vCPU's thread
 * @s: the session
 * @time: host time, ns: its last switch-out
 * @vm_tgid: the declared VM
 * @vcpu: the vCPU id
 *
 * The vCPU's time ends here: a wait it was in is charged up to @time, and
 * nothing after is, until a sample or switch of it comes again.  Without
 * it, a vCPU whose thread exited would wait, and be charged steal, up to
 * the end of the recording.
 *
 * Return: as vmctx_session_sample().
 */
int vmctx_session_vcpu_end(struct vmctx_session *s, uint64_t time, int vm_tgid, int vcpu);

/**
 * vmctx_session_lost() - Take a lost-samples record
 * @s: the session
 * @time: host time the loss ends, ns
 * @cpu: the pCPU that lost them
 * @count: how many; they become [lost], never steal
 *
 * Return: 0; -EINVAL; -ENOMEM.
 */
int vmctx_session_lost(struct vmctx_session *s, uint64_t time, uint32_t cpu, uint64_t count);

/**
 * vmctx_session_finish() - End the recording
 * @s: the session
 * @time: host time of the end, ns; every open blank interval closes here
 *
 * The session takes no event afterwards.
 *
 * Return: 0; -EINVAL (also when already finished); -ENOMEM.
 */
int vmctx_session_finish(struct vmctx_session *s, uint64_t time);

/* What a tick of a vCPU's virtual stream is. */
enum vmctx_class {
	VMCTX_CLASS_OS,		/* guest kernel (host kernel in host views) */
	VMCTX_CLASS_USER,	/* guest user (host user in host views) */
	VMCTX_CLASS_STEAL,	/* runnable but not running */
	VMCTX_CLASS_IDLE,	/* halted (host idle in host views) */
	VMCTX_CLASS_LOST,	/* samples lost: never steal */
	VMCTX_CLASS_VM,		/* host and unified views: guest code of a VM and
				   KVM's work for its loaded vCPUs */
	VMCTX_CLASS_MAX,
};

/* One run of a vCPU's virtual stream, handed to a vmctx_stream_fn. */
struct vmctx_tick {
	size_t sz;
	uint64_t time;		/* host time of the run's last tick */
	int vm_tgid;		/* the VM */
	int vcpu;
	enum vmctx_class cls;
	uint64_t count;		/* ticks in this run */
	const char *function;	/* symbol, or "[steal]", "[idle]", "[lost]" */
	const char *module;	/* module, process label, or "(on vcpu1)", "(VM2)", ... */
	uint64_t exit_reason;	/* steal and idle: the vCPU's last exit */
};

typedef void (*vmctx_stream_fn)(const struct vmctx_tick *tick, void *ctx);

/**
 * vmctx_session_set_stream() - Observe every vCPU's virtual stream
 * @s: the session
 * @fn: called with each run of ticks as it is produced, in host time order
 *	per vCPU; NULL stops observing
 * @ctx: passed to @fn as is
 *
 * The tick and its strings are valid during the call only.  The strings
 * hold a guest's bytes as they came: print them through vmctx_escape().
 */
void vmctx_session_set_stream(struct vmctx_session *s, vmctx_stream_fn fn, void *ctx);

/**
 * vmctx_session_nvms() - Count the declared VMs
 * @s: the session
 *
 * Return: the number of VMs (the highest vm_nr); 0 when @s is NULL.
 */
size_t vmctx_session_nvms(const struct vmctx_session *s);

/**
 * vmctx_session_vm_tgid() - Get the VM with a given number
 * @s: the session
 * @vm_nr: the VM's number, 1 to vmctx_session_nvms()
 *
 * Return: the VM's host tgid, or -ENOENT.
 */
int vmctx_session_vm_tgid(const struct vmctx_session *s, int vm_nr);

/**
 * vmctx_session_vm_nr() - Get a VM's number
 * @s: the session
 * @vm_tgid: the VM
 *
 * Return: its number vm_nr, the k of its "(VMk)" labels, or -ENOENT.
 */
int vmctx_session_vm_nr(const struct vmctx_session *s, int vm_tgid);

/**
 * vmctx_session_vm_name() - Get a VM's name
 * @s: the session
 * @vm_tgid: the VM
 *
 * The name may be a guest's host name: print it through vmctx_escape().
 *
 * Return: the name, owned by the session, or NULL with errno ENOENT.
 */
const char *vmctx_session_vm_name(const struct vmctx_session *s, int vm_tgid);

/**
 * vmctx_session_vm_nvcpus() - Count the vCPUs seen of a VM
 * @s: the session
 * @vm_tgid: the VM
 *
 * O(1): the session keeps each VM's vCPU ids in order as it meets them.
 *
 * Return: the count; 0 for a VM the session does not know.
 */
size_t vmctx_session_vm_nvcpus(const struct vmctx_session *s, int vm_tgid);

/**
 * vmctx_session_vm_vcpu() - Get a VM's vCPUs in id order
 * @s: the session
 * @vm_tgid: the VM
 * @i: position, below vmctx_session_vm_nvcpus()
 *
 * O(1), and allocates nothing.
 *
 * Return: the @i'th vCPU id; -ENOENT for an unknown VM or @i past the last.
 */
int vmctx_session_vm_vcpu(const struct vmctx_session *s, int vm_tgid, size_t i);

/* ---- Tables: the paper's reports (vmctx_table(3)) ---------------------------- */

enum vmctx_view {
	VMCTX_VIEW_UNIFIED,	/* host functions and guest functions together */
	VMCTX_VIEW_HOST,	/* each VM is one row "[name] (VMk)" */
	VMCTX_VIEW_GUEST,	/* one VM's virtual time, all vCPUs or one */
	VMCTX_VIEW_VCPUS,	/* one row per vCPU of a VM: "vcpuN", its class shares */
};

struct vmctx_table;

/**
 * vmctx_table_new() - Make a table of a session's samples for one view
 * @s: the session; the table copies what it needs, so it outlives @s
 * @view: the view
 * @vm_tgid: the VM, for VMCTX_VIEW_GUEST and VMCTX_VIEW_VCPUS (ignored
 *	otherwise: pass -1)
 * @vcpu: a vCPU id, or -1 for all vCPUs (VMCTX_VIEW_GUEST)
 *
 * Return: the table, which the caller frees with vmctx_table_free(), or
 * NULL with errno EINVAL (a bad view), ENOENT (an undeclared VM) or ENOMEM.
 */
struct vmctx_table *vmctx_table_new(const struct vmctx_session *s, enum vmctx_view view,
				    int vm_tgid, int vcpu);

/**
 * vmctx_table_free() - Free a table
 * @t: the table, or NULL
 */
void vmctx_table_free(struct vmctx_table *t);

/**
 * vmctx_table_total() - Count the table's samples
 * @t: the table
 *
 * Return: the total of all rows; 0 when @t is NULL.
 */
uint64_t vmctx_table_total(const struct vmctx_table *t);

/**
 * vmctx_table_class() - Count the table's samples of one class
 * @t: the table
 * @cls: the class
 *
 * Return: the count; 0 when @t is NULL or @cls is out of range.
 */
uint64_t vmctx_table_class(const struct vmctx_table *t, enum vmctx_class cls);

/**
 * vmctx_table_nrows() - Count the table's rows
 * @t: the table
 *
 * Return: the number of rows; 0 when @t is NULL.
 */
size_t vmctx_table_nrows(const struct vmctx_table *t);

/**
 * vmctx_table_row() - Get a row
 * @t: the table
 * @i: the row, below vmctx_table_nrows(); rows are sorted by samples,
 *	descending (VMCTX_VIEW_VCPUS: by vCPU id)
 * @samples: set to the row's samples (may be NULL)
 * @function: set to its Function text, owned by the table (may be NULL)
 * @module: set to its Module text, owned by the table (may be NULL)
 *
 * The texts hold a guest's bytes as they came: print them through
 * vmctx_escape().
 *
 * Return: 0, or -ENOENT for a missing row.
 */
int vmctx_table_row(const struct vmctx_table *t, size_t i, uint64_t *samples,
		    const char **function, const char **module);

/**
 * vmctx_table_row_class() - Count a row's samples of one class
 * @t: the table
 * @i: the row
 * @cls: the class (VMCTX_VIEW_VCPUS rows carry all classes)
 *
 * Return: the count; 0 for a missing row or class.
 */
uint64_t vmctx_table_row_class(const struct vmctx_table *t, size_t i, enum vmctx_class cls);

/**
 * vmctx_table_lookup() - Count the samples of the rows matching two texts
 * @t: the table
 * @function: the Function text, or NULL for any
 * @module: the Module text, or NULL for any
 *
 * Return: the samples of the matching rows together; 0 when none match.
 */
uint64_t vmctx_table_lookup(const struct vmctx_table *t, const char *function, const char *module);

/*
 * Steal after an exit code that has no name for the vCPU's ISA is counted
 * under this reason.
 */
#define VMCTX_EXIT_OTHER UINT64_C(0xfffffffffffffffe)

/**
 * vmctx_table_nsteal_reasons() - Count the exit reasons behind the table's steal
 * @t: the table
 *
 * Return: the number of reasons; 0 when @t is NULL.
 */
size_t vmctx_table_nsteal_reasons(const struct vmctx_table *t);

/**
 * vmctx_table_steal_reason() - Get steal by the vCPU's last exit reason
 * @t: the table
 * @i: position, below vmctx_table_nsteal_reasons(); sorted by samples,
 *	descending
 * @reason: set to the exit code, or VMCTX_EXIT_OTHER (may be NULL)
 * @samples: set to the steal samples after it (may be NULL)
 *
 * Return: 0, or -ENOENT for a missing position.
 */
int vmctx_table_steal_reason(const struct vmctx_table *t, size_t i, uint64_t *reason,
			     uint64_t *samples);

struct vmctx_format_opts {
	size_t sz;		/* sizeof(struct vmctx_format_opts) */
	size_t max_rows;	/* print at most this many rows; 0 prints all */
	double percent_limit;	/* leave out rows below this % of the total (perf's
				   --percent-limit); 0 prints all */
};

/**
 * vmctx_table_format() - Render a table as text
 * @t: the table
 * @opts: the options, or NULL for the defaults (every row)
 * @out: set to the malloc'ed text, which the caller frees
 *
 * The text is the "Total samples: N  OS:USER:steal:idle = ..." header,
 * then "Samples %Ratio Function Module" rows, then the steal breakdown.
 * The header and the steal breakdown count every row, also those that
 * @opts leaves out.
 *
 * Function and Module texts are printed through vmctx_escape(); the
 * Function column is as wide as the widest escaped text printed (at least
 * 32 columns), so the Module column stays aligned.
 *
 * Return: 0; -EINVAL (also a @percent_limit outside 0 to 100); -ENOMEM.
 */
int vmctx_table_format(const struct vmctx_table *t, const struct vmctx_format_opts *opts,
		       char **out);

/* ---- Exports: pprof and folded stacks (vmctx_export(3)) ------------------- */

/*
 * An export is a session's counts as profiles other tools read: pprof
 * (go tool pprof, Pyroscope, Parca, Grafana) and folded stacks
 * (FlameGraph, inferno, speedscope).  It holds each vCPU's virtual time,
 * as the guest-level tables count it ([steal], [idle] and [lost]
 * included), and the host's own work; guest code is counted once, in its
 * vCPU's time.  Like a table it copies what it needs, so it outlives the
 * session, and one export writes any number of files.
 */
struct vmctx_export;

enum vmctx_export_format {
	VMCTX_EXPORT_PPROF,	/* gzip-compressed profile.proto */
	VMCTX_EXPORT_FOLDED,	/* "frame;frame;frame count" lines */
};

/* Leave out the host's own work: only the vCPUs' virtual time. */
#define VMCTX_EXPORT_NO_HOST	(1u << 0)

struct vmctx_export_opts {
	size_t sz;		/* sizeof(struct vmctx_export_opts) */
	uint32_t flags;		/* VMCTX_EXPORT_* */
	uint64_t time_ns;	/* pprof time_nanos: the recording's start, ns since
				   the epoch; 0: unknown */
	uint64_t duration_ns;	/* pprof duration_nanos; 0: the session's span, from
				   its first sample to its end */
};

/**
 * vmctx_export_new() - Make an export of a session's counts
 * @s: the session, usually finished; the export copies what it needs
 * @opts: options, or NULL for the defaults (vCPUs and host, no start time)
 *
 * Every name from a guest is escaped as vmctx_escape() does, once, here.
 * Costs O(n log n) in the session's distinct rows; memory is linear in them.
 *
 * Return: the export, which the caller frees with vmctx_export_free(), or
 * NULL with errno EINVAL (a NULL @s, a short @opts, an unknown flag) or
 * ENOMEM.
 */
struct vmctx_export *vmctx_export_new(const struct vmctx_session *s,
				      const struct vmctx_export_opts *opts);

/**
 * vmctx_export_free() - Free an export
 * @x: the export, or NULL
 */
void vmctx_export_free(struct vmctx_export *x);

/**
 * vmctx_export_write_mem() - Write an export to memory
 * @x: the export
 * @format: VMCTX_EXPORT_PPROF or VMCTX_EXPORT_FOLDED
 * @buf: set to the malloc'ed bytes, which the caller frees
 * @len: set to their number
 *
 * Return: 0; -EINVAL (also an unknown @format); -ENOMEM; -EIO when zlib
 * fails.
 */
int vmctx_export_write_mem(const struct vmctx_export *x, enum vmctx_export_format format,
			   void **buf, size_t *len);

/**
 * vmctx_export_write_fd() - Write an export to a file descriptor
 * @x: the export
 * @format: VMCTX_EXPORT_PPROF or VMCTX_EXPORT_FOLDED
 * @fd: where to write, from its current offset; the caller opens and
 *	closes it (a file, a pipe, standard output)
 *
 * Return: 0; -errno of write(); or as vmctx_export_write_mem().
 */
int vmctx_export_write_fd(const struct vmctx_export *x, enum vmctx_export_format format, int fd);

/* ---- Profiles: stacks the caller makes, as pprof or folded (vmctx_profile(3)) */

/*
 * A profile is samples that the caller makes, each a stack of frames of
 * any depth, labels and one or two values, written in an export's two
 * formats: perf writes its own histogram entries so, and
 * vmctx_export_new() a session's counts.  Samples with the same stack and
 * labels add up.  Every string is copied and escaped as vmctx_escape()
 * does, once, as it comes in: a guest names most of them.
 */
struct vmctx_profile;

/* The deepest stack and the most labels a sample may have. */
#define VMCTX_PROFILE_MAX_FRAMES	4096
#define VMCTX_PROFILE_MAX_LABELS	64

struct vmctx_profile_opts {
	size_t sz;			/* sizeof(struct vmctx_profile_opts) */
	size_t nvalues;			/* values per sample, 1 or 2; 0: 1 */
	const char *value_type[2];	/* pprof's sample types; NULL: "samples", "cpu" */
	const char *value_unit[2];	/* their units; NULL: "count", "nanoseconds" */
	uint64_t time_ns;		/* pprof time_nanos: the start, ns since the
					   epoch; 0: unknown */
	uint64_t duration_ns;		/* pprof duration_nanos; 0: unknown */
	int64_t period;			/* what one sample stands for, in the last
					   value's unit, whose type is then pprof's
					   period type and default; 0: none */
	const char *const *comments;	/* pprof comments, @ncomments of them */
	size_t ncomments;
};

/*
 * A frame of a sample's stack.  Frames and labels come in arrays, so
 * unlike the options they have no sz: their layout is fixed, and a call
 * that needs more will take a new structure.
 */
struct vmctx_frame {
	const char *function;	/* its name; NULL: unnamed */
	const char *module;	/* the object it is in, its pprof mapping; NULL: unknown */
	uint64_t address;	/* 0: unknown */
};

/* A label of a sample: the string @str, or the number @num when @str is NULL. */
struct vmctx_label {
	const char *key;
	const char *str;
	int64_t num;
};

/**
 * vmctx_profile_new() - Make an empty profile
 * @opts: options, or NULL for the defaults (one value, "samples" in
 *	"count", no times, period or comments); the profile copies its
 *	strings
 *
 * Return: the profile, which the caller frees with vmctx_profile_free(),
 * or NULL with errno EINVAL (a short @opts, or one that sets a field this
 * library does not know; more than two values; a negative period; a NULL
 * comment), EOVERFLOW (a string too long to escape) or ENOMEM.
 */
struct vmctx_profile *vmctx_profile_new(const struct vmctx_profile_opts *opts);

/**
 * vmctx_profile_free() - Free a profile
 * @p: the profile, or NULL
 */
void vmctx_profile_free(struct vmctx_profile *p);

/**
 * vmctx_profile_add() - Add a sample to a profile
 * @p: the profile
 * @frames: the sample's stack, leaf first (pprof's order)
 * @nframes: its depth, 1 to VMCTX_PROFILE_MAX_FRAMES
 * @labels: its labels, or NULL when @nlabels is 0; a label whose string
 *	is "" is left out, as pprof could not tell it from the number 0
 * @nlabels: 0 to VMCTX_PROFILE_MAX_LABELS
 * @values: its values, as many as the profile's options say
 *
 * A sample with the same frames and the same labels, in the same order,
 * as one added before adds its values to that one's, saturating.  Strings
 * are copied: the caller's may go once this returns.  O(@nframes +
 * @nlabels) amortised, whatever names the strings are.
 *
 * Return: 0; -EINVAL (a NULL @p, @frames or @values, no frame, a label
 * without a key); -E2BIG (too many frames or labels, or 2^32 - 1 distinct
 * strings, frames or samples in the profile); -EOVERFLOW (a string too
 * long to escape); -ENOMEM.  On failure no sample is added or changed.
 */
int vmctx_profile_add(struct vmctx_profile *p, const struct vmctx_frame *frames, size_t nframes,
		      const struct vmctx_label *labels, size_t nlabels, const int64_t *values);

/**
 * vmctx_profile_write_mem() - Write a profile to memory
 * @p: the profile
 * @format: VMCTX_EXPORT_PPROF or VMCTX_EXPORT_FOLDED
 * @buf: set to the malloc'ed bytes, which the caller frees
 * @len: set to their number
 *
 * The same samples give the same bytes, in whatever order they were
 * added.  O(n log n) in the frames and labels of the samples.
 *
 * Return: 0; -EINVAL (also an unknown @format); -ENOMEM; -EIO when zlib
 * fails.
 */
int vmctx_profile_write_mem(const struct vmctx_profile *p, enum vmctx_export_format format,
			    void **buf, size_t *len);

/**
 * vmctx_profile_write_fd() - Write a profile to a file descriptor
 * @p: the profile
 * @format: VMCTX_EXPORT_PPROF or VMCTX_EXPORT_FOLDED
 * @fd: where to write, from its current offset; the caller opens and
 *	closes it
 *
 * Return: 0; -errno of write(); or as vmctx_profile_write_mem().
 */
int vmctx_profile_write_fd(const struct vmctx_profile *p, enum vmctx_export_format format, int fd);

/* ---- Printing guest strings (vmctx_escape(3)) ------------------------------ */

/**
 * vmctx_escape() - Make a string from a guest safe to print on a terminal
 * @dst: the buffer; may be NULL when @size is 0
 * @size: its size in bytes
 * @src: the string: a comm, symbol, path, module, host name or VM name
 *
 * Bytes 0x00 to 0x1f and 0x7f, UTF-8 C1 controls (U+0080 to U+009F) and
 * bytes that are not well-formed UTF-8 become "\xHH", two lowercase hex
 * digits per byte; a backslash becomes "\\"; everything else, UTF-8
 * included, is copied.  So ESC is "\x1b" and a row can never be split.
 * The output is cut short at a whole escape or character and terminated
 * when @size is not 0, as snprintf() does.
 *
 * Return: the length of the whole escaped string without its NUL (the
 * output was cut short when it is @size or more); -EINVAL; -EOVERFLOW
 * beyond INT_MAX.
 */
int vmctx_escape(char *dst, size_t size, const char *src);

#ifdef __cplusplus
}
#endif

#endif /* VMCTX_H */
