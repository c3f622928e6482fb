// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Labels: the names of an aggregation key's row, as every output spells
 * them: the tables' Function and Module texts, the stream's ticks, and
 * the export's frames.  "[steal] (on vcpuN)", "[idle] (halt_exit)", a
 * guest process's "comm:dso" and a VM's "(VMk)" are made here once.
 */
#include <stdbool.h>
#include <stdio.h>

#include "bundle.h"
#include "labels.h"
#include "session.h"

const char *labels_steal_by(const struct vmctx_session *s, const struct agg_key *k)
{
	const struct vmctx_vcpu *w;

	if (k->by == OWNER_OTHERS)
		return "(others)";
	if (k->by <= OWNER_OUTSIDE || (size_t)k->by > s->tl.nvcpus)
		return "(outside)";
	w = &s->tl.vcpus[k->by - 1];
	if (w->vm_idx != k->vm_idx)
		return s->vms[w->vm_idx].tag;
	return w->on_label;
}

void labels_host_idle(const struct agg_key *k, const char **function, const char **module)
{
	/* the host's idle task is kernel code, as perf names it */
	*function = k->function ? k->function : "[idle]";
	*module = k->module ? k->module : "[kernel.kallsyms]";
}

/* Is @dso the task's executable?  The executable is its lowest mapping. */
static bool is_exe(const struct vmctx_bundle *b, int task, const char *dso)
{
	const struct vmctx_task *t = &b->tasks[b->tasks[task].maps_from];

	return t->nmaps && t->maps[0].base == dso;
}

static void guest_labels(const struct vmctx_session *s, const struct agg_key *k, int cls,
			 const char **function, const char **module, char *buf, size_t len)
{
	const struct vmctx_bundle *b = s->vms[k->vm_idx].bundle;

	*function = k->function ? k->function : "[unknown]";
	if (cls == VMCTX_CLASS_OS) {
		*module = k->module ? k->module : "vmlinux";
		return;
	}
	if (!b || k->by < 0) {
		*module = "[unknown]";
		return;
	}
	if (!k->module || is_exe(b, k->by, k->module)) {
		*module = b->tasks[k->by].label;
		return;
	}
	snprintf(buf, len, "%s:%s", b->tasks[k->by].label, k->module);
	*module = buf;
}

void labels_of(const struct vmctx_session *s, const struct agg_key *k, bool unified,
	       const char **function, const char **module, char *buf, size_t len)
{
	const struct vmctx_vm *vm = k->vm_idx >= 0 ? &s->vms[k->vm_idx] : NULL;

	if (k->scope == AGG_HOST) {
		switch (k->cls) {
		case VMCTX_CLASS_VM:
			if (unified) {
				char inner[192];
				const char *m;

				guest_labels(s, k, k->sub, function, &m, inner, sizeof(inner));
				snprintf(buf, len, "%s %s", m, vm->tag);
				*module = buf;
				return;
			}
			*function = vm->label;
			*module = vm->tag;
			return;
		case VMCTX_CLASS_IDLE:
			labels_host_idle(k, function, module);
			return;
		case VMCTX_CLASS_LOST:
			*function = "[lost]";
			*module = "";
			return;
		default:
			if (!unified && vm) {
				*function = vm->label;
				*module = vm->tag;
				return;
			}
			*function = k->function ? k->function : "[unknown]";
			*module = k->module ? k->module : "[unknown]";
			/* KVM's work for a vCPU, in the unified view: the VM's too */
			if (vm) {
				snprintf(buf, len, "%s %s", *module, vm->tag);
				*module = buf;
			}
			return;
		}
	}
	switch (k->cls) {
	case VMCTX_CLASS_STEAL:
		*function = "[steal]";
		*module = labels_steal_by(s, k);
		return;
	case VMCTX_CLASS_IDLE:
		*function = "[idle]";
		*module = "(halt_exit)";
		return;
	case VMCTX_CLASS_LOST:
		*function = "[lost]";
		*module = "";
		return;
	default:
		guest_labels(s, k, k->cls, function, module, buf, len);
		return;
	}
}
