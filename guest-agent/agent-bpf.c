// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF backend: the task table and the events of vmctx_guest.ko, from
 * bpf/agent.bpf.c (embedded through its skeleton) instead of the module.
 * Its output is the module's: struct agent_task_table and struct
 * agent_event, so that agent-tasks.c applies both the same way.
 *
 * Two things differ.  BPF cannot read the TSC, so the table's clock pair
 * is taken here (agent_clock_pair(), on CLOCK_MONOTONIC, the clock of
 * bpf_ktime_get_ns() and of the module's ktime_get_ns()); events carry no
 * TSC.  And mappings come one by one, as the process makes them
 * (the module logs them in batches at exec and exit): they are kept here
 * per process and handed on as one batch of all of them, which the tasks
 * apply as the module's batches.  A batch goes out before the process's
 * exit, before its next image's first mapping (its exec came in between),
 * and at the end of each read.
 *
 * With --switches, each CPU's switch ring is a part of an array map that
 * the agent maps and reads as the module's reader reads its rings.
 */
/* Built with HAVE_BPF only: a build without libbpf compiles this to nothing. */
#ifdef HAVE_BPF
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent.h"
#include <linux/types.h>
#include "bpf/agent-bpf-event.h"
#include "agent-bpf.skel.h"

struct agent_bpf_map {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	char *path;
};

/* The executable mappings of one process image, since its last batch. */
struct agent_bpf_proc {
	int tgid;
	uint64_t root;
	uint64_t ns;		/* of the latest mapping */
	bool dirty;
	size_t n;
	struct agent_bpf_map *v;
};

struct agent_bpf {
	struct agent_prog *skel;
	struct ring_buffer *ring;
	uint64_t tsc_khz;
	bool pti;
	uint64_t seq;
	uint64_t lost_seen;
	/* the read under way */
	struct agent_event **ev;
	size_t *nev;
	size_t *cap;
	int err;
	size_t nprocs;
	struct agent_bpf_proc *procs;
	/* --switches: every possible CPU's ring, mapped */
	unsigned int ncpus;
	uint32_t slots;			/* a CPU's, a power of two */
	size_t sw_len;
	struct agent_bpf_switch *sw;
	size_t rings_len;
	struct agent_bpf_switch_ring *rings;
};

/* The TSC rate, measured against CLOCK_MONOTONIC over 20 ms. */
static uint64_t measure_tsc_khz(void)
{
	struct timespec d = { 0, 20000000 };
	uint64_t t0, n0, t1, n1;

	agent_clock_pair(&t0, &n0);
	while (nanosleep(&d, &d) && errno == EINTR)
		;
	agent_clock_pair(&t1, &n1);
	if (n1 <= n0 || t1 <= t0)
		return 0;
	return (uint64_t)((double)(t1 - t0) * 1e6 / (double)(n1 - n0) + 0.5);
}

/* PTI on, as the kernel reports it (the module asks X86_FEATURE_PTI). */
static bool pti_on(const struct agent *a)
{
	char *buf;
	size_t len;
	bool on;

	if (agent_read_file(a, "sys/devices/system/cpu/vulnerabilities/meltdown", &buf, &len))
		return false;
	on = strstr(buf, "PTI") != NULL;
	free(buf);
	return on;
}

bool agent_bpf_available(const struct agent *a)
{
	char *p = agent_path(a, "sys/kernel/btf/vmlinux");
	bool ok = p && access(p, R_OK) == 0;

	free(p);
	return ok;
}

/* root, or CAP_BPF with CAP_PERFMON (the kernel since 5.8) or CAP_SYS_ADMIN */
static bool may_bpf(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { 0 };
	uint64_t eff;

	if (syscall(SYS_capget, &h, d))
		return geteuid() == 0;
	eff = (uint64_t)d[1].effective << 32 | d[0].effective;
#ifndef CAP_BPF
#define CAP_PERFMON 38
#define CAP_BPF 39
#endif
	if (eff & (1ULL << CAP_SYS_ADMIN))
		return true;
	return (eff & (1ULL << CAP_BPF)) && (eff & (1ULL << CAP_PERFMON));
}

/* The switch programs and maps, as --switches asks: sized, or left out. */
static int setup_switches(struct agent_prog *skel, const struct agent_bpf *b)
{
	bool on = b->slots != 0;
	int err;

	bpf_program__set_autoload(skel->progs.vmctx_switch, on);
	bpf_program__set_autoload(skel->progs.vmctx_switch_mark, on);
	bpf_program__set_autoattach(skel->progs.vmctx_switch_mark, false);
	if (!on)
		return 0;
	skel->rodata->switch_slots = b->slots;
	err = bpf_map__set_max_entries(skel->maps.switches, b->ncpus * b->slots);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.switch_rings, b->ncpus);
	return err;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int libbpf_verbose(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	fputs("vmctx-agent: libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

static int on_event(void *ctx, void *data, size_t size);
static void unmap_switches(struct agent_bpf *b);

/*
 * The skeleton, loaded and attached with the best hook for mappings that
 * this kernel takes: fentry needs BPF trampolines (ftrace direct calls), a
 * kprobe needs kprobes; without either, mappings come from /proc only, as
 * polls read them.  *what says which step failed, when all did.
 */
static struct agent_prog *load_skel(struct agent *a, const struct agent_bpf *b,
				     const char **what)
{
	static const struct {
		bool fentry, kprobe;
		const char *note;
	} tries[] = {
		{ true, false, "executable mappings from an fentry on perf_event_mmap()" },
		{ false, true, "executable mappings from a kprobe on perf_event_mmap() (fentry does not load)" },
		{ false, false, NULL },
	};
	struct agent_prog *skel;
	size_t i;
	int err = -EINVAL;

	for (i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		*what = "load";
		skel = agent_prog__open();
		if (!skel)
			return NULL;
		bpf_program__set_autoload(skel->progs.vmctx_mmap, tries[i].fentry);
		bpf_program__set_autoload(skel->progs.vmctx_mmap_kprobe, tries[i].kprobe);
		err = setup_switches(skel, b);
		if (!err)
			err = agent_prog__load(skel);
		if (!err) {
			*what = "attach";
			err = agent_prog__attach(skel);
		}
		if (!err) {
			if (tries[i].note)
				agent_note(a, "BPF: %s", tries[i].note);
			else
				agent_warn(a, "BPF: no hook on perf_event_mmap() works on this kernel: the executable mappings of processes shorter than a poll are missed");
			return skel;
		}
		agent_prog__destroy(skel);
	}
	errno = -err;
	return NULL;
}

/* A power of two slots a CPU, for every possible CPU; false if that is too many. */
static bool size_switches(const struct agent *a, struct agent_bpf *b)
{
	int n;

	if (!a->switch_slots)
		return true;
	n = libbpf_num_possible_cpus();
	if (n <= 0)
		return false;
	b->ncpus = n;
	for (b->slots = AGENT_SWITCH_SLOTS_MIN; b->slots < a->switch_slots; b->slots *= 2)
		;
	return (uint64_t)b->ncpus * b->slots <= UINT32_MAX / sizeof(struct agent_bpf_switch);
}

static void *map_whole(struct bpf_map *map, size_t size, int prot, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	*len = (size + page - 1) / page * page;
	p = mmap(NULL, *len, prot, MAP_SHARED, bpf_map__fd(map), 0);
	return p == MAP_FAILED ? NULL : p;
}

/*
 * Map the rings, then log on each online CPU what it runs now: where the
 * kernel cannot run a program on a chosen CPU (before 5.10), each CPU's
 * log starts at its first switch, as -v says.
 */
static int start_switches(struct agent *a, struct agent_bpf *b)
{
	int fd = bpf_program__fd(b->skel->progs.vmctx_switch_mark);
	unsigned int cpu;

	b->sw = map_whole(b->skel->maps.switches,
			  (size_t)b->ncpus * b->slots * sizeof(*b->sw), PROT_READ, &b->sw_len);
	if (b->sw)
		b->rings = map_whole(b->skel->maps.switch_rings, b->ncpus * sizeof(*b->rings),
				     PROT_READ | PROT_WRITE, &b->rings_len);
	if (!b->sw || !b->rings)
		return -errno;
	for (cpu = 0; cpu < b->ncpus; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);

		if (!bpf_prog_test_run_opts(fd, &o) || errno == ENXIO)
			continue;
		agent_note(a, "BPF: cannot run a program on CPU %u (%s): each CPU's switch log starts at its first switch",
			   cpu, strerror(errno));
		break;
	}
	agent_note(a, "BPF: switch rings of %u slots for each of %u possible CPUs (%zu KiB)",
		   b->slots, b->ncpus, (b->sw_len + b->rings_len) >> 10);
	return 0;
}

static int bpf_open(struct agent *a, bool quiet)
{
	struct agent_bpf *b;
	const char *what;
	int err;

	if (!may_bpf()) {
		if (!quiet)
			agent_err(a, "the BPF backend needs root, or CAP_BPF with CAP_PERFMON");
		return -EPERM;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	if (!size_switches(a, b)) {
		if (!quiet)
			agent_err(a, "--switches=%u: too many slots for %u possible CPUs",
				  a->switch_slots, b->ncpus);
		free(b);
		return -E2BIG;
	}
	libbpf_set_print(a->verbose ? libbpf_verbose : libbpf_quiet);
	b->skel = load_skel(a, b, &what);
	if (!b->skel) {
		err = -errno;
		if (!quiet)
			agent_err(a, "the BPF programs do not %s: %s", what, strerror(-err));
		goto fail;
	}
	b->ring = ring_buffer__new(bpf_map__fd(b->skel->maps.events), on_event, a, NULL);
	if (!b->ring) {
		err = -errno;
		if (!quiet)
			agent_err(a, "the BPF ring buffer: %s", strerror(-err));
		goto fail;
	}
	if (b->slots) {
		err = start_switches(a, b);
		if (err) {
			if (!quiet)
				agent_err(a, "the BPF switch rings: %s", strerror(-err));
			goto fail;
		}
	}
	b->tsc_khz = measure_tsc_khz();
	b->pti = pti_on(a);
	a->bpf = b;
	return 0;
fail:
	unmap_switches(b);
	ring_buffer__free(b->ring);
	agent_prog__destroy(b->skel);
	free(b);
	return err < 0 ? err : -EINVAL;
}

static void unmap_switches(struct agent_bpf *b)
{
	if (b->sw)
		munmap(b->sw, b->sw_len);
	if (b->rings)
		munmap(b->rings, b->rings_len);
	b->sw = NULL;
	b->rings = NULL;
}

static void free_proc(struct agent_bpf_proc *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->v[i].path);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

static void bpf_close(struct agent *a)
{
	struct agent_bpf *b = a->bpf;
	size_t i;

	if (!b)
		return;
	unmap_switches(b);
	ring_buffer__free(b->ring);
	agent_prog__destroy(b->skel);
	for (i = 0; i < b->nprocs; i++)
		free_proc(&b->procs[i]);
	free(b->procs);
	free(b);
	a->bpf = NULL;
}

static void task_from(struct agent_task_row *d, const struct agent_bpf_task *s, bool pti)
{
	d->pid = s->pid;
	d->tgid = s->tgid;
	d->start_ns = s->start_ns;
	d->root = s->root == AGENT_BPF_NO_ROOT ? AGENT_NO_ROOT : s->root;
	/* kernel_to_user_pgdp(): the user half is the next page */
	d->user_root = pti && d->root != AGENT_NO_ROOT ? d->root + 4096 : AGENT_NO_ROOT;
	memcpy(d->comm, s->comm, sizeof(s->comm));
	d->comm[sizeof(s->comm) - 1] = '\0';
}

static int bpf_read_table(struct agent *a, struct agent_task_table *t)
{
	struct agent_bpf *b = a->bpf;
	struct agent_task_table nt = { 0 };
	struct agent_bpf_task rec;
	size_t cap = 0, got = 0;
	int link, fd, err = 0;
	ssize_t r;

	link = bpf_link__fd(b->skel->links.vmctx_tasks);
	fd = bpf_iter_create(link);
	if (fd < 0) {
		err = -errno;
		agent_err(a, "the BPF task iterator: %s", strerror(-err));
		return err;
	}
	nt.tsc_khz = b->tsc_khz;
	nt.pti = b->pti;
	/* the pair after the last task: every event we may miss comes before it */
	for (;;) {
		r = read(fd, (char *)&rec + got, sizeof(rec) - got);
		if (r < 0 && errno == EINTR && !agent_interrupted(a))
			continue;
		if (r < 0) {
			err = -errno;
			agent_err(a, "the BPF task iterator: %s", strerror(-err));
			goto out;
		}
		if (!r)
			break;
		got += r;
		if (got < sizeof(rec))
			continue;
		got = 0;
		if (nt.ntasks == cap) {
			struct agent_task_row *nv;

			cap = cap ? 2 * cap : 256;
			nv = realloc(nt.tasks, cap * sizeof(*nv));
			if (!nv) {
				err = -ENOMEM;
				agent_err(a, "%s", strerror(ENOMEM));
				goto out;
			}
			nt.tasks = nv;
		}
		task_from(&nt.tasks[nt.ntasks++], &rec, b->pti);
	}
	agent_clock_pair(&nt.tsc, &nt.ns);
	/* the module's cr3_mask: the SME bit of CR3, which roots leave out */
	nt.cr3_mask = b->skel->bss->cr3_mask;
out:
	close(fd);
	if (err) {
		agent_task_table_free(&nt);
		return err;
	}
	agent_task_table_free(t);
	*t = nt;
	return 0;
}

static struct agent_event *push(struct agent_bpf *b)
{
	struct agent_event *e;

	if (*b->nev == *b->cap) {
		size_t cap = *b->cap ? 2 * *b->cap : 256;

		e = realloc(*b->ev, cap * sizeof(*e));
		if (!e)
			return NULL;
		*b->ev = e;
		*b->cap = cap;
	}
	e = &(*b->ev)[(*b->nev)++];
	memset(e, 0, sizeof(*e));
	e->seq = b->seq++;
	return e;
}

static struct agent_bpf_proc *proc_of(struct agent_bpf *b, int tgid)
{
	size_t i;

	for (i = 0; i < b->nprocs; i++)
		if (b->procs[i].tgid == tgid)
			return &b->procs[i];
	return NULL;
}

/*
 * All of @p's mappings as one batch, newest first: where they overlap, it
 * wins.  The batch is at @ns, the time of what follows it (an exit, a next
 * image's mapping), or at its latest mapping's if later: at the end of a
 * read (@ns 0), so that a fork after a mapping inherits it.  A batch of an
 * image whose exec event is still to come waits for it
 * (agent_tasks_apply_event()).
 */
static int flush_proc(struct agent_bpf *b, struct agent_bpf_proc *p, uint64_t ns)
{
	size_t i;

	if (!p->dirty)
		return 0;
	p->dirty = false;
	for (i = p->n; i-- > 0;) {
		struct agent_event *e = push(b);

		if (!e)
			return -ENOMEM;
		e->type = AGENT_EVENT_MAP;
		e->ns = ns > p->ns ? ns : p->ns;
		e->task.pid = p->tgid;
		e->task.tgid = p->tgid;
		e->task.root = p->root;
		e->task.user_root = AGENT_NO_ROOT;
		e->start = p->v[i].start;
		e->end = p->v[i].end;
		e->pgoff = p->v[i].pgoff;
		e->path = strdup(p->v[i].path);
		if (!e->path)
			return -ENOMEM;
	}
	return 0;
}

static void drop_proc(struct agent_bpf *b, struct agent_bpf_proc *p)
{
	free_proc(p);
	*p = b->procs[--b->nprocs];
}

/* "/" and the names leaf first, joined root first; NULL if unusable. */
char *agent_bpf_join_path(const char *names, size_t size, unsigned int depth)
{
	const char *part[AGENT_BPF_DEPTH];
	size_t off = 0, len = 0, n = 0;
	char *path, *w;

	if (!depth || depth > AGENT_BPF_DEPTH)
		return NULL;
	for (n = 0; n < depth; n++) {
		const char *end = memchr(names + off, '\0', size - off);

		if (!end || end == names + off)
			return NULL;
		part[n] = names + off;
		len += end - (names + off) + 1;
		off = end - names + 1;
		if (off >= size && n + 1 < depth)
			return NULL;
	}
	path = malloc(len + 1);
	if (!path)
		return NULL;
	w = path;
	while (n-- > 0) {
		size_t l = strlen(part[n]);

		*w++ = '/';
		memcpy(w, part[n], l);
		w += l;
	}
	*w = '\0';
	return path;
}

static int on_map(struct agent_bpf *b, const struct agent_bpf_event *s)
{
	struct agent_bpf_proc *p = proc_of(b, s->task.tgid);
	struct agent_bpf_map *m;
	char *path;
	int err;

	if (s->truncated)
		return 0;
	path = agent_bpf_join_path(s->names, sizeof(s->names), s->depth);
	if (!path)
		return 0;
	if (p && p->root != s->task.root) {
		/* a new image: the old one's batch goes before the exec that came between */
		err = flush_proc(b, p, s->ns);
		free_proc(p);
		p->root = s->task.root;
		if (err)
			goto fail;
	}
	if (!p) {
		p = realloc(b->procs, (b->nprocs + 1) * sizeof(*p));
		if (!p)
			goto nomem;
		b->procs = p;
		p = &b->procs[b->nprocs++];
		memset(p, 0, sizeof(*p));
		p->tgid = s->task.tgid;
		p->root = s->task.root;
	}
	m = realloc(p->v, (p->n + 1) * sizeof(*m));
	if (!m)
		goto nomem;
	p->v = m;
	m = &p->v[p->n++];
	m->start = s->start;
	m->end = s->end;
	m->pgoff = s->pgoff;
	m->path = path;
	p->ns = s->ns;
	p->dirty = true;
	return 0;
nomem:
	err = -ENOMEM;
fail:
	free(path);
	return err;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct agent *a = ctx;
	struct agent_bpf *b = a->bpf;
	const struct agent_bpf_event *s = data;
	struct agent_event *e;
	struct agent_bpf_proc *p;
	int err = 0;

	if (size < offsetof(struct agent_bpf_event, start))
		return 0;
	if (s->type == AGENT_BPF_MAP) {
		if (size < sizeof(*s))
			return 0;
		err = on_map(b, s);
		goto out;
	}
	if (s->type == AGENT_BPF_EXIT && s->task.pid == s->task.tgid &&
	    (p = proc_of(b, s->task.tgid))) {
		err = flush_proc(b, p, s->ns);
		drop_proc(b, p);
		if (err)
			goto out;
	}
	e = push(b);
	if (!e) {
		err = -ENOMEM;
		goto out;
	}
	e->type = s->type == AGENT_BPF_FORK ? AGENT_EVENT_FORK :
		  s->type == AGENT_BPF_EXEC ? AGENT_EVENT_EXEC : AGENT_EVENT_EXIT;
	e->ns = s->ns;
	e->other = s->other;
	task_from(&e->task, &s->task, b->pti);
	if (e->type == AGENT_EVENT_EXIT)
		/* the mm may be gone already: the record keeps the root it had */
		e->task.root = e->task.user_root = AGENT_NO_ROOT;
out:
	if (err)
		b->err = err;
	return err;
}

/* The read so far, and the room it has. */
struct switch_list {
	struct agent_switch **sw;
	size_t *n;
	size_t *cap;
};

static struct agent_switch *push_switch(struct switch_list *l)
{
	struct agent_switch *v;

	if (*l->n == *l->cap) {
		size_t cap = *l->cap ? 2 * *l->cap : 1024;

		v = realloc(*l->sw, cap * sizeof(*v));
		if (!v)
			return NULL;
		*l->sw = v;
		*l->cap = cap;
	}
	v = &(*l->sw)[(*l->n)++];
	memset(v, 0, sizeof(*v));
	return v;
}

static void switch_from(struct agent_switch *d, unsigned int cpu, const struct agent_bpf_switch *s)
{
	static const enum vmctx_task_kind kinds[] = {
		[AGENT_BPF_SW_TASK] = VMCTX_TASK_USER,
		[AGENT_BPF_SW_KTHREAD] = VMCTX_TASK_KTHREAD,
		[AGENT_BPF_SW_IDLE] = VMCTX_TASK_IDLE,
	};

	d->cpu = cpu;
	d->ns = s->ns;
	if (s->kind == AGENT_BPF_SW_LOST) {
		d->type = AGENT_SWITCH_LOST;
		d->lost_to = s->lost_to;
		d->nlost = s->nlost;
		return;
	}
	d->type = AGENT_SWITCH;
	d->pid = s->pid;
	d->tgid = s->tgid;
	/* an unknown kind stays one, for the switch log to refuse */
	d->kind = s->kind < AGENT_BPF_SW_LOST ? kinds[s->kind] : (enum vmctx_task_kind)s->kind;
	memcpy(d->comm, s->comm, sizeof(s->comm));
	d->comm[sizeof(s->comm) - 1] = '\0';
}

/*
 * One CPU's slots, oldest first, one ring's worth at most; once caught up,
 * a loss still under way is told with no end.  x86 keeps loads in order
 * and the CPU's stores too (log_switch()): the acquire and release here
 * keep the compiler from moving a slot's copy past the tail.
 */
static int read_ring(struct agent_bpf *b, unsigned int cpu, struct switch_list *l)
{
	struct agent_bpf_switch_ring *r = &b->rings[cpu];
	const struct agent_bpf_switch *ring = &b->sw[(size_t)cpu * b->slots];
	uint64_t tail = r->tail, head, taken = 0, from;
	struct agent_switch *d;
	uint32_t nlost;

	while (taken < b->slots) {
		head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		if (head - tail > b->slots)
			tail = head - b->slots;
		if (tail != head) {
			struct agent_bpf_switch s = ring[tail & (b->slots - 1)];

			__atomic_store_n(&r->tail, ++tail, __ATOMIC_RELEASE);
			taken++;
			d = push_switch(l);
			if (!d)
				return -ENOMEM;
			switch_from(d, cpu, &s);
			continue;
		}
		nlost = __atomic_load_n(&r->nlost, __ATOMIC_ACQUIRE);
		if (!nlost)
			break;
		from = __atomic_load_n(&r->lost_from, __ATOMIC_RELAXED);
		/* the loss may have been logged since: take its slot instead */
		if (__atomic_load_n(&r->head, __ATOMIC_ACQUIRE) != head)
			continue;
		d = push_switch(l);
		if (!d)
			return -ENOMEM;
		d->type = AGENT_SWITCH_LOST;
		d->cpu = cpu;
		d->ns = from;
		d->lost_to = AGENT_TIME_NONE;
		d->nlost = nlost;
		break;
	}
	return 0;
}

static int bpf_read_switches(struct agent *a, struct agent_switch **sw, size_t *n, size_t *cap)
{
	struct agent_bpf *b = a->bpf;
	struct switch_list l = { sw, n, cap };
	unsigned int cpu;
	int err = 0;

	for (cpu = 0; !err && b->rings && cpu < b->ncpus; cpu++)
		err = read_ring(b, cpu, &l);
	if (err)
		agent_err(a, "the BPF switch rings: %s", strerror(-err));
	return err;
}

static int by_ns(const void *x, const void *y)
{
	const struct agent_event *p = x, *q = y;

	if (p->ns != q->ns)
		return p->ns < q->ns ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

static int bpf_read_events(struct agent *a, struct agent_event **ev, size_t *nev,
			   size_t *cap)
{
	struct agent_bpf *b = a->bpf;
	size_t first = *nev, i;
	uint32_t key = 0;
	uint64_t lost = 0;
	int r;

	b->ev = ev;
	b->nev = nev;
	b->cap = cap;
	b->err = 0;
	r = ring_buffer__consume(b->ring);
	/* each batch at its latest mapping's time: a fork after it inherits it */
	for (i = 0; !b->err && r >= 0 && i < b->nprocs; i++)
		b->err = flush_proc(b, &b->procs[i], 0);
	if (b->err == -ENOMEM || (r < 0 && r != -EINTR)) {
		agent_err(a, "the BPF ring buffer: %s", strerror(b->err ? -b->err : -r));
		return b->err ? b->err : r;
	}
	/*
	 * Each CPU reserves in order but stamps its time after: a stable sort
	 * by time keeps each process's own order.  Map batches carry their
	 * latest mapping's time, and keep their place after equal times.
	 */
	if (*nev > first)
		qsort(*ev + first, *nev - first, sizeof(**ev), by_ns);
	if (!bpf_map__lookup_elem(b->skel->maps.lost, &key, sizeof(key), &lost, sizeof(lost), 0) &&
	    lost > b->lost_seen) {
		a->events_lost += lost - b->lost_seen;
		b->lost_seen = lost;
	}
	return agent_interrupted(a) ? -EINTR : 0;
}
#endif /* HAVE_BPF */

const struct agent_backend_ops agent_bpf_ops = {
	.name = "bpf",
	.open = bpf_open,
	.close = bpf_close,
	.read_table = bpf_read_table,
	.read_events = bpf_read_events,
	.read_switches = bpf_read_switches,
};
