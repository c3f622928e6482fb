// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Profiles: folded stacks are root first, one line per stack, with the
 * first values of its samples summed whatever their labels; an unnamed
 * frame is "module+0xADDR" or "[unknown]"; a name cannot split a line or
 * a frame.  The pprof message, read back field by field, holds one
 * sample per stack and labels, with its values, its locations leaf first
 * at any depth, string and numeric labels, one function per name and
 * module, one mapping per module, each string once; period, comments and
 * times as the options say.  The bytes do not depend on the order of the
 * calls; sums saturate; bad calls fail with the codes vmctx.h gives.  The
 * hash that finds strings, frames and samples is SipHash-2-4.
 *
 * With a directory argument, the test also writes a profile there
 * (profile.pb.gz, profile.folded) for check-export.sh to read with go
 * tool pprof.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "util.h"
#include "pb.h"
#include "check.h"

#define F(name)		{ .function = (name) }
#define NVALUES_MAX	2

/* ---- Writing ---- */

static char *write_text(const struct vmctx_profile *p, enum vmctx_export_format format,
			size_t *len)
{
	void *buf = NULL;
	char *text;
	size_t n = 0;

	CHECK(!vmctx_profile_write_mem(p, format, &buf, &n), "write format %d", format);
	text = malloc(n + 1);
	if (!text)
		abort();
	if (n)
		memcpy(text, buf, n);
	text[n] = '\0';
	free(buf);
	if (len)
		*len = n;
	return text;
}

static char *folded(const struct vmctx_profile *p)
{
	return write_text(p, VMCTX_EXPORT_FOLDED, NULL);
}

static void add(struct vmctx_profile *p, const struct vmctx_frame *f, size_t n,
		const struct vmctx_label *l, size_t nl, int64_t v0, int64_t v1)
{
	const int64_t v[2] = { v0, v1 };
	int err = vmctx_profile_add(p, f, n, l, nl, v);

	CHECK(!err, "add %zu frames, leaf %s: %d", n, f[0].function ? f[0].function : "-", err);
}

struct pp_label {
	uint64_t key, str;
	int64_t num;
};

struct pp_sample {
	uint64_t loc[VMCTX_PROFILE_MAX_FRAMES + 1];
	size_t nloc;
	uint64_t value[4];
	size_t nvalues;
	struct pp_label label[8];
	size_t nlabels;
};

struct pp_location {
	uint64_t id, mapping, address, function;
	size_t nlines;
};

struct pp_function {
	uint64_t id, name, system_name, filename;
};

struct pp_mapping {
	uint64_t id, filename, has_functions;
};

/* The message, as read: ids and string indices as they are in it. */
struct pp {
	struct pp_sample *sample;
	struct pp_location *loc;
	struct pp_function *fn;
	struct pp_mapping *map;
	char **str;
	size_t nsamples, nlocs, nfns, nmaps, nstrs;
	uint64_t type[4], unit[4];
	size_t ntypes;
	uint64_t period_type, period_unit, period, default_type, time, duration;
	uint64_t comment[8];
	size_t ncomments;
	bool bad;
};

static void *grow(void *arr, size_t n, size_t size)
{
	void *p = realloc(arr, (n + 1) * size);

	if (!p)
		abort();
	memset((char *)p + n * size, 0, size);
	return p;
}

static void read_sample(struct pp *pp, struct pb *m)
{
	struct pp_sample *s;
	struct pb sub = { 0 }, lab = { 0 };
	uint64_t v = 0;
	int f, g, wire;

	pp->sample = grow(pp->sample, pp->nsamples, sizeof(*pp->sample));
	s = &pp->sample[pp->nsamples++];
	while ((f = pb_field(m, &sub, &v, &wire))) {
		if (f == 1) {
			pb_repeated(&sub, v, wire, s->loc, &s->nloc, VMCTX_PROFILE_MAX_FRAMES + 1);
		} else if (f == 2) {
			pb_repeated(&sub, v, wire, s->value, &s->nvalues, 4);
		} else if (f == 3 && s->nlabels < 8) {
			struct pp_label *l = &s->label[s->nlabels++];

			while ((g = pb_field(&sub, &lab, &v, &wire))) {
				if (g == 1)
					l->key = v;
				else if (g == 2)
					l->str = v;
				else if (g == 3)
					l->num = (int64_t)v;
			}
			pp->bad |= sub.bad;
		}
	}
	pp->bad |= m->bad;
}

static void read_location(struct pp *pp, struct pb *m)
{
	struct pp_location *l;
	struct pb sub = { 0 }, line = { 0 };
	uint64_t v = 0;
	int f, g, wire;

	pp->loc = grow(pp->loc, pp->nlocs, sizeof(*pp->loc));
	l = &pp->loc[pp->nlocs++];
	while ((f = pb_field(m, &sub, &v, &wire))) {
		if (f == 1)
			l->id = v;
		else if (f == 2)
			l->mapping = v;
		else if (f == 3)
			l->address = v;
		else if (f == 4) {
			l->nlines++;
			while ((g = pb_field(&sub, &line, &v, &wire)))
				if (g == 1)
					l->function = v;
			pp->bad |= sub.bad;
		}
	}
	pp->bad |= m->bad;
}

