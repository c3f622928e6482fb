// SPDX-License-Identifier: LGPL-2.1-only
/*
 * A guest's switch log: for each guest CPU, the times it started running
 * a task, and the gaps where the agent lost switches (its ring overran).
 * It tells the host who ran on a vCPU at a guest time, kernel threads, the
 * idle task and a process's threads included, where the page-table root
 * names only the owner of the loaded address space.
 *
 * A log holds many switches of few tasks, so each switch is 16 bytes (a
 * time, a CPU, a task number) and each distinct task and comm is kept
 * once, found in hash indices keyed with a secret: a guest chooses the
 * comms and pids, and must not be able to make adding them quadratic.
 * Sealing sorts the switches stably (of several at one time on one CPU,
 * the last added is the one that ran) and indexes them by CPU, so that a
 * lookup is two binary searches within one CPU's records.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "switch-log.h"

static const char *const kind_words[] = {
	[VMCTX_TASK_USER] = "task",
	[VMCTX_TASK_KTHREAD] = "kthread",
	[VMCTX_TASK_IDLE] = "idle",
};

const char *switch_log_kind_word(unsigned int kind)
{
	return kind < ARRAY_SIZE(kind_words) ? kind_words[kind] : NULL;
}

int switch_log_kind_of(const char *word)
{
	size_t i;

	for (i = 0; word && i < ARRAY_SIZE(kind_words); i++)
		if (!strcmp(word, kind_words[i]))
			return i;
	return -1;
}

bool switch_log_task_valid(uint64_t pid, uint64_t tgid, unsigned int kind)
{
	bool idle = kind == VMCTX_TASK_IDLE;

	if (kind >= ARRAY_SIZE(kind_words) || pid > INT32_MAX || tgid > INT32_MAX)
		return false;
	return idle == !pid && idle == !tgid;
}

/* ---- each task and comm once ------------------------------------------- */

static uint32_t hash(const struct switch_log *l, const void *data, size_t n)
{
	return util_siphash(l->key, data, n) >> 32;
}

static bool same_comm(const void *ctx, uint32_t id, const void *key)
{
	const struct switch_log *l = ctx;

	return !strcmp(l->comms[id], key);
}

static bool same_task(const void *ctx, uint32_t id, const void *key)
{
	const struct switch_log *l = ctx;

	return !memcmp(&l->tasks[id], key, sizeof(struct switch_task));
}

/* The number of @comm, added if it is new; or -ENOMEM. */
static int64_t intern_comm(struct switch_log *l, const char *comm)
{
	uint32_t h = hash(l, comm, strlen(comm));
	int64_t id = util_hash_find(&l->comm_index, h, same_comm, l, comm);
	char *s;

	if (id >= 0)
		return id;
	if (util_grow((void **)&l->comms, &l->comms_cap, l->ncomms + 1, sizeof(*l->comms)))
		return -ENOMEM;
	s = strdup(comm);
	if (!s || util_hash_add(&l->comm_index, h, l->ncomms)) {
		free(s);
		return -ENOMEM;
	}
	l->comms[l->ncomms] = s;
	return l->ncomms++;
}

/* The number of task @t, added if it is new; or -ENOMEM. */
static int64_t intern_task(struct switch_log *l, const struct switch_task *t)
{
	uint32_t h = hash(l, t, sizeof(*t));
	int64_t id = util_hash_find(&l->task_index, h, same_task, l, t);

	if (id >= 0)
		return id;
	if (util_grow((void **)&l->tasks, &l->tasks_cap, l->ntasks + 1, sizeof(*l->tasks)) ||
	    util_hash_add(&l->task_index, h, l->ntasks))
		return -ENOMEM;
	l->tasks[l->ntasks] = *t;
	return l->ntasks++;
}

int switch_log_add(struct switch_log *l, unsigned int cpu, uint64_t ns, int pid, int tgid,
		   unsigned int kind, const char *comm)
{
	struct switch_task t = { .pid = pid, .tgid = tgid, .kind = kind };
	int64_t id;

	if (cpu >= SWITCH_LOG_MAX_CPUS || l->n >= SWITCH_LOG_MAX_SWITCHES)
		return -VMCTX_E_LIMIT;
	if (util_grow((void **)&l->recs, &l->cap, l->n + 1, sizeof(*l->recs)))
		return -ENOMEM;
	if (!l->keyed) {
		util_hash_key(l->key, (uintptr_t)l);
		l->keyed = true;
	}
	id = intern_comm(l, comm ? comm : "");
	if (id < 0)
		return id;
	t.comm = id;
	id = intern_task(l, &t);
	if (id < 0)
		return id;
	l->recs[l->n].ns = ns;
	l->recs[l->n].task = id;
	l->recs[l->n].cpu = cpu;
	l->n++;
	return 0;
}

