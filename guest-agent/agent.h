/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmctx-agent internals.  The data flow follows the files:
 *   agent-kmod.c   a backend: the vmctx_guest module's task table and event ring
 *   agent-bpf.c    a backend: the same table and events from BPF
 *   agent-tasks.c  task records: one page-table root over one lifetime; and
 *                  the switch log: which task each CPU ran, and when
 *   agent-proc.c   /proc: maps, kallsyms, modules, identity
 *   agent-elf.c    ELF objects: build-id, symbols, load bias (libelf)
 *   agent-clock.c  the guest clock: TSC/ns pairs for the host
 *   agent-serve.c  serve: the switch records kept, the listener, the config file
 *   agent-msg.c    messages, bad lines, SIGINT and SIGTERM
 *   vmctx-agent.c  the commands, and the bundle they write
 * Every path the agent opens is under agent->root (the module's directory
 * may be given apart), so that tests can point it at a fake tree.
 *
 * Every global name starts with agent_, clear of libelf's elf_* and
 * libkmod's kmod_*.  "kmod" is the agent's own module, vmctx_guest.ko
 * (kmod/, --kmod-dir, agent_kmod_*); the guest kernel's modules, which
 * /proc/modules lists and the bundle records, are "modules" here.
 */
#ifndef VMCTX_AGENT_H
#define VMCTX_AGENT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <vmctx.h>

#define AGENT_NO_ROOT		UINT64_MAX
#define AGENT_TIME_NONE		UINT64_MAX
/* An escaped comm decodes to at most 16 bytes; leave room for odd input. */
#define AGENT_COMM_MAX		64

struct agent;

/*
 * What a backend (agent-kmod.c, agent-bpf.c) hands the task records
 * (agent-tasks.c): the guest's task table with its clock pair, and the
 * fork, exec, exit and map events since the last read.  A task as a
 * backend sees it: one row of the table, or the subject of an event.
 */
struct agent_task_row {
	int pid;
	int tgid;
	uint64_t start_ns;
	uint64_t root;		/* AGENT_NO_ROOT: kernel thread or exiting */
	uint64_t user_root;
	char comm[AGENT_COMM_MAX];
};

enum agent_event_type {
	AGENT_EVENT_FORK,
	AGENT_EVENT_EXEC,
	AGENT_EVENT_EXIT,
	AGENT_EVENT_MAP,		/* format 2: an executable mapping, at exec or exit */
};

struct agent_event {
	uint64_t seq;
	enum agent_event_type type;
	uint64_t tsc;
	uint64_t ns;
	int other;		/* fork: parent pid; exec: pid before exec */
	struct agent_task_row task;	/* AGENT_EVENT_MAP: pid and tgid only */
	/* AGENT_EVENT_MAP; other: 0 logged at exec, 1 at exit */
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	char *path;		/* malloc'ed; see agent_events_free() */
};

/*
 * One record of a backend's per-CPU switch rings (the switch log, below):
 * a CPU switched to a task, or lost switches, its ring being full.  A
 * loss still under way when the ring was read has lost_to
 * AGENT_TIME_NONE: the ring is full, or no switch came since it had room.
 */
enum agent_switch_type {
	AGENT_SWITCH,
	AGENT_SWITCH_LOST,
};

struct agent_switch {
	enum agent_switch_type type;
	unsigned int cpu;
	uint64_t ns;		/* the switch; a loss: its first switch lost */
	uint64_t lost_to;	/* a loss: its last switch lost */
	uint64_t nlost;		/* a loss: how many */
	int pid;		/* 0 and 0 for the idle task, and only for it */
	int tgid;
	enum vmctx_task_kind kind;
	char comm[AGENT_COMM_MAX];
};

/* The table with its header: the backend's clock pair and CR3 facts. */
struct agent_task_table {
	uint64_t tsc_khz;
	uint64_t tsc;
	uint64_t ns;
	bool pti;
	uint64_t cr3_mask;
	size_t ntasks;
	struct agent_task_row *tasks;
};

/* A mapping read from /proc/PID/maps. */
struct agent_map {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	unsigned int prot;	/* PF_R, PF_W, PF_X */
	size_t lineno;		/* in /proc/PID/maps, for messages */
	char *path;		/* "" for anonymous */
	/*
	 * Given by the kernel's events (a map event, or the parent's at fork),
	 * not only read from /proc: see agent_task_take_read()
	 */
	bool logged;
};