static void read_function(struct pp *pp, struct pb *m)
{
	struct pp_function *fn;
	struct pb sub = { 0 };
	uint64_t v = 0;
	int f, wire;

	pp->fn = grow(pp->fn, pp->nfns, sizeof(*pp->fn));
	fn = &pp->fn[pp->nfns++];
	while ((f = pb_field(m, &sub, &v, &wire))) {
		if (f == 1)
			fn->id = v;
		else if (f == 2)
			fn->name = v;
		else if (f == 3)
			fn->system_name = v;
		else if (f == 4)
			fn->filename = v;
	}
	pp->bad |= m->bad;
}

static void read_mapping(struct pp *pp, struct pb *m)
{
	struct pp_mapping *map;
	struct pb sub = { 0 };
	uint64_t v = 0;
	int f, wire;

	pp->map = grow(pp->map, pp->nmaps, sizeof(*pp->map));
	map = &pp->map[pp->nmaps++];
	while ((f = pb_field(m, &sub, &v, &wire))) {
		if (f == 1)
			map->id = v;
		else if (f == 5)
			map->filename = v;
		else if (f == 7)
			map->has_functions = v;
	}
	pp->bad |= m->bad;
}

/* A ValueType: its type and unit. */
static void read_value_type(struct pp *pp, struct pb *m, uint64_t *type, uint64_t *unit)
{
	struct pb sub = { 0 };
	uint64_t v = 0;
	int f, wire;

	while ((f = pb_field(m, &sub, &v, &wire))) {
		if (f == 1)
			*type = v;
		else if (f == 2)
			*unit = v;
	}
	pp->bad |= m->bad;
}

static void read_field(struct pp *pp, int f, struct pb *sub, uint64_t v, int wire)
{
	switch (f) {
	case 1:
		if (pp->ntypes < 4) {
			read_value_type(pp, sub, &pp->type[pp->ntypes], &pp->unit[pp->ntypes]);
			pp->ntypes++;
		}
		break;
	case 2:
		read_sample(pp, sub);
		break;
	case 3:
		read_mapping(pp, sub);
		break;
	case 4:
		read_location(pp, sub);
		break;
	case 5:
		read_function(pp, sub);
		break;
	case 6:
		pp->str = grow(pp->str, pp->nstrs, sizeof(*pp->str));
		pp->str[pp->nstrs] = strndup((const char *)sub->p, sub->end - sub->p);
		pp->nstrs++;
		break;
	case 9:
		pp->time = v;
		break;
	case 10:
		pp->duration = v;
		break;
	case 11:
		read_value_type(pp, sub, &pp->period_type, &pp->period_unit);
		break;
	case 12:
		pp->period = v;
		break;
	case 13:
		pb_repeated(sub, v, wire, pp->comment, &pp->ncomments, 8);
		break;
	case 14:
		pp->default_type = v;
		break;
	}
}

/* Gunzip the pprof bytes of @p and read the message. */
static void read_pprof(const struct vmctx_profile *p, struct pp *pp)
{
	struct pb b = { 0 }, sub = { 0 };
	size_t len = 0, cap;
	uint8_t *out;
	void *buf = NULL;
	uint64_t v = 0;
	z_stream z;
	int f, wire, ret;

	memset(pp, 0, sizeof(*pp));
	CHECK(!vmctx_profile_write_mem(p, VMCTX_EXPORT_PPROF, &buf, &len), "pprof written");
	CHECK(len > 2 && ((uint8_t *)buf)[0] == 0x1f && ((uint8_t *)buf)[1] == 0x8b,
	      "pprof is a gzip member");
	cap = 64 * len + (1 << 20);
	out = malloc(cap);
	memset(&z, 0, sizeof(z));
	CHECK(out && inflateInit2(&z, 15 + 16) == Z_OK, "inflate");
	z.next_in = buf;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = cap;
	ret = inflate(&z, Z_FINISH);
	CHECK(ret == Z_STREAM_END, "the gzip member is whole (%d)", ret);
	b = (struct pb){ out, out + z.total_out, false };
	while ((f = pb_field(&b, &sub, &v, &wire)))
		read_field(pp, f, &sub, v, wire);
	pp->bad |= b.bad;
	CHECK(!pp->bad, "the profile parses");
	inflateEnd(&z);
	free(out);
	free(buf);
}

static void pp_free(struct pp *pp)
{
	size_t i;

	for (i = 0; i < pp->nstrs; i++)
		free(pp->str[i]);
	free(pp->str);
	free(pp->sample);
	free(pp->loc);
	free(pp->fn);
	free(pp->map);
}

static const char *pp_str(const struct pp *pp, uint64_t i)
{
	return i < pp->nstrs ? pp->str[i] : "<no such string>";
}

static const struct pp_location *pp_loc(const struct pp *pp, uint64_t id)
{
	size_t i;

	for (i = 0; i < pp->nlocs; i++)
		if (pp->loc[i].id == id)
			return &pp->loc[i];
	return NULL;
}

static const struct pp_function *pp_fn(const struct pp *pp, uint64_t id)
{
	size_t i;

	for (i = 0; i < pp->nfns; i++)
		if (pp->fn[i].id == id)
			return &pp->fn[i];
	return NULL;
}