int switch_log_add_gap(struct switch_log *l, unsigned int cpu, uint64_t start, uint64_t end)
{
	struct switch_gap *g;

	if (cpu >= SWITCH_LOG_MAX_CPUS || l->ngaps >= SWITCH_LOG_MAX_GAPS)
		return -VMCTX_E_LIMIT;
	if (util_grow((void **)&l->gaps, &l->gaps_cap, l->ngaps + 1, sizeof(*l->gaps)))
		return -ENOMEM;
	g = &l->gaps[l->ngaps++];
	memset(g, 0, sizeof(*g));
	g->start = start;
	g->end = end;
	g->cpu = cpu;
	return 0;
}

/* ---- sealing ------------------------------------------------------------- */

static int cmp_rec(const struct switch_rec *a, const struct switch_rec *b)
{
	if (a->cpu != b->cpu)
		return a->cpu < b->cpu ? -1 : 1;
	return a->ns < b->ns ? -1 : a->ns > b->ns;
}

/*
 * By CPU and time, stably: of several switches at one time the last added
 * ran, so their order must stay.  A bottom-up merge sort, unless the
 * records are in order already, as an agent's are CPU by CPU.
 */
static int sort_recs(struct switch_log *l)
{
	struct switch_rec *a = l->recs, *tmp, *t;
	size_t n = l->n, w, i;

	for (i = 1; i < n && cmp_rec(&a[i - 1], &a[i]) <= 0; i++)
		;
	if (i >= n)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (w = 1; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			size_t mid = i + w < n ? i + w : n, hi = i + 2 * w < n ? i + 2 * w : n;
			size_t x = i, y = mid, k = i;

			while (x < mid && y < hi)
				tmp[k++] = cmp_rec(&a[y], &a[x]) < 0 ? a[y++] : a[x++];
			while (x < mid)
				tmp[k++] = a[x++];
			while (y < hi)
				tmp[k++] = a[y++];
		}
		t = a;
		a = tmp;
		tmp = t;
	}
	if (a != l->recs) {
		memcpy(l->recs, a, n * sizeof(*a));
		tmp = a;
	}
	free(tmp);
	return 0;
}

