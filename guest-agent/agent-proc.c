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

int agent_read_fd(int fd, char **buf, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap), *nb;
	ssize_t r;

	if (!b)
		return -ENOMEM;
	for (;;) {
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
			if (errno == EINTR)
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
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return -errno;
	err = agent_read_fd(fd, buf, len);
	close(fd);
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

int agent_read_maps(const struct agent *a, int tgid, int tid, struct agent_map **maps,
		    size_t *nmaps)
{
	struct agent_map *v = NULL, *nv;
	size_t n = 0, cap = 0;
	char rel[96], *buf, *line, *next;
	int err;

	if (tid == tgid)
		snprintf(rel, sizeof(rel), "proc/%d/maps", tgid);
	else
		snprintf(rel, sizeof(rel), "proc/%d/task/%d/maps", tgid, tid);
	err = agent_read_file(a, rel, &buf, NULL);
	if (err)
		return err;
	for (line = buf; *line; line = next) {
		struct agent_map m;
		bool exec;

		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		if (!*line)
			continue;
		err = parse_map_line(line, &m, &exec);
		if (err == -ENOMEM)
			goto fail;
		if (err) {
			agent_warn(a, "%s: cannot parse \"%s\"", rel, line);
			continue;
		}
		if (!exec) {
			free(m.path);
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(m.path);
				err = -ENOMEM;
				goto fail;
			}
			v = nv;
		}
		v[n++] = m;
	}
	free(buf);
	*maps = v;
	*nmaps = n;
	return 0;
fail:
	free(buf);
	agent_free_maps(v, n);
	return err;
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

static int add_kallsyms(struct agent *a, char *buf)
{
	char *line, *next;
	int err;

	for (line = buf; *line; line = next) {
		char *end, *name, *mod = NULL;
		unsigned long long addr;
		char type;

		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		addr = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ' || !end[3])
			continue;
		type = end[1];
		name = end + 3;
		if (!text_type(type))
			continue;
		end = strchr(name, '\t');
		if (end) {
			*end = '\0';
			mod = end + 1;
			if (*mod != '[')
				continue;
			mod++;
			mod[strcspn(mod, "]")] = '\0';
		}
		err = vmctx_bundle_add_ksym(a->bundle, addr, name, mod);
		/* Pseudo-modules such as [bpf] are not in /proc/modules. */
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
	}
	return 0;
}

/* "name size refcount deps state address [taints]" */
static int add_modules(struct agent *a, char *buf)
{
	char *line, *next;
	int idx;

	for (line = buf; *line; line = next) {
		unsigned long long size, addr;
		char name[257];

		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		if (sscanf(line, "%256s %llu %*s %*s %*s %llx", name, &size, &addr) != 3)
			continue;
		/* The module's index on success. */
		idx = vmctx_bundle_add_kmodule(a->bundle, name, addr, size);
		if (idx < 0 && idx != -EEXIST)
			return idx;
	}
	return 0;
}

/* kptr_restrict shows every address as zero; one nonzero line proves it does not. */
static bool kallsyms_zeroed(const char *buf)
{
	const char *line = buf;

	if (!*buf)
		return false;
	while (*line) {
		if (strtoull(line, NULL, 16))
			return false;
		line = strchrnul(line, '\n');
		if (*line)
			line++;
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

/* /proc/modules may be absent (a kernel without modules). */
static int read_kernel_files(struct agent *a, char **syms, char **mods)
{
	int err;

	*syms = NULL;
	*mods = NULL;
	err = agent_read_file(a, "proc/kallsyms", syms, NULL);
	if (err) {
		agent_err(a, "%s/proc/kallsyms: %s", a->real_root ? "" : a->root, strerror(-err));
		return err;
	}
	err = agent_read_file(a, "proc/modules", mods, NULL);
	if (err == -ENOENT)
		return 0;
	if (err) {
		free(*syms);
		*syms = NULL;
		agent_err(a, "%s/proc/modules: %s", a->real_root ? "" : a->root, strerror(-err));
	}
	return err;
}

static void free_kernel_files(char **syms, char **mods)
{
	free(*syms);
	free(*mods);
	*syms = NULL;
	*mods = NULL;
}

/*
 * Read /proc/kallsyms and /proc/modules.  When kptr_restrict zeroes their
 * addresses, set kptr_restrict to 0 for the time of one read, where we
 * may, and put the old value back.
 */
static int read_kernel(struct agent *a, char **syms, char **mods)
{
	char *old = NULL;
	int err;

	err = read_kernel_files(a, syms, mods);
	if (err || !kallsyms_zeroed(*syms))
		return err;
	free_kernel_files(syms, mods);

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
	err = read_kernel_files(a, syms, mods);
	if (write_sysctl(a, KPTR_RESTRICT, old))
		agent_warn(a, "could not restore kernel.kptr_restrict to %s", old);
	if (!err && kallsyms_zeroed(*syms)) {
		agent_err(a, "/proc/kallsyms still shows only zero addresses with kernel.kptr_restrict=0 (it was %s, and is restored); run as root (CAP_SYSLOG), or pass --no-kallsyms",
			  old);
		free_kernel_files(syms, mods);
		err = -EACCES;
	}
	free(old);
	return err;
}

int agent_add_kernel(struct agent *a)
{
	char *mods, *syms;
	int err;

	err = read_kernel(a, &syms, &mods);
	if (err)
		return err;
	if (mods)
		err = add_modules(a, mods);
	if (!err)
		err = add_kallsyms(a, syms);
	free_kernel_files(&syms, &mods);
	return err;
}
