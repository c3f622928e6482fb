// SPDX-License-Identifier: LGPL-2.1-only
/*
 * pprof: a profile as a profile.proto message (github.com/google/pprof,
 * proto/profile.proto), which profile.c compresses with gzip.
 *
 * A small encoder rather than libprotobuf-c: the message needs three wire
 * forms (varint, length-delimited, packed varints), while protobuf-c would
 * add a build dependency, code generated from profile.proto (Apache-2.0,
 * which does not mix with this LGPL-2.1-only library), and an object model
 * to fill only to serialise it.
 *
 * A sample is its stack of locations, leaf first, its values and its
 * labels (strings or numbers).  A location is one frame: the mapping of
 * its module (one per module), its address and, unless it is unnamed, its
 * function (one per name and module).  The string table, the ids and the
 * samples are in text order, numbered by sorts, so a hostile profile costs
 * O(n log n) and the bytes do not depend on the order samples came in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

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
	LABEL_NUM = 3,
	MAPPING_ID = 1,
	MAPPING_FILENAME = 5,
	MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

#define WIRE_VARINT	0
#define WIRE_LEN	2

static void varint(struct util_buf *b, uint64_t v)
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
	util_buf_put(b, out, n);
}

/* A varint field; proto3 leaves out zeros. */
static void field(struct util_buf *b, int num, uint64_t v)
{
	if (!v)
		return;
	varint(b, (uint64_t)num << 3 | WIRE_VARINT);
	varint(b, v);
}

static void field_bytes(struct util_buf *b, int num, const void *p, size_t n)
{
	varint(b, (uint64_t)num << 3 | WIRE_LEN);
	varint(b, n);
	util_buf_put(b, p, n);
}

/* Embed the message built in @m as field @num of @b, and empty @m for the next. */
static void field_msg(struct util_buf *b, int num, struct util_buf *m)
{
	if (m->err && !b->err)
		b->err = m->err;
	field_bytes(b, num, m->p, m->len);
	m->len = 0;
}

/*
 * What the message numbers: strings by their text, frames (locations) by
 * module, function and address, so that a mapping's and a function's
 * frames are next to each other; samples by their stacks, root first,
 * then their labels.
 */
struct pprof_ids {
	const struct vmctx_profile *p;
	uint32_t *by_text;	/* string ids, in text order: the string table */
	uint32_t *str;		/* by string id: its index in the string table */
	uint32_t *frames;	/* the frame ids samples use, in location order */
	size_t nframes;
	uint32_t *location;	/* by frame id: its location id; 0: unused */
	uint32_t *function;	/* by frame id: its function id; 0: unnamed */
	uint32_t *mapping;	/* by frame id: its mapping id; 0: no module */
	uint32_t nmappings;
	uint32_t main;		/* the mapping written first; 0: none */
	uint32_t *samples;	/* sample ids, in the message's order */
};

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_text(const void *a, const void *b, void *arg)
{
	char *const *strs = arg;

	return strcmp(strs[*(const uint32_t *)a], strs[*(const uint32_t *)b]);
}

/* A string id's index in the string table; PROFILE_NONE sorts first. */
static uint32_t str_at(const struct pprof_ids *d, uint32_t id)
{
	return id == PROFILE_NONE ? 0 : d->str[id];
}

static int cmp_frame(const void *a, const void *b, void *arg)
{
	const struct pprof_ids *d = arg;
	const struct profile_frame *f = &d->p->frames[*(const uint32_t *)a];
	const struct profile_frame *g = &d->p->frames[*(const uint32_t *)b];
	int c = cmp_u32(d->str[f->module], d->str[g->module]);

	if (!c)
		c = cmp_u32(f->function != PROFILE_NONE, g->function != PROFILE_NONE);
	if (!c)
		c = cmp_u32(str_at(d, f->function), str_at(d, g->function));
	return c ? c : (f->address > g->address) - (f->address < g->address);
}

