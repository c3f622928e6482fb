// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Reports: the paper's tables.  A table is made from the session's
 * aggregation for one view, its rows merged by Function and Module text
 * (labels.c names them).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labels.h"
#include "session.h"

struct row {
	uint64_t samples;
	char *function;
	char *module;
	uint64_t cls[VMCTX_CLASS_MAX];	/* VMCTX_VIEW_VCPUS */
};

struct steal_row {
	uint64_t reason;
	uint64_t samples;
};

struct vmctx_table {
	enum vmctx_view view;
	enum vmctx_isa isa;
	uint64_t total;
	uint64_t cls[VMCTX_CLASS_MAX];
	struct row *rows;
	size_t nrows, rows_cap;
	struct steal_row *steal;
	size_t nsteal, steal_cap;
};

static int add_row(struct vmctx_table *t, const char *function, const char *module, uint64_t n,
		   enum vmctx_class cls)
{
	struct row *r;

	if (util_grow((void **)&t->rows, &t->rows_cap, t->nrows + 1, sizeof(*t->rows)))
		return -ENOMEM;
	r = &t->rows[t->nrows];
	memset(r, 0, sizeof(*r));
	r->cls[cls] = n;
	r->function = strdup(function);
	r->module = strdup(module);
	if (!r->function || !r->module) {
		free(r->function);
		free(r->module);
		return -ENOMEM;
	}
	r->samples = n;
	t->nrows++;
	return 0;
}

static int add_steal(struct vmctx_table *t, uint64_t reason, uint64_t n)
{
	size_t i;

	for (i = 0; i < t->nsteal; i++) {
		if (t->steal[i].reason == reason) {
			t->steal[i].samples = util_sat_add(t->steal[i].samples, n);
			return 0;
		}
	}
	if (util_grow((void **)&t->steal, &t->steal_cap, t->nsteal + 1, sizeof(*t->steal)))
		return -ENOMEM;
	t->steal[t->nsteal].reason = reason;
	t->steal[t->nsteal].samples = n;
	t->nsteal++;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c = strcmp(x->function, y->function);

	return c ? c : strcmp(x->module, y->module);
}

static int cmp_samples(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return cmp_name(a, b);
}

/* "vcpuN" rows in vCPU id order */
static int cmp_vcpu(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return atoi(x->function + 4) - atoi(y->function + 4);
}

static int cmp_steal(const void *a, const void *b)
{
	const struct steal_row *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->reason < y->reason ? -1 : x->reason > y->reason;
}

/* Merge rows with the same texts, then order by samples. */
static void finish_rows(struct vmctx_table *t)
{
	size_t i, n = 0;

	if (t->nrows < 2)
		goto steal;
	qsort(t->rows, t->nrows, sizeof(*t->rows), cmp_name);
	for (i = 0; i < t->nrows; i++) {
		if (n && !cmp_name(&t->rows[n - 1], &t->rows[i])) {
			size_t c;

			t->rows[n - 1].samples = util_sat_add(t->rows[n - 1].samples,
							       t->rows[i].samples);
			for (c = 0; c < VMCTX_CLASS_MAX; c++)
				t->rows[n - 1].cls[c] = util_sat_add(t->rows[n - 1].cls[c],
								      t->rows[i].cls[c]);
			free(t->rows[i].function);
			free(t->rows[i].module);
			continue;
		}
		t->rows[n++] = t->rows[i];
	}
	t->nrows = n;
	qsort(t->rows, t->nrows, sizeof(*t->rows),
	      t->view == VMCTX_VIEW_VCPUS ? cmp_vcpu : cmp_samples);
steal:
	if (t->nsteal > 1)
		qsort(t->steal, t->nsteal, sizeof(*t->steal), cmp_steal);
}

static bool wanted(const struct agg_key *k, enum vmctx_view view, int vm_idx, int vcpu)
{
	if (view == VMCTX_VIEW_HOST || view == VMCTX_VIEW_UNIFIED)
		return k->scope == AGG_HOST;
	if (k->scope == AGG_HOST || k->vm_idx != vm_idx)
		return false;
	return vcpu < 0 || k->vcpu == vcpu;
}

