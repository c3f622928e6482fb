// SPDX-License-Identifier: GPL-2.0
/*
 * The vmctx_guest module's files (vmctx_guest(4)): the task table, with a
 * header holding the guest clock pair, the fork/exec/exit event ring, and
 * the per-CPU switch rings.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Format 2 adds "map" events; the agent reads 1 as well. */
#define KMOD_VERSION	2

static const char *const event_names[] = {
	[AGENT_EVENT_FORK] = "fork",
	[AGENT_EVENT_EXEC] = "exec",
	[AGENT_EVENT_EXIT] = "exit",
	[AGENT_EVENT_MAP] = "map",
};

/* Explain why a module file cannot be opened; the module is the usual reason. */
static void open_error(const struct agent *a, const char *path, int err)
{
	if (err == -ENOENT)
		agent_err(a, "%s: %s: the vmctx_guest module is not loaded; load vmctx_guest.ko: insmod vmctx_guest.ko (see vmctx_guest(4))",
			  path, strerror(-err));
	else if (err == -EACCES || err == -EPERM)
		agent_err(a, "%s: %s: the vmctx_guest module shows page-table roots to root (CAP_SYS_ADMIN) only; run vmctx-agent as root",
			  path, strerror(-err));
	else
		agent_err(a, "%s: %s", path, strerror(-err));
}

static int open_kmod_file(const struct agent *a, const char *name)
{
	char *path;
	int fd;

	if (asprintf(&path, "%s/%s", a->kmod_dir, name) < 0)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		open_error(a, path, fd);
	}
	free(path);
	return fd;
}

static int parse_u64(const char *s, int base, uint64_t *v)
{
	unsigned long long x;
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, base);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

static int parse_int(const char *s, int *v)
{
	uint64_t x;

	if (parse_u64(s, 10, &x) || x > INT32_MAX)
		return -EINVAL;
	*v = x;
	return 0;
}

/* "0x..." or "-" (no root). */
static int parse_root(const char *s, uint64_t *v)
{
	if (!strcmp(s, "-")) {
		*v = AGENT_NO_ROOT;
		return 0;
	}
	if (strncmp(s, "0x", 2))
		return -EINVAL;
	return parse_u64(s + 2, 16, v);
}

/* Split @line at single spaces into at most @max fields. */
static size_t split(char *line, char **f, size_t max)
{
	size_t n = 0;

	while (n < max) {
		f[n++] = line;
		line = strchr(line, ' ');
		if (!line)
			break;
		*line++ = '\0';
	}
	return line ? max + 1 : n;
}

/* "pid tgid start_ns root user_root comm", already split. */
static int parse_task_fields(char **f, struct agent_task_row *t)
{
	if (parse_int(f[0], &t->pid) || parse_int(f[1], &t->tgid) ||
	    parse_u64(f[2], 10, &t->start_ns) || parse_root(f[3], &t->root) ||
	    parse_root(f[4], &t->user_root))
		return -EINVAL;
	if (strlen(f[5]) >= sizeof(t->comm))
		return -EINVAL;
	strcpy(t->comm, f[5]);
	return agent_unescape(t->comm);
}

int agent_kmod_parse_task_line(char *line, struct agent_task_row *t)
{
	char *f[6];

	if (split(line, f, 6) != 6)
		return -EINVAL;
	return parse_task_fields(f, t);
}

static int parse_hex(const char *s, uint64_t *v)
{
	return strncmp(s, "0x", 2) ? -EINVAL : parse_u64(s + 2, 16, v);
}