static int cmp_label(const struct pprof_ids *d, const struct profile_label *l,
		     const struct profile_label *m)
{
	int c = cmp_u32(d->str[l->key], d->str[m->key]);

	if (!c)
		c = cmp_u32(l->str != PROFILE_NONE, m->str != PROFILE_NONE);
	if (!c)
		c = cmp_u32(str_at(d, l->str), str_at(d, m->str));
	return c ? c : (l->num > m->num) - (l->num < m->num);
}

static int cmp_sample(const void *a, const void *b, void *arg)
{
	const struct pprof_ids *d = arg;
	const struct vmctx_profile *p = d->p;
	const struct profile_sample *s = &p->samples[*(const uint32_t *)a];
	const struct profile_sample *t = &p->samples[*(const uint32_t *)b];
	uint32_t i, n = s->nframes < t->nframes ? s->nframes : t->nframes;
	int c;

	for (i = 1; i <= n; i++) {
		c = cmp_u32(d->location[p->stacks[s->stack + s->nframes - i]],
			    d->location[p->stacks[t->stack + t->nframes - i]]);
		if (c)
			return c;
	}
	if ((c = cmp_u32(s->nframes, t->nframes)))
		return c;
	n = s->nlabels < t->nlabels ? s->nlabels : t->nlabels;
	for (i = 0; i < n; i++)
		if ((c = cmp_label(d, &p->labels[s->label + i], &p->labels[t->label + i])))
			return c;
	return cmp_u32(s->nlabels, t->nlabels);
}

static void free_ids(struct pprof_ids *d)
{
	free(d->by_text);
	free(d->str);
	free(d->frames);
	free(d->location);
	free(d->function);
	free(d->mapping);
	free(d->samples);
}

/* Locations, functions and mappings from 1, in the order of the frames samples use. */
static void number_frames(struct pprof_ids *d)
{
	const struct vmctx_profile *p = d->p;
	uint32_t m = 0, fn = 0;
	size_t i, j;

	for (i = 0; i < p->nsamples; i++)
		for (j = 0; j < p->samples[i].nframes; j++)
			d->location[p->stacks[p->samples[i].stack + j]] = 1;
	for (i = 0; i < p->nframes; i++)
		if (d->location[i])
			d->frames[d->nframes++] = i;
	qsort_r(d->frames, d->nframes, sizeof(*d->frames), cmp_frame, d);
	for (i = 0; i < d->nframes; i++) {
		const struct profile_frame *f = &p->frames[d->frames[i]];
		const struct profile_frame *prev = i ? &p->frames[d->frames[i - 1]] : NULL;

		if (f->module && (!prev || prev->module != f->module))
			m++;
		if (f->function != PROFILE_NONE &&
		    (!prev || prev->module != f->module || prev->function != f->function))
			fn++;
		d->location[d->frames[i]] = i + 1;
		d->mapping[d->frames[i]] = f->module ? m : 0;
		d->function[d->frames[i]] = f->function != PROFILE_NONE ? fn : 0;
	}
	d->nmappings = m;
}

/*
 * pprof takes the first mapping for the main binary and titles the
 * profile with its name ("File:" in go tool pprof).  A whole-host profile
 * has no one binary, so the first is the mapping that holds the most of
 * the default value (the last) in leaf frames, the one at the top of
 * pprof's flat view; ties go to the lower id, so the bytes still depend
 * on the profile only.
 */
static int main_mapping(struct pprof_ids *d)
{
	const struct vmctx_profile *p = d->p;
	uint64_t *leaf;
	size_t i;

	if (!d->nmappings || !p->nvalues)
		return 0;
	leaf = calloc(d->nmappings + 1, sizeof(*leaf));
	if (!leaf)
		return -ENOMEM;
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		int64_t v = s->value[p->nvalues - 1];

		if (s->nframes && v > 0)
			leaf[d->mapping[p->stacks[s->stack]]] += (uint64_t)v;
	}
	d->main = 1;
	for (i = 2; i <= d->nmappings; i++)
		if (leaf[i] > leaf[d->main])
			d->main = i;
	free(leaf);
	return 0;
}