/* Count @n of @k in @t; 0 or -ENOMEM. */
static int add_entry(struct vmctx_table *t, const struct vmctx_session *s,
		     const struct agg_key *k, uint64_t n)
{
	const char *function, *module;
	enum vmctx_class cls;
	char buf[256];

	if (k->scope == AGG_STEAL_EXIT) {
		t->isa = k->sub;
		return add_steal(t, k->exit, n);
	}
	cls = k->cls;
	/*
	 * Both host-wide views charge a VM with KVM's work for its vCPUs, so
	 * that they agree on a VM's time; the unified view keeps the host
	 * function's row, its module followed by the VM's tag.
	 */
	if ((t->view == VMCTX_VIEW_HOST || t->view == VMCTX_VIEW_UNIFIED) &&
	    k->scope == AGG_HOST && k->vm_idx >= 0)
		cls = VMCTX_CLASS_VM;
	t->total = util_sat_add(t->total, n);
	t->cls[cls] = util_sat_add(t->cls[cls], n);
	if (t->view == VMCTX_VIEW_VCPUS) {
		snprintf(buf, sizeof(buf), "vcpu%d", k->vcpu);
		return add_row(t, buf, s->vms[k->vm_idx].name, n, k->cls);
	}
	labels_of(s, k, t->view == VMCTX_VIEW_UNIFIED, &function, &module, buf, sizeof(buf));
	return add_row(t, function, module, n, cls);
}

/*
 * Guest code a vCPU ran is also its pCPU's, in the physical view: the
 * session counts it once, in the vCPU's row, and the physical view's row
 * (its VM and vCPU-less, of class VM) comes from there.
 */
static bool guest_host_key(const struct agg_key *k, struct agg_key *h)
{
	if (k->scope != AGG_VCPU || (k->cls != VMCTX_CLASS_USER && k->cls != VMCTX_CLASS_OS))
		return false;
	*h = *k;
	h->scope = AGG_HOST;
	h->cls = VMCTX_CLASS_VM;
	h->sub = k->cls;
	h->vcpu = -1;
	return true;
}

struct vmctx_table *vmctx_table_new(const struct vmctx_session *s, enum vmctx_view view,
				    int vm_tgid, int vcpu)
{
	struct vmctx_table *t;
	int vm_idx = -1;
	size_t i;

	if (!s || view > VMCTX_VIEW_VCPUS || s->tl.agg.off) {
		errno = EINVAL;
		return NULL;
	}
	if (view == VMCTX_VIEW_GUEST || view == VMCTX_VIEW_VCPUS) {
		vm_idx = session_vm_idx(s, vm_tgid);
		if (vm_idx < 0) {
			errno = ENOENT;
			return NULL;
		}
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->view = view;
	for (i = 0; i < s->tl.agg.size; i++) {
		const struct agg_entry *e = &s->tl.agg.e[i];
		struct agg_key k;

		if (!e->count)
			continue;
		if (wanted(&e->key, view, vm_idx, vcpu) && add_entry(t, s, &e->key, e->count))
			goto nomem;
		if (guest_host_key(&e->key, &k) && wanted(&k, view, vm_idx, vcpu) &&
		    add_entry(t, s, &k, e->count))
			goto nomem;
	}
	/* Steal by the owners each vCPU names, which the vCPU counts itself. */
	for (i = 0; i < s->tl.nvcpus; i++) {
		const struct vmctx_vcpu *v = &s->tl.vcpus[i];
		struct agg_key k;
		uint32_t j;

		memset(&k, 0, sizeof(k));
		k.scope = AGG_VCPU;
		k.cls = VMCTX_CLASS_STEAL;
		k.vm_idx = v->vm_idx;
		k.vcpu = v->id;
		if (!wanted(&k, view, vm_idx, vcpu))
			continue;
		for (j = 0; j < v->nsteal_by; j++) {
			k.by = v->steal_by[j];
			if (v->steal_n[j] && add_entry(t, s, &k, v->steal_n[j]))
				goto nomem;
		}
	}
	finish_rows(t);
	return t;
nomem:
	vmctx_table_free(t);
	errno = ENOMEM;
	return NULL;
}

void vmctx_table_free(struct vmctx_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nrows; i++) {
		free(t->rows[i].function);
		free(t->rows[i].module);
	}
	free(t->rows);
	free(t->steal);
	free(t);
}