/* "seq map tsc ns pid tgid exec|exit start end pgoff path", already split. */
static int parse_map_event(char **f, struct agent_event *e)
{
	if (parse_u64(f[0], 10, &e->seq) || parse_u64(f[2], 10, &e->tsc) ||
	    parse_u64(f[3], 10, &e->ns) || parse_int(f[4], &e->task.pid) ||
	    parse_int(f[5], &e->task.tgid) || (strcmp(f[6], "exec") && strcmp(f[6], "exit")) ||
	    parse_hex(f[7], &e->start) || parse_hex(f[8], &e->end) || parse_hex(f[9], &e->pgoff) ||
	    e->end <= e->start || f[10][0] != '/' || agent_unescape(f[10]))
		return -EINVAL;
	e->other = !strcmp(f[6], "exit");
	/* the module's maps are of the image open at their time: no root given */
	e->task.root = e->task.user_root = AGENT_NO_ROOT;
	e->path = strdup(f[10]);
	return e->path ? 0 : -ENOMEM;
}

/*
 * "seq type tsc ns pid tgid other start_ns root user_root comm",
 * "seq map tsc ns pid tgid exec|exit start end pgoff path", or "lost N" (returned as
 * -ENODATA: the sequence numbers show the gap too).  A map event's path is
 * malloc'ed (-ENOMEM if it cannot be).
 */
int agent_kmod_parse_event_line(char *line, struct agent_event *e)
{
	char *f[11];
	size_t i, n;

	memset(e, 0, sizeof(*e));
	if (!strncmp(line, "lost ", 5))
		return -ENODATA;
	n = split(line, f, 11);
	if (n == 11 && !strcmp(f[1], event_names[AGENT_EVENT_MAP])) {
		e->type = AGENT_EVENT_MAP;
		return parse_map_event(f, e);
	}
	if (n != 11)
		return -EINVAL;
	for (i = 0; i < 3; i++)
		if (!strcmp(f[1], event_names[i]))
			break;
	if (i == 3)
		return -EINVAL;
	e->type = i;
	if (parse_u64(f[0], 10, &e->seq) || parse_u64(f[2], 10, &e->tsc) ||
	    parse_u64(f[3], 10, &e->ns) || parse_int(f[6], &e->other))
		return -EINVAL;
	/* The task's fields, as in the table: pid, tgid, then start_ns past "other". */
	f[6] = f[5];
	f[5] = f[4];
	return parse_task_fields(f + 5, &e->task);
}

static const char *const switch_kinds[] = {
	[VMCTX_TASK_USER] = "task",
	[VMCTX_TASK_KTHREAD] = "kthread",
	[VMCTX_TASK_IDLE] = "idle",
};

static int parse_cpu(const char *s, unsigned int *cpu)
{
	uint64_t v;

	if (parse_u64(s, 10, &v) || v > UINT32_MAX)
		return -EINVAL;
	*cpu = v;
	return 0;
}

/*
 * "switch CPU NS PID TGID KIND COMM", "lost CPU FROM TO N", or "lost CPU
 * FROM - N" for a loss still under way.  Whether the values are plausible
 * is the switch log's to judge.
 */
int agent_kmod_parse_switch_line(char *line, struct agent_switch *s)
{
	char *f[7];
	size_t n, i;

	memset(s, 0, sizeof(*s));
	n = split(line, f, 7);
	if (n == 5 && !strcmp(f[0], "lost")) {
		s->type = AGENT_SWITCH_LOST;
		s->lost_to = AGENT_TIME_NONE;
		if (parse_cpu(f[1], &s->cpu) || parse_u64(f[2], 10, &s->ns) ||
		    (strcmp(f[3], "-") && parse_u64(f[3], 10, &s->lost_to)) ||
		    parse_u64(f[4], 10, &s->nlost))
			return -EINVAL;
		return 0;
	}
	if (n != 7 || strcmp(f[0], "switch"))
		return -EINVAL;
	s->type = AGENT_SWITCH;
	for (i = 0; i < 3; i++)
		if (!strcmp(f[5], switch_kinds[i]))
			break;
	if (i == 3 || parse_cpu(f[1], &s->cpu) || parse_u64(f[2], 10, &s->ns) ||
	    parse_int(f[3], &s->pid) || parse_int(f[4], &s->tgid) ||
	    strlen(f[6]) >= sizeof(s->comm))
		return -EINVAL;
	s->kind = i;
	strcpy(s->comm, f[6]);
	return agent_unescape(s->comm);
}

