/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * A guest's switch log (switch-log.c): which task each guest CPU started
 * running and when, and where the agent lost switches.  The bundle holds
 * one; bundle.c, bundle-seal.c, bundle-read.c and bundle-write.c reach it
 * only through this header, resolve.c looks it up.
 */
#ifndef VMCTX_SWITCH_LOG_H
#define VMCTX_SWITCH_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* What a log may hold: the builder and the reader refuse more (VMCTX_E_LIMIT). */
#define SWITCH_LOG_MAX_CPUS	8192		/* x86's NR_CPUS cap */
#define SWITCH_LOG_MAX_SWITCHES	(1u << 23)	/* 16 bytes each: 128 MiB */
#define SWITCH_LOG_MAX_GAPS	(1u << 20)

/* A CPU started running task @task at guest time @ns: 16 bytes. */
struct switch_rec {
	uint64_t ns;
	uint32_t task;		/* index into log->tasks */
	uint32_t cpu;
};

/* What ran: each distinct task once, however often it ran. */
struct switch_task {
	int32_t pid, tgid;
	uint32_t comm;		/* index into log->comms */
	uint32_t kind;		/* enum vmctx_task_kind */
};

/* Switches of @cpu in [start, end] were lost. */
struct switch_gap {
	uint64_t start, end;
	uint32_t cpu;
};

struct switch_log {
	struct switch_rec *recs;	/* sorted by (cpu, ns) once sealed, ties as added */
	size_t n, cap;
	struct switch_gap *gaps;	/* sorted by (cpu, start), apart, once sealed */
	size_t ngaps, gaps_cap;
	struct switch_task *tasks;
	size_t ntasks, tasks_cap;
	char **comms;			/* each comm once */
	size_t ncomms, comms_cap;
	struct util_hash_index task_index, comm_index;
	uint64_t key[2];		/* the indices' SipHash key, secret */
	bool keyed;

	/* set by switch_log_seal(): CPU c's records are [rec_first[c], rec_first[c + 1]) */
	uint32_t *rec_first, *gap_first;
	uint32_t ncpus;			/* the highest CPU logged, + 1 */
};

/* The kind's word in the file ("task", "kthread", "idle"), or NULL. */
__hidden const char *switch_log_kind_word(unsigned int kind);
/* The kind a word names, or -1. */
__hidden int switch_log_kind_of(const char *word);
/* pid and tgid fit an int, and pid 0 is the idle task, and only it, with tgid 0. */
__hidden bool switch_log_task_valid(uint64_t pid, uint64_t tgid, unsigned int kind);

/*
 * Append a switch (its task checked with switch_log_task_valid(), @comm at
 * most BUNDLE_MAX_SHORT bytes) or a gap (start <= end), in any order:
 * 0; -VMCTX_E_LIMIT for a CPU or a count beyond the caps; -ENOMEM.
 */
__hidden int switch_log_add(struct switch_log *l, unsigned int cpu, uint64_t ns, int pid,
			     int tgid, unsigned int kind, const char *comm);
__hidden int switch_log_add_gap(struct switch_log *l, unsigned int cpu, uint64_t start,
				 uint64_t end);

/*
 * Check the whole log, sort it (@strict, the reader's: it must come sorted)
 * and index it by CPU.  @window: the bundle's, or NULL.  0;
 * -VMCTX_E_RANGE (logged) for records out of order, overlapping gaps, or a
 * time outside the window; -ENOMEM.
 */
__hidden int switch_log_seal(struct switch_log *l, bool strict, const uint64_t *window);

/*
 * In a sealed log, the record of the switch that put the task running on
 * @cpu at @ns: 0 and *@rec; -VMCTX_E_GAP when switches were lost between
 * it (or the start of the log) and @ns; -ENOENT before @cpu's first switch
 * or for a CPU without one.  O(log n).  But for -VMCTX_E_GAP, @iv (may
 * be NULL), a range of times [iv[0], iv[1]), is narrowed to where the
 * answer is the same: from the switch to @cpu's next switch or gap.
 */
__hidden int switch_log_find(const struct switch_log *l, unsigned int cpu, uint64_t ns,
			      const struct switch_rec **rec, uint64_t *iv);

__hidden void switch_log_free(struct switch_log *l);

#endif /* VMCTX_SWITCH_LOG_H */