static const struct pp_mapping *pp_map(const struct pp *pp, uint64_t id)
{
	size_t i;

	for (i = 0; i < pp->nmaps; i++)
		if (pp->map[i].id == id)
			return &pp->map[i];
	return NULL;
}

/* A sample's frame @i (leaf first) as "function" or "mapping+0xADDR". */
static const char *pp_frame(const struct pp *pp, const struct pp_sample *s, size_t i,
			    char *buf, size_t len)
{
	const struct pp_location *l = i < s->nloc ? pp_loc(pp, s->loc[i]) : NULL;
	const struct pp_function *fn = l ? pp_fn(pp, l->function) : NULL;
	const struct pp_mapping *m = l ? pp_map(pp, l->mapping) : NULL;

	if (!l)
		return "<no such location>";
	if (fn)
		return pp_str(pp, fn->name);
	snprintf(buf, len, "%s+0x%" PRIx64, m ? pp_str(pp, m->filename) : "", l->address);
	return buf;
}

/* Is sample @s's stack, leaf first, the @n names in @want? */
static bool pp_stack_is(const struct pp *pp, const struct pp_sample *s, const char *const *want,
			size_t n)
{
	char buf[128];
	size_t i;

	if (s->nloc != n)
		return false;
	for (i = 0; i < n; i++)
		if (strcmp(pp_frame(pp, s, i, buf, sizeof(buf)), want[i]))
			return false;
	return true;
}

/* The value of label @key of @s: its string, or the number in @num; NULL if none. */
static const char *pp_label(const struct pp *pp, const struct pp_sample *s, const char *key,
			    int64_t *num)
{
	size_t i;

	for (i = 0; i < s->nlabels; i++) {
		if (strcmp(pp_str(pp, s->label[i].key), key))
			continue;
		*num = s->label[i].num;
		return s->label[i].str ? pp_str(pp, s->label[i].str) : "";
	}
	return NULL;
}

/* The sample whose stack is @want and whose label "vm" is @vm (NULL: none). */
static const struct pp_sample *pp_find(const struct pp *pp, const char *const *want, size_t n,
				       const char *vm)
{
	int64_t num;
	size_t i;

	for (i = 0; i < pp->nsamples; i++) {
		const char *l = pp_label(pp, &pp->sample[i], "vm", &num);

		if (pp_stack_is(pp, &pp->sample[i], want, n) &&
		    (vm ? l && !strcmp(l, vm) : !l))
			return &pp->sample[i];
	}
	return NULL;
}

/* ---- The properties ---- */

/*
 * Stacks of depth 1, 2 and 3 under the roots "a" and "main", one with
 * labels that differ, one of an unnamed frame in a module and one in none.
 */
static struct vmctx_profile *shared_prefixes(void)
{
	VMCTX_OPTS(vmctx_profile_opts, o, .nvalues = 2);
	const struct vmctx_frame main_[] = { F("main") };
	const struct vmctx_frame cba[] = { F("c"), F("b"), F("a") };
	const struct vmctx_frame ba[] = { F("b"), F("a") };
	const struct vmctx_frame libc[] = { { .module = "libc.so.6", .address = 0x1a2b }, F("a") };
	const struct vmctx_frame none[] = { { .address = 0x10 }, F("a") };
	const struct vmctx_label x[] = { { .key = "vm", .str = "x" }, { .key = "vcpu", .num = 3 } };
	const struct vmctx_label y[] = { { .key = "vm", .str = "y" }, { .key = "vcpu", .num = -1 } };
	struct vmctx_profile *p = vmctx_profile_new(&o);

	CHECK(p, "a profile of two values");
	add(p, main_, 1, NULL, 0, 1, 10);
	add(p, cba, 3, x, 2, 2, 20);
	add(p, cba, 3, y, 2, 3, 30);
	add(p, cba, 3, x, 2, 4, 40);
	add(p, ba, 2, NULL, 0, 7, 70);
	add(p, libc, 2, NULL, 0, 5, 50);
	add(p, none, 2, NULL, 0, 6, 60);
	return p;
}

static const char shared_prefixes_folded[] =
	"a;[unknown] 6\n"
	"a;b 7\n"
	"a;b;c 9\n"
	"a;libc.so.6+0x1a2b 5\n"
	"main 1\n";

static void folded_is_root_first_one_line_per_stack(void)
{
	struct vmctx_profile *p = shared_prefixes();
	char *got = folded(p);

	CHECK(!strcmp(got, shared_prefixes_folded),
	      "root first, in text order, a;b;c summed over its labels:\n%s\nwant:\n%s", got,
	      shared_prefixes_folded);
	free(got);
	vmctx_profile_free(p);
}

