// SPDX-License-Identifier: GPL-2.0
/*
 * Task records.  A bundle's task is one page-table root over one lifetime:
 * fork opens a record with the child's root, exec closes it and opens one
 * with the new root and comm, exit closes it.  Tables read from the module
 * fill in what the events did not show (tasks older than the ring, lost
 * events).  Events and tables are applied in guest time order.
 */
#include "agent.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Open records by pid: open addressing, key 0 is empty, -1 a tombstone. */
#define SLOT_EMPTY	0
#define SLOT_GONE	(-1)

void agent_task_table_free(struct agent_task_table *t)
{
	free(t->tasks);
	memset(t, 0, sizeof(*t));
}

void agent_events_free(struct agent_event *ev, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(ev[i].path);
	free(ev);
}

static size_t slot_of(const struct agent_tasks *ts, int pid)
{
	return ((unsigned int)pid * 2654435761u) & (ts->pcap - 1);
}

static size_t *lookup(const struct agent_tasks *ts, int pid)
{
	size_t i;

	if (!ts->pcap)
		return NULL;
	for (i = slot_of(ts, pid);; i = (i + 1) & (ts->pcap - 1)) {
		if (ts->pkeys[i] == SLOT_EMPTY)
			return NULL;
		if (ts->pkeys[i] == pid + 1)
			return &ts->pvals[i];
	}
}

static int rehash(struct agent_tasks *ts, size_t cap)
{
	struct agent_tasks old = *ts;
	size_t i;

	ts->pkeys = calloc(cap, sizeof(*ts->pkeys));
	ts->pvals = calloc(cap, sizeof(*ts->pvals));
	if (!ts->pkeys || !ts->pvals) {
		free(ts->pkeys);
		free(ts->pvals);
		ts->pkeys = old.pkeys;
		ts->pvals = old.pvals;
		return -ENOMEM;
	}
	ts->pcap = cap;
	ts->pused = 0;
	for (i = 0; i < old.pcap; i++) {
		size_t j;

		if (old.pkeys[i] <= 0)
			continue;
		for (j = slot_of(ts, old.pkeys[i] - 1); ts->pkeys[j];
		     j = (j + 1) & (cap - 1))
			;
		ts->pkeys[j] = old.pkeys[i];
		ts->pvals[j] = old.pvals[i];
		ts->pused++;
	}
	free(old.pkeys);
	free(old.pvals);
	return 0;
}

static int set_open(struct agent_tasks *ts, int pid, size_t idx)
{
	size_t *v = lookup(ts, pid), i;
	int err;

	if (v) {
		*v = idx;
		return 0;
	}
	if ((ts->pused + 1) * 2 > ts->pcap) {
		err = rehash(ts, ts->pcap ? ts->pcap * 2 : 1024);
		if (err)
			return err;
	}
	for (i = slot_of(ts, pid); ts->pkeys[i] > 0; i = (i + 1) & (ts->pcap - 1))
		;
	if (ts->pkeys[i] == SLOT_EMPTY)
		ts->pused++;
	ts->pkeys[i] = pid + 1;
	ts->pvals[i] = idx;
	return 0;
}

static void clear_open(struct agent_tasks *ts, int pid)
{
	size_t *v = lookup(ts, pid);

	if (v)
		ts->pkeys[v - ts->pvals] = SLOT_GONE;
}

struct agent_task *agent_tasks_open_of(struct agent_tasks *ts, int pid)
{
	size_t *v = lookup(ts, pid);

	return v ? &ts->v[*v] : NULL;
}

void agent_tasks_free(struct agent_tasks *ts)
{
	size_t i;

	for (i = 0; i < ts->n; i++)
		agent_free_maps(ts->v[i].maps, ts->v[i].nmaps);
	for (i = 0; i < ts->npending; i++)
		agent_free_maps(ts->pending[i].maps, ts->pending[i].n);
	free(ts->pending);
	free(ts->v);
	free(ts->pkeys);
	free(ts->pvals);
	memset(ts, 0, sizeof(*ts));
}