uint64_t vmctx_table_total(const struct vmctx_table *t)
{
	return t ? t->total : 0;
}

uint64_t vmctx_table_class(const struct vmctx_table *t, enum vmctx_class cls)
{
	return t && cls < VMCTX_CLASS_MAX ? t->cls[cls] : 0;
}

size_t vmctx_table_nrows(const struct vmctx_table *t)
{
	return t ? t->nrows : 0;
}

int vmctx_table_row(const struct vmctx_table *t, size_t i, uint64_t *samples,
		    const char **function, const char **module)
{
	if (!t || i >= t->nrows)
		return -ENOENT;
	if (samples)
		*samples = t->rows[i].samples;
	if (function)
		*function = t->rows[i].function;
	if (module)
		*module = t->rows[i].module;
	return 0;
}

uint64_t vmctx_table_row_class(const struct vmctx_table *t, size_t i, enum vmctx_class cls)
{
	if (!t || i >= t->nrows || cls >= VMCTX_CLASS_MAX)
		return 0;
	return t->rows[i].cls[cls];
}

uint64_t vmctx_table_lookup(const struct vmctx_table *t, const char *function, const char *module)
{
	uint64_t n = 0;
	size_t i;

	if (!t)
		return 0;
	for (i = 0; i < t->nrows; i++) {
		if (function && strcmp(function, t->rows[i].function))
			continue;
		if (module && strcmp(module, t->rows[i].module))
			continue;
		n = util_sat_add(n, t->rows[i].samples);
	}
	return n;
}

size_t vmctx_table_nsteal_reasons(const struct vmctx_table *t)
{
	return t ? t->nsteal : 0;
}

int vmctx_table_steal_reason(const struct vmctx_table *t, size_t i, uint64_t *reason,
			     uint64_t *samples)
{
	if (!t || i >= t->nsteal)
		return -ENOENT;
	if (reason)
		*reason = t->steal[i].reason;
	if (samples)
		*samples = t->steal[i].samples;
	return 0;
}

static double pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * n / total : 0.0;
}

/*
 * Escape @src to @f (NULL: only count), then pad it to @width columns.
 * Escapes are ASCII; a UTF-8 character is taken to fill one column.
 *
 * Return: the columns of the escaped text, without the padding.
 */
static size_t put_escaped(FILE *f, const char *src, size_t width)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t n, plen, cols = 0, c;
	char piece[4];

	for (; *p; p += n) {
		plen = util_escape_char(p, piece, &n);
		if (f)
			fwrite(piece, 1, plen, f);
		cols += *p >= 0x80 && plen == n ? 1 : plen;
	}
	for (c = cols; f && c < width; c++)
		fputc(' ', f);
	return cols;
}

/* Is row @i printed, @shown rows being printed before it? */
static bool shown_row(const struct vmctx_table *t, size_t i, size_t shown,
		      const struct vmctx_format_opts *o)
{
	if (o->max_rows && shown >= o->max_rows)
		return false;
	return pct(t->rows[i].samples, t->total) >= o->percent_limit;
}

