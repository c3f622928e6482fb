/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * The state of a session (session.c): its VMs, vCPUs and pCPUs, which the
 * timeline runs over and the labels, tables and exports read.
 */
#ifndef VMCTX_SESSION_H
#define VMCTX_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aggregate.h"
#include "clock.h"
#include "util.h"

/*
 * A VM is known to the API by its tgid and numbered vm_nr for labels;
 * inside the library, sessions index s->vms with vm_idx (vm_nr - 1).
 */
struct vmctx_vm {
	int tgid;			/* host tgid of the QEMU process */
	int nr;				/* vm_nr: k in "(VMk)" */
	char *name;
	bool default_name;		/* "pid<tgid>": a bundle's host name replaces it */
	char *label;			/* "[name]", its host-level row */
	char *tag;			/* "(VMk)" */
	const struct vmctx_bundle *bundle;	/* borrowed, sealed */
	struct vmctx_clock clock;		/* host time to the bundle's guest time */
	/* the ids of its vCPUs seen so far, ascending: the queries only read them */
	int *vcpu_ids;
	size_t nvcpus, vcpu_ids_cap;
};

/*
 * Owner 0 of a pCPU is "outside" (host work); owner i + 1 is vCPU i.
 * OWNER_OTHERS is steal whose owner the session no longer tells apart
 * (see timeline.c): "[steal] (others)".
 */
#define OWNER_OUTSIDE 0
#define OWNER_OTHERS (-2)
/* Runs of owners each pCPU remembers, and owners a vCPU's steal names. */
#define PCPU_RUNS	32
#define VCPU_STEAL_OWNERS 16	/* at most half of vmctx_vcpu.steal_at */

enum vcpu_state {
	VCPU_UNSEEN,
	VCPU_RUNNING,
	VCPU_WAITING,
};

struct pend_charge {
	int32_t owner;
	uint64_t n;
};

/* A cache line: the array of vCPUs is aligned to it (see struct vmctx_vcpu). */
#define VCPU_ALIGN	64

/*
 * What the usual sample reads (timeline_runs_on(), the resolution cache,
 * the hint) fills the first two cache lines, and the array of vCPUs is
 * aligned to them: with thousands of vCPUs their state leaves the cache,
 * and each line read is a miss.  Held waits and the steal counts follow.
 */
struct vmctx_vcpu {
	/* first line */
	int vm_idx;			/* index into session->vms */
	int id;
	enum vcpu_state state;
	bool halted;			/* the guest executed HLT and has not woken */
	bool blocked;			/* the current wait began with a blocking switch-out */
	bool held;			/* a held wait: npend, pend_lost or pend_fill */
	enum vmctx_isa isa;
	uint32_t home;			/* pCPU it last ran on */
	uint64_t last_exit;
	uint64_t last_time;		/* host time of its last real tick */
	uint64_t charged;		/* ticks charged in the current wait */
	uint64_t cache_cr3;		/* resolution cache: the task of this CR3 */
	int cache_task;
	/* second line */
	uint64_t cache_from, cache_to;	/* guest time range the cached task is valid */
	struct agg_hint hint;		/* its rows in the session's table */
	uint64_t exit_key;		/* last_exit, or VMCTX_EXIT_OTHER if unnamed */
	/* read when a wait starts or ends */
	size_t npend;			/* held charges: see pend below */
	uint64_t pend_lost, pend_fill;
	uint64_t snap_ticks;		/* home pCPU's ticks when last charged */
	uint64_t snap_lost;
	/*
	 * A blocked wait that ended with a switch-in is held until the next
	 * event of the vCPU tells what it was: kvm_vcpu_wakeup (it fires
	 * after the switch-in) or a sample whose last exit is HLT makes it
	 * idle, anything else steal.
	 */
	uint64_t pend_time;		/* the switch-in */
	struct pend_charge *pend;	/* owner -> ticks, one entry per owner */
	size_t pend_cap;
	/*
	 * Steal by the first VCPU_STEAL_OWNERS owners it names, counted here
	 * (a vCPU's own cache lines) rather than in the session's table.
	 */
	uint32_t nsteal_by;
	uint8_t steal_at[32];		/* a hash of steal_by: index + 1 */
	int32_t steal_by[VCPU_STEAL_OWNERS];
	uint64_t steal_n[VCPU_STEAL_OWNERS];
} __attribute__((aligned(VCPU_ALIGN)));

_Static_assert(offsetof(struct vmctx_vcpu, cache_from) == VCPU_ALIGN &&
	       offsetof(struct vmctx_vcpu, exit_key) + sizeof(uint64_t) <= 2 * VCPU_ALIGN,
	       "what the usual sample reads of a vCPU fills its first two cache lines");

/* Ticks (start, end] of a pCPU's running total that one owner took in a row. */
struct owner_run {
	int32_t owner;
	uint64_t start, end;
};

/* Each sample reads the first line and the newest run. */
struct vmctx_pcpu {
	int cur;			/* owner of the last sample, -1 before any */
	uint32_t head, nruns;		/* runs[head] is the newest */
	bool restart;			/* none yet, or a loss since: the next weighs 1 */
	uint64_t ticks;			/* running total of sample weights */
	uint64_t lost;
	uint64_t last_sample;		/* time of its latest sample */
	struct owner_run runs[PCPU_RUNS];	/* the latest runs, a ring */
};

struct vmctx_session;
/* @count ticks of @v's stream, of @k (AGG_VCPU), up to @time. */
typedef void (*timeline_sink_fn)(const struct vmctx_session *s, const struct vmctx_vcpu *v,
				 const struct agg_key *k, uint64_t time, uint64_t count);

struct vmctx_session {
	uint64_t tick_ns;
	bool weight_by_time;		/* VMCTX_SESSION_WEIGHT_BY_TIME */
	uint32_t max_pcpus;
	uint32_t max_vcpus;
	struct vmctx_vm *vms;
	size_t nvms, vms_cap;
	int32_t *vm_hash;		/* open addressing by tgid: vm index + 1 */
	size_t vm_hash_size;
	struct vmctx_vcpu *vcpus;
	size_t nvcpus, vcpus_cap;
	int32_t *vcpu_hash;		/* open addressing: vcpu index + 1 */
	size_t vcpu_hash_size;
	struct vmctx_pcpu *pcpus;
	size_t npcpus;
	struct agg_table agg;
	/*
	 * Where the timeline hands each run of a vCPU's stream besides
	 * counting it (NULL: nowhere): set with the caller's stream, to
	 * session.c's, which names the run.
	 */
	timeline_sink_fn sink;
	vmctx_stream_fn stream;
	void *stream_ctx;
	uint64_t first_time;		/* of the first sample, once started */
	uint64_t last_time;
	uint64_t end_time;		/* once finished */
	bool started;
	bool finished;
};

/* session.c: the VM a vm_tgid names (an index into s->vms), or -ENOENT. */
__hidden int session_vm_idx(const struct vmctx_session *s, int vm_tgid);

#endif /* VMCTX_SESSION_H */
