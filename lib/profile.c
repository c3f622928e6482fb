// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Profiles: samples the caller makes (perf's histogram entries, an
 * export's rows), each a stack of any depth, labels and values, summed by
 * stack and labels, and written as folded stacks (here) or pprof
 * (profile-pprof.c), gzip-compressed here.
 *
 * Every string is escaped once, as it comes in, and kept once.  Strings,
 * frames and samples are found in hash tables keyed with SipHash and a
 * secret key of the profile's: a guest names most strings, and must not
 * be able to make adding them quadratic.  The writers sort by text, never
 * by id or call order: the same samples give the same bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "profile.h"

/* ---- Strings, frames and samples, each once ---- */

/* An index's hash of @n bytes: the top half of their SipHash. */
static uint32_t hash(const struct vmctx_profile *p, const void *data, size_t n)
{
	return util_siphash(p->key, data, n) >> 32;
}

static bool same_str(const void *ctx, uint32_t id, const void *key)
{
	const struct vmctx_profile *p = ctx;

	return !strcmp(p->strs[id], key);
}

/* The id of @raw, escaped, which is added if it is new; or -errno. */
static int64_t intern(struct vmctx_profile *p, const char *raw)
{
	int n = vmctx_escape(NULL, 0, raw);
	int64_t i;
	uint32_t h;
	char *s;

	if (n < 0)
		return n;
	if (util_grow((void **)&p->scratch, &p->scratch_cap, (size_t)n + 1, 1))
		return -ENOMEM;
	vmctx_escape(p->scratch, (size_t)n + 1, raw);
	h = hash(p, p->scratch, n);
	i = util_hash_find(&p->str_index, h, same_str, p, p->scratch);
	if (i >= 0)
		return i;
	if (p->nstrs >= PROFILE_MAX_IDS)
		return -E2BIG;
	if (util_grow((void **)&p->strs, &p->strs_cap, p->nstrs + 1, sizeof(*p->strs)))
		return -ENOMEM;
	s = strdup(p->scratch);
	if (!s || util_hash_add(&p->str_index, h, p->nstrs)) {
		free(s);
		return -ENOMEM;
	}
	p->strs[p->nstrs] = s;
	return p->nstrs++;
}

static bool same_frame(const void *ctx, uint32_t id, const void *key)
{
	const struct vmctx_profile *p = ctx;
	const struct profile_frame *a = &p->frames[id], *b = key;

	return a->function == b->function && a->module == b->module && a->address == b->address;
}

/* The id of frame @f, which is added if it is new; or -errno. */
static int64_t frame_id(struct vmctx_profile *p, const struct vmctx_frame *f)
{
	struct profile_frame k = { .address = f->address, .function = PROFILE_NONE };
	int64_t i;
	uint32_t h;

	if (f->function) {
		if ((i = intern(p, f->function)) < 0)
			return i;
		k.function = i;
	}
	/* "" is id 0, as no module is */
	if (f->module) {
		if ((i = intern(p, f->module)) < 0)
			return i;
		k.module = i;
	}
	h = hash(p, &k, sizeof(k));
	i = util_hash_find(&p->frame_index, h, same_frame, p, &k);
	if (i >= 0)
		return i;
	if (p->nframes >= PROFILE_MAX_IDS)
		return -E2BIG;
	if (util_grow((void **)&p->frames, &p->frames_cap, p->nframes + 1, sizeof(*p->frames)) ||
	    util_hash_add(&p->frame_index, h, p->nframes))
		return -ENOMEM;
	p->frames[p->nframes] = k;
	return p->nframes++;
}

/* The sample whose stack and labels are at the ends of stacks[] and labels[]. */
struct sample_key {
	uint32_t nframes, nlabels;
};

static bool same_sample(const void *ctx, uint32_t id, const void *key)
{
	const struct vmctx_profile *p = ctx;
	const struct profile_sample *s = &p->samples[id];
	const struct sample_key *k = key;

	if (s->nframes != k->nframes || s->nlabels != k->nlabels)
		return false;
	if (memcmp(&p->stacks[s->stack], &p->stacks[p->nstacks], k->nframes * sizeof(*p->stacks)))
		return false;
	/* labels[] is NULL in a profile without labels */
	return !k->nlabels || !memcmp(&p->labels[s->label], &p->labels[p->nlabels],
				      k->nlabels * sizeof(*p->labels));
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t sum;

	if (__builtin_add_overflow(a, b, &sum))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return sum;
}