static int add(struct agent_tasks *ts, const struct agent_task_row *k, uint64_t start,
	       uint64_t exit)
{
	struct agent_task *t;
	int err;

	if (ts->n == ts->cap) {
		size_t cap = ts->cap ? 2 * ts->cap : 512;
		struct agent_task *nv = realloc(ts->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		ts->v = nv;
		ts->cap = cap;
	}
	t = &ts->v[ts->n];
	memset(t, 0, sizeof(*t));
	t->pid = k->pid;
	t->tgid = k->tgid;
	t->root = k->root;
	t->start = start;
	t->exit = exit;
	memcpy(t->comm, k->comm, sizeof(t->comm));
	if (exit == AGENT_TIME_NONE) {
		err = set_open(ts, k->pid, ts->n);
		if (err)
			return err;
	}
	ts->n++;
	return 0;
}

static void close_rec(struct agent_tasks *ts, int pid, uint64_t ns)
{
	struct agent_task *t = agent_tasks_open_of(ts, pid);

	if (!t)
		return;
	t->exit = ns < t->start ? t->start : ns;
	clear_open(ts, pid);
}

/*
 * A map event: one executable mapping of a process, logged at its exec (the
 * program and its interpreter) or at its exit (everything it mapped), while
 * its memory still existed.  The map events of one pid logged at one exec
 * or exit are one batch, which replaces the maps the record had: the
 * latest view wins, and /proc/PID/maps read later replaces it in turn.
 * BPF's batch comes in a row.  The module logs each mapping on its own, so
 * other CPUs' events may come between (ts->batch_by_process): there a map
 * event goes on with its record's batch of the same kind.  A record's
 * batches are its exec's, which follows the exec event that opens the
 * record, and its exit's, so no other of the same kind can follow one.
 * A mapping that overlaps one already in the batch is left out, and a batch
 * keeps at most AGENT_EVENT_MAPS.
 *
 * A map event that names its image's root (BPF's do) and finds another
 * image open under its pid belongs to an exec whose event has not come yet:
 * an exec maps the program and its interpreter before the exec tracepoint
 * fires, and the agent may read the ring in between.  The batch waits, for
 * at most AGENT_PENDING_MAPS images, until that exec opens its record.
 */
#define AGENT_EVENT_MAPS	256
#define AGENT_PENDING_MAPS	1024

static bool overlaps(const struct agent_map *maps, size_t n, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (start < maps[i].end && maps[i].start < end)
			return true;
	return false;
}

/* Add @e's mapping to the batch @maps, unless full or overlapping. */
static int batch_add(struct agent_map **maps, size_t *n, const struct agent_event *e)
{
	struct agent_map *m;

	if (*n >= AGENT_EVENT_MAPS || overlaps(*maps, *n, e->start, e->end))
		return 0;
	m = realloc(*maps, (*n + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	*maps = m;
	m = &m[*n];
	memset(m, 0, sizeof(*m));
	m->start = e->start;
	m->end = e->end;
	m->pgoff = e->pgoff;
	m->prot = PF_R | PF_X;
	m->logged = true;
	m->path = strdup(e->path);
	if (!m->path)
		return -ENOMEM;
	(*n)++;
	return 0;
}

static struct agent_pending_maps *pending_of(struct agent_tasks *ts, int pid, uint64_t root)
{
	size_t i;

	for (i = 0; i < ts->npending; i++)
		if (ts->pending[i].pid == pid && ts->pending[i].root == root)
			return &ts->pending[i];
	return NULL;
}

static void drop_pending(struct agent_tasks *ts, struct agent_pending_maps *p)
{
	agent_free_maps(p->maps, p->n);
	memmove(p, p + 1, (ts->pending + ts->npending - (p + 1)) * sizeof(*p));
	ts->npending--;
}

static int add_pending(struct agent_tasks *ts, const struct agent_event *e, bool same_batch)
{
	struct agent_pending_maps *p = pending_of(ts, e->task.pid, e->task.root);

	if (!p) {
		if (ts->npending == AGENT_PENDING_MAPS)
			drop_pending(ts, &ts->pending[0]);
		p = realloc(ts->pending, (ts->npending + 1) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ts->pending = p;
		p = &p[ts->npending++];
		memset(p, 0, sizeof(*p));
		p->pid = e->task.pid;
		p->root = e->task.root;
	} else if (!same_batch) {
		agent_free_maps(p->maps, p->n);
		p->maps = NULL;
		p->n = 0;
	}
	return batch_add(&p->maps, &p->n, e);
}

static int apply_map(struct agent_tasks *ts, const struct agent_event *e)
{
	struct agent_task *t = agent_tasks_open_of(ts, e->task.tgid);
	bool same_batch = e->seq == ts->map_next_seq && e->task.pid == ts->map_pid &&
			  e->other == ts->map_at_exit;

	if (!t)
		t = agent_tasks_open_of(ts, e->task.pid);
	/* a process gone before we saw it, or a thread's: nothing to name */
	if (!t || t->pid != t->tgid)
		return 0;
	if (ts->batch_by_process && t->map_batch == e->other + 1)
		same_batch = true;
	ts->map_next_seq = e->seq + 1;
	ts->map_pid = e->task.pid;
	ts->map_at_exit = e->other;
	if (e->task.root != AGENT_NO_ROOT && t->root != AGENT_NO_ROOT && e->task.root != t->root)
		return add_pending(ts, e, same_batch);
	if (!same_batch) {
		agent_free_maps(t->maps, t->nmaps);
		t->maps = NULL;
		t->nmaps = 0;
		t->maps_from = t->maps_to = 0;
	}
	t->map_batch = e->other + 1;
	return batch_add(&t->maps, &t->nmaps, e);
}

/* A copy of @n maps, or -ENOMEM. */
static int copy_maps(const struct agent_map *src, size_t n, struct agent_map **out)
{
	struct agent_map *v;
	size_t i;

	*out = NULL;
	if (!n)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		v[i] = src[i];
		v[i].path = strdup(src[i].path);
		if (!v[i].path) {
			agent_free_maps(v, i);
			return -ENOMEM;
		}
	}
	*out = v;
	return 0;
}

/*
 * A new process starts with its parent's mappings: a fork without exec
 * runs the parent's code, and no map event or exit batch of the parent's
 * image may ever name them for it.
 */
static int inherit_maps(struct agent_tasks *ts, const struct agent_event *e)
{
	struct agent_task *parent = agent_tasks_open_of(ts, e->other), *child;
	struct agent_map *maps;
	size_t i;
	int err;

	if (parent && parent->pid != parent->tgid)
		parent = agent_tasks_open_of(ts, parent->tgid);
	child = agent_tasks_open_of(ts, e->task.pid);
	if (!parent || !parent->nmaps || !child || child->nmaps)
		return 0;
	err = copy_maps(parent->maps, parent->nmaps, &maps);
	if (err)
		return err;
	/* a fork copies the mm: these are the child's for sure */
	for (i = 0; i < parent->nmaps; i++)
		maps[i].logged = true;
	child->maps = maps;
	child->nmaps = parent->nmaps;
	return 0;
}

/* @t keeps the maps the events gave it and loses what a read added. */
static void keep_logged(struct agent_task *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->nmaps; i++) {
		if (t->maps[i].logged)
			t->maps[n++] = t->maps[i];
		else
			free(t->maps[i].path);
	}
	t->nmaps = n;
	if (!n) {
		free(t->maps);
		t->maps = NULL;
	}
	t->maps_from = t->maps_to = 0;
}

/*
 * An exec at @ns: maps read from /proc under this pid after it are the new
 * image's (*@maps), and maps read across it are nobody's; either way the
 * old record loses what the read added, and keeps what events gave it.
 */
static int take_maps_after(struct agent_task *old, uint64_t ns, struct agent_map **maps,
			   size_t *n, uint64_t *from, uint64_t *to)
{
	size_t i;
	int err;

	*maps = NULL;
	*n = 0;
	if (!old || !old->maps_to || old->maps_to < ns)
		return 0;
	if (old->maps_from > ns) {
		err = copy_maps(old->maps, old->nmaps, maps);
		if (err)
			return err;
		*n = old->nmaps;
		for (i = 0; i < *n; i++)
			(*maps)[i].logged = false;
		*from = old->maps_from;
		*to = old->maps_to;
	}
	keep_logged(old);
	return 0;
}

static bool same_map(const struct agent_map *a, const struct agent_map *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       !strcmp(a->path, b->path);
}

/*
 * A read of /proc/PID/maps over [@from, @to], for @t's image.  An exec
 * switches the mm and maps the new program and its interpreter before its
 * event is logged, so a read may show an image whose record is not open
 * yet, and no time tells it: the exec's event may come long after the read
 * ended.  The maps the kernel's events gave @t tell it instead: a read
 * without one of their files is another image's, and is left out.  A read
 * with all of them replaces @t's maps, keeping those marks, so that an exec
 * found later to have come during the read takes back only what the read
 * added (take_maps_after()).
 *
 * Return: true if @t took @maps (they are its own now), false if the
 * caller keeps them.
 */
bool agent_task_take_read(struct agent_task *t, struct agent_map *maps, size_t n, uint64_t from,
			  uint64_t to)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		maps[i].logged = false;
	for (i = 0; i < t->nmaps; i++) {
		const struct agent_map *m = &t->maps[i];
		bool file = m->path[0] && m->path[0] != '[';

		if (!m->logged)
			continue;
		for (j = 0; j < n && !same_map(m, &maps[j]); j++)
			;
		if (j < n)
			maps[j].logged = true;
		else if (file)
			return false;
	}
	agent_free_maps(t->maps, t->nmaps);
	t->maps = maps;
	t->nmaps = n;
	t->maps_from = from;
	t->maps_to = to;
	return true;
}

static int apply_exec(struct agent_tasks *ts, const struct agent_event *e)
{
	const struct agent_task_row *k = &e->task;
	struct agent_pending_maps *p;
	struct agent_map *moved;
	uint64_t from = 0, to = 0;
	struct agent_task *t;
	size_t nmoved;
	int err;

	err = take_maps_after(agent_tasks_open_of(ts, k->pid), e->ns, &moved, &nmoved, &from, &to);
	if (err)
		return err;
	if (e->other != k->pid)
		close_rec(ts, e->other, e->ns);
	close_rec(ts, k->pid, e->ns);
	err = add(ts, k, e->ns, AGENT_TIME_NONE);
	t = err ? NULL : agent_tasks_open_of(ts, k->pid);
	p = pending_of(ts, k->pid, k->root);
	if (t && p) {
		t->maps = p->maps;
		t->nmaps = p->n;
		p->maps = NULL;
		p->n = 0;
	}
	/* read after the exec's maps were logged: the later view, if it has them */
	if (t && nmoved && agent_task_take_read(t, moved, nmoved, from, to))
		moved = NULL;
	agent_free_maps(moved, moved ? nmoved : 0);
	if (p)
		drop_pending(ts, p);
	return err;
}

int agent_tasks_apply_event(struct agent_tasks *ts, const struct agent_event *e)
{
	const struct agent_task_row *k = &e->task;
	struct agent_task *t;
	int err;

	switch (e->type) {
	case AGENT_EVENT_FORK:
		/* A record still open under this pid missed its exit event. */
		close_rec(ts, k->pid, e->ns);
		err = add(ts, k, e->ns, AGENT_TIME_NONE);
		if (err || k->pid != k->tgid)
			return err;
		return inherit_maps(ts, e);
	case AGENT_EVENT_EXEC:
		return apply_exec(ts, e);
	case AGENT_EVENT_EXIT:
		t = agent_tasks_open_of(ts, k->pid);
		if (!t)
			/* Older than what we saw: it lived from its start. */
			return add(ts, k, k->start_ns < e->ns ? k->start_ns : e->ns, e->ns);
		if (t->root == AGENT_NO_ROOT)
			t->root = k->root;
		/*
		 * The name at exit: a process may have renamed itself since
		 * its exec (prctl(PR_SET_NAME), /proc/PID/comm), as a busybox
		 * applet run through /proc/self/exe does.
		 */
		if (k->comm[0])
			memcpy(t->comm, k->comm, sizeof(t->comm));
		close_rec(ts, k->pid, e->ns);
		return 0;
	case AGENT_EVENT_MAP:
		return apply_map(ts, e);
	}
	return -EINVAL;
}

int agent_tasks_apply_table(struct agent_tasks *ts, const struct agent_task_table *tab)
{
	size_t i;
	int err;

	for (i = 0; i < tab->ntasks; i++) {
		const struct agent_task_row *k = &tab->tasks[i];
		struct agent_task *t = agent_tasks_open_of(ts, k->pid);

		if (t && (t->root == k->root || k->root == AGENT_NO_ROOT)) {
			/* The same root (or an exiting task): comm may have changed. */
			memcpy(t->comm, k->comm, sizeof(t->comm));
			continue;
		}
		if (t)
			/* An exec whose event was lost. */
			close_rec(ts, k->pid, tab->ns);
		err = add(ts, k, t ? tab->ns : k->start_ns, AGENT_TIME_NONE);
		if (err)
			return err;
	}
	return 0;
}

void agent_tasks_close_missing(struct agent_tasks *ts, const struct agent_task_table *tab)
{
	bool *alive;
	size_t i;

	alive = calloc(ts->n ? ts->n : 1, sizeof(*alive));
	if (!alive)
		return;
	for (i = 0; i < tab->ntasks; i++) {
		size_t *v = lookup(ts, tab->tasks[i].pid);

		if (v)
			alive[*v] = true;
	}
	for (i = 0; i < ts->n; i++)
		if (ts->v[i].exit == AGENT_TIME_NONE && !alive[i])
			close_rec(ts, ts->v[i].pid, tab->ns);
	free(alive);
}

void agent_tasks_drop_before(struct agent_tasks *ts, uint64_t ns)
{
	size_t i, n = 0;

	for (i = 0; i < ts->n; i++) {
		struct agent_task *t = &ts->v[i];

		if (t->exit != AGENT_TIME_NONE && t->exit < ns) {
			agent_free_maps(t->maps, t->nmaps);
			continue;
		}
		if (t->exit == AGENT_TIME_NONE) {
			size_t *v = lookup(ts, t->pid);

			if (v)
				*v = n;
		}
		ts->v[n++] = *t;
	}
	ts->n = n;
}
