// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Exports: a session's counts as profiles that other tools read.  One pass
 * over the aggregation makes rows (a count, a stack of up to three frames
 * and pprof's labels), with every string escaped once into one table; the
 * table is sorted and merged, then the rows, identical ones merged, so the
 * output is the same from run to run.  The formats are written from the rows:
 * folded stacks here, pprof in export-pprof.c.
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
#include <unistd.h>
#include <zlib.h>

#include "bundle.h"
#include "export.h"
#include "labels.h"
#include "session.h"

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

/* Words of pprof's value types, interned up front (see export-pprof.c's word()). */
static const char *const pprof_words[] = { "samples", "count", "cpu", "nanoseconds" };

/*
 * Add @raw, escaped, to the string table; its index, or -ENOMEM.  Every
 * occurrence gets its own index until finish_strings() sorts the table and
 * merges equal strings: unlike a hash of names a guest picks, a sort stays
 * O(n log n) whatever the names are.
 */
static int64_t intern(struct vmctx_export *x, const char *raw)
{
	int n = vmctx_escape(NULL, 0, raw);
	char *esc;

	if (n < 0)
		return n;
	if (x->nstrs >= UINT32_MAX ||
	    vmctx_grow((void **)&x->strs, &x->strs_cap, x->nstrs + 1, sizeof(*x->strs)))
		return -ENOMEM;
	esc = malloc((size_t)n + 1);
	if (!esc)
		return -ENOMEM;
	vmctx_escape(esc, (size_t)n + 1, raw);
	x->strs[x->nstrs] = esc;
	return x->nstrs++;
}

/* Intern a printf-made string. */
static int64_t internf(struct vmctx_export *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int64_t internf(struct vmctx_export *x, const char *fmt, ...)
{
	char *raw;
	va_list ap;
	int64_t i;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&raw, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	i = intern(x, raw);
	free(raw);
	return i;
}

/* A row being built; strings are interned as they are set. */
struct row_builder {
	struct vmctx_export *x;
	struct export_row r;
	int err;
};

static void set(struct row_builder *rb, uint32_t *field, int64_t i)
{
	if (i < 0 && !rb->err)
		rb->err = (int)i;
	*field = i < 0 ? 0 : (uint32_t)i;
}

static void frame(struct row_builder *rb, const char *raw)
{
	set(rb, &rb->r.frame[rb->r.nframes++], intern(rb->x, raw));
}

static void label(struct row_builder *rb, enum export_label l, const char *raw)
{
	set(rb, &rb->r.label[l], intern(rb->x, raw));
}

static void label_int(struct row_builder *rb, enum export_label l, long v)
{
	set(rb, &rb->r.label[l], internf(rb->x, "%ld", v));
}

/* The "[steal] (...)" frame of a steal row, as the tables name it. */
static int64_t steal_frame(struct vmctx_export *x, const struct vmctx_session *s,
			   const struct agg_key *k)
{
	char buf[64];

	return internf(x, "[steal] %s", labels_steal_by(s, k, buf, sizeof(buf)));
}

/* The module of a guest function, and its mapping: the module in VM @vm. */
static void guest_module(struct row_builder *rb, const struct vmctx_vm *vm, const char *module)
{
	set(rb, &rb->r.module, intern(rb->x, module));
	set(rb, &rb->r.mapping, internf(rb->x, "%s %s", module, vm->tag));
}

/* vmctx's own frames: "[steal]", "[idle]" and "[lost]" stand in for the process too. */
static void pseudo(struct row_builder *rb, const char *group)
{
	frame(rb, group);
	label(rb, XL_GUEST_COMM, group);
	set(rb, &rb->r.module, intern(rb->x, EXPORT_VMCTX_MAPPING));
	rb->r.mapping = rb->r.module;
}

/*
 * A row of a vCPU's virtual time, under "name (VMk)": the process (or
 * "[guest kernel]") and the function, "[steal]" and what ran instead,
 * "[idle]" or "[lost]".
 */
static void vcpu_row(struct row_builder *rb, const struct vmctx_session *s,
		     const struct agg_key *k)
{
	const struct vmctx_vm *vm = &s->vms[k->vm_idx];
	const struct vmctx_bundle *b = vm->bundle;
	struct export_row *r = &rb->r;

	set(rb, &r->frame[r->nframes++], internf(rb->x, "%s %s", vm->name, vm->tag));
	label(rb, XL_VM, vm->name);
	label_int(rb, XL_VM_PID, vm->tgid);
	label_int(rb, XL_VCPU, k->vcpu);
	label(rb, XL_CLASS, vcpu_class[k->cls]);
	switch (k->cls) {
	case VMCTX_CLASS_OS:
		frame(rb, "[guest kernel]");
		label(rb, XL_GUEST_COMM, "[guest kernel]");
		frame(rb, k->function ? k->function : "[unknown]");
		guest_module(rb, vm, k->module ? k->module : "vmlinux");
		return;
	case VMCTX_CLASS_USER:
		if (b && k->by >= 0 && (size_t)k->by < b->ntasks) {
			const struct vmctx_task *t = &b->tasks[k->by];

			frame(rb, t->label);
			label(rb, XL_GUEST_COMM, t->label);
			label_int(rb, XL_GUEST_PID, t->tgid);
		} else {
			frame(rb, "[unknown]");
			label(rb, XL_GUEST_COMM, "[unknown]");
		}
		frame(rb, k->function ? k->function : "[unknown]");
		guest_module(rb, vm, k->module ? k->module : "[unknown]");
		return;
	case VMCTX_CLASS_STEAL:
		pseudo(rb, "[steal]");
		set(rb, &r->frame[r->nframes++], steal_frame(rb->x, s, k));
		return;
	case VMCTX_CLASS_IDLE:
		pseudo(rb, "[idle]");
		return;
	default:
		pseudo(rb, "[lost]");
		return;
	}
}

/* A row of the host's own work: its function under "[host]". */
static void host_row(struct row_builder *rb, const struct agg_key *k)
{
	const char *function = k->function, *module = k->module;

	frame(rb, "[host]");
	label(rb, XL_VM, "[host]");
	label(rb, XL_CLASS, host_class[k->cls]);
	label(rb, XL_GUEST_COMM, "[host]");
	if (k->cls == VMCTX_CLASS_LOST) {
		function = "[lost]";
		module = EXPORT_VMCTX_MAPPING;
	} else if (k->cls == VMCTX_CLASS_IDLE) {
		labels_host_idle(k, &function, &module);
	}
	frame(rb, function ? function : "[unknown]");
	set(rb, &rb->r.module, intern(rb->x, module ? module : "[unknown]"));
	rb->r.mapping = rb->r.module;
}

static int add_row(struct vmctx_export *x, const struct vmctx_session *s,
		   const struct agg_entry *e, bool host);

/* Steal by the owners each vCPU names, which the vCPU counts itself (as the tables do). */
static int add_vcpu_steal(struct vmctx_export *x, const struct vmctx_session *s)
{
	size_t i;
	uint32_t j;
	int err;

	for (i = 0; i < s->nvcpus; i++) {
		const struct vmctx_vcpu *v = &s->vcpus[i];
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

static int add_row(struct vmctx_export *x, const struct vmctx_session *s,
		   const struct agg_entry *e, bool host)
{
	const struct agg_key *k = &e->key;
	struct row_builder rb = { .x = x };

	if (k->scope == AGG_STEAL_EXIT || k->cls >= VMCTX_CLASS_MAX)
		return 0;
	if (k->scope == AGG_HOST && (k->cls == VMCTX_CLASS_VM || !host))
		return 0;
	if (k->scope == AGG_VCPU && (k->vm_idx < 0 || (size_t)k->vm_idx >= s->nvms))
		return 0;
	rb.r.count = e->count;
	if (k->scope == AGG_VCPU)
		vcpu_row(&rb, s, k);
	else
		host_row(&rb, k);
	if (rb.err)
		return rb.err;
	if (vmctx_grow((void **)&x->rows, &x->rows_cap, x->nrows + 1, sizeof(*x->rows)))
		return -ENOMEM;
	x->rows[x->nrows++] = rb.r;
	return 0;
}

static int cmp_id(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

/*
 * Order rows by their texts, frames first, then labels, module and
 * mapping: once finish_strings() has run, string indices are in text
 * order, so comparing them is comparing the texts.
 */
static int cmp_row(const void *a, const void *b)
{
	const struct export_row *p = a, *q = b;
	int c, i;

	for (i = 0; i < EXPORT_MAX_FRAMES; i++)
		if ((c = cmp_id(p->frame[i], q->frame[i])))
			return c;
	for (i = 0; i < XL_MAX; i++)
		if ((c = cmp_id(p->label[i], q->label[i])))
			return c;
	c = cmp_id(p->module, q->module);
	return c ? c : cmp_id(p->mapping, q->mapping);
}

static void merge_rows(struct vmctx_export *x)
{
	size_t i, n = 0;

	if (x->nrows < 2)
		return;
	qsort(x->rows, x->nrows, sizeof(*x->rows), cmp_row);
	for (i = 0; i < x->nrows; i++) {
		if (n && !cmp_row(&x->rows[n - 1], &x->rows[i]))
			x->rows[n - 1].count = vmctx_sat_add(x->rows[n - 1].count, x->rows[i].count);
		else
			x->rows[n++] = x->rows[i];
	}
	x->nrows = n;
}

static int add_comment(struct vmctx_export *x, int64_t i)
{
	if (i < 0)
		return (int)i;
	if (vmctx_grow((void **)&x->comments, &x->comments_cap, x->ncomments + 1,
		       sizeof(*x->comments)))
		return -ENOMEM;
	x->comments[x->ncomments++] = i;
	return 0;
}

/* What the (VMk) of the frames stand for, and what a sample is worth. */
static int add_comments(struct vmctx_export *x, const struct vmctx_session *s)
{
	size_t i;
	int err;

	for (i = 0; i < s->nvms; i++) {
		err = add_comment(x, internf(x, "VM%d: %s, QEMU pid %d", s->vms[i].nr,
					     s->vms[i].name, s->vms[i].tgid));
		if (err)
			return err;
	}
	if (!x->tick_ns)
		return 0;
	return add_comment(x, internf(x, "a sample is a tick of %" PRIu64 " ns", x->tick_ns));
}

static int cmp_str(const void *a, const void *b, void *arg)
{
	char *const *strs = arg;

	return strcmp(strs[*(const uint32_t *)a], strs[*(const uint32_t *)b]);
}

/* Renumber the strings a row, a label key or a comment names. */
static void remap(struct vmctx_export *x, const uint32_t *to)
{
	size_t i, j;

	for (i = 0; i < x->nrows; i++) {
		struct export_row *r = &x->rows[i];

		for (j = 0; j < EXPORT_MAX_FRAMES; j++)
			r->frame[j] = to[r->frame[j]];
		for (j = 0; j < XL_MAX; j++)
			r->label[j] = to[r->label[j]];
		r->module = to[r->module];
		r->mapping = to[r->mapping];
	}
	for (j = 0; j < XL_MAX; j++)
		x->label_key[j] = to[x->label_key[j]];
	for (i = 0; i < x->ncomments; i++)
		x->comments[i] = to[x->comments[i]];
}

/*
 * Sort the string table and merge equal strings, so that each string is
 * once in it and indices follow text order ("" is the first).
 */
static int finish_strings(struct vmctx_export *x)
{
	size_t n = x->nstrs, i, u = 0;
	uint32_t *ord = malloc(n * sizeof(*ord)), *to = malloc(n * sizeof(*to));
	char **strs = malloc(n * sizeof(*strs));

	if (!ord || !to || !strs) {
		free(ord);
		free(to);
		free(strs);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		ord[i] = i;
	qsort_r(ord, n, sizeof(*ord), cmp_str, x->strs);
	for (i = 0; i < n; i++) {
		char *str = x->strs[ord[i]];

		if (u && !strcmp(strs[u - 1], str))
			free(str);
		else
			strs[u++] = str;
		to[ord[i]] = u - 1;
	}
	free(x->strs);
	x->strs = strs;
	x->nstrs = u;
	x->strs_cap = n;
	remap(x, to);
	free(ord);
	free(to);
	return 0;
}

static int build(struct vmctx_export *x, const struct vmctx_session *s, bool host)
{
	size_t i;
	int err;

	/* "" (first once sorted, as pprof wants), and what export-pprof.c looks up */
	err = (int)intern(x, "");
	for (i = 0; !err && i < ARRAY_SIZE(pprof_words); i++)
		err = intern(x, pprof_words[i]) < 0 ? -ENOMEM : 0;
	for (i = 0; !err && i < XL_MAX; i++) {
		int64_t k = intern(x, label_names[i]);

		x->label_key[i] = k < 0 ? 0 : k;
		err = k < 0 ? (int)k : 0;
	}
	for (i = 0; !err && i < s->agg.size; i++)
		if (s->agg.e[i].count)
			err = add_row(x, s, &s->agg.e[i], host);
	if (!err)
		err = add_vcpu_steal(x, s);
	if (!err)
		err = add_comments(x, s);
	if (!err)
		err = finish_strings(x);
	if (err)
		return err;
	merge_rows(x);
	return 0;
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
	    o.flags & ~VMCTX_EXPORT_NO_HOST) {
		errno = EINVAL;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->tick_ns = s->tick_ns;
	x->time_ns = o.time_ns;
	x->duration_ns = o.duration_ns;
	if (!x->duration_ns && s->started)
		x->duration_ns = (s->finished ? s->end_time : s->last_time) - s->first_time;
	err = build(x, s, !(o.flags & VMCTX_EXPORT_NO_HOST));
	if (err) {
		vmctx_export_free(x);
		errno = -err;
		return NULL;
	}
	return x;
}

void vmctx_export_free(struct vmctx_export *x)
{
	size_t i;

	if (!x)
		return;
	for (i = 0; i < x->nstrs; i++)
		free(x->strs[i]);
	free(x->strs);
	free(x->rows);
	free(x->comments);
	free(x);
}

/*
 * A folded frame: the escaped text, with ';', the frame separator, as
 * "\x3b".  Escaped text spells a backslash "\\", so this cannot be faked.
 * Spaces stay: every reader takes the count after the line's last space.
 */
static void put_frame(struct vmctx_buf *b, const char *esc)
{
	const char *p;

	while ((p = strchr(esc, ';'))) {
		vmctx_buf_put(b, esc, p - esc);
		vmctx_buf_put(b, "\\x3b", 4);
		esc = p + 1;
	}
	vmctx_buf_put(b, esc, strlen(esc));
}

static bool same_stack(const struct export_row *p, const struct export_row *q)
{
	return !memcmp(p->frame, q->frame, sizeof(p->frame));
}

/* One "frame;frame;frame count" line per stack; rows are sorted by frames first. */
static int write_folded(const struct vmctx_export *x, struct vmctx_buf *b)
{
	size_t i, j, f;

	for (i = 0; i < x->nrows; i = j) {
		uint64_t n = 0;
		char num[32];

		for (j = i; j < x->nrows && same_stack(&x->rows[i], &x->rows[j]); j++)
			n = vmctx_sat_add(n, x->rows[j].count);
		for (f = 0; f < x->rows[i].nframes; f++) {
			if (f)
				vmctx_buf_put(b, ";", 1);
			put_frame(b, x->strs[x->rows[i].frame[f]]);
		}
		vmctx_buf_put(b, num, snprintf(num, sizeof(num), " %" PRIu64 "\n", n));
	}
	return b->err;
}

/* A gzip member of @in, as pprof files are. */
static int gzip(const struct vmctx_buf *in, struct vmctx_buf *out)
{
	z_stream z;
	int ret;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = in->p;
	z.avail_in = in->len;	/* a profile is far below 4 GiB: rows are bounded */
	do {
		if (vmctx_grow((void **)&out->p, &out->cap, out->len + 65536, 1)) {
			deflateEnd(&z);
			return -ENOMEM;
		}
		z.next_out = out->p + out->len;
		z.avail_out = out->cap - out->len;
		ret = deflate(&z, Z_FINISH);
		out->len = out->cap - z.avail_out;
	} while (ret == Z_OK || ret == Z_BUF_ERROR);
	deflateEnd(&z);
	return ret == Z_STREAM_END ? 0 : -EIO;
}

int vmctx_export_write_mem(const struct vmctx_export *x, enum vmctx_export_format format,
			   void **buf, size_t *len)
{
	struct vmctx_buf raw = { 0 }, out = { 0 };
	int err;

	if (!x || !buf || !len)
		return -EINVAL;
	switch (format) {
	case VMCTX_EXPORT_FOLDED:
		err = write_folded(x, &out);
		break;
	case VMCTX_EXPORT_PPROF:
		if (x->nrows > UINT32_MAX / 4)
			return -ENOMEM;
		err = export_pprof(x, &raw);
		if (!err)
			err = gzip(&raw, &out);
		free(raw.p);
		break;
	default:
		return -EINVAL;
	}
	if (err) {
		free(out.p);
		return err;
	}
	*buf = out.p;
	*len = out.len;
	return 0;
}

int vmctx_export_write_fd(const struct vmctx_export *x, enum vmctx_export_format format, int fd)
{
	size_t len, done = 0;
	void *buf;
	int err;

	if (fd < 0)
		return -EINVAL;
	err = vmctx_export_write_mem(x, format, &buf, &len);
	if (err)
		return err;
	while (done < len) {
		ssize_t n = write(fd, (char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		done += n;
	}
	free(buf);
	return err;
}