/* One page-table root of one task over [start, exit). */
struct agent_task {
	int pid;
	int tgid;
	uint64_t root;
	uint64_t start;
	uint64_t exit;		/* AGENT_TIME_NONE while alive */
	char comm[AGENT_COMM_MAX];
	int maps_due;		/* reads still wanted while recording */
	size_t nmaps;
	struct agent_map *maps;
	/*
	 * When maps came from /proc/PID/maps: the CLOCK_MONOTONIC times the
	 * read began and ended, so that an exec in between or before can be
	 * told (0 and 0 otherwise)
	 */
	uint64_t maps_from;
	uint64_t maps_to;
	/* the name the last /proc read found instead of comm, or "" */
	char renamed_to[AGENT_COMM_MAX];
	/*
	 * The module's backend: 1 + the kind (0 exec, 1 exit) of the map
	 * batch the maps came from last, 0 if none (see apply_map()).
	 */
	int map_batch;
};

/* Map events of an image whose exec event has not come yet. */
struct agent_pending_maps {
	int pid;
	uint64_t root;
	size_t n;
	struct agent_map *maps;
};

struct agent_tasks {
	size_t n;
	size_t cap;
	struct agent_task *v;
	/* Open records by pid (a hash: key pid + 1, value index). */
	size_t pcap;
	size_t pused;
	int *pkeys;
	size_t *pvals;
	/* the map events being applied: one batch per process and moment */
	uint64_t map_next_seq;
	int map_pid;
	int map_at_exit;
	/*
	 * A batch's map events may have other processes' events between
	 * them (the module's backend): one batch is a record's maps of one
	 * kind, whatever comes between.
	 */
	bool batch_by_process;
	/* at most AGENT_PENDING_MAPS images, the oldest dropped first */
	size_t npending;
	struct agent_pending_maps *pending;
};

/*
 * Bad lines of one file: skipped, counted, and reported in one warning
 * that names the first (file:line) and the count; -v notes each.
 */
struct agent_bad {
	const char *file;		/* as the user knows it; the caller's */
	size_t n;
	size_t first;			/* line number of the first */
	const char *why;		/* ... and what was wrong with it; static */
};

/*
 * Guest TSC/ns pairs over the window, one per AGENT_PAIR_EVERY_NS at most:
 * the host follows the guest clock through them even where it drifts
 * against the TSC.  Each is the TSC read between two readings of
 * CLOCK_MONOTONIC, the tightest of AGENT_PAIR_TRIES, and is kept only when
 * those readings lie within AGENT_PAIR_MAX_SPAN_NS: a pair read across an
 * interrupt or a host preemption would put the host's samples that much
 * off on the guest's clock (agent-clock.c).
 */
#define AGENT_PAIR_EVERY_NS	10000000ULL	/* 10 ms */
#define AGENT_PAIR_TRIES	8
#define AGENT_PAIR_MAX_SPAN_NS	50000ULL	/* 50 us */

struct agent_pairs {
	size_t n;
	size_t cap;
	size_t dropped;			/* read over more than the span allowed */
	uint64_t max_span;		/* of those kept, ns */
	struct agent_pair {
		uint64_t tsc;
		uint64_t ns;
	} *v;
};

/*
 * The switch log: the backends' switch records, per CPU in ring order,
 * into the bundle's (vmctx_bundle_add_switch()), clipped to the window.
 * A CPU's switch before the window's start, if it was still running then,
 * goes in at the start.  A loss becomes a gap, kept open until the CPU's
 * next switch strictly after it, so that losses in between merge and a
 * CPU's gaps never overlap.  A record later than the guest clock was when
 * it was read waits until the clock has passed it, so that one after the
 * window is dropped, not added.  Records a guest could not have written
 * (a CPU or pid out of range, the idle kind with a pid) are refused and
 * counted.  Where the bundle's caps would be passed, the rest of each
 * CPU's log is a gap.
 */
#define AGENT_SWITCH_SLOTS	4096		/* ring slots per CPU, by default */
#define AGENT_SWITCH_SLOTS_MIN	64
#define AGENT_SWITCH_SLOTS_MAX	(1u << 20)
/* libvmctx's caps (vmctx-bundle(5), LIMITS) and the kernel's PID_MAX_LIMIT */
#define AGENT_SWITCH_CPUS	8192
#define AGENT_SWITCHES_MAX	(1u << 23)
#define AGENT_SWITCH_GAPS_MAX	(1u << 20)
#define AGENT_PID_MAX		(1 << 22)

