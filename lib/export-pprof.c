// SPDX-License-Identifier: LGPL-2.1-only
/*
 * pprof: an export's rows as a profile.proto message (github.com/google/
 * pprof, proto/profile.proto), which export.c compresses with gzip.
 *
 * A small encoder rather than libprotobuf-c: the message needs three wire
 * forms (varint, length-delimited, packed varints), while protobuf-c would
 * add a build dependency, code generated from profile.proto (Apache-2.0,
 * which does not mix with this LGPL-2.1-only library), and an object model
 * to fill only to serialise it.
 *
 * Each row is one sample of one location: the leaf frame (a function, or a
 * pseudo frame such as "[steal] (VM2)") in the mapping of its module ("libc.so.6
 * (VM1)" for guest objects, one "[vmctx]" for the pseudo frames).  The VM,
 * vCPU, class and guest process are string labels, so go tool pprof can
 * filter (-tagfocus) and root (-tagroot) by them, and Pyroscope can split
 * series by them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

/* profile.proto's field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,
	LABEL_KEY = 1,
	LABEL_STR = 2,
	MAPPING_ID = 1,
	MAPPING_FILENAME = 5,
	MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

#define WIRE_VARINT	0
#define WIRE_LEN	2

static int cmp_word(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

/*
 * The index of a string interned already ("samples", "count", "cpu" and
 * "nanoseconds" always are), or 0.
 */
static uint32_t word(const struct vmctx_export *x, const char *w)
{
	char *const *p = bsearch(w, x->strs, x->nstrs, sizeof(*x->strs), cmp_word);

	return p ? (uint32_t)(p - x->strs) : 0;
}

/* The string with index @i: escaped, so safe to print. */
static const char *str(const struct vmctx_export *x, uint32_t i)
{
	return x->strs[i];
}

static void varint(struct vmctx_buf *b, uint64_t v)
{
	uint8_t out[10];
	size_t n = 0;

	do {
		out[n] = v & 0x7f;
		v >>= 7;
		if (v)
			out[n] |= 0x80;
		n++;
	} while (v);
	vmctx_buf_put(b, out, n);
}

/* A varint field; proto3 leaves out zeros. */
static void field(struct vmctx_buf *b, int num, uint64_t v)
{
	if (!v)
		return;
	varint(b, (uint64_t)num << 3 | WIRE_VARINT);
	varint(b, v);
}

static void field_bytes(struct vmctx_buf *b, int num, const void *p, size_t n)
{
	varint(b, (uint64_t)num << 3 | WIRE_LEN);
	varint(b, n);
	vmctx_buf_put(b, p, n);
}

/* Embed the message built in @m as field @num of @b, and empty @m for the next. */
static void field_msg(struct vmctx_buf *b, int num, struct vmctx_buf *m)
{
	if (m->err && !b->err)
		b->err = m->err;
	field_bytes(b, num, m->p, m->len);
	m->len = 0;
}

/* A packed repeated varint field. */
static void field_packed(struct vmctx_buf *b, struct vmctx_buf *tmp, int num,
			 const uint64_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		varint(tmp, v[i]);
	field_msg(b, num, tmp);
}

static void value_type(struct vmctx_buf *b, struct vmctx_buf *m, int num,
		       const struct vmctx_export *x, const char *type, const char *unit)
{
	field(m, VALUE_TYPE_TYPE, word(x, type));
	field(m, VALUE_TYPE_UNIT, word(x, unit));
	field_msg(b, num, m);
}

static uint32_t leaf(const struct export_row *r)
{
	return r->nframes ? r->frame[r->nframes - 1] : 0;
}

struct pprof_ids {
	const struct vmctx_export *x;
	size_t *by_mapping;	/* row indices by (mapping, module, leaf) */
	size_t *by_function;	/* row indices by (module, leaf) */
	uint32_t *mapping, *location, *function;	/* per row */
};

