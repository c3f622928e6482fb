/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * libvmctx internals: struct bodies and helpers shared between the
 * library's source files.  Nothing here is exported.
 */
#ifndef VMCTX_LOCAL_H
#define VMCTX_LOCAL_H

#include "vmctx.h"

#define __hidden __attribute__((visibility("hidden")))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* log.c */
__hidden void vmctx_log(enum vmctx_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * escape.c: the printable form of the character at @p, written to @out (4
 * bytes at most, not terminated); its length, and in *@n the bytes of @p
 * it stands for.  vmctx_escape() is this over a string.
 */
__hidden size_t vmctx_escape_char(const unsigned char *p, char *out, size_t *n);

/* Grow *@arr (elements of @size) so that it holds at least @need; 0 or -ENOMEM. */
__hidden int vmctx_grow(void **arr, size_t *cap, size_t need, size_t size);
/* vmctx_grow() into memory aligned to @align, which divides @size: a copy, not realloc(). */
__hidden int vmctx_grow_aligned(void **arr, size_t *cap, size_t need, size_t size, size_t align);
/*
 * The number of elements of the sorted array @base (@n of @size bytes)
 * whose uint64_t key at offset @off is <= @key.
 */
__hidden size_t vmctx_upper_bound(const void *base, size_t n, size_t size, size_t off,
				  uint64_t key);
/* calloc() for a lookup structure: 128-byte aligned, huge pages if large; free() frees it. */
__hidden void *vmctx_calloc_big(size_t n, size_t size);

/* A byte buffer that grows; an error sticks, and is reported once at the end. */
struct vmctx_buf {
	uint8_t *p;
	size_t len, cap;
	int err;
};
/* Append @n bytes of @data to @b (nothing once @b has failed). */
__hidden void vmctx_buf_put(struct vmctx_buf *b, const void *data, size_t n);

/*
 * A hash index of names (util.c): the builder finds modules by name and
 * objects by build-id in O(1), not by a scan.  It stores indices into the
 * caller's array; @name_of gives the name at an index.
 */
struct vmctx_name_index {
	uint32_t *slot;		/* index + 1, 0 if empty */
	size_t size, used;
};
typedef const char *(*vmctx_name_of_fn)(const void *arr, uint32_t idx);
/* The index named @name, or -1. */
__hidden int vmctx_name_find(const struct vmctx_name_index *x, const char *name,
			     vmctx_name_of_fn name_of, const void *arr);
/* Add @idx under @name (not there yet); 0 or -ENOMEM. */
__hidden int vmctx_name_add(struct vmctx_name_index *x, const char *name, uint32_t idx,
			    vmctx_name_of_fn name_of, const void *arr);
__hidden void vmctx_name_index_free(struct vmctx_name_index *x);

/*
 * A search index over sorted keys (key-index.c), built once: a static
 * B+-tree whose upper levels stay in cache.  A key is @width (1 or 2)
 * 64-bit words, compared in order.
 */
#define KEY_INDEX_MAX_LEVELS	16
/* Buckets over the keys [lo, hi) at a word: first[from .. from + nb]. */
struct key_index_node {
	uint64_t min;		/* the word of the first key */
	uint64_t head;		/* at word 1: the keys' shared first word */
	size_t from, nb, lo, hi;
	unsigned shift, word;
};
struct key_index {
	uint64_t *level[KEY_INDEX_MAX_LEVELS];	/* level[0]: the keys, in one allocation */
	size_t n;
	unsigned width, nlevels;
	/*
	 * Buckets in front of the tree (key-index.c): node 0 splits the keys'
	 * first words, a crowded bucket of it has a node of its own (child),
	 * and bucket boundaries are positions in level[0] (first).
	 */
	struct key_index_node *node;
	uint32_t *first, *child;
};
/*
 * Index the @n sorted keys at offset @off of the elements of @base (@size
 * bytes each); 0 or -ENOMEM.  The index owns a copy of the keys.
 */
__hidden int key_index_build(struct key_index *x, const void *base, size_t n, size_t size,
			     size_t off, unsigned width);
/* How many keys are <= (@a, @b) (@b is ignored at width 1): O(log n), one or two misses. */
__hidden size_t key_index_upper(const struct key_index *x, uint64_t a, uint64_t b);
/* Key @i's words, in sorted order. */
static inline const uint64_t *key_index_key(const struct key_index *x, size_t i)
{
	return &x->level[0][i * x->width];
}
__hidden void key_index_free(struct key_index *x);

/* ---- bundle (bundle.c, bundle-seal.c, bundle-read.c, bundle-write.c) ---- */

/* A symbol covers [start, end); name is owned by the symbol's container. */
struct vmctx_sym {
	uint64_t start;
	uint64_t end;
	char *name;
};

/* An ELF object, deduplicated by build-id. */
struct vmctx_object {
	char *path;
	const char *base;	/* points into path: its last component */
	char *build_id;		/* lowercase hex, or NULL */
	struct vmctx_sym *syms;	/* sorted by start, no overlaps, once sealed */
	size_t nsyms;
	size_t syms_cap;
	struct key_index sym_index;	/* of the starts, once sealed, if nsyms >= SYM_INDEX_MIN */
};

/* Fewer symbols than this are searched in place: their index would be most of their size. */
#define SYM_INDEX_MIN	256

/* One mapping of a task's address space. */
struct vmctx_map {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t bias;		/* ELF vaddr = ip - bias */
	int object;		/* index into bundle->objects, or -1 */
	char *path;
	const char *base;	/* points into path */
};

/* A task: one page-table root over one lifetime. */
struct vmctx_task {
	uint64_t root;		/* normalised physical address of the root */
	int pid;
	int tgid;
	char *comm;
	uint64_t start;		/* guest ns */
	uint64_t exit;		/* guest ns, VMCTX_TIME_NONE while alive */
	struct vmctx_map *maps;	/* sorted by start, no overlaps, once sealed */
	size_t nmaps;
	size_t maps_cap;
	/* set by bundle_seal() */
	char *label;		/* "comm" or "comm(N)" */
	int maps_from;		/* task whose maps to use (threads share) */
};

struct vmctx_kmod {
	char *name;
	uint64_t start;
	uint64_t end;
};

struct vmctx_ksym {
	uint64_t addr;
	char *name;
	int module;		/* index into bundle->kmods, or -1 for vmlinux */
};

struct vmctx_bundle {
	char *hostname;
	char *release;
	char *boot_id;
	char *agent;		/* what wrote it, and how; NULL: not said */
	uint64_t tsc_khz;
	uint64_t clock_tsc;
	uint64_t clock_ns;
	struct vmctx_clock_pair {
		uint64_t tsc, ns;
	} *pairs;		/* guest TSC/ns pairs, sorted by both once sealed */
	size_t npairs, pairs_cap;
	uint64_t cr3_mask;	/* extra bits to ignore (SME) */
	bool has_window;	/* the agent's window is known */
	uint64_t window_start, window_end;	/* guest ns, start <= end */

	struct vmctx_task *tasks;
	size_t ntasks, tasks_cap;
	struct vmctx_object *objects;
	size_t nobjects, objects_cap;
	struct vmctx_kmod *kmods;
	size_t nkmods, kmods_cap;
	struct vmctx_ksym *ksyms;	/* sorted by addr once sealed */
	size_t nksyms, ksyms_cap;
	struct vmctx_name_index kmod_names, build_ids;	/* the builder's */
	size_t maps_total;		/* of all tasks */
	size_t syms_total;		/* of all objects */

	/* set by bundle_seal(); nothing changes afterwards */
	bool sealed;
	uint32_t *by_root;	/* task indices sorted by (root, start) */
	/*
	 * Over by_root positions, for find_task in O(log n): max-trees (2 *
	 * live_base entries, leaves at live_base + pos) of the tasks' exits,
	 * and of the process leaders' exits (0 for threads); and per position
	 * what its root resolves to when the time is unknown.
	 */
	struct root_key {
		uint64_t root;	/* normalised */
		uint64_t start;
	} *keys;		/* by_root's keys in its order: root_index's */
	struct key_index root_index;
	uint64_t *live_all, *live_leader;
	size_t live_base;
	int32_t *untimed;
	/* Modules as disjoint segments, for resolve_kernel in O(log n). */
	uint64_t *kseg_start;	/* sorted */
	int32_t *kseg_mod;	/* the lowest-numbered module covering it, or -1 */
	size_t nkseg;
	struct key_index kseg_index, ksym_index;	/* of kseg_start, of ksyms' addresses */
};

/*
 * What a bundle may hold: the builder refuses more and the reader rejects
 * more with VMCTX_E_LIMIT (see vmctx-bundle(5)), so the writer never emits
 * more.
 */
#define BUNDLE_VERSION		1
#define BUNDLE_MAX_TASKS	(1u << 22)	/* PID_MAX_LIMIT */
#define BUNDLE_MAX_OBJECTS	(1u << 20)
#define BUNDLE_MAX_MAPS		(1u << 24)	/* all tasks together */
#define BUNDLE_MAX_SYMS		(1u << 24)	/* all objects together */
#define BUNDLE_MAX_KMODS	(1u << 16)
#define BUNDLE_MAX_KSYMS	(1u << 24)
#define BUNDLE_MAX_PAIRS	(1u << 20)	/* TSC/ns pairs */
#define BUNDLE_MAX_SHORT	256		/* hostname, release, boot id, comm, module */
#define BUNDLE_MAX_PATH		4096
#define BUNDLE_MAX_SYMNAME	8192
#define BUNDLE_MAX_BUILD_ID	128		/* hex digits */
#define BUNDLE_MAX_LINE		65536		/* bytes, newline included */
#define BUNDLE_DEFAULT_MAX_SIZE	(64ull << 20)

/* bundle.c: append a clock pair (the caller checked the limit). */
__hidden int bundle_push_pair(struct vmctx_bundle *b, uint64_t tsc, uint64_t ns);
/* bundle.c: the last component of @path (a pointer into it). */
__hidden const char *bundle_path_base(const char *path);

/*
 * bundle.c: the bundle's rules.  The builder and the reader check each
 * record with the bundle_*_valid() predicates as it comes in; bundle_seal()
 * (bundle-seal.c) checks the whole, sorts and prunes it, and has
 * bundle_index() build the index.  @strict
 * (the reader): what the builder's bundles get sorted, a file must hold
 * sorted already, since the writer only writes sealed bundles.
 */
__hidden bool bundle_build_id_valid(const char *id);	/* 2..128 lowercase hex digits, even */
__hidden bool bundle_lifetime_valid(uint64_t start, uint64_t exit);	/* exit >= start */
__hidden bool bundle_window_valid(uint64_t start, uint64_t end);	/* known, end >= start */
__hidden bool bundle_extent_valid(uint64_t start, uint64_t size);	/* start + size fits */
__hidden bool bundle_map_valid(uint64_t start, uint64_t end);	/* not empty */
/* 0 for a sealed bundle; -EINVAL for NULL; -VMCTX_E_UNSEALED. */
__hidden int bundle_check_sealed(const struct vmctx_bundle *b);
__hidden int bundle_seal(struct vmctx_bundle *b, bool strict);

/*
 * bundle-index.c: build the index of a bundle that bundle_seal() checked
 * and sorted; then, the normalised root at position @pos of by_root, and
 * the first position whose root is >= @root (ntasks if none).
 */
__hidden int bundle_index(struct vmctx_bundle *b);
__hidden uint64_t bundle_root_at(const struct vmctx_bundle *b, size_t pos);
__hidden size_t bundle_root_first(const struct vmctx_bundle *b, uint64_t root);

/* ---- guest clock (clock.c; its fit from samples: clock-fit.c) ---- */

struct vmctx_clock {
	enum vmctx_clock_kind kind;
	/* VMCTX_CLOCK_LINEAR: guest = host + offset + (host - host_ref) * rate_ppb / 1e9 */
	uint64_t host_ref;
	int64_t offset;
	int64_t rate_ppb;
	/* VMCTX_CLOCK_TSC */
	struct vmctx_clock_tsc tsc;
	const struct vmctx_bundle *b;	/* borrowed, sealed: its clock pairs */
};

/* vmctx_clock_guest_ns() for a valid @c: -ENODATA for an unknown clock. */
__hidden int clock_guest_ns(const struct vmctx_clock *c, uint64_t host_ns, uint64_t *guest_ns);

/* ---- session (session.c, timeline.c, aggregate.c, report.c) ---- */

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

/* Where a vCPU's latest rows are in the session's table (aggregate.c). */
#define AGG_HINTS	8
struct agg_hint {
	size_t size;			/* the table's size when noted */
	uint32_t at[AGG_HINTS];		/* entry index + 1, 0 if none */
};

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

/*
 * Aggregation scopes: a vCPU's virtual stream, or the physical CPUs.  The
 * physical view's rows of guest code (AGG_HOST, VMCTX_CLASS_VM) are not
 * stored: they are the vCPU rows of guest code, summed (report.c).
 */
enum agg_scope {
	AGG_VCPU,
	AGG_HOST,
	AGG_STEAL_EXIT,
};

struct agg_key {
	uint8_t scope;
	uint8_t cls;			/* enum vmctx_class */
	int16_t sub;			/* AGG_HOST guest rows: guest OS or USER;
					   AGG_STEAL_EXIT: the vCPU's ISA */
	int32_t vm_idx;			/* index into session->vms, -1 for host work */
	int32_t vcpu;			/* vCPU id, -1 in the host scope */
	int32_t by;			/* steal: owner that ran instead; guest: task */
	uint64_t exit;			/* AGG_STEAL_EXIT: exit reason */
	const char *function;
	const char *module;
};

struct agg_entry {
	struct agg_key key;
	uint64_t count;			/* 0: empty slot */
};

/* The counts, by key: open addressing, at most half full. */
struct agg_table {
	struct agg_entry *e;
	size_t size, used;
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

/* timeline.c */
/* Give the vCPU at s->vcpus[s->nvcpus], not counted yet, its timeline state. */
__hidden void timeline_add_vcpu(struct vmctx_vcpu *v);
/*
 * Ticks a sample stands for: 1, or with VMCTX_SESSION_WEIGHT_BY_TIME the
 * ticks since the previous sample on its pCPU.  0 (errno set) on a bad pCPU.
 */
__hidden uint64_t timeline_weight(struct vmctx_session *s, const struct vmctx_sample *smp);
/*
 * A sample of @owner (OWNER_OUTSIDE, or @v's).  @guest: the resolved guest
 * sample (its physical-view key), for guest samples.  @weight: ticks the
 * sample stands for (timeline_weight()).
 */
__hidden int timeline_sample(struct vmctx_session *s, const struct vmctx_sample *smp, int owner,
			     struct vmctx_vcpu *v, const struct agg_key *guest, uint64_t weight);
/*
 * The common sample, counted in short: guest code of @v, the vCPU of its
 * pCPU's last sample, still running there a tick later (no gap to fill,
 * weight 1), with nothing held, the same exit, and no sink.
 * timeline_runs_on() says whether @smp is one; timeline_run_on() counts
 * it under @k, an AGG_VCPU key, as timeline_weight() and
 * timeline_sample() would.
 */
static inline bool timeline_runs_on(const struct vmctx_session *s,
				    const struct vmctx_vcpu *v, const struct vmctx_sample *smp)
{
	const uint64_t late = s->tick_ns + s->tick_ns / 2;	/* ticks_between()'s bound */
	const struct vmctx_pcpu *p;

	if (smp->cpu >= s->npcpus)
		return false;
	p = &s->pcpus[smp->cpu];
	return p->cur > 0 && &s->vcpus[p->cur - 1] == v && !s->sink &&
	       v->state == VCPU_RUNNING && v->home == smp->cpu &&
	       !v->held && !p->restart &&
	       smp->isa == v->isa && smp->exit_reason == v->last_exit &&
	       smp->time > p->last_sample && smp->time > v->last_time &&
	       (!s->weight_by_time || smp->time - p->last_sample < late) &&
	       (!s->tick_ns || smp->time - v->last_time < late);
}

__hidden int timeline_switch(struct vmctx_session *s, uint64_t time, uint32_t cpu,
			     struct vmctx_vcpu *v, bool out, bool preempt);
__hidden int timeline_halt(struct vmctx_session *s, uint64_t time, struct vmctx_vcpu *v,
			   bool halted);
__hidden int timeline_lost(struct vmctx_session *s, uint64_t time, uint32_t cpu, uint64_t count);
__hidden int timeline_finish(struct vmctx_session *s, uint64_t time);

/*
 * labels.c: the Function and Module texts of an aggregation key (@unified:
 * as the unified view names host rows); a text that has to be composed is
 * written to @buf.
 */
__hidden void labels_of(const struct vmctx_session *s, const struct agg_key *k, bool unified,
			const char **function, const char **module, char *buf, size_t len);
/* What ran instead of a steal row's vCPU: "(on vcpuN)" (in @buf), "(VMk)", "(outside)", ... */
__hidden const char *labels_steal_by(const struct vmctx_session *s, const struct agg_key *k,
				     char *buf, size_t len);
/* The function and module of the host's idle time, as perf names them. */
__hidden void labels_host_idle(const struct agg_key *k, const char **function,
			       const char **module);


/* aggregate.c */
__hidden int agg_add(struct agg_table *t, const struct agg_key *key, uint64_t n);
__hidden void agg_free(struct agg_table *t);

/*
 * Field by field: callers have just stored the fields one by one, and a
 * wide load over several narrow stores stalls store forwarding (it cost a
 * third of a sample's time in bench-timeline).
 */
static inline bool agg_key_eq(const struct agg_key *a, const struct agg_key *b)
{
	return a->function == b->function && a->vm_idx == b->vm_idx &&
	       a->vcpu == b->vcpu && a->by == b->by && a->scope == b->scope &&
	       a->cls == b->cls && a->sub == b->sub && a->exit == b->exit &&
	       a->module == b->module;
}

/* The place in a hint that @key uses: by function and owner. */
static inline size_t agg_hint_slot(const struct agg_key *k)
{
	return ((uintptr_t)k->function >> 4 ^ (uint32_t)k->by ^ k->cls) % AGG_HINTS;
}

/* agg_add_hinted() when @h's place @i does not hold @key: count it, and note where. */
__hidden int agg_add_noting(struct agg_table *t, struct agg_hint *h, size_t i,
			    const struct agg_key *key, uint64_t n);

/*
 * agg_add() that first looks where @h says @key was: a vCPU's rows recur,
 * and a row found there costs no hash.  Inline: a call for every sample.
 */
static inline int agg_add_hinted(struct agg_table *t, struct agg_hint *h,
				 const struct agg_key *k, uint64_t n)
{
	size_t i = agg_hint_slot(k);

	if (!n)
		return 0;
	if (h->size == t->size && h->at[i] && agg_key_eq(&t->e[h->at[i] - 1].key, k)) {
		t->e[h->at[i] - 1].count += n;
		return 0;
	}
	return agg_add_noting(t, h, i, k, n);
}

/* timeline.c's bookkeeping, inline for timeline_run_on(): @owner took @weight ticks of @p. */
static inline void pcpu_add_ticks(struct vmctx_pcpu *p, int owner, uint64_t weight)
{
	struct owner_run *r = &p->runs[p->head];

	if (p->nruns && r->owner == owner && r->end == p->ticks) {
		r->end += weight;
	} else {
		p->head = (p->head + 1) % PCPU_RUNS;
		if (p->nruns < PCPU_RUNS)
			p->nruns++;
		r = &p->runs[p->head];
		r->owner = owner;
		r->start = p->ticks;
		r->end = p->ticks + weight;
	}
	p->ticks += weight;
}

/* Count a sample that timeline_runs_on() (above) took, under @k. */
static inline int timeline_run_on(struct vmctx_session *s, struct vmctx_vcpu *v,
				  const struct vmctx_sample *smp, const struct agg_key *k)
{
	struct vmctx_pcpu *p = &s->pcpus[smp->cpu];

	p->last_sample = smp->time;
	if (smp->time > s->last_time)
		s->last_time = smp->time;
	pcpu_add_ticks(p, p->cur, 1);
	v->charged = 0;
	v->last_time = smp->time;
	v->halted = false;
	/* timeline_emit()'s count, as no sink takes this path */
	return agg_add_hinted(&s->agg, &v->hint, k, 1);
}

/*
 * Where the timeline's output goes, a call for every sample, so inline.
 * One run of @v's virtual stream (@k, AGG_VCPU), @count ticks ending at
 * @time: counted unless @counted (the vCPU counted it), and handed to the
 * sink if there is one.
 */
static inline int timeline_emit(struct vmctx_session *s, struct vmctx_vcpu *v,
			       const struct agg_key *k, uint64_t time, uint64_t count,
			       bool counted)
{
	int err;

	if (!count)
		return 0;
	if (!counted) {
		err = agg_add_hinted(&s->agg, &v->hint, k, count);
		if (err)
			return err;
	}
	if (s->sink)
		s->sink(s, v, k, time, count);
	return 0;
}

/* ---- export (export.c, export-pprof.c) ---- */

/* Labels of an export row, in pprof's order; each names a string. */
enum export_label {
	XL_VM,			/* the VM's name, "[host]" for host work */
	XL_VM_PID,		/* its QEMU process's host tgid */
	XL_VCPU,
	XL_CLASS,		/* guest_os, guest_user, steal, idle, lost, host_os, ... */
	XL_GUEST_COMM,		/* the guest process's label, or "[guest kernel]", "[steal]", ... */
	XL_GUEST_PID,
	XL_MAX,
};

#define EXPORT_MAX_FRAMES	3
/* The mapping and module of vmctx's own frames ([steal], [idle], [lost]). */
#define EXPORT_VMCTX_MAPPING	"[vmctx]"

/*
 * One row: a count with its stack and labels.  Strings are indices into
 * the export's string table, escaped, in text order; 0 is "" (no frame, no
 * label).  The
 * leaf frame is the function, of @module, in the mapping @mapping: the
 * module with the VM's "(VMk)" for guest objects, so that a guest's
 * vmlinux is not the host's.
 */
struct export_row {
	uint64_t count;
	uint32_t frame[EXPORT_MAX_FRAMES];	/* root first */
	uint32_t nframes;
	uint32_t module;
	uint32_t mapping;
	uint32_t label[XL_MAX];
};

struct vmctx_export {
	char **strs;			/* the string table: sorted, unique, strs[0] "" */
	size_t nstrs, strs_cap;
	struct export_row *rows;	/* sorted, identical rows merged */
	size_t nrows, rows_cap;
	uint32_t label_key[XL_MAX];	/* "vm", "vm_pid", ... */
	uint32_t *comments;		/* "VM1: name, QEMU pid N", ... */
	size_t ncomments, comments_cap;
	uint64_t tick_ns;		/* 0: unknown, and no time values */
	uint64_t time_ns, duration_ns;
};

/* export-pprof.c: @x as an uncompressed profile.proto message. */
__hidden int export_pprof(const struct vmctx_export *x, struct vmctx_buf *out);

#endif /* VMCTX_LOCAL_H */
