// SPDX-License-Identifier: GPL-2.0
/*
 * What the agent reads from /proc (under agent->root): process maps, the
 * kernel's symbols and modules, and the guest's identity.
 */
#include "agent.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *agent_path(const struct agent *a, const char *rel)
{
	const char *root = a->root;
	size_t n = strlen(root);
	char *p;

	while (*rel == '/')
		rel++;
	if (asprintf(&p, "%s%s%s", root, n && root[n - 1] == '/' ? "" : "/", rel) < 0)
		return NULL;
	return p;
}

/*
 * No file the agent reads comes near this: a kallsyms of 200,000 symbols
 * is about 10 MB, a process's maps at the kernel's 65,530 mappings about
 * 9 MB, and a bundle over the reader's default 64 MiB is refused anyway
 * (with a message that says so, which needs the file read).  A fake
 * tree's /dev/zero would otherwise grow without end.
 */
#define AGENT_READ_MAX	(128u << 20)

int agent_read_fd(const struct agent *a, int fd, char **buf, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap), *nb;
	ssize_t r;

	if (!b)
		return -ENOMEM;
	for (;;) {
		if (n >= AGENT_READ_MAX) {
			free(b);
			return -EFBIG;
		}
		if (cap - n < 4096) {
			nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR && !agent_interrupted(a))
				continue;
			r = -errno;
			free(b);
			return r;
		}
		if (!r)
			break;
		n += r;
	}
	b[n] = '\0';
	*buf = b;
	if (len)
		*len = n;
	return 0;
}

int agent_read_file(const struct agent *a, const char *rel, char **buf, size_t *len)
{
	char *path = agent_path(a, rel);
	int fd, err;

	if (!path)
		return -ENOMEM;
	/* A FIFO in a fake tree reads as empty instead of waiting for a writer. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return -errno;
	err = agent_read_fd(a, fd, buf, len);
	close(fd);
	return err;
}

void agent_lines_init(struct agent_lines *it, char *buf, size_t len)
{
	it->next = buf;
	it->end = buf + len;
	it->lineno = 0;
}

char *agent_lines_next(struct agent_lines *it, bool *has_nul)
{
	char *line = it->next, *nl;

	if (line >= it->end)
		return NULL;
	nl = memchr(line, '\n', it->end - line);
	if (!nl)
		nl = it->end;
	*nl = '\0';
	it->next = nl + 1;
	it->lineno++;
	*has_nul = strlen(line) != (size_t)(nl - line);
	return line;
}

int agent_lines_each(const struct agent *a, struct agent_lines *it, struct agent_bad *bad,
		     agent_line_fn fn, void *ctx)
{
	char *line;
	bool nul;
	int err = 0;

	while (!err && (line = agent_lines_next(it, &nul))) {
		if (nul)
			agent_bad_line(a, bad, it->lineno, "NUL byte", line);
		else if (*line)
			err = fn(a, bad, it->lineno, line, ctx);
		if (!err && agent_interrupted(a))
			err = -EINTR;
	}
	return err;
}

static unsigned int hexval(char c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

int agent_unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		unsigned int v;

		if (*s != '%') {
			*out++ = *s;
			continue;
		}
		if (!isxdigit((unsigned char)s[1]) || !isxdigit((unsigned char)s[2]))
			return -EINVAL;
		v = (hexval(s[1]) << 4) | hexval(s[2]);
		if (!v)
			return -EINVAL;
		*out++ = v;
		s += 2;
	}
	*out = '\0';
	return 0;
}

void agent_free_maps(struct agent_map *maps, size_t nmaps)
{
	size_t i;

	for (i = 0; i < nmaps; i++)
		free(maps[i].path);
	free(maps);
}

/*
 * "start-end perms offset dev inode   path".  Only executable mappings can
 * hold an IP, so the others are left out of the bundle.
 */
static int parse_map_line(char *line, struct agent_map *m, bool *exec)
{
	unsigned long long start, end, pgoff;
	char perms[8];
	int pos = 0;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%llx-%llx %7s %llx %*s %*u %n", &start, &end, perms, &pgoff,
		   &pos) < 4 || !pos || start >= end)
		return -EINVAL;
	*exec = strchr(perms, 'x');
	m->prot = (strchr(perms, 'r') ? PF_R : 0) | (strchr(perms, 'w') ? PF_W : 0) |
		  (*exec ? PF_X : 0);
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->path = strdup(line + pos);
	return m->path ? 0 : -ENOMEM;
}