static void pprof_holds_each_sample_with_its_labels(void)
{
	static const char *const cba[] = { "c", "b", "a" }, *const ba[] = { "b", "a" };
	static const char *const main_[] = { "main" };
	static const char *const libc[] = { "libc.so.6+0x1a2b", "a" };
	static const char *const none[] = { "+0x10", "a" };
	struct vmctx_profile *p = shared_prefixes();
	const struct pp_sample *s;
	int64_t num = 0;
	struct pp pp;
	size_t i;

	read_pprof(p, &pp);
	CHECK_EQ(pp.nsamples, 6, "samples: one per stack and labels");
	CHECK(pp.ntypes == 2 && !strcmp(pp_str(&pp, pp.type[0]), "samples") &&
	      !strcmp(pp_str(&pp, pp.unit[0]), "count") &&
	      !strcmp(pp_str(&pp, pp.type[1]), "cpu") &&
	      !strcmp(pp_str(&pp, pp.unit[1]), "nanoseconds"), "the default value types");
	CHECK(!pp.period && !pp.period_type && !pp.default_type && !pp.ncomments &&
	      !pp.time && !pp.duration, "no period, comments or times unless asked");
	s = pp_find(&pp, cba, 3, "x");
	CHECK(s && s->nvalues == 2 && s->value[0] == 6 && s->value[1] == 60,
	      "c;b;a with vm x: both values summed over its two adds");
	CHECK(s && pp_label(&pp, s, "vcpu", &num) && !*pp_label(&pp, s, "vcpu", &num) &&
	      num == 3, "vcpu is the number 3");
	s = pp_find(&pp, cba, 3, "y");
	CHECK(s && s->value[0] == 3 && s->value[1] == 30, "c;b;a with vm y: a sample of its own");
	CHECK(s && pp_label(&pp, s, "vcpu", &num) && num == -1, "vcpu is the number -1");
	s = pp_find(&pp, ba, 2, NULL);
	CHECK(s && s->value[0] == 7 && !s->nlabels, "b;a: no labels");
	s = pp_find(&pp, main_, 1, NULL);
	CHECK(s && s->value[0] == 1 && s->value[1] == 10, "main: a stack of one");
	s = pp_find(&pp, libc, 2, NULL);
	CHECK(s && s->value[0] == 5, "the unnamed frame in libc.so.6: its address and mapping");
	s = pp_find(&pp, none, 2, NULL);
	CHECK(s && s->value[0] == 6, "the unnamed frame in no module: its address alone");
	/* functions a, b, c, main; locations those and the two unnamed frames */
	CHECK_EQ(pp.nfns, 4, "a function per name and module");
	CHECK_EQ(pp.nlocs, 6, "a location per frame");
	CHECK(pp.nmaps == 1 && !strcmp(pp_str(&pp, pp.map[0].filename), "libc.so.6") &&
	      !pp.map[0].has_functions, "one mapping, libc.so.6, with no function named");
	for (i = 0; i < pp.nlocs; i++)
		CHECK(pp.loc[i].nlines == !!pp.loc[i].function,
		      "location %zu: a line only for a named frame", i);
	for (i = 0; i < pp.nfns; i++)
		CHECK(pp.fn[i].system_name == pp.fn[i].name && !pp.fn[i].filename,
		      "function %s: its system name is its name, and it has no file",
		      pp_str(&pp, pp.fn[i].name));
	pp_free(&pp);
	vmctx_profile_free(p);
}

/* The file name of @p's first pprof mapping, "" if it has none; @nmaps: how many. */
static char *first_mapping(const struct vmctx_profile *p, size_t *nmaps)
{
	struct pp pp;
	char *name;

	read_pprof(p, &pp);
	*nmaps = pp.nmaps;
	name = strdup(pp.nmaps ? pp_str(&pp, pp.map[0].filename) : "");
	for (size_t i = 1; i < pp.nmaps; i++)
		CHECK(i < 2 || pp.map[i - 1].id < pp.map[i].id, "mapping %zu: after the main one, by id", i);
	for (size_t i = 0; i < pp.nmaps; i++)
		for (size_t j = i + 1; j < pp.nmaps; j++)
			CHECK(pp.map[i].id != pp.map[j].id && pp.map[i].filename != pp.map[j].filename,
			      "mappings %zu and %zu: each once", i, j);
	pp_free(&pp);
	return name;
}

/*
 * pprof titles a profile with its first mapping, its main binary: that is
 * the mapping holding the most of the default (last) value in leaf
 * frames, not the first name in text order nor the most in callers nor
 * the most of another value; the others follow in id order, each once.
 */
static void main_mapping_holds_the_most_leaf_time(void)
{
	VMCTX_OPTS(vmctx_profile_opts, o, .nvalues = 2);
	const struct vmctx_frame in_kernel[] = {
		{ .module = "vmlinux", .function = "k" }, { .module = "[aegis128]", .function = "a" },
	};
	const struct vmctx_frame in_tree[] = {
		{ .module = "tree", .function = "leaf" }, { .module = "[aegis128]", .function = "a" },
	};
	const struct vmctx_frame in_libc[] = { { .module = "libc.so.6", .address = 0x10 } };
	struct vmctx_profile *p = vmctx_profile_new(&o);
	size_t nmaps;
	char *name;

	/* [aegis128]: 100 as a caller, none as a leaf; libc.so.6: the most
	 * of the first value; tree: the most of the last one */
	add(p, in_kernel, 2, NULL, 0, 1, 30);
	add(p, in_tree, 2, NULL, 0, 1, 40);
	add(p, in_tree, 2, NULL, 0, 1, 30);
	add(p, in_libc, 1, NULL, 0, 500, 50);
	name = first_mapping(p, &nmaps);
	CHECK(nmaps == 4 && !strcmp(name, "tree"),
	      "four mappings, tree (70 of the last value in leaves) first: %s", name);
	free(name);
	vmctx_profile_free(p);
	/* a tie between tree and vmlinux: the first of them in text order */
	p = vmctx_profile_new(&o);
	add(p, in_kernel, 2, NULL, 0, 1, 5);
	add(p, in_tree, 2, NULL, 0, 1, 5);
	name = first_mapping(p, &nmaps);
	CHECK(nmaps == 3 && !strcmp(name, "tree"), "a tie: tree, first in text order of the two: %s",
	      name);
	free(name);
	vmctx_profile_free(p);
}

