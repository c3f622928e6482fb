// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Writing a bundle: line-oriented text, gzip-compressed (vmctx-bundle(5)).
 * The gzip trailer's CRC-32 and length are the checksum.  Only sealed
 * bundles are written: sealing has checked, sorted and pruned them, so
 * every bundle written reads back, and the output is canonical.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "bundle.h"

/* Text is compressed in chunks of this size; one line always fits twice over. */
#define TEXT_CHUNK	(1 << 16)
#define TEXT_BUF	(2 * TEXT_CHUNK + 4 * BUNDLE_MAX_SYMNAME)

struct writer {
	z_stream z;
	unsigned char *out;
	size_t out_cap;
	size_t fill;
	int err;
	char text[TEXT_BUF];
};

/* Compress what the text buffer holds; @finish ends the gzip member. */
static int flush(struct writer *w, bool finish)
{
	int ret;

	w->z.next_in = (unsigned char *)w->text;
	w->z.avail_in = w->fill;
	for (;;) {
		size_t used = w->z.total_out;

		if (w->out_cap - used < TEXT_CHUNK) {
			if (util_grow((void **)&w->out, &w->out_cap, used + TEXT_CHUNK, 1))
				return -ENOMEM;
		}
		w->z.next_out = w->out + used;
		w->z.avail_out = w->out_cap - used > UINT32_MAX ? UINT32_MAX : w->out_cap - used;
		ret = deflate(&w->z, finish ? Z_FINISH : Z_NO_FLUSH);
		if (ret == Z_STREAM_END)
			break;
		if (ret != Z_OK && ret != Z_BUF_ERROR)
			return -ENOMEM;
		if (!finish && !w->z.avail_in)
			break;
	}
	w->fill = 0;
	return 0;
}