static int cmp_map(const void *x, const void *y)
{
	const struct agent_map *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->lineno < b->lineno ? -1 : a->lineno > b->lineno;
}

/*
 * The kernel lists mappings in order and never overlapping; a bundle
 * refuses overlaps, so a line that breaks the order is a bad line.
 */
static size_t drop_overlaps(const struct agent *a, struct agent_bad *bad, struct agent_map *v,
			    size_t n)
{
	size_t i, kept = 0;

	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_map);
	for (i = 0; i < n; i++) {
		if (kept && v[i].start < v[kept - 1].end) {
			agent_bad_line(a, bad, v[i].lineno, "overlaps another mapping", v[i].path);
			free(v[i].path);
			continue;
		}
		v[kept++] = v[i];
	}
	return kept;
}

/* The executable mappings read so far. */
struct map_list {
	struct agent_map *v;
	size_t n;
	size_t cap;
};

static int add_map_line(const struct agent *a, struct agent_bad *bad, size_t lineno, char *line,
			void *ctx)
{
	struct map_list *l = ctx;
	struct agent_map m, *nv;
	bool exec;
	int err;

	err = parse_map_line(line, &m, &exec);
	if (err == -ENOMEM)
		return err;
	if (err) {
		agent_bad_line(a, bad, lineno, "not \"start-end perms offset dev inode path\"", line);
		return 0;
	}
	if (!exec) {
		free(m.path);
		return 0;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 32;
		nv = realloc(l->v, l->cap * sizeof(*nv));
		if (!nv) {
			free(m.path);
			return -ENOMEM;
		}
		l->v = nv;
	}
	m.lineno = lineno;
	l->v[l->n++] = m;
	return 0;
}

int agent_read_maps(const struct agent *a, int tgid, int tid, struct agent_map **maps,
		    size_t *nmaps)
{
	struct agent_bad bad = { 0 };
	struct map_list l = { 0 };
	struct agent_lines it;
	char rel[96], *buf, *file;
	size_t len;
	int err;

	if (tid == tgid)
		snprintf(rel, sizeof(rel), "proc/%d/maps", tgid);
	else
		snprintf(rel, sizeof(rel), "proc/%d/task/%d/maps", tgid, tid);
	err = agent_read_file(a, rel, &buf, &len);
	if (err)
		return err;
	file = agent_path(a, rel);
	if (!file) {
		free(buf);
		return -ENOMEM;
	}
	bad.file = file;
	agent_lines_init(&it, buf, len);
	err = agent_lines_each(a, &it, &bad, add_map_line, &l);
	if (!err)
		l.n = drop_overlaps(a, &bad, l.v, l.n);
	agent_bad_report(a, &bad);
	free(file);
	free(buf);
	if (err) {
		agent_free_maps(l.v, l.n);
		return err;
	}
	*maps = l.v;
	*nmaps = l.n;
	return 0;
}

