/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * The state of a session (session.c): its VMs, and the timeline over their
 * vCPUs and the pCPUs, which the labels, tables and exports read.
 */
#ifndef VMCTX_SESSION_H
#define VMCTX_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aggregate.h"
#include "clock.h"
#include "timeline.h"
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

struct vmctx_session {
	struct timeline tl;		/* the vCPUs, pCPUs and counts (timeline.h) */
	uint32_t max_vcpus;
	struct vmctx_vm *vms;
	size_t nvms, vms_cap;
	struct util_id_index vm_index;	/* by tgid: position in vms */
	struct util_id_index vcpu_index; /* by vcpu_key(): position in tl.vcpus */
	vmctx_stream_fn stream;
	void *stream_ctx;
	uint64_t first_time;		/* of the first sample, once started */
	uint64_t last_weight;		/* vmctx_session_sample_weight() */
	uint64_t end_time;		/* once finished */
	bool started;
	bool finished;
};

/* session.c: the VM a vm_tgid names (an index into s->vms), or -ENOENT. */
__hidden int session_vm_idx(const struct vmctx_session *s, int vm_tgid);

#endif /* VMCTX_SESSION_H */