/* Count @values in the sample at the ends of stacks[] and labels[]: new, or one seen before. */
static int add_sample(struct vmctx_profile *p, uint32_t nframes, uint32_t nlabels,
		      const int64_t *values)
{
	struct sample_key k = { nframes, nlabels };
	uint32_t i, h = hash(p, &p->stacks[p->nstacks], nframes * sizeof(*p->stacks));
	struct profile_sample *s;
	int64_t id;

	/* the number of frames is in their hash, as their length */
	if (nlabels)
		h ^= hash(p, &p->labels[p->nlabels], nlabels * sizeof(*p->labels)) * 0x9e3779b1u;
	id = util_hash_find(&p->sample_index, h, same_sample, p, &k);
	if (id < 0) {
		if (p->nsamples >= PROFILE_MAX_IDS)
			return -E2BIG;
		if (util_grow((void **)&p->samples, &p->samples_cap, p->nsamples + 1,
			       sizeof(*p->samples)) ||
		    util_hash_add(&p->sample_index, h, p->nsamples))
			return -ENOMEM;
		id = p->nsamples++;
		s = &p->samples[id];
		memset(s, 0, sizeof(*s));
		s->stack = p->nstacks;
		s->label = p->nlabels;
		s->nframes = nframes;
		s->nlabels = nlabels;
		p->nstacks += nframes;
		p->nlabels += nlabels;
	}
	s = &p->samples[id];
	for (i = 0; i < p->nvalues; i++)
		s->value[i] = sat_add(s->value[i], values[i]);
	return 0;
}

/* Put label @l at labels[] + @at; 0 if it was "", 1 if it was put, or -errno. */
static int put_label(struct vmctx_profile *p, size_t at, const struct vmctx_label *l)
{
	struct profile_label *out = &p->labels[at];
	int64_t i;

	if (l->str && !*l->str)
		return 0;
	i = intern(p, l->key);
	if (i < 0)
		return i;
	out->key = i;
	out->str = PROFILE_NONE;
	out->num = 0;
	if (!l->str) {
		out->num = l->num;
		return 1;
	}
	i = intern(p, l->str);
	if (i < 0)
		return i;
	out->str = i;
	return 1;
}

int vmctx_profile_add(struct vmctx_profile *p, const struct vmctx_frame *frames, size_t nframes,
		      const struct vmctx_label *labels, size_t nlabels, const int64_t *values)
{
	size_t i, n = 0;
	int err;

	if (!p || !frames || !nframes || (nlabels && !labels) || !values)
		return -EINVAL;
	if (nframes > VMCTX_PROFILE_MAX_FRAMES || nlabels > VMCTX_PROFILE_MAX_LABELS)
		return -E2BIG;
	for (i = 0; i < nlabels; i++)
		if (!labels[i].key || !*labels[i].key)
			return -EINVAL;
	if (util_grow((void **)&p->stacks, &p->stacks_cap, p->nstacks + nframes,
		       sizeof(*p->stacks)) ||
	    util_grow((void **)&p->labels, &p->labels_cap, p->nlabels + nlabels,
		       sizeof(*p->labels)))
		return -ENOMEM;
	for (i = 0; i < nframes; i++) {
		int64_t f = frame_id(p, &frames[i]);

		if (f < 0)
			return (int)f;
		p->stacks[p->nstacks + i] = f;
	}
	for (i = 0; i < nlabels; i++) {
		err = put_label(p, p->nlabels + n, &labels[i]);
		if (err < 0)
			return err;
		n += err;
	}
	return add_sample(p, nframes, n, values);
}

/* ---- The profile and its options ---- */

static int set_options(struct vmctx_profile *p, const struct vmctx_profile_opts *o)
{
	static const char *const type[2] = { "samples", "cpu" };
	static const char *const unit[2] = { "count", "nanoseconds" };
	int64_t i;
	size_t j;

	p->nvalues = o->nvalues ? o->nvalues : 1;
	p->time_ns = o->time_ns;
	p->duration_ns = o->duration_ns;
	p->period = o->period;
	for (j = 0; j < p->nvalues; j++) {
		if ((i = intern(p, o->value_type[j] ? o->value_type[j] : type[j])) < 0)
			return (int)i;
		p->value_type[j] = i;
		if ((i = intern(p, o->value_unit[j] ? o->value_unit[j] : unit[j])) < 0)
			return (int)i;
		p->value_unit[j] = i;
	}
	if (!o->ncomments)
		return 0;
	p->comments = calloc(o->ncomments, sizeof(*p->comments));
	if (!p->comments)
		return -ENOMEM;
	for (j = 0; j < o->ncomments; j++) {
		if ((i = intern(p, o->comments[j])) < 0)
			return (int)i;
		p->comments[p->ncomments++] = i;
	}
	return 0;
}