/* The first line of a small file, or "" if it cannot be read. */
static char *first_line(const struct agent *a, const char *rel)
{
	char *buf;

	if (agent_read_file(a, rel, &buf, NULL)) {
		agent_note(a, "%s: unreadable, left empty", rel);
		return strdup("");
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

int agent_add_identity(struct agent *a)
{
	char *host = first_line(a, "proc/sys/kernel/hostname");
	char *rel = first_line(a, "proc/sys/kernel/osrelease");
	char *boot = first_line(a, "proc/sys/kernel/random/boot_id");
	int err = -ENOMEM;

	if (host && rel && boot)
		err = vmctx_bundle_set_identity(a->bundle, host, rel, boot);
	if (err)
		agent_err(a, "cannot build the bundle: the guest's identity (hostname \"%s\", release \"%s\", boot id \"%s\"): %s",
			  host ? host : "", rel ? rel : "", boot ? boot : "", vmctx_strerror(err));
	free(host);
	free(rel);
	free(boot);
	return err;
}

/* Text symbols only: a sample's IP is code. */
static bool text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/*
 * A builder error on a line of a guest file: out of memory stops the
 * agent, naming the file and line; anything else makes a bad line.
 */
static int line_error(const struct agent *a, struct agent_bad *bad, size_t lineno,
		      const char *line, int err, const char *why)
{
	if (err == -ENOMEM) {
		agent_err(a, "cannot build the bundle: %s:%zu: %s", bad->file, lineno,
			  vmctx_strerror(err));
		return err;
	}
	agent_bad_line(a, bad, lineno, why ? why : vmctx_strerror(err), line);
	return 0;
}

/* "address type name", or "address type name\t[module]": text symbols only. */
static int add_ksym_line(const struct agent *a, struct agent_bad *bad, size_t lineno,
			 char *line, void *ctx)
{
	char *end, *name, *tab, *close = NULL, *mod = NULL;
	unsigned long long addr;
	char type;
	int err;

	addr = strtoull(line, &end, 16);
	if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ' || !end[3])
		return line_error(a, bad, lineno, line, -EINVAL,
				  "not \"address type name [module]\"");
	type = end[1];
	name = end + 3;
	if (!text_type(type))
		return 0;
	tab = strchr(name, '\t');
	if (tab) {
		close = strchr(tab, ']');
		if (tab[1] != '[' || !close)
			return line_error(a, bad, lineno, line, -EINVAL, "module not in [brackets]");
		*tab = '\0';
		*close = '\0';
		mod = tab + 2;
	}
	err = vmctx_bundle_add_ksym(a->bundle, addr, name, mod);
	if (tab) {
		/* The line stays whole for messages. */
		*tab = '\t';
		*close = ']';
	}
	/* Pseudo-modules such as [bpf] are not in /proc/modules. */
	if (!err || err == -ENOENT)
		return 0;
	return line_error(a, bad, lineno, line, err, err == -EINVAL ? "no symbol name" : NULL);
}

/* "name size refcount deps state address [taints]" */
static int add_module_line(const struct agent *a, struct agent_bad *bad, size_t lineno,
			   char *line, void *ctx)
{
	unsigned long long size, addr;
	char name[257];
	int idx;

	if (sscanf(line, "%256s %llu %*s %*s %*s %llx", name, &size, &addr) != 3)
		return line_error(a, bad, lineno, line, -EINVAL,
				  "not \"name size refcount deps state address\"");
	/* The module's index on success. */
	idx = vmctx_bundle_add_kmodule(a->bundle, name, addr, size);
	if (idx >= 0)
		return 0;
	if (idx == -EEXIST)
		return line_error(a, bad, lineno, line, idx, "module listed twice");
	return line_error(a, bad, lineno, line, idx,
			  idx == -EINVAL ? "module runs past the end of the address space" : NULL);
}

/* The lines of a kernel file, each through @fn; its bad lines in one warning. */
static int add_lines(struct agent *a, const char *file, char *buf, size_t len, agent_line_fn fn)
{
	struct agent_bad bad = { .file = file };
	struct agent_lines it;
	int err;

	agent_lines_init(&it, buf, len);
	err = agent_lines_each(a, &it, &bad, fn, NULL);
	agent_bad_report(a, &bad);
	return err;
}

/* kptr_restrict shows every address as zero; one nonzero line proves it does not. */
static bool kallsyms_zeroed(const char *buf, size_t len)
{
	const char *line = buf, *end = buf + len, *nl;

	if (!len)
		return false;
	for (; line < end; line = nl + 1) {
		if (strtoull(line, NULL, 16))
			return false;
		nl = memchr(line, '\n', end - line);
		if (!nl)
			break;
	}
	return true;
}

static int write_sysctl(const struct agent *a, const char *rel, const char *val)
{
	char *path = agent_path(a, rel);
	int fd, err = 0;

	if (!path)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}

#define KPTR_RESTRICT "proc/sys/kernel/kptr_restrict"

/* /proc/kallsyms and /proc/modules as read; mods is NULL without modules. */
struct kernel_files {
	char *syms;
	size_t syms_len;
	char *mods;
	size_t mods_len;
};

/* /proc/modules may be absent (a kernel without modules). */
static int read_kernel_files(struct agent *a, struct kernel_files *k)
{
	int err;

	memset(k, 0, sizeof(*k));
	err = agent_read_file(a, "proc/kallsyms", &k->syms, &k->syms_len);
	if (err) {
		if (err != -EINTR)
			agent_err(a, "%s/proc/kallsyms: %s", a->real_root ? "" : a->root,
				  strerror(-err));
		return err;
	}
	err = agent_read_file(a, "proc/modules", &k->mods, &k->mods_len);
	if (err == -ENOENT)
		return 0;
	if (err) {
		free(k->syms);
		k->syms = NULL;
		if (err != -EINTR)
			agent_err(a, "%s/proc/modules: %s", a->real_root ? "" : a->root,
				  strerror(-err));
	}
	return err;
}

static void free_kernel_files(struct kernel_files *k)
{
	free(k->syms);
	free(k->mods);
	memset(k, 0, sizeof(*k));
}

/*
 * Read /proc/kallsyms and /proc/modules.  When kptr_restrict zeroes their
 * addresses, set kptr_restrict to 0 for the time of one read, where we
 * may, and put the old value back.
 */
static int read_kernel(struct agent *a, struct kernel_files *k)
{
	char *old = NULL;
	int err;

	err = read_kernel_files(a, k);
	if (err || !kallsyms_zeroed(k->syms, k->syms_len))
		return err;
	free_kernel_files(k);

	if (!agent_read_file(a, KPTR_RESTRICT, &old, NULL))
		old[strcspn(old, "\n")] = '\0';
	if (!old || !*old || !strcmp(old, "0")) {
		agent_err(a, "/proc/kallsyms shows only zero addresses although kernel.kptr_restrict is %s; run as root (CAP_SYSLOG), or pass --no-kallsyms",
			  old && *old ? old : "unknown");
		free(old);
		return -EACCES;
	}
	err = write_sysctl(a, KPTR_RESTRICT, "0");
	if (err) {
		agent_err(a, "/proc/kallsyms shows only zero addresses because kernel.kptr_restrict is %s, and setting it to 0 failed: %s; run as root, or pass --no-kallsyms",
			  old, strerror(-err));
		free(old);
		return -EACCES;
	}
	agent_note(a, "kernel.kptr_restrict was %s: set to 0 while reading /proc/kallsyms", old);
	err = read_kernel_files(a, k);
	if (write_sysctl(a, KPTR_RESTRICT, old))
		agent_warn(a, "could not restore kernel.kptr_restrict to %s", old);
	if (!err && kallsyms_zeroed(k->syms, k->syms_len)) {
		agent_err(a, "/proc/kallsyms still shows only zero addresses with kernel.kptr_restrict=0 (it was %s, and is restored); run as root (CAP_SYSLOG), or pass --no-kallsyms",
			  old);
		free_kernel_files(k);
		err = -EACCES;
	}
	free(old);
	return err;
}

int agent_add_kernel(struct agent *a)
{
	char *syms_path = agent_path(a, "proc/kallsyms");
	char *mods_path = agent_path(a, "proc/modules");
	struct kernel_files k;
	int err = -ENOMEM;

	if (!syms_path || !mods_path) {
		agent_err(a, "%s", strerror(ENOMEM));
		goto out;
	}
	err = read_kernel(a, &k);
	if (err)
		goto out;
	/* Modules first: each module symbol names its module. */
	if (k.mods)
		err = add_lines(a, mods_path, k.mods, k.mods_len, add_module_line);
	if (!err)
		err = add_lines(a, syms_path, k.syms, k.syms_len, add_ksym_line);
	free_kernel_files(&k);
out:
	free(syms_path);
	free(mods_path);
	return err;
}