/* The string table: "" first, then each string once, in text order. */
static void pprof_strings_are_once_each(void)
{
	struct vmctx_profile *p = shared_prefixes();
	struct pp pp;
	size_t i;

	read_pprof(p, &pp);
	CHECK(pp.nstrs && !*pp.str[0], "the string table starts with \"\"");
	for (i = 1; i < pp.nstrs; i++)
		CHECK(strcmp(pp.str[i - 1], pp.str[i]) < 0, "strings %zu and %zu: \"%s\", \"%s\"",
		      i - 1, i, pp.str[i - 1], pp.str[i]);
	/* "", a, b, c, main, libc.so.6, vm, x, y, vcpu, samples, count, cpu, nanoseconds */
	CHECK_EQ(pp.nstrs, 14, "each string once");
	pp_free(&pp);
	vmctx_profile_free(p);
}

/* Leaf first, depth @n: "f000" (the leaf) to the root "f<n - 1>". */
static struct vmctx_frame *deep_stack(size_t n, char (*names)[8])
{
	struct vmctx_frame *f = calloc(n, sizeof(*f));
	size_t i;

	if (!f)
		abort();
	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "f%03zu", i % 1000);
		f[i].function = names[i];
		f[i].module = "deep";
		f[i].address = 0x1000 + i;
	}
	return f;
}

/* 50 frames: folded from f049 down to f000, pprof leaf first with 50 locations. */
static void depth_50_is_whole_in_both_formats(void)
{
	char names[50][8], want[50 * 5 + 16] = "", buf[128], *got;
	struct vmctx_frame *f = deep_stack(50, names);
	struct vmctx_profile *p = vmctx_profile_new(NULL);
	const struct pp_sample *s;
	struct pp pp;
	size_t i;

	add(p, f, 50, NULL, 0, 42, 0);
	for (i = 50; i-- > 0;) {
		strcat(want, names[i]);
		strcat(want, i ? ";" : " 42\n");
	}
	got = folded(p);
	CHECK(!strcmp(got, want), "50 frames, root first:\n%s\nwant:\n%s", got, want);
	free(got);
	read_pprof(p, &pp);
	s = pp.nsamples == 1 ? &pp.sample[0] : NULL;
	CHECK(s && s->nloc == 50 && s->nvalues == 1 && s->value[0] == 42,
	      "one sample of 50 locations and one value");
	for (i = 0; s && i < 50; i++)
		CHECK(!strcmp(pp_frame(&pp, s, i, buf, sizeof(buf)), names[i]) &&
		      pp_loc(&pp, s->loc[i])->address == 0x1000 + i,
		      "location %zu is frame %zu, at its address", i, i);
	CHECK(pp.nmaps == 1 && pp.map[0].has_functions, "one mapping, with functions");
	CHECK(pp.nfns == 50 && pp.nfns && !strcmp(pp_str(&pp, pp.fn[0].filename), "deep"),
	      "50 functions, of the module \"deep\"");
	pp_free(&pp);
	vmctx_profile_free(p);
	free(f);
}

/* VMCTX_PROFILE_MAX_FRAMES is the deepest stack: one more is -E2BIG. */
static void depth_is_bounded(void)
{
	const size_t max = VMCTX_PROFILE_MAX_FRAMES;
	char (*names)[8] = calloc(max + 1, sizeof(*names));
	struct vmctx_frame *f = deep_stack(max + 1, names);
	struct vmctx_profile *p = vmctx_profile_new(NULL);
	const int64_t one = 1;
	struct pp pp;

	CHECK_EQ(vmctx_profile_add(p, f, max + 1, NULL, 0, &one), -E2BIG, "one frame too many");
	CHECK_EQ(vmctx_profile_add(p, f, max, NULL, 0, &one), 0, "the deepest stack");
	read_pprof(p, &pp);
	CHECK(pp.nsamples == 1 && pp.sample[0].nloc == max, "the deepest stack, whole");
	pp_free(&pp);
	vmctx_profile_free(p);
	free(f);
	free(names);
}

/*
 * A guest's names: ';' and controls are escaped in folded frames, raw
 * controls reach neither format, and "[...]" frames have no system name.
 */