static bool options_valid(const struct vmctx_profile_opts *o)
{
	size_t i;

	if (!OPTS_VALID(o, struct vmctx_profile_opts, ncomments) || o->nvalues > 2 ||
	    o->period < 0 || (o->ncomments && !o->comments))
		return false;
	for (i = 0; i < o->ncomments; i++)
		if (!o->comments[i])
			return false;
	return true;
}

struct vmctx_profile *vmctx_profile_new(const struct vmctx_profile_opts *opts)
{
	const struct vmctx_profile_opts defaults = { .sz = sizeof(defaults) };
	struct vmctx_profile *p;
	int err;

	if (!opts)
		opts = &defaults;
	if (!options_valid(opts)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	/* a secret key for the indices, so that no guest can aim its names at one place */
	util_hash_key(p->key, (uintptr_t)p);
	/* "" is string 0: the writers count on it */
	err = (int)intern(p, "");
	if (!err)
		err = set_options(p, opts);
	if (err) {
		vmctx_profile_free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

void vmctx_profile_free(struct vmctx_profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nstrs; i++)
		free(p->strs[i]);
	free(p->strs);
	util_hash_index_free(&p->str_index);
	free(p->scratch);
	free(p->frames);
	util_hash_index_free(&p->frame_index);
	free(p->samples);
	util_hash_index_free(&p->sample_index);
	free(p->stacks);
	free(p->labels);
	free(p->comments);
	free(p);
}

/* ---- Folded stacks ---- */

/* The folded text of each frame, and its place in text order (equal texts, equal places). */
struct folded {
	const struct vmctx_profile *p;
	const char **text;	/* by frame id */
	char **owned;		/* the texts made for unnamed frames */
	size_t nowned;
	uint32_t *place;	/* by frame id */
};

static int cmp_text(const void *a, const void *b, void *arg)
{
	const struct folded *f = arg;

	return strcmp(f->text[*(const uint32_t *)a], f->text[*(const uint32_t *)b]);
}

/* A frame as folded stacks name it: its function, else "module+0xADDR", else "[unknown]". */
static int frame_text(struct folded *f, uint32_t id)
{
	const struct vmctx_profile *p = f->p;
	const struct profile_frame *fr = &p->frames[id];
	char *t;

	if (fr->function != PROFILE_NONE) {
		f->text[id] = p->strs[fr->function];
		return 0;
	}
	if (!fr->module) {
		f->text[id] = "[unknown]";
		return 0;
	}
	if (asprintf(&t, "%s+0x%" PRIx64, p->strs[fr->module], fr->address) < 0)
		return -ENOMEM;
	f->text[id] = f->owned[f->nowned++] = t;
	return 0;
}

static void folded_free(struct folded *f)
{
	size_t i;

	for (i = 0; i < f->nowned; i++)
		free(f->owned[i]);
	free(f->owned);
	free(f->text);
	free(f->place);
}

static int folded_init(struct folded *f, const struct vmctx_profile *p)
{
	size_t n = p->nframes, i;
	uint32_t *ord;
	int err = 0;

	memset(f, 0, sizeof(*f));
	f->p = p;
	f->text = calloc(n + 1, sizeof(*f->text));
	f->owned = calloc(n + 1, sizeof(*f->owned));
	f->place = calloc(n + 1, sizeof(*f->place));
	ord = calloc(n + 1, sizeof(*ord));
	if (!f->text || !f->owned || !f->place || !ord)
		err = -ENOMEM;
	for (i = 0; !err && i < n; i++) {
		ord[i] = i;
		err = frame_text(f, i);
	}
	if (!err) {
		qsort_r(ord, n, sizeof(*ord), cmp_text, f);
		for (i = 0; i < n; i++)
			f->place[ord[i]] = i && !cmp_text(&ord[i - 1], &ord[i], f) ?
					   f->place[ord[i - 1]] : i;
	}
	free(ord);
	if (err)
		folded_free(f);
	return err;
}

/* Stacks root first, by their frames' texts; a stack before the ones it is the root of. */
static int cmp_folded(const void *a, const void *b, void *arg)
{
	const struct folded *f = arg;
	const struct profile_sample *s = &f->p->samples[*(const uint32_t *)a];
	const struct profile_sample *t = &f->p->samples[*(const uint32_t *)b];
	const uint32_t *x = &f->p->stacks[s->stack], *y = &f->p->stacks[t->stack];
	uint32_t i, n = s->nframes < t->nframes ? s->nframes : t->nframes;

	for (i = 1; i <= n; i++) {
		uint32_t u = f->place[x[s->nframes - i]], v = f->place[y[t->nframes - i]];

		if (u != v)
			return u < v ? -1 : 1;
	}
	return s->nframes < t->nframes ? -1 : s->nframes > t->nframes;
}

/*
 * A folded frame: the escaped text, with ';', the frame separator, as
 * "\x3b".  Escaped text spells a backslash "\\", so this cannot be faked.
 * Spaces stay: every reader takes the count after the line's last space.
 */
static void put_frame(struct util_buf *b, const char *esc)
{
	const char *p;

	while ((p = strchr(esc, ';'))) {
		util_buf_put(b, esc, p - esc);
		util_buf_put(b, "\\x3b", 4);
		esc = p + 1;
	}
	util_buf_put(b, esc, strlen(esc));
}

/*
 * One "frame;frame;frame value" line per stack, its samples' first values
 * summed.  The sum is exact, then cut to int64: fewer than 2^32 samples
 * cannot overflow 128 bits, so it does not depend on their order.
 */
static void folded_lines(const struct folded *f, const uint32_t *ord, struct util_buf *b)
{
	const struct vmctx_profile *p = f->p;
	size_t i, j, n = p->nsamples;
	uint32_t k;

	for (i = 0; i < n && !b->err; i = j) {
		const struct profile_sample *s = &p->samples[ord[i]];
		__int128 sum = 0;
		char num[32];

		for (j = i; j < n && !cmp_folded(&ord[i], &ord[j], (void *)f); j++)
			sum += p->samples[ord[j]].value[0];
		sum = sum > INT64_MAX ? INT64_MAX : sum < INT64_MIN ? INT64_MIN : sum;
		for (k = s->nframes; k-- > 0;) {
			put_frame(b, f->text[p->stacks[s->stack + k]]);
			if (k)
				util_buf_put(b, ";", 1);
		}
		util_buf_put(b, num, snprintf(num, sizeof(num), " %" PRId64 "\n", (int64_t)sum));
	}
}

static int write_folded(const struct vmctx_profile *p, struct util_buf *b)
{
	uint32_t *ord = malloc((p->nsamples + 1) * sizeof(*ord));
	struct folded f;
	size_t i;
	int err;

	if (!ord)
		return -ENOMEM;
	err = folded_init(&f, p);
	if (err) {
		free(ord);
		return err;
	}
	for (i = 0; i < p->nsamples; i++)
		ord[i] = i;
	qsort_r(ord, p->nsamples, sizeof(*ord), cmp_folded, &f);
	folded_lines(&f, ord, b);
	folded_free(&f);
	free(ord);
	return b->err;
}

/* ---- Writing ---- */

/* A gzip member of @in, as pprof files are, fed to zlib in pieces it can count. */
static int gzip(const struct util_buf *in, struct util_buf *out)
{
	const size_t piece = 1u << 30;
	size_t done = 0;
	z_stream z;
	int ret;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	do {
		if (!z.avail_in && done < in->len) {
			z.next_in = in->p + done;
			z.avail_in = in->len - done < piece ? in->len - done : piece;
			done += z.avail_in;
		}
		if (util_grow((void **)&out->p, &out->cap, out->len + 65536, 1)) {
			deflateEnd(&z);
			return -ENOMEM;
		}
		z.next_out = out->p + out->len;
		z.avail_out = out->cap - out->len < piece ? out->cap - out->len : piece;
		out->len += z.avail_out;
		ret = deflate(&z, done == in->len ? Z_FINISH : Z_NO_FLUSH);
		out->len -= z.avail_out;
	} while (ret == Z_OK || ret == Z_BUF_ERROR);
	deflateEnd(&z);
	return ret == Z_STREAM_END ? 0 : -EIO;
}

int vmctx_profile_write_mem(const struct vmctx_profile *p, enum vmctx_export_format format,
			    void **buf, size_t *len)
{
	struct util_buf raw = { 0 }, out = { 0 };
	int err;

	if (!p || !buf || !len)
		return -EINVAL;
	switch (format) {
	case VMCTX_EXPORT_FOLDED:
		err = write_folded(p, &out);
		break;
	case VMCTX_EXPORT_PPROF:
		err = profile_pprof(p, &raw);
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

int vmctx_profile_write_fd(const struct vmctx_profile *p, enum vmctx_export_format format, int fd)
{
	size_t len, done = 0;
	void *buf;
	int err;

	if (fd < 0)
		return -EINVAL;
	err = vmctx_profile_write_mem(p, format, &buf, &len);
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
