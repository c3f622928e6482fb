/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * The bundle in memory (bundle.c builds it and keeps the per-record
 * rules, switch-log.c holds its switch log, bundle-index.c indexes it,
 * bundle-seal.c seals it, bundle-read.c and bundle-write.c are its file
 * format): struct bodies, the format's limits, and the calls between
 * these files.
 */
#ifndef VMCTX_BUNDLE_H
#define VMCTX_BUNDLE_H

#include <stdbool.h>
#include <stdint.h>

#include "key-index.h"
#include "switch-log.h"
#include "util.h"

/* A symbol covers [start, end); name is owned by the symbol's container. */
struct vmctx_sym {
	uint64_t start;
	uint64_t end;
	char *name;
};

/* One of an object's unwind tables: a section's bytes and address. */
struct vmctx_unwind {
	uint64_t vaddr;
	unsigned char *data;	/* NULL: none */
	size_t size;
	size_t fill;		/* bytes read so far (the reader's) */
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
	struct vmctx_unwind unwind[VMCTX_UNWIND_KINDS];
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
	size_t maps_cap;	/* 0 with maps: they are in the bundle's map_block */
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

	struct switch_log switches;	/* who ran on each guest CPU, and when */

	struct vmctx_task *tasks;
	size_t ntasks, tasks_cap;
	struct vmctx_object *objects;
	size_t nobjects, objects_cap;
	struct vmctx_kmod *kmods;
	size_t nkmods, kmods_cap;
	struct util_pool names;		/* every symbol's, ksym's and map's name */
	struct vmctx_map *map_block;	/* the reader's: tasks' maps, each task's together */
	size_t map_block_used, map_block_cap;
	struct vmctx_ksym *ksyms;	/* sorted by addr once sealed */
	size_t nksyms, ksyms_cap;
	struct util_name_index kmod_names, build_ids;	/* the builder's */
	size_t maps_total;		/* of all tasks */
	size_t syms_total;		/* of all objects */
	size_t unwind_total;		/* bytes of all objects' unwind tables */

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
#define BUNDLE_VERSION		1		/* without a switch log, for older readers */
#define BUNDLE_VERSION_LOG	2		/* with one: switch and gap records */
#define BUNDLE_MAX_TASKS	(1u << 22)	/* PID_MAX_LIMIT */
#define BUNDLE_MAX_OBJECTS	(1u << 20)
#define BUNDLE_MAX_MAPS		(1u << 24)	/* all tasks together */
#define BUNDLE_MAX_SYMS		(1u << 24)	/* all objects together */
#define BUNDLE_MAX_KMODS	(1u << 16)
#define BUNDLE_MAX_KSYMS	(1u << 24)
#define BUNDLE_MAX_PAIRS	(1u << 20)	/* TSC/ns pairs */
/* the switch log's: SWITCH_LOG_MAX_CPUS, _SWITCHES and _GAPS (switch-log.h) */
#define BUNDLE_MAX_SHORT	256		/* hostname, release, boot id, comm, module */
#define BUNDLE_MAX_PATH		4096
#define BUNDLE_MAX_SYMNAME	8192
#define BUNDLE_MAX_BUILD_ID	128		/* hex digits */
#define BUNDLE_MAX_LINE		65536		/* bytes, newline included */
#define BUNDLE_MAX_UNWIND	(1u << 24)	/* bytes of one unwind table */
#define BUNDLE_MAX_UNWIND_ALL	(1u << 25)	/* of all together */
#define BUNDLE_UNWIND_CHUNK	45000		/* bytes an x-unwind line holds: 60,000 of base64, no padding */
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
 * bundle-unwind.c: the objects' unwind tables in the file.  Kinds by name;
 * base64 of @n bytes into @out (room for 4 * ceil(@n / 3)), its length;
 * for the reader, one x-unwind chunk of table @kind of object @obj at
 * byte @off (0 for a table's first, which sizes it; each next where the
 * last ended), and whether every table begun was read to its end; and
 * freeing an object's tables.
 */
__hidden const char *bundle_unwind_kind_name(int kind);
__hidden int bundle_unwind_kind(const char *name);
__hidden size_t bundle_unwind_encode(const unsigned char *in, size_t n, char *out);
__hidden int bundle_unwind_put(struct vmctx_bundle *b, int obj, int kind, uint64_t vaddr,
			       uint64_t size, uint64_t off, const char *data);
__hidden bool bundle_unwind_whole(const struct vmctx_bundle *b);
__hidden void bundle_unwind_free(struct vmctx_object *o);

/*
 * bundle-index.c: build the index of a bundle that bundle_seal() checked
 * and sorted; then, the normalised root at position @pos of by_root, and
 * the first position whose root is >= @root (ntasks if none).
 */
__hidden int bundle_index(struct vmctx_bundle *b);
__hidden uint64_t bundle_root_at(const struct vmctx_bundle *b, size_t pos);
__hidden size_t bundle_root_first(const struct vmctx_bundle *b, uint64_t root);

/*
 * resolve.c: vmctx_bundle_resolve_user() with the caller's hint, the map
 * and symbol of its last answer for the same task, checked before any
 * search.  @h's pointers are NULL or of @task's maps and the symbols of
 * that map's object in @b: the caller clears them when the task or the
 * bundle changes.  @b is sealed (the caller checked it once: a session,
 * when the bundle was set).
 */
struct resolve_hint {
	const struct vmctx_map *map;
	const struct vmctx_sym *sym;
};

__hidden int bundle_resolve_user(const struct vmctx_bundle *b, int task, uint64_t ip,
				 const char **sym, const char **dso, struct resolve_hint *h);

#endif /* VMCTX_BUNDLE_H */