static void names_are_escaped_and_pseudo_frames_stay(void)
{
	const struct vmctx_frame f[] = {
		{ .function = "f;g\x07 99", .module = "m\x1b" },
		{ .function = "[steal] (VM2)", .module = "[vmctx]" },
		{ .module = "/bin/s;h", .address = 0xff },
	};
	const struct vmctx_label l[] = { { .key = "comm", .str = "a;b c\n" } };
	struct vmctx_profile *p = vmctx_profile_new(NULL);
	char *got;
	struct pp pp;
	size_t i, j;

	add(p, f, 3, l, 1, 1, 0);
	got = folded(p);
	CHECK(!strcmp(got, "/bin/s\\x3bh+0xff;[steal] (VM2);f\\x3bg\\x07 99 1\n"),
	      "';' is \\x3b, controls \\xHH, spaces stay:\n%s", got);
	free(got);
	read_pprof(p, &pp);
	for (i = 0; i < pp.nstrs; i++)
		for (j = 0; pp.str[i][j]; j++)
			CHECK((unsigned char)pp.str[i][j] >= 0x20 && pp.str[i][j] != 0x7f,
			      "string %zu holds no raw control byte", i);
	for (i = 0; i < pp.nfns; i++) {
		const char *name = pp_str(&pp, pp.fn[i].name);

		CHECK(*name == '[' ? !pp.fn[i].system_name : pp.fn[i].system_name == pp.fn[i].name,
		      "%s: a system name unless it is a pseudo frame", name);
	}
	CHECK(pp.nsamples == 1 && pp.sample[0].nlabels == 1 &&
	      !strcmp(pp_str(&pp, pp.sample[0].label[0].str), "a;b c\\x0a"),
	      "the label, escaped, ';' as it is");
	pp_free(&pp);
	vmctx_profile_free(p);
}

/* The same samples, added in the opposite order: the same bytes in both formats. */
static void bytes_do_not_depend_on_call_order(void)
{
	const struct vmctx_frame s[][2] = {
		{ F("x"), F("root") }, { F("y"), F("root") }, { F("z"), { .module = "m" } },
		{ { .module = "m", .address = 2 }, F("root") }, { F("x"), F("other") },
	};
	const struct vmctx_label l[][1] = {
		{ { .key = "k", .str = "1" } }, { { .key = "j", .num = 2 } },
		{ { .key = "k", .str = "0" } }, { { .key = "k", .num = 0 } }, { { .key = "a", .str = "b" } },
	};
	struct vmctx_profile *p = vmctx_profile_new(NULL), *q = vmctx_profile_new(NULL);
	const size_t n = sizeof(s) / sizeof(s[0]);
	char *a, *b;
	size_t i, alen, blen;

	for (i = 0; i < n; i++) {
		add(p, s[i], 2, l[i], 1, (int64_t)i + 1, 0);
		add(q, s[n - 1 - i], 2, l[n - 1 - i], 1, (int64_t)(n - i), 0);
	}
	a = write_text(p, VMCTX_EXPORT_PPROF, &alen);
	b = write_text(q, VMCTX_EXPORT_PPROF, &blen);
	CHECK(alen == blen && !memcmp(a, b, alen), "pprof: the same bytes");
	free(a);
	free(b);
	a = folded(p);
	b = folded(q);
	CHECK(!strcmp(a, b), "folded: the same text:\n%s\nand:\n%s", a, b);
	free(a);
	free(b);
	vmctx_profile_free(p);
	vmctx_profile_free(q);
}

/* Period, comments and times: pprof's header fields, as the options say. */
static void options_reach_the_header(void)
{
	const char *const comments[] = { "VM1: guestOS1, QEMU pid 1001", "a tick is 1 ms" };
	VMCTX_OPTS(vmctx_profile_opts, o, .nvalues = 2, .value_type = { "events", "time" },
		   .value_unit = { NULL, "microseconds" }, .time_ns = 1700000000000000000ULL,
		   .duration_ns = 5000000000ULL, .period = 1000, .comments = comments,
		   .ncomments = 2);
	const struct vmctx_frame f[] = { F("main") };
	struct vmctx_profile *p = vmctx_profile_new(&o);
	struct pp pp;

	CHECK(p, "a profile with every option");
	add(p, f, 1, NULL, 0, 1, 1000);
	read_pprof(p, &pp);
	CHECK(pp.ntypes == 2 && !strcmp(pp_str(&pp, pp.type[0]), "events") &&
	      !strcmp(pp_str(&pp, pp.unit[0]), "count") &&
	      !strcmp(pp_str(&pp, pp.type[1]), "time") &&
	      !strcmp(pp_str(&pp, pp.unit[1]), "microseconds"),
	      "value types as given, \"count\" for the NULL unit");
	CHECK(!strcmp(pp_str(&pp, pp.period_type), "time") &&
	      !strcmp(pp_str(&pp, pp.period_unit), "microseconds") && pp.period == 1000 &&
	      !strcmp(pp_str(&pp, pp.default_type), "time"),
	      "the period is in the last value's type and unit, which is the default");
	CHECK(pp.ncomments == 2 && !strcmp(pp_str(&pp, pp.comment[0]), comments[0]) &&
	      !strcmp(pp_str(&pp, pp.comment[1]), comments[1]), "the comments, in order");
	CHECK(pp.time == o.time_ns && pp.duration == o.duration_ns, "time and duration");
	pp_free(&pp);
	vmctx_profile_free(p);
}