int vmctx_table_format(const struct vmctx_table *t, const struct vmctx_format_opts *opts,
		       char **out)
{
	struct vmctx_format_opts o = {
		.sz = sizeof(o),
		.max_rows = OPTS_GET(opts, max_rows, 0),
		.percent_limit = OPTS_GET(opts, percent_limit, 0),
	};
	size_t len = 0, shown = 0, width = 32, cols, i;
	uint64_t steal = 0;
	char *buf = NULL;
	FILE *f;

	if (!t || !out || !OPTS_VALID(opts, struct vmctx_format_opts, max_rows))
		return -EINVAL;
	if (!(o.percent_limit >= 0 && o.percent_limit <= 100))
		return -EINVAL;
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f, "Total samples: %" PRIu64 "  ", t->total);
	if (t->view == VMCTX_VIEW_GUEST || t->view == VMCTX_VIEW_VCPUS)
		fprintf(f, "OS:USER:steal:idle = %.2f%%:%.2f%%:%.2f%%:%.2f%%",
			pct(t->cls[VMCTX_CLASS_OS], t->total),
			pct(t->cls[VMCTX_CLASS_USER], t->total),
			pct(t->cls[VMCTX_CLASS_STEAL], t->total),
			pct(t->cls[VMCTX_CLASS_IDLE], t->total));
	else
		fprintf(f, "OS:USER:idle:VM = %.2f%%:%.2f%%:%.2f%%:%.2f%%",
			pct(t->cls[VMCTX_CLASS_OS], t->total),
			pct(t->cls[VMCTX_CLASS_USER], t->total),
			pct(t->cls[VMCTX_CLASS_IDLE], t->total),
			pct(t->cls[VMCTX_CLASS_VM], t->total));
	if (t->cls[VMCTX_CLASS_LOST])
		fprintf(f, "  lost = %.2f%%", pct(t->cls[VMCTX_CLASS_LOST], t->total));
	if (t->view == VMCTX_VIEW_VCPUS) {
		fprintf(f, "\n%-8s %10s %7s %7s %7s %7s %7s\n", "vCPU", "Samples", "OS", "USER",
			"steal", "idle", "lost");
		for (i = 0; i < t->nrows; i++) {
			const struct row *r = &t->rows[i];

			if (!shown_row(t, i, shown, &o))
				continue;
			shown++;
			fprintf(f, "%-8s %10" PRIu64 " %6.2f%% %6.2f%% %6.2f%% %6.2f%% %6.2f%%\n",
				r->function, r->samples, pct(r->cls[VMCTX_CLASS_OS], r->samples),
				pct(r->cls[VMCTX_CLASS_USER], r->samples),
				pct(r->cls[VMCTX_CLASS_STEAL], r->samples),
				pct(r->cls[VMCTX_CLASS_IDLE], r->samples),
				pct(r->cls[VMCTX_CLASS_LOST], r->samples));
		}
		goto out;
	}
	/* As perf does, the Function column is as wide as its widest text. */
	for (i = 0; i < t->nrows; i++) {
		if (!shown_row(t, i, shown, &o))
			continue;
		shown++;
		cols = put_escaped(NULL, t->rows[i].function, 0);
		if (cols > width)
			width = cols;
	}
	fprintf(f, "\n%10s %7s  %-*s %s\n", "Samples", "%Ratio", (int)width, "Function", "Module");
	for (i = 0, shown = 0; i < t->nrows; i++) {
		if (!shown_row(t, i, shown, &o))
			continue;
		shown++;
		fprintf(f, "%10" PRIu64 " %7.2f  ", t->rows[i].samples,
			pct(t->rows[i].samples, t->total));
		put_escaped(f, t->rows[i].function, width);
		fputc(' ', f);
		put_escaped(f, t->rows[i].module, 0);
		fputc('\n', f);
	}
	for (i = 0; i < t->nsteal; i++)
		steal = util_sat_add(steal, t->steal[i].samples);
	if (steal) {
		fputs("Steal by exit reason:", f);
		for (i = 0; i < t->nsteal; i++) {
			const char *name = vmctx_exit_reason_name(t->isa, t->steal[i].reason);

			if (t->steal[i].reason == VMCTX_EXIT_OTHER)
				name = "other";
			if (name)
				fprintf(f, "%s %s %.2f%%", i ? "," : "", name,
					pct(t->steal[i].samples, steal));
			else
				fprintf(f, "%s 0x%" PRIx64 " %.2f%%", i ? "," : "",
					t->steal[i].reason, pct(t->steal[i].samples, steal));
		}
		fputc('\n', f);
	}
out:
	if (fclose(f) || !buf) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	return 0;
}