struct agent_switch_cpu {
	uint64_t last;			/* the latest time taken in: the CPU's order */
	uint64_t losing;		/* a loss under way since, or AGENT_TIME_NONE */
	uint64_t nlosing;
	bool started;			/* the CPU's part of the window has begun */
	bool has_run;			/* run: switched to before the window, running at its start */
	bool has_gap;			/* gap_from..gap_to: a gap not added yet */
	bool lost;			/* lost switches within the window */
	uint64_t gap_from;
	uint64_t gap_to;
	struct agent_switch run;
};

struct agent_switch_log {
	struct vmctx_bundle *bundle;	/* the caller's */
	uint64_t start;			/* the window's */
	uint64_t end;			/* AGENT_TIME_NONE until the window ends */
	size_t ncpus;
	struct agent_switch_cpu *cpus;
	size_t nheld;			/* records that wait for the clock */
	size_t held_cap;
	struct agent_switch *held;
	bool full;			/* at the bundle's caps: the rest is gaps */
	uint64_t full_at;
	/* for the messages */
	size_t nswitches;		/* added */
	size_t ngaps;			/* added or open */
	uint64_t lost;			/* switches lost within the window */
	size_t lost_cpus;		/* CPUs that lost any */
	size_t outside;			/* records after the window */
	size_t refused;
	const char *refused_why;	/* the first refusal's reason; static */
	unsigned int refused_cpu;
};

/*
 * serve: the backend's switch records of the last --keep seconds, each
 * CPU's in ring order, replayed into a switch log for each bundle asked
 * for (agent-serve.c).
 */
struct agent_switch_store {
	size_t n;
	size_t cap;
	struct agent_switch *v;
};

/* serve --listen: vsock:PORT or unix:PATH */
struct agent_listen {
	bool vsock;
	unsigned int port;
	char path[108];
};

enum agent_backend {
	AGENT_BACKEND_AUTO,
	AGENT_BACKEND_BPF,
	AGENT_BACKEND_KMOD,
};

/*
 * A backend, as trace-cmd's time-sync backends are: one table of calls,
 * which vmctx-agent.c uses without knowing which backend it holds.
 */
struct agent_backend_ops {
	const char *name;		/* "kmod", "bpf": --backend= and the bundle's agent */
	/* Start watching; @quiet: say nothing on failure (auto falls back). */
	int (*open)(struct agent *a, bool quiet);
	void (*close)(struct agent *a);
	/* Read the whole task table into @t, replacing what it held. */
	int (*read_table)(struct agent *a, struct agent_task_table *t);
	/* Append every event since the last call to *ev (grown as needed). */
	int (*read_events)(struct agent *a, struct agent_event **ev, size_t *nev, size_t *cap);
	/*
	 * With a->switch_slots: append the switch records of every CPU since
	 * the last call to *sw, each CPU's in ring order (NULL: not logged).
	 */
	int (*read_switches)(struct agent *a, struct agent_switch **sw, size_t *n, size_t *cap);
};

extern const struct agent_backend_ops agent_kmod_ops;
#ifdef HAVE_BPF
extern const struct agent_backend_ops agent_bpf_ops;
#endif

struct agent_bpf;

/*
 * A file of the module that is read as it grows, line by line (its event
 * ring, its switch rings): where the reading stands, and its bad lines.
 */
struct agent_kmod_stream {
	int fd;				/* -1 when not open */
	char *path;			/* for messages */
	size_t lineno;
	struct agent_bad bad;
	size_t ncarry;
	char carry[4096];		/* a partial line, until the rest comes */
};

struct agent {
	const char *prog;
	enum agent_backend backend;	/* AUTO until chosen */
	const struct agent_backend_ops *ops;	/* the chosen backend's, once open */
	struct agent_bpf *bpf;		/* the BPF backend's state, when chosen */
	const char *root;		/* "/" or a fake tree */
	char *kmod_dir;			/* the module's /proc directory */
	bool verbose;
	bool no_kallsyms;
	bool unwind;			/* --unwind: objects' unwind tables in the bundle */
	bool unwind_full;		/* ... and the bundle's cap for them was reached */
	bool real_root;			/* root is "/" */
	int signals_ok;			/* signals that end a window; more stop the agent */
	bool has_window;		/* record: the window below is the bundle's */
	uint64_t window_start, window_end;	/* guest ns */
	struct agent_kmod_stream events;	/* the module's event ring */
	struct agent_kmod_stream switch_stream;	/* ... and its switch rings */
	bool events_started;
	uint64_t events_next;		/* next event sequence number expected */
	uint64_t events_lost;
	size_t maps_gone;		/* processes that exited before their maps were read */
	size_t maps_unreadable;		/* ... whose maps could not be read */
	struct agent_tasks tasks;
	struct agent_task_table table;	/* the latest table read */
	struct agent_pairs pairs;
	unsigned int switch_slots;	/* record --switches: ring slots per CPU; 0: off */
	bool switch_slots_given;	/* ... as --switches=RING said */
	struct agent_switch_log switches;
	bool serving;			/* serve: switch records go to the store */
	struct agent_switch_store store;
	struct vmctx_bundle *bundle;
	struct agent_elf_cache *elves;
};

