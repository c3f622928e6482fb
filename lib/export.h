/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * Exports (export.c makes the rows, export-pprof.c writes pprof): the
 * rows, shared by the two.
 */
#ifndef VMCTX_EXPORT_H
#define VMCTX_EXPORT_H

#include <stdint.h>
#include <stddef.h>

#include "util.h"

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

#endif /* VMCTX_EXPORT_H */