static int number(const struct vmctx_profile *p, struct pprof_ids *d)
{
	size_t i, n = p->nstrs, nf = p->nframes + 1;

	memset(d, 0, sizeof(*d));
	d->p = p;
	d->by_text = malloc(n * sizeof(*d->by_text));
	d->str = malloc(n * sizeof(*d->str));
	d->frames = malloc(nf * sizeof(*d->frames));
	d->location = calloc(nf, sizeof(*d->location));
	d->function = calloc(nf, sizeof(*d->function));
	d->mapping = calloc(nf, sizeof(*d->mapping));
	d->samples = malloc((p->nsamples + 1) * sizeof(*d->samples));
	if (!d->by_text || !d->str || !d->frames || !d->location || !d->function ||
	    !d->mapping || !d->samples) {
		free_ids(d);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		d->by_text[i] = i;
	/* strings are unique, and "" comes first, as pprof wants */
	qsort_r(d->by_text, n, sizeof(*d->by_text), cmp_text, p->strs);
	for (i = 0; i < n; i++)
		d->str[d->by_text[i]] = i;
	number_frames(d);
	if (main_mapping(d)) {
		free_ids(d);
		return -ENOMEM;
	}
	for (i = 0; i < p->nsamples; i++)
		d->samples[i] = i;
	qsort_r(d->samples, p->nsamples, sizeof(*d->samples), cmp_sample, d);
	return 0;
}

static void value_type(struct util_buf *b, struct util_buf *m, int num,
		       const struct pprof_ids *d, size_t i)
{
	field(m, VALUE_TYPE_TYPE, d->str[d->p->value_type[i]]);
	field(m, VALUE_TYPE_UNIT, d->str[d->p->value_unit[i]]);
	field_msg(b, num, m);
}

static void sample(struct util_buf *b, struct util_buf *tmp, struct util_buf *lab,
		   const struct pprof_ids *d, const struct profile_sample *s)
{
	const struct vmctx_profile *p = d->p;
	size_t i;

	for (i = 0; i < s->nframes; i++)
		varint(tmp, d->location[p->stacks[s->stack + i]]);
	field_msg(b, SAMPLE_LOCATION_ID, tmp);
	for (i = 0; i < p->nvalues; i++)
		varint(tmp, (uint64_t)s->value[i]);
	field_msg(b, SAMPLE_VALUE, tmp);
	for (i = 0; i < s->nlabels; i++) {
		const struct profile_label *l = &p->labels[s->label + i];

		field(lab, LABEL_KEY, d->str[l->key]);
		if (l->str != PROFILE_NONE)
			field(lab, LABEL_STR, d->str[l->str]);
		else
			field(lab, LABEL_NUM, (uint64_t)l->num);
		field_msg(b, SAMPLE_LABEL, lab);
	}
}

static void samples(struct util_buf *b, struct util_buf *m, struct util_buf *tmp,
		    const struct pprof_ids *d)
{
	struct util_buf lab = { 0 };
	size_t i;

	for (i = 0; i < d->p->nsamples && !b->err; i++) {
		sample(m, tmp, &lab, d, &d->p->samples[d->samples[i]]);
		field_msg(b, PROFILE_SAMPLE, m);
	}
	if (lab.err && !b->err)
		b->err = lab.err;
	free(lab.p);
}

/* One mapping for each module's run of frames; it has functions if one is named. */
static void mapping(struct util_buf *b, struct util_buf *m, const struct pprof_ids *d,
		    size_t i, size_t j)
{
	bool named = false;
	size_t k;

	for (k = i; k < j; k++)
		named |= d->function[d->frames[k]] != 0;
	field(m, MAPPING_ID, d->mapping[d->frames[i]]);
	field(m, MAPPING_FILENAME, d->str[d->p->frames[d->frames[i]].module]);
	field(m, MAPPING_HAS_FUNCTIONS, named);
	field_msg(b, PROFILE_MAPPING, m);
}

/* The mappings: the main one first, then the others in id order. */
static void mappings(struct util_buf *b, struct util_buf *m, const struct pprof_ids *d)
{
	int pass;
	size_t i, j;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < d->nframes && !b->err; i = j) {
			uint32_t id = d->mapping[d->frames[i]];

			for (j = i; j < d->nframes && d->mapping[d->frames[j]] == id; j++)
				;
			if (id && (id == d->main) == !pass)
				mapping(b, m, d, i, j);
		}
}