/* agent-msg.c: errors always, notes with -v; control bytes are shown as \xNN. */
void agent_err(const struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void agent_warn(const struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void agent_note(const struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True once agent_err() printed anything: the agent never fails silently. */
bool agent_said_error(void);
/* Count bad line @lineno of bad->file (@why is static), and note it with -v. */
void agent_bad_line(const struct agent *a, struct agent_bad *bad, size_t lineno,
		    const char *why, const char *line);
/* Warn once about the bad lines counted, if any, and start counting again. */
void agent_bad_report(const struct agent *a, struct agent_bad *bad);

/* SIGINT and SIGTERM received so far, and the last of them. */
extern volatile sig_atomic_t agent_signals;
extern volatile sig_atomic_t agent_last_signal;
void agent_on_signal(int sig);
/* More signals than a->signals_ok: stop now, without a bundle (-EINTR). */
bool agent_interrupted(const struct agent *a);

/* agent-proc.c */
/* "<root>/<rel>", malloc'ed; NULL on ENOMEM. */
char *agent_path(const struct agent *a, const char *rel);
/* Read a whole small file under the root; *len excludes the added NUL. */
int agent_read_file(const struct agent *a, const char *rel, char **buf, size_t *len);
/* Read @fd to its end into a NUL-terminated malloc'ed buffer; -EINTR if interrupted. */
int agent_read_fd(const struct agent *a, int fd, char **buf, size_t *len);

/*
 * The lines of a buffer read whole, split in place.  A NUL byte does not
 * end the buffer: the line holding it is flagged, for the caller to skip.
 */
struct agent_lines {
	char *next;
	char *end;
	size_t lineno;
};

void agent_lines_init(struct agent_lines *it, char *buf, size_t len);
/* The next line, NUL-terminated without its newline, or NULL at the end. */
char *agent_lines_next(struct agent_lines *it, bool *has_nul);

/* One line of a guest file: 0, a bad line counted in @bad, or an error that stops. */
typedef int (*agent_line_fn)(const struct agent *a, struct agent_bad *bad, size_t lineno,
			     char *line, void *ctx);
/*
 * Hand each line left in @it to @fn until it fails: a line holding a NUL
 * byte is a bad line, an empty one is skipped.  -EINTR when interrupted.
 */
int agent_lines_each(const struct agent *a, struct agent_lines *it, struct agent_bad *bad,
		     agent_line_fn fn, void *ctx);
int agent_read_maps(const struct agent *a, int tgid, int tid, struct agent_map **maps,
		    size_t *nmaps);
void agent_free_maps(struct agent_map *maps, size_t nmaps);
int agent_add_identity(struct agent *a);
int agent_add_kernel(struct agent *a);
/* Decode "%XX" escapes in place; -EINVAL on a bad escape or a NUL. */
int agent_unescape(char *s);

/* agent-kmod.c: the vmctx_guest module's files (agent_kmod_ops); parsers for the tests */
int agent_kmod_parse_task_line(char *line, struct agent_task_row *t);
int agent_kmod_parse_event_line(char *line, struct agent_event *e);
int agent_kmod_parse_switch_line(char *line, struct agent_switch *s);

/* agent-bpf.c: the same table and events from BPF (agent_bpf_ops; HAVE_BPF builds only) */
/* True where the kernel has BTF, which the programs need (auto mode tries BPF then). */
bool agent_bpf_available(const struct agent *a);
/* "/" and @depth names leaf first, NUL-separated in @names, joined root first; NULL if bad. */
char *agent_bpf_join_path(const char *names, size_t size, unsigned int depth);

/* agent-clock.c */
/* A TSC/ns pair; returns the span of the two clock readings around the TSC. */
uint64_t agent_clock_pair(uint64_t *tsc, uint64_t *ns);
/* Keep a pair read over @span ns, if it is good and the first for a while. */
int agent_pairs_note(struct agent_pairs *p, uint64_t tsc, uint64_t ns, uint64_t span);
/* Read a pair now and note it. */
int agent_pairs_take(struct agent_pairs *p);

/* agent-tasks.c */
void agent_task_table_free(struct agent_task_table *t);
/* Free @n events a backend read and their array. */
void agent_events_free(struct agent_event *ev, size_t n);
void agent_tasks_free(struct agent_tasks *ts);
int agent_tasks_apply_event(struct agent_tasks *ts, const struct agent_event *e);
/* Bring the records in line with a table read at t->ns. */
int agent_tasks_apply_table(struct agent_tasks *ts, const struct agent_task_table *t);
/* Close records still open that the final table does not hold. */
void agent_tasks_close_missing(struct agent_tasks *ts, const struct agent_task_table *t);
/* The open record of @pid, or NULL. */
struct agent_task *agent_tasks_open_of(struct agent_tasks *ts, int pid);
/* Give @t the maps of a /proc read over [@from, @to], if they are its image's. */
bool agent_task_take_read(struct agent_task *t, struct agent_map *maps, size_t n, uint64_t from,
			  uint64_t to);
/* Drop records that ended before @ns. */
void agent_tasks_drop_before(struct agent_tasks *ts, uint64_t ns);

/* agent-tasks.c: the switch log */
/* Start the log of a window opening at @start, into @b. */
void agent_switch_log_init(struct agent_switch_log *l, struct vmctx_bundle *b, uint64_t start);
/*
 * Take @n records read from the rings before the guest's clock showed
 * @now: those up to @now go into the bundle, later ones wait.
 */
int agent_switch_log_take(struct agent_switch_log *l, const struct agent_switch *sw, size_t n,
			  uint64_t now);
/*
 * Read the backend's rings (a->ops->read_switches) into a->switches, as of
 * the guest's clock now; @final: the window ended at the last table's
 * time (a->table.ns), and the log is finished.
 */
int agent_switch_log_drain(struct agent *a, bool final);
/* The window ended at @end: take what waits, clip, and add every CPU's rest. */
int agent_switch_log_finish(struct agent_switch_log *l, uint64_t end);
void agent_switch_log_free(struct agent_switch_log *l);

/* agent-serve.c */
int agent_switch_store_add(struct agent_switch_store *st, const struct agent_switch *sw,
			   size_t n);
/* Forget what ended before @before, but each CPU's last switch before it. */
void agent_switch_store_prune(struct agent_switch_store *st, uint64_t before);
/* The bytes a task record holds: the record and its mappings. */
size_t agent_task_bytes(const struct agent_task *t);
/*
 * The time from which what serve keeps fits @max bytes (0: no bound):
 * the switch store's records and the ended tasks, newest first, live
 * tasks whatever they cost; @from when all fits, else the time that
 * leaves nine tenths of @max (a margin for the next prunes), never before
 * @from.
 */
uint64_t agent_budget_from(const struct agent_tasks *ts, const struct agent_switch_store *st,
			   uint64_t from, size_t max);
void agent_switch_store_free(struct agent_switch_store *st);
int agent_listen_parse(const char *spec, struct agent_listen *l);
/* A listening socket, nonblocking; an error said. */
int agent_listen_open(const struct agent *a, const struct agent_listen *l);
/* The next connection; -EAGAIN: none; -EPERM: not the host's (closed). */
int agent_listen_accept(const struct agent_listen *l, int lfd, unsigned int *peer);
/* Hand each "key = value" of @path to @set; errors said with file and line. */
int agent_config_read(const struct agent *a, const char *path, bool optional,
		      int (*set)(void *ctx, const char *key, const char *value), void *ctx);

/* agent-elf.c */
struct agent_elf_cache;
struct agent_elf_cache *agent_elf_cache_new(void);
void agent_elf_cache_free(struct agent_elf_cache *c);
/*
 * *object is the bundle object for @path (read under the agent's root),
 * added with its symbols on first sight, or -1 when it is no ELF file.
 * *bias is the load bias of a mapping of it at @start, file offset @pgoff.
 */
int agent_elf_object_for_map(struct agent *a, const char *path, uint64_t start,
			     uint64_t pgoff, unsigned int prot, uint64_t *bias, int *object);
/*
 * Load bias of a mapping at @start of file offset @pgoff, from the PT_LOAD
 * segments (p_offset, p_vaddr, p_filesz, p_flags) of its file: the one
 * holding @pgoff whose flags best fit the mapping's @prot (PF_X, PF_W,
 * PF_R bits).  -ENOENT, and *bias = start - pgoff, without any segment at
 * or below @pgoff.
 */
int agent_elf_bias_for(const uint64_t (*loads)[4], size_t nloads, uint64_t start,
		       uint64_t pgoff, unsigned int prot, uint64_t *bias);

#endif
