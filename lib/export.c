// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Exports: a session's counts as profiles that other tools read.  One pass
 * over the aggregation makes rows (a count, a stack of up to three frames
 * and pprof's labels), and adds each to the export's two profiles
 * (export.h): the profiles escape every string once, sum identical rows,
 * sort by text so that the output is the same from run to run, and write
 * the formats (profile.c).
 *
 * What goes in: each vCPU's virtual time (AGG_VCPU: guest functions,
 * [steal], [idle], [lost]) under its VM, and the host's own work (AGG_HOST
 * rows other than guest code) under "[host]".  Guest code in the physical
 * view is left out, since its vCPU's time counts it already.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "export.h"
#include "labels.h"
#include "session.h"

/* The module, and so the pprof mapping, of vmctx's own frames ([steal], [idle], [lost]). */
#define VMCTX_MODULE	"[vmctx]"

/* Labels of a row, in pprof's order; each names a string. */
enum export_label {
	XL_VM,			/* the VM's name, "[host]" for host work */
	XL_VM_PID,		/* its QEMU process's host tgid */
	XL_VCPU,
	XL_CLASS,		/* guest_os, guest_user, steal, idle, lost, host_os, ... */
	XL_GUEST_COMM,		/* the guest process's label, or "[guest kernel]", "[steal]", ... */
	XL_GUEST_PID,
	XL_MAX,
};

/* Label keys, in enum export_label's order. */
static const char *const label_names[XL_MAX] = {
	[XL_VM] = "vm",
	[XL_VM_PID] = "vm_pid",
	[XL_VCPU] = "vcpu",
	[XL_CLASS] = "class",
	[XL_GUEST_COMM] = "guest_comm",
	[XL_GUEST_PID] = "guest_pid",
};

static const char *const vcpu_class[VMCTX_CLASS_MAX] = {
	[VMCTX_CLASS_OS] = "guest_os",
	[VMCTX_CLASS_USER] = "guest_user",
	[VMCTX_CLASS_STEAL] = "steal",
	[VMCTX_CLASS_IDLE] = "idle",
	[VMCTX_CLASS_LOST] = "lost",
};

static const char *const host_class[VMCTX_CLASS_MAX] = {
	[VMCTX_CLASS_OS] = "host_os",
	[VMCTX_CLASS_USER] = "host_user",
	[VMCTX_CLASS_IDLE] = "host_idle",
	[VMCTX_CLASS_LOST] = "host_lost",
};

#define ROW_MAX_FRAMES	3

/*
 * A row being built: raw strings, which the profiles escape.  The leaf
 * frame is the function, in the module @module: for guest objects the
 * module with the VM's "(VMk)", so that a guest's vmlinux is not the
 * host's.  Strings made here are the row's to free.
 */
struct row {
	uint64_t count;
	const char *frame[ROW_MAX_FRAMES];	/* root first */
	size_t nframes;
	const char *module;
	const char *label[XL_MAX];		/* NULL: none */
	char num[XL_MAX][24];			/* numeric labels, printed */
	char *made[ROW_MAX_FRAMES + 1];
	size_t nmade;
	int err;
};

/* A printf-made string, the row's; NULL (and the row failed) without memory. */
static const char *rowf(struct row *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static const char *rowf(struct row *r, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		r->err = -ENOMEM;
		return NULL;
	}
	r->made[r->nmade++] = s;
	return s;
}

static void frame(struct row *r, const char *raw)
{
	r->frame[r->nframes++] = raw;
}

static void label(struct row *r, enum export_label l, const char *raw)
{
	r->label[l] = raw;
}

/* Numbers are string labels, as -tagroot and Pyroscope want them. */
static void label_int(struct row *r, enum export_label l, long v)
{
	snprintf(r->num[l], sizeof(r->num[l]), "%ld", v);
	r->label[l] = r->num[l];
}

/* The module of a guest function, in VM @vm. */
static void guest_module(struct row *r, const struct vmctx_vm *vm, const char *module)
{
	r->module = rowf(r, "%s %s", module, vm->tag);
}

/* vmctx's own frames: "[steal]", "[idle]" and "[lost]" stand in for the process too. */
static void pseudo(struct row *r, const char *group)
{
	frame(r, group);
	label(r, XL_GUEST_COMM, group);
	r->module = VMCTX_MODULE;
}

/*
 * A row of a vCPU's virtual time, under "name (VMk)": the process (or
 * "[guest kernel]") and the function, "[steal]" and what ran instead,
 * "[idle]" or "[lost]".
 */