static void emit(struct writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void emit(struct writer *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (w->err)
		return;
	if (w->fill >= TEXT_CHUNK)
		w->err = flush(w, false);
	if (w->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(w->text + w->fill, TEXT_BUF - w->fill, fmt, ap);
	va_end(ap);
	/* Formats hold numbers only; strings go through emit_str(). */
	if (n < 0 || (size_t)n >= TEXT_BUF - w->fill)
		w->err = -EINVAL;
	else
		w->fill += n;
}

/*
 * Bytes outside '!'..'~', and '%', are written as %XX (uppercase hex), so a
 * string is one space-free token of printable ASCII.
 */
static void emit_str(struct writer *w, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	if (w->err || !s)
		return;
	for (; *s; s++) {
		unsigned char c = *s;

		if (TEXT_BUF - w->fill < 4) {
			w->err = flush(w, false);
			if (w->err)
				return;
		}
		if (c <= ' ' || c >= 0x7f || c == '%') {
			w->text[w->fill++] = '%';
			w->text[w->fill++] = hex[c >> 4];
			w->text[w->fill++] = hex[c & 15];
		} else {
			w->text[w->fill++] = c;
		}
	}
}

/* Table @kind of object @obj, as x-unwind lines of base64 chunks. */
static void emit_unwind(struct writer *w, size_t obj, int kind, const struct vmctx_unwind *u)
{
	for (size_t off = 0; u->data && off < u->size; off += BUNDLE_UNWIND_CHUNK) {
		size_t n = u->size - off < BUNDLE_UNWIND_CHUNK ? u->size - off : BUNDLE_UNWIND_CHUNK;

		emit(w, "x-unwind %zu %s vaddr=0x%" PRIx64 " size=%zu off=%zu ", obj,
		     bundle_unwind_kind_name(kind), u->vaddr, u->size, off);
		/* (emit() leaves more than a chunk's base64 free in the buffer) */
		if (w->err)
			return;
		w->fill += bundle_unwind_encode(u->data + off, n, w->text + w->fill);
		emit(w, "\n");
	}
}

static void emit_records(struct writer *w, const struct vmctx_bundle *b)
{
	const struct switch_log *l = &b->switches;
	bool has_log = l->n || l->ngaps;
	size_t i, j;

	/* A bundle without a switch log stays a version 1 that older readers read. */
	emit(w, "vmctx-bundle %d\n", has_log ? BUNDLE_VERSION_LOG : BUNDLE_VERSION);
	emit(w, "counts tasks=%zu objects=%zu maps=%zu syms=%zu kmods=%zu ksyms=%zu",
	     b->ntasks, b->nobjects, b->maps_total, b->syms_total, b->nkmods, b->nksyms);
	/* Optional: a bundle without pairs reads as before they existed. */
	if (b->npairs)
		emit(w, " clockpairs=%zu", b->npairs);
	if (has_log)
		emit(w, " switches=%zu gaps=%zu", l->n, l->ngaps);
	emit(w, "\n");
	emit(w, "identity hostname=");
	emit_str(w, b->hostname);
	emit(w, " release=");
	emit_str(w, b->release);
	emit(w, " boot_id=");
	emit_str(w, b->boot_id);
	/* Optional: a bundle that does not say what wrote it reads as before. */
	if (b->agent && *b->agent) {
		emit(w, " agent=");
		emit_str(w, b->agent);
	}
	emit(w, "\nclock tsc_khz=%" PRIu64 " tsc=%" PRIu64 " ns=%" PRIu64 "\n",
	     b->tsc_khz, b->clock_tsc, b->clock_ns);
	emit(w, "cr3_mask 0x%" PRIx64 "\n", b->cr3_mask);
	/* Optional: a bundle without a window reads as before it existed. */
	if (b->has_window)
		emit(w, "window start=%" PRIu64 " end=%" PRIu64 "\n", b->window_start,
		     b->window_end);

	for (i = 0; i < b->ntasks; i++) {
		const struct vmctx_task *t = &b->tasks[i];

		emit(w, "task %zu root=0x%" PRIx64 " pid=%d tgid=%d start=%" PRIu64,
		     i, t->root, t->pid, t->tgid, t->start);
		if (t->exit == VMCTX_TIME_NONE)
			emit(w, " exit=- comm=");
		else
			emit(w, " exit=%" PRIu64 " comm=", t->exit);
		emit_str(w, t->comm);
		emit(w, "\n");
	}
	for (i = 0; i < b->nobjects; i++) {
		const struct vmctx_object *o = &b->objects[i];

		emit(w, "object %zu build_id=%s path=", i, o->build_id ? o->build_id : "-");
		emit_str(w, o->path);
		emit(w, "\n");
	}
	for (i = 0; i < b->nobjects; i++) {
		const struct vmctx_object *o = &b->objects[i];

		for (j = 0; j < o->nsyms; j++) {
			emit(w, "sym %zu 0x%" PRIx64 " 0x%" PRIx64 " ", i, o->syms[j].start,
			     o->syms[j].end - o->syms[j].start);
			emit_str(w, o->syms[j].name);
			emit(w, "\n");
		}
	}
	for (i = 0; i < b->nobjects; i++)
		for (int k = 0; k < VMCTX_UNWIND_KINDS; k++)
			emit_unwind(w, i, k, &b->objects[i].unwind[k]);
	for (i = 0; i < b->ntasks; i++) {
		const struct vmctx_task *t = &b->tasks[i];

		for (j = 0; j < t->nmaps; j++) {
			const struct vmctx_map *m = &t->maps[j];

			emit(w, "map %zu 0x%" PRIx64 " 0x%" PRIx64 " pgoff=0x%" PRIx64
			     " bias=0x%" PRIx64, i, m->start, m->end, m->pgoff, m->bias);
			if (m->object < 0)
				emit(w, " object=- path=");
			else
				emit(w, " object=%d path=", m->object);
			emit_str(w, m->path);
			emit(w, "\n");
		}
	}
	for (i = 0; i < b->nkmods; i++) {
		const struct vmctx_kmod *k = &b->kmods[i];

		emit(w, "kmod %zu 0x%" PRIx64 " 0x%" PRIx64 " ", i, k->start, k->end - k->start);
		emit_str(w, k->name);
		emit(w, "\n");
	}
	for (i = 0; i < b->nksyms; i++) {
		const struct vmctx_ksym *k = &b->ksyms[i];

		if (k->module < 0)
			emit(w, "ksym 0x%" PRIx64 " - ", k->addr);
		else
			emit(w, "ksym 0x%" PRIx64 " %d ", k->addr, k->module);
		emit_str(w, k->name);
		emit(w, "\n");
	}
	for (i = 0; i < b->npairs; i++)
		emit(w, "clockpair tsc=%" PRIu64 " ns=%" PRIu64 "\n", b->pairs[i].tsc,
		     b->pairs[i].ns);
	for (i = 0; i < l->n; i++) {
		const struct switch_task *t = &l->tasks[l->recs[i].task];

		emit(w, "switch %" PRIu32 " %" PRIu64 " pid=%d tgid=%d kind=%s comm=",
		     l->recs[i].cpu, l->recs[i].ns, t->pid, t->tgid, switch_log_kind_word(t->kind));
		emit_str(w, l->comms[t->comm]);
		emit(w, "\n");
	}
	for (i = 0; i < l->ngaps; i++)
		emit(w, "gap %" PRIu32 " %" PRIu64 " %" PRIu64 "\n", l->gaps[i].cpu,
		     l->gaps[i].start, l->gaps[i].end);
	emit(w, "end\n");
}

int vmctx_bundle_write_mem(const struct vmctx_bundle *b, void **buf, size_t *len)
{
	struct writer *w;
	int err;

	if (!buf || !len)
		return -EINVAL;
	err = bundle_check_sealed(b);
	if (err)
		return err;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	/* windowBits 15 + 16: a gzip member, whose trailer holds CRC-32 and length. */
	if (deflateInit2(&w->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(w);
		return -ENOMEM;
	}
	emit_records(w, b);
	err = w->err;
	if (!err)
		err = flush(w, true);
	if (!err) {
		*buf = w->out;
		*len = w->z.total_out;
		w->out = NULL;
	}
	deflateEnd(&w->z);
	free(w->out);
	free(w);
	return err;
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/* Readers never see a partial bundle: write a temporary file, then rename it. */
int vmctx_bundle_write_file(const struct vmctx_bundle *b, const char *path)
{
	static unsigned int seq;
	char *tmp = NULL;
	size_t len;
	void *buf;
	int err, fd = -1, i;

	if (!b || !path || !*path)
		return -EINVAL;
	err = vmctx_bundle_write_mem(b, &buf, &len);
	if (err)
		return err;
	for (i = 0; i < 100 && fd < 0; i++) {
		free(tmp);
		if (asprintf(&tmp, "%s.tmp.%d.%u", path, (int)getpid(),
			     __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED)) < 0) {
			tmp = NULL;
			err = -ENOMEM;
			goto out;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST) {
			err = -errno;
			goto out;
		}
	}
	if (fd < 0) {
		err = -EEXIST;
		goto out;
	}
	err = write_all(fd, buf, len);
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
out:
	free(tmp);
	free(buf);
	return err;
}