/* "vmctx_guest 1 key=value ..."; unknown keys are for later versions. */
static int parse_header(const struct agent *a, char *line, struct agent_task_table *t)
{
	char *tok, *save = NULL;
	uint64_t v;

	tok = strtok_r(line, " ", &save);
	if (!tok || strcmp(tok, "vmctx_guest"))
		return -EINVAL;
	tok = strtok_r(NULL, " ", &save);
	if (!tok || parse_u64(tok, 10, &v))
		return -EINVAL;
	if (v < 1 || v > KMOD_VERSION) {
		agent_err(a, "the vmctx_guest module speaks format %" PRIu64 ", this agent format %d; use an agent and module from the same release",
			  v, KMOD_VERSION);
		return -EPROTO;
	}
	while ((tok = strtok_r(NULL, " ", &save))) {
		char *val = strchr(tok, '=');
		int err = 0;

		if (!val)
			return -EINVAL;
		*val++ = '\0';
		if (!strcmp(tok, "tsc_khz"))
			err = parse_u64(val, 10, &t->tsc_khz);
		else if (!strcmp(tok, "tsc"))
			err = parse_u64(val, 10, &t->tsc);
		else if (!strcmp(tok, "ns"))
			err = parse_u64(val, 10, &t->ns);
		else if (!strcmp(tok, "pti"))
			t->pti = !strcmp(val, "1");
		else if (!strcmp(tok, "cr3_mask"))
			err = strncmp(val, "0x", 2) ? -EINVAL :
			      parse_u64(val + 2, 16, &t->cr3_mask);
		if (err)
			return err;
	}
	return 0;
}

/* The table read so far, and the room it has for tasks. */
struct task_list {
	struct agent_task_table *t;
	size_t cap;
};