static void vcpu_row(struct row *r, const struct vmctx_session *s, const struct agg_key *k)
{
	const struct vmctx_vm *vm = &s->vms[k->vm_idx];
	const struct vmctx_bundle *b = vm->bundle;

	frame(r, rowf(r, "%s %s", vm->name, vm->tag));
	label(r, XL_VM, vm->name);
	label_int(r, XL_VM_PID, vm->tgid);
	label_int(r, XL_VCPU, k->vcpu);
	label(r, XL_CLASS, vcpu_class[k->cls]);
	switch (k->cls) {
	case VMCTX_CLASS_OS:
		frame(r, "[guest kernel]");
		label(r, XL_GUEST_COMM, "[guest kernel]");
		frame(r, k->function ? k->function : "[unknown]");
		guest_module(r, vm, k->module ? k->module : "vmlinux");
		return;
	case VMCTX_CLASS_USER:
		if (b && k->by >= 0 && (size_t)k->by < b->ntasks) {
			const struct vmctx_task *t = &b->tasks[k->by];

			frame(r, t->label);
			label(r, XL_GUEST_COMM, t->label);
			label_int(r, XL_GUEST_PID, t->tgid);
		} else {
			frame(r, "[unknown]");
			label(r, XL_GUEST_COMM, "[unknown]");
		}
		frame(r, k->function ? k->function : "[unknown]");
		guest_module(r, vm, k->module ? k->module : "[unknown]");
		return;
	case VMCTX_CLASS_STEAL:
		pseudo(r, "[steal]");
		/* as the tables name it */
		frame(r, rowf(r, "[steal] %s", labels_steal_by(s, k)));
		return;
	case VMCTX_CLASS_IDLE:
		pseudo(r, "[idle]");
		return;
	default:
		pseudo(r, "[lost]");
		return;
	}
}

/* A row of the host's own work: its function under "[host]". */
static void host_row(struct row *r, const struct agg_key *k)
{
	const char *function = k->function, *module = k->module;

	frame(r, "[host]");
	label(r, XL_VM, "[host]");
	label(r, XL_CLASS, host_class[k->cls]);
	label(r, XL_GUEST_COMM, "[host]");
	if (k->cls == VMCTX_CLASS_LOST) {
		function = "[lost]";
		module = VMCTX_MODULE;
	} else if (k->cls == VMCTX_CLASS_IDLE) {
		labels_host_idle(k, &function, &module);
	}
	frame(r, function ? function : "[unknown]");
	r->module = module ? module : "[unknown]";
}

static int64_t clamp(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/*
 * Row @r into both profiles: its frames and its count into the folded
 * one, its leaf, labels, count and time (when the tick is known) into
 * pprof's.
 */
static int add_profiles(struct vmctx_export *x, const struct row *r, uint64_t tick_ns)
{
	const struct vmctx_frame leaf = { .function = r->frame[r->nframes - 1], .module = r->module };
	struct vmctx_frame stack[ROW_MAX_FRAMES] = { { 0 } };
	struct vmctx_label labels[XL_MAX];
	int64_t v[2] = { clamp(r->count), INT64_MAX };
	size_t i, n = 0;
	int err;

	for (i = 0; i < r->nframes; i++)
		stack[i].function = r->frame[r->nframes - 1 - i];
	err = vmctx_profile_add(x->folded, stack, r->nframes, NULL, 0, v);
	if (err)
		return err;
	for (i = 0; i < XL_MAX; i++)
		if (r->label[i])
			labels[n++] = (struct vmctx_label){ .key = label_names[i], .str = r->label[i] };
	if (tick_ns && r->count <= INT64_MAX / tick_ns)
		v[1] = r->count * tick_ns;
	return vmctx_profile_add(x->pprof, &leaf, 1, labels, n, v);
}

static int add_row(struct vmctx_export *x, const struct vmctx_session *s,
		   const struct agg_entry *e, bool host)
{
	const struct agg_key *k = &e->key;
	struct row r;
	size_t i;
	int err;

	if (k->scope == AGG_STEAL_EXIT || k->cls >= VMCTX_CLASS_MAX)
		return 0;
	if (k->scope == AGG_HOST && (k->cls == VMCTX_CLASS_VM || !host))
		return 0;
	if (k->scope == AGG_VCPU && (k->vm_idx < 0 || (size_t)k->vm_idx >= s->nvms))
		return 0;
	memset(&r, 0, sizeof(r));
	r.count = e->count;
	if (k->scope == AGG_VCPU)
		vcpu_row(&r, s, k);
	else
		host_row(&r, k);
	err = r.err ? r.err : add_profiles(x, &r, s->tl.tick_ns);
	for (i = 0; i < r.nmade; i++)
		free(r.made[i]);
	return err;
}

/* Steal by the owners each vCPU names, which the vCPU counts itself (as the tables do). */
static int add_vcpu_steal(struct vmctx_export *x, const struct vmctx_session *s)
{
	size_t i;
	uint32_t j;
	int err;

	for (i = 0; i < s->tl.nvcpus; i++) {
		const struct vmctx_vcpu *v = &s->tl.vcpus[i];
		struct agg_entry e;

		memset(&e, 0, sizeof(e));
		e.key.scope = AGG_VCPU;
		e.key.cls = VMCTX_CLASS_STEAL;
		e.key.vm_idx = v->vm_idx;
		e.key.vcpu = v->id;
		for (j = 0; j < v->nsteal_by; j++) {
			if (!v->steal_n[j])
				continue;
			e.key.by = v->steal_by[j];
			e.count = v->steal_n[j];
			err = add_row(x, s, &e, false);
			if (err)
				return err;
		}
	}
	return 0;
}

static int add_rows(struct vmctx_export *x, const struct vmctx_session *s, bool host)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < s->tl.agg.size; i++)
		if (s->tl.agg.e[i].count)
			err = add_row(x, s, &s->tl.agg.e[i], host);
	return err ? err : add_vcpu_steal(x, s);
}

