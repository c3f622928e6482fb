// SPDX-License-Identifier: GPL-2.0
/*
 * vmctx-agent serve: what the service keeps between requests, and where
 * it listens.  The switch store holds the backend's switch records of the
 * last --keep seconds, each CPU's in ring order, for each request to
 * replay into its own switch log (agent-switches.c) over the window it
 * asks for.  The listener takes the host's connections only: on vsock the
 * peer must be the host (CID 2), so that no process of the guest fetches
 * the addresses of the kernel and of every process; a Unix socket is
 * created 0600.  The configuration file gives the service's defaults.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

/* ---- What the service keeps, within --max-mib -------------------------------- */

/* The bytes a task record holds: the record and its mappings. */
size_t agent_task_bytes(const struct agent_task *t)
{
	size_t n = sizeof(*t), i;

	for (i = 0; i < t->nmaps; i++)
		n += sizeof(t->maps[i]) + (t->maps[i].path ? strlen(t->maps[i].path) + 1 : 0);
	return n;
}

struct kept {
	uint64_t ns;
	size_t bytes;
};

static int kept_newest_first(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

uint64_t agent_budget_from(const struct agent_tasks *ts, const struct agent_switch_store *st,
			   uint64_t from, size_t max)
{
	size_t used = 0, ended = 0, total, n = 0, i, bytes;
	uint64_t cut = from;
	struct kept *k;

	total = st->n * sizeof(*st->v);
	for (i = 0; i < ts->n; i++) {
		bytes = agent_task_bytes(&ts->v[i]);
		total += bytes;
		if (ts->v[i].exit == AGENT_TIME_NONE)
			used += bytes;
		else
			ended++;
	}
	if (!max || total <= max)
		return from;
	k = malloc((st->n + ended ? st->n + ended : 1) * sizeof(*k));
	if (!k)
		return from;	/* kept longer: tried again at the next prune */
	for (i = 0; i < st->n; i++)
		k[n++] = (struct kept){ st->v[i].ns, sizeof(*st->v) };
	for (i = 0; i < ts->n; i++)
		if (ts->v[i].exit != AGENT_TIME_NONE)
			k[n++] = (struct kept){ ts->v[i].exit, agent_task_bytes(&ts->v[i]) };
	qsort(k, n, sizeof(*k), kept_newest_first);
	/* down to nine tenths, so that the next prunes have room to fill */
	for (i = 0; i < n; i++) {
		if (used + k[i].bytes > max / 10 * 9) {
			cut = k[i].ns + 1;
			break;
		}
		used += k[i].bytes;
	}
	free(k);
	return cut > from ? cut : from;
}

/* ---- The switch store ---------------------------------------------------- */

int agent_switch_store_add(struct agent_switch_store *st, const struct agent_switch *sw,
			   size_t n)
{
	size_t cap;

	if (!n)
		return 0;
	if (st->n + n > st->cap) {
		struct agent_switch *v;

		cap = st->cap ? st->cap : 1024;
		while (cap < st->n + n)
			cap *= 2;
		v = realloc(st->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		st->v = v;
		st->cap = cap;
	}
	memcpy(st->v + st->n, sw, n * sizeof(*sw));
	st->n += n;
	return 0;
}

/*
 * Forget what ended before @before: each CPU keeps its last switch before
 * it (the task it ran when a window starting there opens), and a loss
 * that reaches past it.
 */
void agent_switch_store_prune(struct agent_switch_store *st, uint64_t before)
{
	size_t i, j, ncpus = 0;
	size_t *last;

	for (i = 0; i < st->n; i++)
		if (st->v[i].cpu >= ncpus)
			ncpus = st->v[i].cpu + 1;
	last = calloc(ncpus ? ncpus : 1, sizeof(*last));
	if (!last)
		return;	/* kept longer: pruned at the next poll */
	/* index + 1 of each CPU's last switch before @before */
	for (i = 0; i < st->n; i++)
		if (st->v[i].type == AGENT_SWITCH && st->v[i].ns < before)
			last[st->v[i].cpu] = i + 1;
	for (i = j = 0; i < st->n; i++) {
		const struct agent_switch *s = &st->v[i];
		bool keep = s->type == AGENT_SWITCH ?
			    s->ns >= before || last[s->cpu] == i + 1 :
			    s->lost_to == AGENT_TIME_NONE || s->lost_to >= before;

		if (keep)
			st->v[j++] = *s;
	}
	st->n = j;
	free(last);
}

void agent_switch_store_free(struct agent_switch_store *st)
{
	free(st->v);
	memset(st, 0, sizeof(*st));
}

/* ---- The listener -------------------------------------------------------- */

/* "vsock:PORT" or "unix:PATH"; -EINVAL for anything else. */
int agent_listen_parse(const char *spec, struct agent_listen *l)
{
	char *end;
	unsigned long port;

	memset(l, 0, sizeof(*l));
	if (!strncmp(spec, "vsock:", 6)) {
		errno = 0;
		port = strtoul(spec + 6, &end, 10);
		if (errno || end == spec + 6 || *end || spec[6] == '-' || !port ||
		    port > 0xfffffffeUL)
			return -EINVAL;
		l->vsock = true;
		l->port = (unsigned int)port;
		return 0;
	}
	if (!strncmp(spec, "unix:", 5) && spec[5] == '/' &&
	    strlen(spec + 5) < sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(l->path, sizeof(l->path), "%s", spec + 5);
		return 0;
	}
	return -EINVAL;
}

int agent_listen_open(const struct agent *a, const struct agent_listen *l)
{
	struct sockaddr_vm vm = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old_mask;
	int fd, err, rc;

	fd = socket(l->vsock ? AF_VSOCK : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err = -errno;
		agent_err(a, "%s: cannot make a socket: %s%s", l->vsock ? "vsock" : "unix",
			  strerror(-err),
			  l->vsock && err == -EAFNOSUPPORT ?
			  " (this guest has no vsock device: give the VM one, e.g. QEMU's -device vhost-vsock-pci,guest-cid=N)" : "");
		return err;
	}
	if (l->vsock) {
		vm.svm_port = l->port;
		if (bind(fd, (struct sockaddr *)&vm, sizeof(vm)))
			goto fail;
	} else {
		/* a socket left by an agent before is replaced; any other file is not */
		if (!lstat(l->path, &st) && S_ISSOCK(st.st_mode))
			unlink(l->path);
		snprintf(un.sun_path, sizeof(un.sun_path), "%s", l->path);
		/*
		 * 0600 from bind() itself, under a umask of its own (the agent
		 * has no other thread): a chmod() after it left a window in
		 * which a permissive umask (0 or 002) let others connect.
		 */
		old_mask = umask(0177);
		rc = bind(fd, (struct sockaddr *)&un, sizeof(un));
		umask(old_mask);
		if (rc)
			goto fail;
	}
	if (listen(fd, 4))
		goto fail;
	return fd;
fail:
	err = -errno;
	if (l->vsock)
		agent_err(a, "vsock port %u: %s", l->port, strerror(-err));
	else
		agent_err(a, "%s: %s", l->path, strerror(-err));
	close(fd);
	return err;
}

/*
 * The next connection, or -EAGAIN when none waits.  On vsock, one that does
 * not come from the host is closed and -EPERM returned: a guest process
 * could connect through the loopback transport.
 */
int agent_listen_accept(const struct agent_listen *l, int lfd, unsigned int *peer)
{
	struct sockaddr_vm vm;
	socklen_t len = sizeof(vm);
	int fd;

	fd = accept4(lfd, l->vsock ? (struct sockaddr *)&vm : NULL, l->vsock ? &len : NULL,
		     SOCK_CLOEXEC);
	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	*peer = l->vsock ? vm.svm_cid : 0;
	if (l->vsock && (len < sizeof(vm) || vm.svm_cid != VMADDR_CID_HOST)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* ---- The configuration file ------------------------------------------------ */

/*
 * "key = value" lines, '#' comments, blank lines.  Each key is handed to
 * @set with its value; an unknown key or a bad value is an error that
 * names the file and line.  A missing file is no error when @optional.
 */
int agent_config_read(const struct agent *a, const char *path, bool optional,
		      int (*set)(void *ctx, const char *key, const char *value), void *ctx)
{
	char line[512];
	size_t lineno = 0;
	FILE *f = fopen(path, "re");
	int err = 0;

	if (!f) {
		if (optional && errno == ENOENT)
			return 0;
		err = -errno;
		agent_err(a, "%s: %s", path, strerror(-err));
		return err;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		char *key, *value, *eq, *end;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			agent_err(a, "%s:%zu: line too long", path, lineno);
			err = -EINVAL;
			break;
		}
		key = line + strspn(line, " \t");
		if (*key == '#' || *key == '\n' || !*key)
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			agent_err(a, "%s:%zu: not 'key = value'", path, lineno);
			err = -EINVAL;
			break;
		}
		value = eq + 1 + strspn(eq + 1, " \t");
		for (end = eq; end > key && (end[-1] == ' ' || end[-1] == '\t'); end--)
			;
		*end = '\0';
		end = value + strlen(value);
		while (end > value && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
			end--;
		*end = '\0';
		err = set(ctx, key, value);
		if (err)
			agent_err(a, "%s:%zu: %s = '%s': %s", path, lineno, key, value,
				  err == -ENOENT ? "no such setting" : "bad value");
	}
	fclose(f);
	return err;
}