/* Without options: one value, samples/count; a profile without labels sums too. */
static void no_options_one_value(void)
{
	const struct vmctx_frame f[] = { F("main") };
	struct vmctx_profile *p = vmctx_profile_new(NULL);
	struct pp pp;

	add(p, f, 1, NULL, 0, 4, 0);
	add(p, f, 1, NULL, 0, 5, 0);
	read_pprof(p, &pp);
	CHECK(pp.ntypes == 1 && !strcmp(pp_str(&pp, pp.type[0]), "samples") &&
	      !strcmp(pp_str(&pp, pp.unit[0]), "count"), "one value, samples/count");
	CHECK(pp.nsamples == 1 && pp.sample[0].nvalues == 1 && pp.sample[0].value[0] == 9,
	      "one value a sample");
	pp_free(&pp);
	vmctx_profile_free(p);
}

/*
 * Sums stop at INT64_MAX and INT64_MIN; a folded line sums its samples
 * exactly before it stops, so their order does not matter; a label "" is
 * no label.
 */
static void sums_saturate_and_empty_labels_go(void)
{
	const struct vmctx_frame up[] = { F("up") }, down[] = { F("down") }, mixed[] = { F("mixed") };
	const struct vmctx_label empty[] = { { .key = "comm", .str = "" } };
	const struct vmctx_label l[][1] = {
		{ { .key = "vm", .str = "x" } }, { { .key = "vm", .str = "y" } },
		{ { .key = "vm", .str = "z" } },
	};
	struct vmctx_profile *p = vmctx_profile_new(NULL);
	char *got;
	struct pp pp;

	add(p, up, 1, NULL, 0, INT64_MAX, 0);
	add(p, up, 1, empty, 1, 1, 0);
	add(p, down, 1, NULL, 0, INT64_MIN, 0);
	add(p, down, 1, NULL, 0, -1, 0);
	add(p, mixed, 1, l[0], 1, INT64_MAX, 0);
	add(p, mixed, 1, l[1], 1, 5, 0);
	add(p, mixed, 1, l[2], 1, -10, 0);
	got = folded(p);
	CHECK(!strcmp(got, "down -9223372036854775808\nmixed 9223372036854775802\n"
		      "up 9223372036854775807\n"), "saturated sums:\n%s", got);
	free(got);
	read_pprof(p, &pp);
	CHECK(pp.nsamples == 5 && !pp.sample[0].nlabels && pp.sample[0].value[0] == (uint64_t)INT64_MIN &&
	      !pp.sample[4].nlabels && pp.sample[4].value[0] == INT64_MAX,
	      "down, and up: the sample with comm \"\" is the one without labels");
	pp_free(&pp);
	vmctx_profile_free(p);
}

/* An empty profile: no line, and a profile of no sample. */
static void empty_profile_writes_nothing(void)
{
	struct vmctx_profile *p = vmctx_profile_new(NULL);
	size_t len = 1;
	char *got = write_text(p, VMCTX_EXPORT_FOLDED, &len);
	struct pp pp;

	CHECK(!len, "no folded line");
	free(got);
	read_pprof(p, &pp);
	CHECK(!pp.nsamples && pp.nstrs && !*pp.str[0], "no sample, and \"\" first");
	pp_free(&pp);
	vmctx_profile_free(p);
}

/* vmctx_profile_write_fd() writes what vmctx_profile_write_mem() gives. */
static void write_fd_writes_the_same_bytes(void)
{
	struct vmctx_profile *p = shared_prefixes();
	char path[] = "/tmp/test-profile.XXXXXX", *want, got[4096];
	int fd = mkstemp(path);
	size_t len = 0;
	ssize_t n;

	CHECK(fd >= 0, "a temporary file");
	unlink(path);
	want = write_text(p, VMCTX_EXPORT_PPROF, &len);
	CHECK(!vmctx_profile_write_fd(p, VMCTX_EXPORT_PPROF, fd), "written to a file");
	n = pread(fd, got, sizeof(got), 0);
	CHECK(n == (ssize_t)len && !memcmp(got, want, len), "the same bytes");
	close(fd);
	free(want);
	vmctx_profile_free(p);
}

static void bad_options_fail_cleanly(void)
{
	const char *const comments[] = { "one", NULL };
	struct vmctx_profile_opts o = { .sz = sizeof(o), .nvalues = 3 };
	struct {
		struct vmctx_profile_opts o;
		uint64_t more;
	} newer = { .o = { .sz = sizeof(newer) }, .more = 1 };
	struct vmctx_profile *p;

	errno = 0;
	CHECK(!vmctx_profile_new(&o) && errno == EINVAL, "three values");
	o.nvalues = 2;
	o.period = -1;
	CHECK(!vmctx_profile_new(&o) && errno == EINVAL, "a negative period");
	o.period = 0;
	o.ncomments = 2;
	CHECK(!vmctx_profile_new(&o) && errno == EINVAL, "comments without an array");
	o.comments = comments;
	CHECK(!vmctx_profile_new(&o) && errno == EINVAL, "a NULL comment");
	o.ncomments = 0;
	o.sz = offsetof(struct vmctx_profile_opts, ncomments);
	CHECK(!vmctx_profile_new(&o) && errno == EINVAL, "options too short");
	CHECK(!vmctx_profile_new(&newer.o) && errno == EINVAL, "a field this library lacks");
	newer.more = 0;
	newer.o.nvalues = 2;
	p = vmctx_profile_new(&newer.o);
	CHECK(p, "newer options, zero beyond what the library knows");
	vmctx_profile_free(p);
}