/* String indices follow text order, so comparing them compares the texts. */
static int cmp_id(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_mapping(const void *a, const void *b, void *arg)
{
	const struct vmctx_export *x = arg;
	const struct export_row *p = &x->rows[*(const size_t *)a], *q = &x->rows[*(const size_t *)b];
	int c = cmp_id(p->mapping, q->mapping);

	if (!c)
		c = cmp_id(p->module, q->module);
	return c ? c : cmp_id(leaf(p), leaf(q));
}

static int cmp_function(const void *a, const void *b, void *arg)
{
	const struct vmctx_export *x = arg;
	const struct export_row *p = &x->rows[*(const size_t *)a], *q = &x->rows[*(const size_t *)b];
	int c = cmp_id(p->module, q->module);

	return c ? c : cmp_id(leaf(p), leaf(q));
}

static void free_ids(struct pprof_ids *d)
{
	free(d->by_mapping);
	free(d->by_function);
	free(d->mapping);
	free(d->location);
	free(d->function);
}

/*
 * Number mappings, locations (one per function in each mapping) and
 * functions (name and module) from 1, in text order: two
 * sorts, so a hostile session costs O(n log n).
 */
static int number(const struct vmctx_export *x, struct pprof_ids *d)
{
	size_t n = x->nrows, i;
	uint32_t m = 0, l = 0, f = 0;

	memset(d, 0, sizeof(*d));
	d->x = x;
	d->by_mapping = malloc((n + 1) * sizeof(size_t));
	d->by_function = malloc((n + 1) * sizeof(size_t));
	d->mapping = malloc((n + 1) * sizeof(uint32_t));
	d->location = malloc((n + 1) * sizeof(uint32_t));
	d->function = malloc((n + 1) * sizeof(uint32_t));
	if (!d->by_mapping || !d->by_function || !d->mapping || !d->location || !d->function) {
		free_ids(d);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		d->by_mapping[i] = d->by_function[i] = i;
	qsort_r(d->by_mapping, n, sizeof(size_t), cmp_mapping, (void *)x);
	qsort_r(d->by_function, n, sizeof(size_t), cmp_function, (void *)x);
	for (i = 0; i < n; i++) {
		const struct export_row *r = &x->rows[d->by_mapping[i]];
		const struct export_row *p = i ? &x->rows[d->by_mapping[i - 1]] : NULL;

		if (!p || p->mapping != r->mapping)
			m++;
		if (!p || p->mapping != r->mapping || p->module != r->module || leaf(p) != leaf(r))
			l++;
		d->mapping[d->by_mapping[i]] = m;
		d->location[d->by_mapping[i]] = l;
	}
	for (i = 0; i < n; i++) {
		const struct export_row *r = &x->rows[d->by_function[i]];
		const struct export_row *p = i ? &x->rows[d->by_function[i - 1]] : NULL;

		if (!p || p->module != r->module || leaf(p) != leaf(r))
			f++;
		d->function[d->by_function[i]] = f;
	}
	return 0;
}

static void samples(struct vmctx_buf *b, struct vmctx_buf *m, struct vmctx_buf *tmp,
		    const struct vmctx_export *x, const struct pprof_ids *d)
{
	struct vmctx_buf lab = { 0 };
	size_t i, l;

	for (i = 0; i < x->nrows && !b->err; i++) {
		const struct export_row *r = &x->rows[i];
		uint64_t loc = d->location[i], v[2] = { r->count, r->count * x->tick_ns };

		if (x->tick_ns && r->count > INT64_MAX / x->tick_ns)
			v[1] = INT64_MAX;
		field_packed(m, tmp, SAMPLE_LOCATION_ID, &loc, 1);
		field_packed(m, tmp, SAMPLE_VALUE, v, x->tick_ns ? 2 : 1);
		for (l = 0; l < XL_MAX; l++) {
			if (!r->label[l])
				continue;
			field(&lab, LABEL_KEY, x->label_key[l]);
			field(&lab, LABEL_STR, r->label[l]);
			field_msg(m, SAMPLE_LABEL, &lab);
		}
		field_msg(b, PROFILE_SAMPLE, m);
	}
	if (lab.err && !b->err)
		b->err = lab.err;
	free(lab.p);
}

/* Mappings and locations: the first row of each, in by_mapping order. */
static void mappings(struct vmctx_buf *b, struct vmctx_buf *m, struct vmctx_buf *tmp,
		     const struct vmctx_export *x, const struct pprof_ids *d)
{
	uint32_t last = 0;
	size_t i;

	for (i = 0; i < x->nrows && !b->err; i++) {
		size_t r = d->by_mapping[i];

		if (d->mapping[r] == last)
			continue;
		last = d->mapping[r];
		field(m, MAPPING_ID, last);
		field(m, MAPPING_FILENAME, x->rows[r].mapping);
		field(m, MAPPING_HAS_FUNCTIONS, 1);
		field_msg(b, PROFILE_MAPPING, m);
	}
	for (i = 0, last = 0; i < x->nrows && !b->err; i++) {
		size_t r = d->by_mapping[i];

		if (d->location[r] == last)
			continue;
		last = d->location[r];
		field(m, LOCATION_ID, last);
		field(m, LOCATION_MAPPING_ID, d->mapping[r]);
		field(tmp, LINE_FUNCTION_ID, d->function[r]);
		field_msg(m, LOCATION_LINE, tmp);
		field_msg(b, PROFILE_LOCATION, m);
	}
}

static void functions(struct vmctx_buf *b, struct vmctx_buf *m, const struct vmctx_export *x,
		      const struct pprof_ids *d)
{
	uint32_t last = 0;
	size_t i;

	for (i = 0; i < x->nrows && !b->err; i++) {
		size_t r = d->by_function[i];

		if (d->function[r] == last)
			continue;
		last = d->function[r];
		field(m, FUNCTION_ID, last);
		field(m, FUNCTION_NAME, leaf(&x->rows[r]));
		/*
		 * pprof demangles a function whose system name is its name, and
		 * takes "[steal] (VM2)" for C++: "[steal] ".  vmctx's own
		 * frames have no system name, so they stay as they are.
		 */
		if (x->rows[r].mapping != word(x, EXPORT_VMCTX_MAPPING))
			field(m, FUNCTION_SYSTEM_NAME, leaf(&x->rows[r]));
		field(m, FUNCTION_FILENAME, x->rows[r].module);
		field_msg(b, PROFILE_FUNCTION, m);
	}
}

/* The header fields: value types, strings, times, period and comments. */
static void header(struct vmctx_buf *b, struct vmctx_buf *m, const struct vmctx_export *x)
{
	size_t i;

	for (i = 0; i < x->nstrs; i++)
		field_bytes(b, PROFILE_STRING_TABLE, str(x, i), strlen(str(x, i)));
	field(b, PROFILE_TIME_NANOS, x->time_ns);
	field(b, PROFILE_DURATION_NANOS, x->duration_ns);
	if (x->tick_ns) {
		value_type(b, m, PROFILE_PERIOD_TYPE, x, "cpu", "nanoseconds");
		field(b, PROFILE_PERIOD, x->tick_ns);
	}
	for (i = 0; i < x->ncomments; i++)
		varint(m, x->comments[i]);
	if (x->ncomments)
		field_msg(b, PROFILE_COMMENT, m);
	if (x->tick_ns)
		field(b, PROFILE_DEFAULT_SAMPLE_TYPE, word(x, "cpu"));
}

int export_pprof(const struct vmctx_export *x, struct vmctx_buf *out)
{
	struct vmctx_buf m = { 0 }, tmp = { 0 };
	struct pprof_ids d;
	int err = number(x, &d);

	if (err)
		return err;
	value_type(out, &m, PROFILE_SAMPLE_TYPE, x, "samples", "count");
	if (x->tick_ns)
		value_type(out, &m, PROFILE_SAMPLE_TYPE, x, "cpu", "nanoseconds");
	samples(out, &m, &tmp, x, &d);
	mappings(out, &m, &tmp, x, &d);
	functions(out, &m, x, &d);
	header(out, &m, x);
	err = out->err ? out->err : m.err ? m.err : tmp.err;
	free(m.p);
	free(tmp.p);
	free_ids(&d);
	return err;
}