/* What the (VMk) of the frames stand for, and what a sample is worth: pprof's comments. */
static char **comments(const struct vmctx_session *s, size_t *n)
{
	char **c = calloc(s->nvms + 1, sizeof(*c));
	size_t i;

	*n = 0;
	if (!c)
		return NULL;
	for (i = 0; i < s->nvms; i++)
		if (asprintf(&c[(*n)++], "VM%d: %s, QEMU pid %d", s->vms[i].nr, s->vms[i].name,
			     s->vms[i].tgid) < 0)
			goto fail;
	if (s->tl.tick_ns && asprintf(&c[(*n)++], "a sample is a tick of %" PRIu64 " ns",
				   s->tl.tick_ns) < 0)
		goto fail;
	return c;
fail:
	/* asprintf() leaves the failed one undefined */
	c[--*n] = NULL;
	for (i = 0; i < *n; i++)
		free(c[i]);
	free(c);
	return NULL;
}

/*
 * The two profiles: pprof's has the sample counts and, when the tick is
 * known, their time (the names of a Go CPU profile), with the tick as the
 * period; the folded one has the counts alone.
 */
static int new_profiles(struct vmctx_export *x, const struct vmctx_session *s,
			uint64_t time_ns, uint64_t duration_ns)
{
	VMCTX_OPTS(vmctx_profile_opts, o, .nvalues = s->tl.tick_ns ? 2 : 1,
		   .value_type = { "samples", "cpu" }, .value_unit = { "count", "nanoseconds" },
		   .time_ns = time_ns, .duration_ns = duration_ns, .period = clamp(s->tl.tick_ns));
	char **c = comments(s, &o.ncomments);
	size_t i;

	if (!c)
		return -ENOMEM;
	o.comments = (const char *const *)c;
	x->pprof = vmctx_profile_new(&o);
	if (x->pprof)
		x->folded = vmctx_profile_new(NULL);
	for (i = 0; i < o.ncomments; i++)
		free(c[i]);
	free(c);
	return x->pprof && x->folded ? 0 : -errno;
}

struct vmctx_export *vmctx_export_new(const struct vmctx_session *s,
				      const struct vmctx_export_opts *opts)
{
	struct vmctx_export_opts o = {
		.sz = sizeof(o),
		.flags = OPTS_GET(opts, flags, 0),
		.time_ns = OPTS_GET(opts, time_ns, 0),
		.duration_ns = OPTS_GET(opts, duration_ns, 0),
	};
	struct vmctx_export *x;
	int err;

	if (!s || !OPTS_VALID(opts, struct vmctx_export_opts, flags) ||
	    o.flags & ~VMCTX_EXPORT_NO_HOST || s->tl.agg.off) {
		errno = EINVAL;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	if (!o.duration_ns && s->started)
		o.duration_ns = (s->finished ? s->end_time : s->tl.last_time) - s->first_time;
	err = new_profiles(x, s, o.time_ns, o.duration_ns);
	if (!err)
		err = add_rows(x, s, !(o.flags & VMCTX_EXPORT_NO_HOST));
	if (err) {
		vmctx_export_free(x);
		errno = -err;
		return NULL;
	}
	return x;
}

void vmctx_export_free(struct vmctx_export *x)
{
	if (!x)
		return;
	vmctx_profile_free(x->pprof);
	vmctx_profile_free(x->folded);
	free(x);
}

static const struct vmctx_profile *profile_of(const struct vmctx_export *x,
					      enum vmctx_export_format format)
{
	return format == VMCTX_EXPORT_FOLDED ? x->folded : x->pprof;
}

int vmctx_export_write_mem(const struct vmctx_export *x, enum vmctx_export_format format,
			   void **buf, size_t *len)
{
	if (!x)
		return -EINVAL;
	return vmctx_profile_write_mem(profile_of(x, format), format, buf, len);
}

int vmctx_export_write_fd(const struct vmctx_export *x, enum vmctx_export_format format, int fd)
{
	if (!x)
		return -EINVAL;
	return vmctx_profile_write_fd(profile_of(x, format), format, fd);
}