static void bad_calls_fail_cleanly(void)
{
	const struct vmctx_frame f[] = { F("main") };
	const struct vmctx_label nokey[] = { { .str = "v" } }, emptykey[] = { { .key = "" } };
	struct vmctx_label many[VMCTX_PROFILE_MAX_LABELS + 1];
	struct vmctx_profile *p = vmctx_profile_new(NULL);
	const int64_t v = 1;
	void *buf = NULL;
	size_t len, i;
	char *got;

	for (i = 0; i <= VMCTX_PROFILE_MAX_LABELS; i++)
		many[i] = (struct vmctx_label){ .key = "k", .num = (int64_t)i };
	CHECK_EQ(vmctx_profile_add(NULL, f, 1, NULL, 0, &v), -EINVAL, "a NULL profile");
	CHECK_EQ(vmctx_profile_add(p, NULL, 1, NULL, 0, &v), -EINVAL, "NULL frames");
	CHECK_EQ(vmctx_profile_add(p, f, 0, NULL, 0, &v), -EINVAL, "no frame");
	CHECK_EQ(vmctx_profile_add(p, f, 1, NULL, 1, &v), -EINVAL, "NULL labels");
	CHECK_EQ(vmctx_profile_add(p, f, 1, NULL, 0, NULL), -EINVAL, "NULL values");
	CHECK_EQ(vmctx_profile_add(p, f, 1, nokey, 1, &v), -EINVAL, "a label without a key");
	CHECK_EQ(vmctx_profile_add(p, f, 1, emptykey, 1, &v), -EINVAL, "a label keyed \"\"");
	CHECK_EQ(vmctx_profile_add(p, f, 1, many, VMCTX_PROFILE_MAX_LABELS + 1, &v), -E2BIG,
		 "one label too many");
	CHECK_EQ(vmctx_profile_add(p, f, 1, many, VMCTX_PROFILE_MAX_LABELS, &v), 0,
		 "the most labels");
	got = folded(p);
	CHECK(!strcmp(got, "main 1\n"), "only the good call counts:\n%s", got);
	free(got);
	CHECK_EQ(vmctx_profile_write_mem(NULL, VMCTX_EXPORT_FOLDED, &buf, &len), -EINVAL,
		 "a NULL profile");
	CHECK_EQ(vmctx_profile_write_mem(p, (enum vmctx_export_format)7, &buf, &len), -EINVAL,
		 "an unknown format");
	CHECK_EQ(vmctx_profile_write_mem(p, VMCTX_EXPORT_PPROF, NULL, &len), -EINVAL, "no buf");
	CHECK_EQ(vmctx_profile_write_fd(p, VMCTX_EXPORT_FOLDED, -1), -EINVAL, "a bad fd");
	vmctx_profile_free(p);
	vmctx_profile_free(NULL);
}

/*
 * The indices' hash is SipHash-2-4, which a guest cannot flood without its
 * key: the vectors of the reference code (key 00..0f, messages 00, 01, ...).
 */
static void index_hash_is_siphash(void)
{
	const uint64_t key[2] = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL };
	const struct {
		size_t len;
		uint64_t hash;
	} want[] = {
		{ 0, 0x726fdb47dd0e0e31ULL }, { 7, 0xab0200f58b01d137ULL },
		{ 8, 0x93f5f5799a932462ULL }, { 15, 0xa129ca6149be45e5ULL },
		{ 63, 0x958a324ceb064572ULL },
	};
	uint8_t msg[64];
	size_t i;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = i;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_EQ(util_siphash(key, msg, want[i].len), want[i].hash, "SipHash-2-4 vector");
}

/* For check-export.sh: shared_prefixes(), and a stack of 50 under it. */
static void write_files(const char *dir)
{
	struct vmctx_profile *p = shared_prefixes();
	struct vmctx_frame *f;
	char names[50][8], path[4096];
	int fd;

	f = deep_stack(50, names);
	add(p, f, 50, NULL, 0, 11, 110);
	free(f);
	snprintf(path, sizeof(path), "%s/profile.pb.gz", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && !vmctx_profile_write_fd(p, VMCTX_EXPORT_PPROF, fd) && !close(fd),
	      "write %s", path);
	snprintf(path, sizeof(path), "%s/profile.folded", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && !vmctx_profile_write_fd(p, VMCTX_EXPORT_FOLDED, fd) && !close(fd),
	      "write %s", path);
	vmctx_profile_free(p);
}

int main(int argc, char **argv)
{
	folded_is_root_first_one_line_per_stack();
	pprof_holds_each_sample_with_its_labels();
	pprof_strings_are_once_each();
	main_mapping_holds_the_most_leaf_time();
	depth_50_is_whole_in_both_formats();
	depth_is_bounded();
	names_are_escaped_and_pseudo_frames_stay();
	bytes_do_not_depend_on_call_order();
	options_reach_the_header();
	no_options_one_value();
	sums_saturate_and_empty_labels_go();
	empty_profile_writes_nothing();
	write_fd_writes_the_same_bytes();
	bad_options_fail_cleanly();
	bad_calls_fail_cleanly();
	index_hash_is_siphash();
	if (argc > 1)
		write_files(argv[1]);
	return check_result("test-profile");
}