static void locations(struct util_buf *b, struct util_buf *m, struct util_buf *tmp,
		      const struct pprof_ids *d)
{
	size_t i;

	for (i = 0; i < d->nframes && !b->err; i++) {
		uint32_t f = d->frames[i];

		field(m, LOCATION_ID, d->location[f]);
		field(m, LOCATION_MAPPING_ID, d->mapping[f]);
		field(m, LOCATION_ADDRESS, d->p->frames[f].address);
		if (d->function[f]) {
			field(tmp, LINE_FUNCTION_ID, d->function[f]);
			field_msg(m, LOCATION_LINE, tmp);
		}
		field_msg(b, PROFILE_LOCATION, m);
	}
}

static void functions(struct util_buf *b, struct util_buf *m, const struct pprof_ids *d)
{
	const struct vmctx_profile *p = d->p;
	uint32_t last = 0;
	size_t i;

	for (i = 0; i < d->nframes && !b->err; i++) {
		const struct profile_frame *f = &p->frames[d->frames[i]];
		uint32_t id = d->function[d->frames[i]];

		if (!id || id == last)
			continue;
		last = id;
		field(m, FUNCTION_ID, id);
		field(m, FUNCTION_NAME, d->str[f->function]);
		/*
		 * pprof demangles a function whose system name is its name, and
		 * takes "[steal] (VM2)" for C++: "[steal] ".  Pseudo frames,
		 * "[...]" as perf and vmctx name them, have no system name,
		 * so they stay as they are.
		 */
		if (p->strs[f->function][0] != '[')
			field(m, FUNCTION_SYSTEM_NAME, d->str[f->function]);
		field(m, FUNCTION_FILENAME, d->str[f->module]);
		field_msg(b, PROFILE_FUNCTION, m);
	}
}

/* The header fields: strings, times, period and comments. */
static void header(struct util_buf *b, struct util_buf *m, const struct pprof_ids *d)
{
	const struct vmctx_profile *p = d->p;
	size_t i;

	for (i = 0; i < p->nstrs; i++) {
		const char *s = p->strs[d->by_text[i]];

		field_bytes(b, PROFILE_STRING_TABLE, s, strlen(s));
	}
	field(b, PROFILE_TIME_NANOS, p->time_ns);
	field(b, PROFILE_DURATION_NANOS, p->duration_ns);
	if (p->period) {
		value_type(b, m, PROFILE_PERIOD_TYPE, d, p->nvalues - 1);
		field(b, PROFILE_PERIOD, (uint64_t)p->period);
	}
	for (i = 0; i < p->ncomments; i++)
		varint(m, d->str[p->comments[i]]);
	if (p->ncomments)
		field_msg(b, PROFILE_COMMENT, m);
	if (p->period)
		field(b, PROFILE_DEFAULT_SAMPLE_TYPE, d->str[p->value_type[p->nvalues - 1]]);
}

int profile_pprof(const struct vmctx_profile *p, struct util_buf *out)
{
	struct util_buf m = { 0 }, tmp = { 0 };
	struct pprof_ids d;
	size_t i;
	int err = number(p, &d);

	if (err)
		return err;
	for (i = 0; i < p->nvalues; i++)
		value_type(out, &m, PROFILE_SAMPLE_TYPE, &d, i);
	samples(out, &m, &tmp, &d);
	mappings(out, &m, &d);
	locations(out, &m, &tmp, &d);
	functions(out, &m, &d);
	header(out, &m, &d);
	err = out->err ? out->err : m.err ? m.err : tmp.err;
	free(m.p);
	free(tmp.p);
	free_ids(&d);
	return err;
}