/* One task line; a bad one is skipped, counted and named. */
static int add_task_line(const struct agent *a, struct agent_bad *bad, size_t lineno,
			 char *line, void *ctx)
{
	struct task_list *l = ctx;
	struct agent_task_table *t = l->t;
	struct agent_task_row *nv;

	if (t->ntasks == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 512;
		nv = realloc(t->tasks, l->cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		t->tasks = nv;
	}
	if (agent_kmod_parse_task_line(line, &t->tasks[t->ntasks]))
		agent_bad_line(a, bad, lineno, "not \"pid tgid start_ns root user_root comm\"", line);
	else
		t->ntasks++;
	return 0;
}

static int kmod_read_table(struct agent *a, struct agent_task_table *t)
{
	struct agent_task_table nt = { 0 };
	struct task_list l = { .t = &nt };
	struct agent_bad bad = { 0 };
	struct agent_lines it;
	char *buf, *header, *path;
	size_t len;
	bool nul;
	int fd, err;

	fd = open_kmod_file(a, "tasks");
	if (fd < 0)
		return fd;
	err = agent_read_fd(a, fd, &buf, &len);
	close(fd);
	if (err) {
		if (err != -EINTR)
			agent_err(a, "%s/tasks: %s", a->kmod_dir, strerror(-err));
		return err;
	}
	agent_lines_init(&it, buf, len);
	header = agent_lines_next(&it, &nul);
	err = header && !nul ? parse_header(a, header, &nt) : -EINVAL;
	if (err) {
		if (err != -EPROTO)
			agent_err(a, "%s/tasks: not a vmctx_guest task table", a->kmod_dir);
		goto fail;
	}
	if (asprintf(&path, "%s/tasks", a->kmod_dir) < 0) {
		err = -ENOMEM;
		goto fail;
	}
	bad.file = path;
	err = agent_lines_each(a, &it, &bad, add_task_line, &l);
	agent_bad_report(a, &bad);
	free(path);
	if (err)
		goto fail;
	free(buf);
	agent_task_table_free(t);
	*t = nt;
	return 0;
fail:
	free(buf);
	agent_task_table_free(&nt);
	return err;
}

/* Open the module's file @name as stream @s; -errno, said by @why. */
static int stream_open(struct agent *a, struct agent_kmod_stream *s, const char *name,
		       void (*why)(const struct agent *a, const char *path, int err))
{
	int fd;

	if (asprintf(&s->path, "%s/%s", a->kmod_dir, name) < 0) {
		s->path = NULL;
		agent_err(a, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	s->bad.file = s->path;
	fd = open(s->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		why(a, s->path, fd);
		return fd;
	}
	s->fd = fd;
	return 0;
}

static void stream_close(struct agent *a, struct agent_kmod_stream *s)
{
	agent_bad_report(a, &s->bad);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->path);
	s->path = NULL;
}

/* One whole line of a stream, NUL-terminated, @len bytes unless it holds a NUL. */
typedef int (*stream_line_fn)(struct agent *a, struct agent_kmod_stream *s, char *line,
			      size_t len, void *ctx);

/*
 * Hand each line read from @s to @fn, until the file has no more for now.
 * The module hands out whole lines; a regular file standing in for it in
 * tests may end in a partial line, which waits in s->carry for more.
 */
static int stream_read(struct agent *a, struct agent_kmod_stream *s, stream_line_fn fn,
		       void *ctx)
{
	char buf[1 << 16];
	ssize_t r;
	int err;

	if (s->fd < 0)
		return 0;
	for (;;) {
		char *line, *nl, *end;
		size_t have = s->ncarry;

		if (have)
			memcpy(buf, s->carry, have);
		r = read(s->fd, buf + have, sizeof(buf) - have - 1);
		if (r < 0 && errno == EINTR && !agent_interrupted(a))
			continue;
		if (r < 0) {
			err = -errno;
			if (err != -EINTR)
				agent_err(a, "%s: %s", s->path, strerror(-err));
			return err;
		}
		if (!r)
			return 0;
		end = buf + have + r;
		*end = '\0';
		for (line = buf; (nl = memchr(line, '\n', end - line)); line = nl + 1) {
			*nl = '\0';
			s->lineno++;
			err = fn(a, s, line, nl - line, ctx);
			if (err)
				return err;
		}
		s->ncarry = end - line;
		if (s->ncarry >= sizeof(s->carry)) {
			agent_bad_line(a, &s->bad, ++s->lineno, "overlong line", "");
			s->ncarry = 0;
		}
		memcpy(s->carry, line, s->ncarry);
	}
}

/* Why the switches file does not open; the module is as often the reason. */
static void switches_open_error(const struct agent *a, const char *path, int err)
{
	if (err == -ENOENT)
		agent_err(a, "%s: %s: this vmctx_guest module logs no context switches; load the vmctx_guest.ko of this vmctx-agent's release",
			  path, strerror(-err));
	else if (err == -EBUSY)
		agent_err(a, "%s: %s: another reader logs the switches already (one vmctx-agent record --switches at a time)",
			  path, strerror(-err));
	else if (err == -EINVAL)
		agent_err(a, "%s: %s: the module's switch_ring_size is not 64..1048576",
			  path, strerror(-err));
	else
		open_error(a, path, err);
}

/*
 * --switches=RING: the module's rings get RING slots a CPU, through its
 * parameter, which it reads when the switches file is opened.
 */
static int set_switch_ring(struct agent *a)
{
	char *path = agent_path(a, "sys/module/vmctx_guest/parameters/switch_ring_size");
	char val[16];
	int fd, len, err = 0;

	if (!path) {
		agent_err(a, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	len = snprintf(val, sizeof(val), "%u\n", a->switch_slots);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0 || write(fd, val, len) != len)
		err = -errno;
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (err)
		agent_err(a, "%s: %s: cannot give the module's switch rings %u slots a CPU",
			  path, strerror(-err), a->switch_slots);
	free(path);
	return err;
}

/*
 * The module logs a process's mappings one by one (agent-tasks.c).  Its
 * switch rings exist while their file is open: opened first, so that
 * they hold each CPU's task before the window opens.
 */
static int kmod_open(struct agent *a, bool quiet)
{
	int err;

	a->tasks.batch_by_process = true;
	if (a->switch_slots) {
		err = a->switch_slots_given ? set_switch_ring(a) : 0;
		if (!err)
			err = stream_open(a, &a->switch_stream, "switches", switches_open_error);
		if (err)
			return err;
	}
	return stream_open(a, &a->events, "events", open_error);
}

static void kmod_close(struct agent *a)
{
	stream_close(a, &a->events);
	stream_close(a, &a->switch_stream);
}

/* The events read so far, and the room they have. */
struct event_list {
	struct agent_event **ev;
	size_t *nev;
	size_t *cap;
};

static int push_event(struct agent *a, struct agent_kmod_stream *s, char *line, size_t len,
		      void *ctx)
{
	struct event_list *l = ctx;
	struct agent_event e, *nv;
	int err;

	if (strlen(line) != len) {
		agent_bad_line(a, &s->bad, s->lineno, "NUL byte", line);
		return 0;
	}
	err = agent_kmod_parse_event_line(line, &e);
	if (err == -ENODATA)
		return 0;
	if (err == -ENOMEM)
		return err;
	if (err) {
		agent_bad_line(a, &s->bad, s->lineno,
			       "not \"seq type tsc ns pid tgid other start_ns root user_root comm\" nor \"seq map tsc ns pid tgid exec|exit start end pgoff path\"",
			       line);
		return 0;
	}
	if (a->events_started && e.seq > a->events_next)
		a->events_lost += e.seq - a->events_next;
	a->events_started = true;
	a->events_next = e.seq + 1;
	if (*l->nev == *l->cap) {
		size_t cap = *l->cap ? 2 * *l->cap : 256;

		nv = realloc(*l->ev, cap * sizeof(*nv));
		if (!nv) {
			free(e.path);
			return -ENOMEM;
		}
		*l->ev = nv;
		*l->cap = cap;
	}
	(*l->ev)[(*l->nev)++] = e;
	return 0;
}

static int kmod_read_events(struct agent *a, struct agent_event **ev, size_t *nev,
			    size_t *cap)
{
	struct event_list l = { ev, nev, cap };

	return stream_read(a, &a->events, push_event, &l);
}

/* The switch records read so far, and the room they have. */
struct switch_list {
	struct agent_switch **sw;
	size_t *n;
	size_t *cap;
};

static int push_switch(struct agent *a, struct agent_kmod_stream *s, char *line, size_t len,
		       void *ctx)
{
	struct switch_list *l = ctx;
	struct agent_switch *v;

	if (strlen(line) != len) {
		agent_bad_line(a, &s->bad, s->lineno, "NUL byte", line);
		return 0;
	}
	if (*l->n == *l->cap) {
		size_t cap = *l->cap ? 2 * *l->cap : 1024;

		v = realloc(*l->sw, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		*l->sw = v;
		*l->cap = cap;
	}
	if (agent_kmod_parse_switch_line(line, &(*l->sw)[*l->n]))
		agent_bad_line(a, &s->bad, s->lineno,
			       "not \"switch cpu ns pid tgid task|kthread|idle comm\" nor \"lost cpu from to|- n\"",
			       line);
	else
		(*l->n)++;
	return 0;
}

/* One sweep of the module over its CPUs' rings ends with a read of 0. */
static int kmod_read_switches(struct agent *a, struct agent_switch **sw, size_t *n, size_t *cap)
{
	struct switch_list l = { sw, n, cap };

	return stream_read(a, &a->switch_stream, push_switch, &l);
}

const struct agent_backend_ops agent_kmod_ops = {
	.name = "kmod",
	.open = kmod_open,
	.close = kmod_close,
	.read_table = kmod_read_table,
	.read_events = kmod_read_events,
	.read_switches = kmod_read_switches,
};