static int cmp_gap(const void *x, const void *y)
{
	const struct switch_gap *a = x, *b = y;

	if (a->cpu != b->cpu)
		return a->cpu < b->cpu ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

static bool outside(const uint64_t *window, uint64_t t)
{
	return window && (t < window[0] || t > window[1]);
}

/* Switches by CPU and time, within the window. */
static int check_recs(const struct switch_log *l, const uint64_t *window)
{
	size_t j;

	for (j = 0; j < l->n; j++) {
		const struct switch_rec *r = &l->recs[j];

		if (j && cmp_rec(&l->recs[j - 1], r) > 0) {
			util_log(VMCTX_LOG_WARN,
				  "bundle: switch %zu (CPU %" PRIu32 ") is out of order", j, r->cpu);
			return -VMCTX_E_RANGE;
		}
		if (outside(window, r->ns)) {
			util_log(VMCTX_LOG_WARN,
				  "bundle: switch %zu (CPU %" PRIu32 ", %" PRIu64 " ns) is outside the window",
				  j, r->cpu, r->ns);
			return -VMCTX_E_RANGE;
		}
	}
	return 0;
}

/* Gaps by CPU and start, a CPU's apart, within the window. */
static int check_gaps(const struct switch_log *l, const uint64_t *window)
{
	size_t j;

	for (j = 0; j < l->ngaps; j++) {
		const struct switch_gap *g = &l->gaps[j], *p = g - 1;

		if (j && (g->cpu < p->cpu || (g->cpu == p->cpu && g->start <= p->end))) {
			util_log(VMCTX_LOG_WARN,
				  "bundle: gap %zu (CPU %" PRIu32 ") is out of order or overlaps the one before",
				  j, g->cpu);
			return -VMCTX_E_RANGE;
		}
		if (outside(window, g->start) || outside(window, g->end)) {
			util_log(VMCTX_LOG_WARN,
				  "bundle: gap %zu (CPU %" PRIu32 ") is outside the window", j, g->cpu);
			return -VMCTX_E_RANGE;
		}
	}
	return 0;
}

/* first[c]: where CPU c's records begin among the @n at @arr, whose CPUs (at @off) rise. */
static uint32_t *index_by_cpu(uint32_t ncpus, size_t n, const void *arr, size_t size, size_t off)
{
	uint32_t *first = calloc((size_t)ncpus + 1, sizeof(*first));
	size_t i;

	if (!first)
		return NULL;
	for (i = 0; i < n; i++) {
		uint32_t cpu;

		memcpy(&cpu, (const char *)arr + i * size + off, sizeof(cpu));
		first[cpu + 1]++;
	}
	for (i = 1; i <= ncpus; i++)
		first[i] += first[i - 1];
	return first;
}

int switch_log_seal(struct switch_log *l, bool strict, const uint64_t *window)
{
	uint32_t ncpus = 0;
	int err;

	if (!strict) {
		err = sort_recs(l);
		if (err)
			return err;
		if (l->ngaps > 1)
			qsort(l->gaps, l->ngaps, sizeof(*l->gaps), cmp_gap);
	}
	err = check_recs(l, window);
	if (!err)
		err = check_gaps(l, window);
	if (err)
		return err;
	/* sorted by CPU: the last of each holds the highest */
	if (l->n)
		ncpus = l->recs[l->n - 1].cpu + 1;
	if (l->ngaps && l->gaps[l->ngaps - 1].cpu + 1 > ncpus)
		ncpus = l->gaps[l->ngaps - 1].cpu + 1;
	free(l->rec_first);
	free(l->gap_first);
	l->rec_first = index_by_cpu(ncpus, l->n, l->recs, sizeof(*l->recs),
				    offsetof(struct switch_rec, cpu));
	l->gap_first = index_by_cpu(ncpus, l->ngaps, l->gaps, sizeof(*l->gaps),
				    offsetof(struct switch_gap, cpu));
	if (!l->rec_first || !l->gap_first)
		return -ENOMEM;
	l->ncpus = ncpus;
	return 0;
}

/* ---- lookup --------------------------------------------------------------- */

/* The last of the @n elements from @first (@size bytes) whose key at @off is <= @t, or NULL. */
static const void *last_at_or_before(const void *first, size_t n, size_t size, size_t off,
				     uint64_t t)
{
	size_t k = util_upper_bound(first, n, size, off, t);

	return k ? (const char *)first + (k - 1) * size : NULL;
}

int switch_log_find(const struct switch_log *l, unsigned int cpu, uint64_t ns,
		    const struct switch_rec **rec, uint64_t *iv)
{
	const struct switch_rec *r;
	const struct switch_gap *g;
	uint32_t lo, hi;

	if (cpu >= l->ncpus)
		return -ENOENT;
	lo = l->rec_first[cpu];
	hi = l->rec_first[cpu + 1];
	r = hi > lo ? last_at_or_before(&l->recs[lo], hi - lo, sizeof(*r),
					offsetof(struct switch_rec, ns), ns) : NULL;
	lo = l->gap_first[cpu];
	hi = l->gap_first[cpu + 1];
	g = hi > lo ? last_at_or_before(&l->gaps[lo], hi - lo, sizeof(*g),
					offsetof(struct switch_gap, start), ns) : NULL;
	/*
	 * A gap's ends rise with its start, as a CPU's gaps are apart: the last
	 * one to start by @ns is the one that can reach the switch (or @ns).
	 */
	if (g && g->end >= (r ? r->ns : ns))
		return -VMCTX_E_GAP;
	/*
	 * The answer holds from r's switch (without one, the end of the gap
	 * before, or the start) until the next switch or gap: from its
	 * start, a gap reaches back to r.
	 */
	if (iv) {
		size_t nr = r ? (size_t)(r - l->recs) + 1 : l->rec_first[cpu];
		size_t ng = g ? (size_t)(g - l->gaps) + 1 : lo;
		uint64_t from = r ? r->ns : g ? g->end + 1 : 0, until = UINT64_MAX;

		if (nr < l->rec_first[cpu + 1])
			until = l->recs[nr].ns;
		if (ng < hi && l->gaps[ng].start < until)
			until = l->gaps[ng].start;
		util_range_clip(iv, from, until);
	}
	if (!r)
		return -ENOENT;
	*rec = r;
	return 0;
}

void switch_log_free(struct switch_log *l)
{
	size_t i;

	for (i = 0; i < l->ncomms; i++)
		free(l->comms[i]);
	free(l->comms);
	free(l->recs);
	free(l->gaps);
	free(l->tasks);
	util_hash_index_free(&l->task_index);
	util_hash_index_free(&l->comm_index);
	free(l->rec_first);
	free(l->gap_first);
	memset(l, 0, sizeof(*l));
}
