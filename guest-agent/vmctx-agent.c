// SPDX-License-Identifier: GPL-2.0
/*
 * vmctx-agent: write a guest's bundle (vmctx-bundle(5)) for host-side
 * profiling: which page-table root belongs to which process and when, the
 * processes' mappings and symbols, and the kernel's symbols.
 *
 *   vmctx-agent snapshot -o FILE                the processes alive now
 *   vmctx-agent record -o FILE -d SECONDS       every process of a window
 *   vmctx-agent record -o FILE -- CMD [ARG...]  ... for as long as CMD runs
 *   vmctx-agent record --switches ...            ... and each CPU's context switches
 *   vmctx-agent serve                           keep a rolling record, and hand
 *                                               the host its bundle over vsock
 */
#include "agent.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <linux/capability.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_OUTPUT		"guest.vmctx"
#define DEFAULT_INTERVAL_MS	50
/* Maps of a new process are read twice: ld.so may still be loading at the first read. */
#define NEW_TASK_MAP_READS	2
/* What vmctx_bundle_read_file() accepts by default (vmctx_read_opts.max_size 0). */
#define READER_DEFAULT_MAX_MIB	64
/* serve: its configuration file (the build's sysconfdir), and what it keeps by default */
#ifndef SYSCONFDIR
#define SYSCONFDIR		"/etc"
#endif
#define DEFAULT_CONFIG		SYSCONFDIR "/vmctx/agent.conf"
#define DEFAULT_KEEP_S		600
#define DEFAULT_MAX_MIB		64

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s snapshot [OPTIONS]\n"
		"       %s record [OPTIONS] [-d SECONDS | -- COMMAND [ARG...]]\n"
		"       %s serve [OPTIONS]\n"
		"\n"
		"Write this guest's map bundle for vmctx on the host: page-table roots of\n"
		"all processes, their mappings and symbols, and the kernel's symbols.\n"
		"Needs root, and BPF with the kernel's BTF or the vmctx_guest module (vmctx_guest(4)).\n"
		"\n"
		"  -o, --output FILE      bundle to write (default: " DEFAULT_OUTPUT "), mode 0600:\n"
		"                         it holds the kernel's and every process's addresses\n"
		"  -g, --group GROUP      make the bundle 0640 and owned by GROUP\n"
		"  -d, --duration SECS    record: stop after SECS seconds (fractions allowed)\n"
		"  -i, --interval MS      record: read the event ring every MS ms (default: %d)\n"
		"      --switches[=RING]  record, serve: also log which task each CPU runs, from\n"
		"                         every context switch, in rings of RING switches a CPU\n"
		"                         (default: %d; off without this option)\n"
		"      --listen=WHERE     serve: vsock:PORT (default: vsock:%d; the host alone may\n"
		"                         connect) or unix:PATH (made 0600)\n"
		"      --keep=SECS        serve: keep the last SECS seconds (default: %d)\n"
		"      --max-mib=MIB      serve: keep at most about MIB MiB of switches and ended\n"
		"                         processes (default: %d)\n"
		"      --config=FILE      serve: settings (default: " DEFAULT_CONFIG ", if it exists)\n"
		"  -r, --root DIR         read /proc, /sys and ELF files under DIR (default: /)\n"
		"      --backend=WHICH    auto (BPF if it loads, else the module), bpf or kmod\n"
		"  -k, --kmod-dir DIR     the module's files (default: ROOT/proc/vmctx_guest,\n"
		"                         or $VMCTX_GUEST_DIR)\n"
		"      --no-kallsyms      leave the kernel's symbols and modules out\n"
		"      --unwind           also put each mapped object's unwind tables (.eh_frame,\n"
		"                         .eh_frame_hdr, .debug_frame) in the bundle, for stacks\n"
		"                         the host unwinds (perf --call-graph dwarf; bigger bundles)\n"
		"  -v, --verbose          say what is read, and print a summary\n"
		"  -h, --help             show this help\n"
		"  -V, --version          show the version\n",
		prog, prog, prog, DEFAULT_INTERVAL_MS, AGENT_SWITCH_SLOTS, VMCTX_FETCH_PORT,
		DEFAULT_KEEP_S, DEFAULT_MAX_MIB);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const char *signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

/* ---- Collecting --------------------------------------------------------- */

/* The backend chosen (a->ops): the module's files, or BPF (the same table and events). */
static int read_table(struct agent *a)
{
	return a->ops->read_table(a, &a->table);
}

static int read_events(struct agent *a, struct agent_event **ev, size_t *nev, size_t *cap)
{
	return a->ops->read_events(a, ev, nev, cap);
}

/*
 * auto: BPF where the kernel has BTF and the programs load and attach,
 * else the module.  -v says which.
 */
static int open_backend(struct agent *a)
{
#ifdef HAVE_BPF
	int err;

	if (a->backend == AGENT_BACKEND_BPF ||
	    (a->backend == AGENT_BACKEND_AUTO && a->real_root && agent_bpf_available(a))) {
		a->ops = &agent_bpf_ops;
		err = a->ops->open(a, a->backend == AGENT_BACKEND_AUTO);
		if (!err) {
			a->backend = AGENT_BACKEND_BPF;
			agent_note(a, "backend: bpf (BTF, no module needed)");
			return 0;
		}
		if (a->backend == AGENT_BACKEND_BPF)
			return err;
		agent_note(a, "the BPF backend is unavailable (%s); using the vmctx_guest module",
			   err == -EPERM ? "it needs root, or CAP_BPF with CAP_PERFMON" :
			   strerror(-err));
	}
#else
	if (a->backend == AGENT_BACKEND_BPF) {
		agent_err(a, "--backend=bpf: this vmctx-agent was built without BPF support");
		return -ENOTSUP;
	}
#endif
	a->backend = AGENT_BACKEND_KMOD;
	a->ops = &agent_kmod_ops;
	agent_note(a, "backend: kmod (%s)", a->kmod_dir);
	return a->ops->open(a, false);
}

/* After open_backend(), whether it succeeded or not, as every backend's close allows. */
static void close_backend(struct agent *a)
{
	if (a->ops)
		a->ops->close(a);
	a->ops = NULL;
}

struct events {
	struct agent_event *v;
	size_t n;
	size_t cap;
};

/*
 * A clock pair for the host, now.  Under a fake root (tests) the times are
 * the tree's, not this machine's clock: no pairs, and the bundle relates
 * the TSC to the clock through the table's rate and pair alone.
 */
static int take_pair(struct agent *a)
{
	return a->real_root ? agent_pairs_take(&a->pairs) : 0;
}

static int apply_events(struct agent *a, struct events *ev, size_t *i, uint64_t until)
{
	int err;

	for (; *i < ev->n && ev->v[*i].ns <= until; (*i)++) {
		err = agent_tasks_apply_event(&a->tasks, &ev->v[*i]);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Read the task table and the events not yet seen, and apply both in time
 * order: the events up to the table's time, then the table.  At the end of
 * a recording (@final), later events are outside the window and records
 * the table no longer holds are closed; otherwise later events follow.
 */
static int sync_tasks(struct agent *a, bool final)
{
	struct events ev = { 0 };
	size_t i = 0;
	int err;

	err = read_table(a);
	if (!err)
		err = read_events(a, &ev.v, &ev.n, &ev.cap);
	if (!err)
		err = apply_events(a, &ev, &i, a->table.ns);
	if (!err)
		err = take_pair(a);
	if (!err)
		err = agent_tasks_apply_table(&a->tasks, &a->table);
	if (!err && final)
		agent_tasks_close_missing(&a->tasks, &a->table);
	else if (!err)
		err = apply_events(a, &ev, &i, UINT64_MAX);
	agent_events_free(ev.v, ev.n);
	return err;
}

/* Threads use their process leader's maps; kernel threads have none. */
static bool wants_maps(const struct agent_task *t)
{
	return t->pid == t->tgid && t->root != AGENT_NO_ROOT && t->exit == AGENT_TIME_NONE;
}

/* Whether /proc/PID/comm now says another name than @t's record; *@comm gets it. */
static bool name_changed(struct agent *a, const struct agent_task *t, char *comm, size_t size)
{
	char rel[32], *buf;
	size_t len;

	snprintf(rel, sizeof(rel), "proc/%d/comm", t->pid);
	if (agent_read_file(a, rel, &buf, &len))
		return false;
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	snprintf(comm, size, "%s", buf);
	free(buf);
	return strcmp(comm, t->comm) != 0;
}

/*
 * A process that exits before its maps are read is normal, and so is one
 * whose maps cannot be read: it is counted and keeps its earlier maps, if
 * any.  Only running out of memory, or a signal, stops the agent.
 *
 * While recording (@polling), an exec may be under way: its new mappings
 * are in /proc before its event is logged, while the record is still the
 * old image's, and the exec has renamed the process by then.  Maps read
 * under another name are put off to the next poll; the same new name a
 * poll later, with no exec in between, is a process that renamed itself.
 * A read that lacks what the events gave the image is another image's
 * (agent_task_take_read()), whatever its name.
 */
static int read_task_maps(struct agent *a, struct agent_task *t, bool polling)
{
	char comm[AGENT_COMM_MAX];
	struct agent_map *maps;
	uint64_t from = 0, to = 0;
	size_t n;
	int err;

	/*
	 * On this machine's own /proc the guest's clock is ours: when the read
	 * began and ended tells an exec in between, or before it, whose event
	 * comes later (agent_tasks_apply_event()).
	 */
	if (a->real_root)
		from = now_ns();
	err = agent_read_maps(a, t->tgid, t->pid, &maps, &n);
	if (a->real_root)
		to = now_ns();
	if (err == -ENOMEM)
		agent_err(a, "/proc/%d/maps: %s", t->pid, strerror(-err));
	if (err == -ENOMEM || err == -EINTR)
		return err;
	if (err == -ENOENT || err == -ESRCH || (!err && !n && t->nmaps)) {
		if (!err)
			agent_free_maps(maps, n);
		a->maps_gone++;
		agent_note(a, "pid %d (%s) exited before its maps were read%s", t->pid, t->comm,
			   t->nmaps ? "; the maps read earlier stay" : "");
		return 0;
	}
	if (err) {
		a->maps_unreadable++;
		agent_note(a, "pid %d (%s): /proc/%d/maps: %s; its maps are left out", t->pid,
			   t->comm, t->pid, strerror(-err));
		return 0;
	}
	if (polling && a->real_root && n && name_changed(a, t, comm, sizeof(comm))) {
		if (strcmp(t->renamed_to, comm)) {
			/* a name not seen before: a rename, or an exec under way */
			snprintf(t->renamed_to, sizeof(t->renamed_to), "%s", comm);
			t->maps_due++;
			agent_free_maps(maps, n);
			return 0;
		}
	} else {
		comm[0] = '\0';
	}
	if (!agent_task_take_read(t, maps, n, from, to)) {
		agent_note(a, "pid %d (%s): its maps read while an exec replaced them are left out",
			   t->pid, t->comm);
		agent_free_maps(maps, n);
		return 0;
	}
	if (comm[0])
		memcpy(t->comm, comm, sizeof(t->comm));
	t->renamed_to[0] = '\0';
	return 0;
}

static int read_all_maps(struct agent *a)
{
	size_t i;
	int err;

	for (i = 0; i < a->tasks.n; i++) {
		if (agent_interrupted(a))
			return -EINTR;
		if (!wants_maps(&a->tasks.v[i]))
			continue;
		err = read_task_maps(a, &a->tasks.v[i], false);
		if (err)
			return err;
	}
	return 0;
}

/*
 * record --switches: the switches the rings hold into the bundle's log;
 * @final: the window has ended, at the last table's time.
 */
static int drain_switches(struct agent *a, bool final)
{
	int err;

	if (!a->switch_slots)
		return 0;
	err = agent_switch_log_drain(a, final);
	if (err && err != -EINTR && !agent_said_error())
		agent_err(a, "cannot build the bundle: the switch log: %s", vmctx_strerror(err));
	return err;
}

/* What the switch log could not hold, said once at the end. */
static void switch_log_report(const struct agent *a)
{
	const struct agent_switch_log *l = &a->switches;

	if (l->lost)
		agent_warn(a, "%" PRIu64 " context switches were lost on %zu CPU%s: the switch rings overran (pass a larger --switches=RING, or a shorter --interval); the bundle marks where, as gaps",
			   l->lost, l->lost_cpus, l->lost_cpus == 1 ? "" : "s");
	if (l->refused)
		agent_warn(a, "%zu switch record%s refused (the first, of CPU %u: %s)", l->refused,
			   l->refused == 1 ? "" : "s", l->refused_cpu, l->refused_why);
	if (l->full)
		agent_warn(a, "the switch log reached the bundle's caps (%u switches, %u gaps) at %" PRIu64 " ns: from there on, each CPU's log is a gap",
			   AGENT_SWITCHES_MAX, AGENT_SWITCH_GAPS_MAX, l->full_at);
	if (l->outside)
		agent_note(a, "%zu switch records after the window left out", l->outside);
}

/* One period of a recording: new events, switches, and the maps of new processes. */
static int poll_once(struct agent *a)
{
	struct events ev = { 0 };
	size_t i = 0, first = a->tasks.n;
	int err;

	err = read_events(a, &ev.v, &ev.n, &ev.cap);
	if (!err)
		err = apply_events(a, &ev, &i, UINT64_MAX);
	agent_events_free(ev.v, ev.n);
	if (!err)
		err = drain_switches(a, false);
	if (!err)
		err = take_pair(a);
	if (err)
		return err;
	for (i = first; i < a->tasks.n; i++)
		a->tasks.v[i].maps_due = NEW_TASK_MAP_READS;
	for (i = 0; i < a->tasks.n; i++) {
		struct agent_task *t = &a->tasks.v[i];

		if (!t->maps_due)
			continue;
		t->maps_due--;
		if (!wants_maps(t))
			continue;
		err = read_task_maps(a, t, true);
		if (err)
			return err;
	}
	return 0;
}

static int run_command(struct agent *a, char **argv, pid_t *child)
{
	pid_t pid = fork();

	if (pid < 0) {
		agent_err(a, "fork: %s", strerror(errno));
		return -errno;
	}
	if (!pid) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s: %s\n", a->prog, argv[0], strerror(errno));
		_exit(127);
	}
	*child = pid;
	return 0;
}

/* The window ended by a signal: the command stops too, and we wait for it once. */
static void stop_command(struct agent *a, pid_t child, const char *cmd)
{
	int sig = agent_last_signal, status;

	agent_note(a, "stopped by %s; sending it to %s too", signal_name(sig), cmd);
	kill(child, sig);
	/* Without SA_RESTART, a second signal ends the wait (and the agent). */
	waitpid(child, &status, 0);
}

/* Watch until the duration ends, the command exits, or a signal asks to stop. */
static int watch(struct agent *a, double duration, unsigned int interval_ms, char **cmd)
{
	uint64_t deadline = duration > 0 ? now_ns() + (uint64_t)(duration * 1e9) : 0;
	struct timespec nap = {
		.tv_sec = interval_ms / 1000,
		.tv_nsec = (long)(interval_ms % 1000) * 1000000,
	};
	pid_t child = -1;
	int err, status;

	if (cmd && cmd[0]) {
		err = run_command(a, cmd, &child);
		if (err)
			return err;
	}
	for (;;) {
		if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
			if (!WIFEXITED(status) || WEXITSTATUS(status))
				agent_warn(a,
					   "%s exited with status %d; the bundle covers its run anyway",
					   cmd[0], WIFEXITED(status) ? WEXITSTATUS(status) :
					   128 + WTERMSIG(status));
			child = -1;
			break;
		}
		if (agent_signals || (deadline && now_ns() >= deadline) || duration == 0)
			break;
		nanosleep(&nap, NULL);
		err = poll_once(a);
		if (err)
			return err;
	}
	if (child > 0)
		stop_command(a, child, cmd[0]);
	return 0;
}

/* ---- The bundle ---------------------------------------------------------- */

/*
 * What one process may add to the bundle: any unprivileged guest process
 * can map a file many times under long paths, and a bundle over the
 * reader's limit would blind the host to every process of the guest.  Real
 * processes stay far below (a desktop browser: about 300 executable
 * mappings, 30 KB of paths).
 */
#define TASK_MAPS_MAX		8192
#define TASK_PATH_BYTES_MAX	(1u << 20)

static int add_task_maps(struct agent *a, int idx, const struct agent_task *t)
{
	size_t j, bytes = 0;
	int err;

	for (j = 0; j < t->nmaps; j++) {
		const struct agent_map *m = &t->maps[j];
		uint64_t bias;
		int obj;

		if (agent_interrupted(a))
			return -EINTR;
		bytes += m->path ? strlen(m->path) + 1 : 1;
		if (j >= TASK_MAPS_MAX || bytes > TASK_PATH_BYTES_MAX) {
			agent_warn(a, "pid %d (%s): %zu of its %zu executable mappings left out: over one process's share (%d mappings, %u KiB of paths)",
				   t->pid, t->comm, t->nmaps - j, t->nmaps, TASK_MAPS_MAX,
				   TASK_PATH_BYTES_MAX >> 10);
			return 0;
		}
		err = agent_elf_object_for_map(a, m->path, m->start, m->pgoff, m->prot, &bias,
					       &obj);
		if (err)
			return err;
		err = vmctx_bundle_add_map(a->bundle, idx, m->start, m->end, m->pgoff, bias, obj,
					   m->path);
		if (err == -VMCTX_E_LIMIT) {
			agent_warn(a, "/proc/%d/maps:%zu: mapping of %s left out: %s", t->pid,
				   m->lineno, m->path, vmctx_strerror(err));
			continue;
		}
		if (err) {
			agent_err(a, "cannot build the bundle: /proc/%d/maps:%zu: mapping of %s: %s",
				  t->pid, m->lineno, m->path, vmctx_strerror(err));
			return err;
		}
	}
	return 0;
}

static int build_bundle(struct agent *a)
{
	const struct agent_task_table *tab = &a->table;
	size_t i;
	int err;

	err = agent_add_identity(a);
	if (err)
		return err;
	/* which backend saw the processes: the bundle says, as -v does */
	err = vmctx_bundle_set_agent(a->bundle, a->backend == AGENT_BACKEND_BPF ?
				     "vmctx-agent " PACKAGE_VERSION " backend=bpf" :
				     "vmctx-agent " PACKAGE_VERSION " backend=kmod");
	if (err) {
		agent_err(a, "cannot build the bundle: the agent's name: %s", vmctx_strerror(err));
		return err;
	}
	err = vmctx_bundle_set_clock(a->bundle, tab->tsc_khz, tab->tsc, tab->ns);
	for (i = 0; !err && i < a->pairs.n; i++)
		err = vmctx_bundle_add_clock_pair(a->bundle, a->pairs.v[i].tsc, a->pairs.v[i].ns);
	if (err) {
		agent_err(a, "cannot build the bundle: the guest clock: %s", vmctx_strerror(err));
		return err;
	}
	if (!err)
		err = vmctx_bundle_set_cr3_mask(a->bundle, tab->cr3_mask);
	/* record: every exec and exit between these is in the bundle */
	if (!err && a->has_window) {
		err = vmctx_bundle_set_window(a->bundle, a->window_start, a->window_end);
		if (err)
			agent_err(a, "cannot build the bundle: the window: %s", vmctx_strerror(err));
	}
	for (i = 0; !err && i < a->tasks.n; i++) {
		const struct agent_task *t = &a->tasks.v[i];
		int idx;

		/* The task's index on success. */
		idx = vmctx_bundle_add_task(a->bundle, t->root == AGENT_NO_ROOT ? 0 : t->root,
					    t->pid, t->tgid, t->comm, t->start,
					    t->exit == AGENT_TIME_NONE ? VMCTX_TIME_NONE : t->exit);
		if (idx < 0) {
			agent_err(a, "cannot build the bundle: task %d (%s): %s", t->pid, t->comm,
				  vmctx_strerror(idx));
			return idx;
		}
		err = add_task_maps(a, idx, t);
	}
	if (!err && !a->no_kallsyms)
		err = agent_add_kernel(a);
	return err;
}

static void summary(const struct agent *a, const char *cmd, const char *out, uint64_t t0)
{
	size_t i, nsyms = 0, exited = 0;
	struct stat st;

	for (i = 0; i < vmctx_bundle_nobjects(a->bundle); i++)
		nsyms += vmctx_bundle_object_nsyms(a->bundle, (int)i);
	for (i = 0; i < a->tasks.n; i++)
		exited += a->tasks.v[i].exit != AGENT_TIME_NONE;
	if (stat(out, &st))
		st.st_size = 0;
	if (a->switch_slots)
		agent_note(a, "%s: the switch log holds %zu context switches, and %zu gap%s", cmd,
			   vmctx_bundle_nswitches(a->bundle), vmctx_bundle_nswitch_gaps(a->bundle),
			   vmctx_bundle_nswitch_gaps(a->bundle) == 1 ? "" : "s");
	agent_note(a, "%s: %zu tasks (%zu ended), %zu objects, %zu symbols, %zu maps, %zu kernel symbols; %zu processes gone before their maps were read, %zu with unreadable maps; %zu clock pairs (each read within %.1f us; %zu read over more than %.0f us left out); wrote %s (%lld bytes) in %.3f s",
		   cmd, vmctx_bundle_ntasks(a->bundle), exited, vmctx_bundle_nobjects(a->bundle),
		   nsyms, vmctx_bundle_nmaps(a->bundle), vmctx_bundle_nksyms(a->bundle),
		   a->maps_gone, a->maps_unreadable, a->pairs.n, a->pairs.max_span / 1e3,
		   a->pairs.dropped, AGENT_PAIR_MAX_SPAN_NS / 1e3, out, (long long)st.st_size,
		   (now_ns() - t0) / 1e9);
}

/* ---- Commands -------------------------------------------------------------- */

struct options {
	const char *output;
	const char *group;	/* NULL: the bundle stays 0600 */
	gid_t gid;
	double duration;	/* < 0: not given */
	unsigned int interval_ms;
	char **cmd;
	/* serve */
	struct agent_listen listen;
	double keep;		/* seconds */
	unsigned long max_mib;
	const char *config;
	/* what the command line gave, which the configuration file does not change */
	bool interval_given, listen_given, keep_given, max_mib_given, backend_given;
	bool switches_given;
	bool unwind_given;
};

static int collect(struct agent *a, bool record, const struct options *o)
{
	uint64_t window_start;
	int err;

	/* Events first: the table then comes after every event we may miss. */
	err = open_backend(a);
	if (err)
		return err;
	err = sync_tasks(a, !record);
	if (err)
		return err;
	if (record) {
		window_start = a->table.ns;
		if (a->switch_slots) {
			agent_switch_log_init(&a->switches, a->bundle, window_start);
			err = drain_switches(a, false);
		}
		/* Processes alive now may end during the window: keep their maps. */
		if (!err)
			err = read_all_maps(a);
		if (!err) {
			/* -v: scripts may start their workload from here on */
			agent_note(a, "record: the window is open");
			err = watch(a, o->duration, o->interval_ms, o->cmd);
		}
		if (!err)
			err = sync_tasks(a, true);
		if (!err)
			err = drain_switches(a, true);
		if (err)
			return err;
		switch_log_report(a);
		agent_tasks_drop_before(&a->tasks, window_start);
		a->has_window = true;
		a->window_start = window_start;
		a->window_end = a->table.ns;
	}
	if (a->events_lost)
		agent_warn(a, "%" PRIu64 " process events were lost: the module's ring overflowed (load it with a larger ring_size=, or pass a shorter --interval)",
			   a->events_lost);
	err = read_all_maps(a);
	if (!err && a->maps_unreadable)
		agent_warn(a, "the maps of %zu process%s could not be read and are left out (-v names them)",
			   a->maps_unreadable, a->maps_unreadable == 1 ? "" : "es");
	return err;
}

/*
 * perf reads a bundle with libvmctx's default limits: a bundle it would
 * refuse is an error, though it stays written for readers given more room.
 */
static int check_readable(struct agent *a, const char *out)
{
	struct vmctx_bundle *b = NULL;
	int err;

	err = vmctx_bundle_read_file(out, NULL, &b);
	vmctx_bundle_free(b);
	if (err == -VMCTX_E_LIMIT)
		agent_err(a, "%s: written, but too big to use: its text is over the %d MiB that libvmctx reads by default, so perf report --guest-maps refuses it; %s a shorter record makes it smaller",
			  out, READER_DEFAULT_MAX_MIB,
			  a->switch_slots ? "--no-kallsyms, no --switches or" : "--no-kallsyms or");
	else if (err)
		agent_err(a, "%s: written, but it does not read back: %s", out, vmctx_strerror(err));
	return err;
}

/*
 * Without root, the BPF backend works with CAP_BPF and CAP_PERFMON (to load
 * and run its programs) and CAP_SYS_PTRACE (to read other users'
 * /proc/PID/maps); the module shows its tables to root only.
 */
static bool bpf_caps(void)
{
	static const unsigned int need[] = { CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE };
	unsigned long long eff = 0;
	char line[256];
	bool found = false;
	size_t i;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "CapEff: %llx", &eff) == 1;
	fclose(f);
	for (i = 0; found && i < sizeof(need) / sizeof(need[0]); i++)
		found = eff & (1ULL << need[i]);
	return found;
}

/* NULL when this process may use its backend, else why not, in one sentence. */
static const char *privilege_problem(const struct agent *a)
{
	if (!a->real_root || geteuid() == 0)
		return NULL;
	if (a->backend != AGENT_BACKEND_KMOD && bpf_caps())
		return NULL;
	switch (a->backend) {
	case AGENT_BACKEND_BPF:
		return "--backend=bpf needs root, or CAP_BPF and CAP_PERFMON to load its programs and CAP_SYS_PTRACE to read other users' /proc/PID/maps";
	case AGENT_BACKEND_KMOD:
		return "must run as root: the vmctx_guest module shows page-table roots to root only, and other users' /proc/PID/maps need it too";
	default:
		return "must run as root, or with CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE for the BPF backend: the vmctx_guest module shows page-table roots to root only";
	}
}

/*
 * libvmctx writes the bundle 0600: it holds the guest kernel's symbol
 * addresses and every process's memory map, the whole guest's KASLR and
 * ASLR.  --group shares it with one group the operator names, read-only.
 */
static int share_with_group(const struct agent *a, const struct options *o)
{
	int err;

	if (!o->group)
		return 0;
	if (!chown(o->output, (uid_t)-1, o->gid) && !chmod(o->output, 0640))
		return 0;
	err = errno;
	agent_err(a, "%s: cannot give it to group %s: %s", o->output, o->group, strerror(err));
	return -err;
}

static int run(struct agent *a, bool record, const struct options *o)
{
	const char *why = privilege_problem(a);
	uint64_t t0 = now_ns();
	int err;

	if (why) {
		agent_err(a, "%s", why);
		return -EPERM;
	}
	/* record: the first signal ends the window; snapshot: any signal stops. */
	a->signals_ok = record;
	err = collect(a, record, o);
	close_backend(a);
	if (!err)
		err = build_bundle(a);
	if (!err && agent_interrupted(a))
		err = -EINTR;
	if (err == -EINTR)
		agent_err(a, "stopped by %s: no bundle written", signal_name(agent_last_signal));
	if (err)
		return err;
	err = vmctx_bundle_seal(a->bundle);
	if (!err)
		err = vmctx_bundle_write_file(a->bundle, o->output);
	if (err) {
		agent_err(a, "%s: %s", o->output, vmctx_strerror(err));
		return err;
	}
	err = share_with_group(a, o);
	if (!err)
		err = check_readable(a, o->output);
	if (err)
		return err;
	summary(a, record ? "record" : "snapshot", o->output, t0);
	return 0;
}

/* ---- serve ------------------------------------------------------------------ */

/* The guest's clock now: this machine's, or under a fake tree its table's. */
static uint64_t guest_clock_now(const struct agent *a)
{
	return a->real_root ? now_ns() : a->table.ns;
}

/*
 * Forget what ended before the last --keep seconds, and the oldest
 * switches and ended tasks beyond --max-mib: *@kept_from is then the
 * earliest time the agent can give a whole account of (not before it
 * started).  Once, at the later of the two times.
 */
static void serve_prune(struct agent *a, const struct options *o, uint64_t started,
			uint64_t *kept_from)
{
	uint64_t now = guest_clock_now(a), keep = (uint64_t)(o->keep * 1e9), cut;
	uint64_t from = now > keep ? now - keep : 0;
	size_t i;

	/* (never back before what an earlier prune let go) */
	if (from < started)
		from = started;
	if (from < *kept_from)
		from = *kept_from;
	/* --max-mib: the oldest switches and ended tasks go too */
	cut = agent_budget_from(&a->tasks, &a->store, from, (size_t)o->max_mib * 1024 * 1024);
	if (cut > from)
		from = cut;
	agent_switch_store_prune(&a->store, from);
	agent_tasks_drop_before(&a->tasks, from);
	/* the clock pairs: the last before the start stays, to reach back to it */
	for (i = 0; i + 1 < a->pairs.n && a->pairs.v[i + 1].ns <= from; i++)
		;
	if (i) {
		memmove(a->pairs.v, a->pairs.v + i, (a->pairs.n - i) * sizeof(*a->pairs.v));
		a->pairs.n -= i;
	}
	*kept_from = from;
}

/*
 * One request: the bundle of the span asked for (all that is kept when 0),
 * built as record builds one, the switch log replayed from the store; or
 * why not.  A request that is not one is dropped, said with -v.
 *
 * The records are brought up to now here; the bundle is built and sent by
 * a child (*@child), which has its own copy of them, so that the service
 * goes on reading the backend's rings meanwhile: building a bundle takes
 * a second or two (every object's symbols, the kernel's), long enough for
 * a busy guest to overrun the switch rings.  Without a child, here.  When
 * @busy, the request is read and answered that the agent is busy.
 */
/* Bundles built at once, each by a child: a sequential asker never waits on one. */
#define SERVE_CHILDREN	2

static int serve_answer(struct agent *a, int fd, uint64_t started, uint64_t kept_from, bool busy,
			pid_t *child)
{
	struct vmctx_bundle *own_bundle = a->bundle;
	struct agent_elf_cache *own_elves = a->elves;
	uint64_t span, start, end;
	size_t len = 0;
	void *buf = NULL;
	int err, ret;

	*child = -1;
	err = vmctx_fetch_read_request(fd, 2000, &span);
	if (err) {
		agent_note(a, "serve: a request dropped: %s", vmctx_strerror(err));
		return 0;
	}
	if (busy) {
		vmctx_fetch_write_reply(fd, NULL, 0, -EBUSY, 1000);
		agent_note(a, "serve: a request answered busy: %d bundles are being built",
			   SERVE_CHILDREN);
		return 0;
	}
	/* up to now: the table, the events, the switches, and the maps */
	err = sync_tasks(a, false);
	if (!err)
		err = drain_switches(a, false);
	if (!err)
		err = read_all_maps(a);
	if (err == -EINTR || err == -ENOMEM)
		return err;
	end = a->table.ns;
	start = kept_from < end ? kept_from : end;
	if (span && end - start > span)
		start = end - span;
	/*
	 * A span reaching back past what is kept is said (a warning when
	 * --keep or --max-mib dropped it), and what is kept is sent: the host
	 * compares the bundle's window with its recording.
	 */
	if (span && end - start < span && kept_from > started)
		agent_warn(a, "serve: asked for the last %.3f s, holding only the last %.3f s (--keep, --max-mib)",
			   span / 1e9, (end - start) / 1e9);
	else if (span && end - start < span)
		agent_note(a, "serve: asked for the last %.3f s, serving since %.3f s ago", span / 1e9,
			   (end - start) / 1e9);
	*child = fork();
	if (*child > 0)
		return 0;
	a->bundle = vmctx_bundle_new();
	a->elves = agent_elf_cache_new();
	a->unwind_full = false;
	a->has_window = true;
	a->window_start = start;
	a->window_end = end;
	err = a->bundle && a->elves ? err : -ENOMEM;
	if (!err && a->switch_slots) {
		agent_switch_log_init(&a->switches, a->bundle, start);
		err = agent_switch_log_take(&a->switches, a->store.v, a->store.n, end);
		if (!err)
			err = agent_switch_log_finish(&a->switches, end);
	}
	if (!err)
		err = build_bundle(a);
	if (!err)
		err = vmctx_bundle_seal(a->bundle);
	if (!err)
		err = vmctx_bundle_write_mem(a->bundle, &buf, &len);
	ret = vmctx_fetch_write_reply(fd, buf, len, err, 5000);
	if (err)
		agent_warn(a, "serve: no bundle for a request: %s", vmctx_strerror(err));
	else
		agent_note(a, "serve: %s %zu bytes: %zu tasks, %zu switches, %.3f s of guest time",
			   ret ? "could not send" : "sent", len, vmctx_bundle_ntasks(a->bundle),
			   vmctx_bundle_nswitches(a->bundle), (end - start) / 1e9);
	free(buf);
	agent_switch_log_free(&a->switches);
	vmctx_bundle_free(a->bundle);
	agent_elf_cache_free(a->elves);
	if (!*child)
		_exit(err ? 1 : 0);
	a->bundle = own_bundle;
	a->elves = own_elves;
	a->has_window = false;
	/* a failed build is the request's, not the service's end */
	return err == -ENOMEM || err == -EINTR ? err : 0;
}

static int serve(struct agent *a, const struct options *o)
{
	const char *why = privilege_problem(a);
	uint64_t started, kept_from, pruned = 0, now;
	unsigned int peer, children = 0;
	pid_t child;
	int lfd = -1, fd, n, st, err;

	if (why) {
		agent_err(a, "%s", why);
		return -EPERM;
	}
	/* the first SIGINT or SIGTERM ends the service; more stop whatever it does */
	a->signals_ok = 1;
	a->serving = true;
	err = open_backend(a);
	if (!err)
		err = sync_tasks(a, false);
	if (!err)
		err = drain_switches(a, false);
	if (!err)
		err = read_all_maps(a);
	if (!err) {
		lfd = agent_listen_open(a, &o->listen);
		err = lfd < 0 ? lfd : 0;
	}
	started = kept_from = a->table.ns;
	if (!err) {
		if (o->listen.vsock)
			agent_note(a, "serve: listening on vsock port %u, keeping %g s", o->listen.port,
				   o->keep);
		else
			agent_note(a, "serve: listening on %s, keeping %g s", o->listen.path, o->keep);
	}
	while (!err && !agent_signals) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };

		n = poll(&p, 1, (int)o->interval_ms);
		if (n < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		err = poll_once(a);
		/*
		 * Pruning walks every kept record: once a second, not each
		 * poll (a guest forking 3,000 processes a second kept the
		 * agent at 41% of a CPU pruning at every 50 ms poll)
		 */
		now = guest_clock_now(a);
		if (!err && now - pruned >= 1000000000ull) {
			serve_prune(a, o, started, &kept_from);
			pruned = now;
		}
		while (children && waitpid(-1, &st, WNOHANG) > 0)
			children--;
		while (!err && n > 0 && !agent_signals) {
			fd = agent_listen_accept(&o->listen, lfd, &peer);
			if (fd == -EAGAIN)
				break;
			if (fd == -EPERM) {
				agent_warn(a, "serve: refused a connection from vsock CID %u: only the host may fetch the bundle",
					   peer);
				continue;
			}
			if (fd < 0) {
				agent_warn(a, "serve: accept: %s", strerror(-fd));
				break;
			}
			/* the children that are done; at most SERVE_CHILDREN at work */
			while (children && waitpid(-1, &st, WNOHANG) > 0)
				children--;
			err = serve_answer(a, fd, started, kept_from, children >= SERVE_CHILDREN,
					   &child);
			children += child > 0;
			close(fd);
		}
	}
	while (children && wait(&st) > 0)
		children--;
	if (lfd >= 0)
		close(lfd);
	if (lfd >= 0 && !o->listen.vsock)
		unlink(o->listen.path);
	close_backend(a);
	if (!err && agent_signals)
		agent_note(a, "serve: stopped by %s", signal_name(agent_last_signal));
	return err == -EINTR ? 0 : err;
}

/* A setting of serve's configuration file (agent_config_read()). */
static bool parse_duration(const char *s, double *d);
static bool parse_slots(const char *s, unsigned int *slots);

/* --backend's and the backend setting's values. */
static bool parse_backend(const char *s, enum agent_backend *b)
{
	if (!strcmp(s, "auto"))
		*b = AGENT_BACKEND_AUTO;
	else if (!strcmp(s, "bpf"))
		*b = AGENT_BACKEND_BPF;
	else if (!strcmp(s, "kmod"))
		*b = AGENT_BACKEND_KMOD;
	else
		return false;
	return true;
}

/* A decimal number from @lo to @hi, the whole of @s. */
static bool parse_bounded(const char *s, unsigned long lo, unsigned long hi, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return !errno && end != s && !*end && *s != '-' && *v >= lo && *v <= hi;
}

struct config_ctx {
	struct agent *a;
	struct options *o;
};

static int config_set(void *ctx, const char *key, const char *value)
{
	struct config_ctx *c = ctx;
	struct options *o = c->o;
	struct agent_listen l;
	unsigned int slots;
	double d;
	unsigned long n;

	if (!strcmp(key, "listen")) {
		if (agent_listen_parse(value, &l))
			return -EINVAL;
		if (!o->listen_given)
			o->listen = l;
	} else if (!strcmp(key, "keep")) {
		if (!parse_duration(value, &d) || d < 1)
			return -EINVAL;
		if (!o->keep_given)
			o->keep = d;
	} else if (!strcmp(key, "max-mib")) {
		if (!parse_bounded(value, 1, 65536, &n))
			return -EINVAL;
		if (!o->max_mib_given)
			o->max_mib = n;
	} else if (!strcmp(key, "interval")) {
		if (!parse_bounded(value, 1, 60000, &n))
			return -EINVAL;
		if (!o->interval_given)
			o->interval_ms = n;
	} else if (!strcmp(key, "switches")) {
		if (!strcmp(value, "off"))
			slots = 0;
		else if (!parse_slots(!strcmp(value, "on") ? NULL : value, &slots))
			return -EINVAL;
		if (!o->switches_given)
			c->a->switch_slots = slots;
	} else if (!strcmp(key, "unwind")) {
		if (strcmp(value, "on") && strcmp(value, "off"))
			return -EINVAL;
		if (!o->unwind_given)
			c->a->unwind = !strcmp(value, "on");
	} else if (!strcmp(key, "backend")) {
		enum agent_backend b;

		if (!parse_backend(value, &b))
			return -EINVAL;
		if (!o->backend_given)
			c->a->backend = b;
	} else {
		return -ENOENT;
	}
	return 0;
}

/* Why libvmctx refuses something (a bundle, a line of one): a note for -v. */
static void lib_log(enum vmctx_log_level level, const char *msg, void *ctx)
{
	if (level == VMCTX_LOG_WARN)
		agent_note(ctx, "libvmctx: %s", msg);
}

static bool parse_duration(const char *s, double *d)
{
	char *end;

	errno = 0;
	*d = strtod(s, &end);
	return !errno && end != s && !*end && *d >= 0 && *d < 1e7;
}

/* --switches[=RING]: RING switches a CPU, or the default. */
static bool parse_slots(const char *s, unsigned int *slots)
{
	unsigned long n;
	char *end;

	if (!s) {
		*slots = AGENT_SWITCH_SLOTS;
		return true;
	}
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || n < AGENT_SWITCH_SLOTS_MIN ||
	    n > AGENT_SWITCH_SLOTS_MAX)
		return false;
	*slots = n;
	return true;
}

/* A group's name, or its number. */
static bool parse_group(const char *s, gid_t *gid)
{
	struct group *g = getgrnam(s);
	unsigned long n;
	char *end;

	if (g) {
		*gid = g->gr_gid;
		return true;
	}
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || end == s || *end || n >= (gid_t)-1)
		return false;
	*gid = (gid_t)n;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "group", required_argument, NULL, 'g' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "root", required_argument, NULL, 'r' },
		{ "kmod-dir", required_argument, NULL, 'k' },
		{ "backend", required_argument, NULL, 'B' },
		{ "switches", optional_argument, NULL, 'S' },
		{ "no-kallsyms", no_argument, NULL, 'K' },
		{ "unwind", no_argument, NULL, 'W' },
		{ "listen", required_argument, NULL, 'L' },
		{ "keep", required_argument, NULL, 'e' },
		{ "max-mib", required_argument, NULL, 'M' },
		{ "config", required_argument, NULL, 'C' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct options o = {
		.output = DEFAULT_OUTPUT,
		.duration = -1,
		.interval_ms = DEFAULT_INTERVAL_MS,
		.listen = { .vsock = true, .port = VMCTX_FETCH_PORT },
		.keep = DEFAULT_KEEP_S,
		.max_mib = DEFAULT_MAX_MIB,
	};
	struct config_ctx cfg = { .a = NULL, .o = &o };
	bool serve_cmd, output_given = false;
	struct agent a = {
		.prog = "vmctx-agent",
		.root = "/",
		.events.fd = -1,
		.switch_stream.fd = -1,
	};
	const char *kmod_dir = getenv("VMCTX_GUEST_DIR");
	char real[PATH_MAX];
	struct sigaction sa;
	bool record;
	unsigned long n;
	int c, err;

	if (argc < 2) {
		usage(stderr, a.prog);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout, a.prog);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("vmctx-agent %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "snapshot") && strcmp(argv[1], "record") && strcmp(argv[1], "serve")) {
		agent_err(&a, "unknown command '%s' (snapshot, record or serve)", argv[1]);
		usage(stderr, a.prog);
		return 2;
	}
	record = !strcmp(argv[1], "record");
	serve_cmd = !strcmp(argv[1], "serve");
	argv++;
	argc--;

	while ((c = getopt_long(argc, argv, "o:g:d:i:r:k:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.output = optarg;
			output_given = true;
			break;
		case 'g':
			if (!parse_group(optarg, &o.gid)) {
				agent_err(&a, "--group: no group '%s'", optarg);
				return 2;
			}
			o.group = optarg;
			break;
		case 'd':
			if (!parse_duration(optarg, &o.duration)) {
				agent_err(&a, "bad duration '%s' (seconds)", optarg);
				return 2;
			}
			break;
		case 'i':
			if (!parse_bounded(optarg, 1, 60000, &n)) {
				agent_err(&a, "bad interval '%s' (1 to 60000 ms)", optarg);
				return 2;
			}
			o.interval_ms = n;
			o.interval_given = true;
			break;
		case 'L':
			if (agent_listen_parse(optarg, &o.listen)) {
				agent_err(&a, "--listen: '%s' is not vsock:PORT nor unix:/PATH", optarg);
				return 2;
			}
			o.listen_given = true;
			break;
		case 'e':
			if (!parse_duration(optarg, &o.keep) || o.keep < 1) {
				agent_err(&a, "--keep: bad duration '%s' (seconds, at least 1)", optarg);
				return 2;
			}
			o.keep_given = true;
			break;
		case 'M':
			if (!parse_bounded(optarg, 1, 65536, &o.max_mib)) {
				agent_err(&a, "--max-mib: bad size '%s' (1 to 65536 MiB)", optarg);
				return 2;
			}
			o.max_mib_given = true;
			break;
		case 'C':
			o.config = optarg;
			break;
		case 'r':
			a.root = optarg;
			break;
		case 'k':
			kmod_dir = optarg;
			break;
		case 'B':
			if (!parse_backend(optarg, &a.backend)) {
				agent_err(&a, "--backend: \"%s\" is not auto, bpf nor kmod", optarg);
				return 2;
			}
			o.backend_given = true;
			break;
		case 'K':
			a.no_kallsyms = true;
			break;
		case 'W':
			a.unwind = true;
			o.unwind_given = true;
			break;
		case 'S':
			if (!parse_slots(optarg, &a.switch_slots)) {
				agent_err(&a, "--switches: bad ring size '%s' (%u to %u switches a CPU)",
					  optarg, AGENT_SWITCH_SLOTS_MIN, AGENT_SWITCH_SLOTS_MAX);
				return 2;
			}
			a.switch_slots_given = optarg != NULL;
			o.switches_given = true;
			break;
		case 'v':
			a.verbose = true;
			break;
		case 'h':
			usage(stdout, a.prog);
			return 0;
		case 'V':
			printf("vmctx-agent %s\n", PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr, a.prog);
			return 2;
		}
	}
	if (optind < argc)
		o.cmd = argv + optind;
	if (serve_cmd && (o.cmd || o.duration >= 0 || output_given || o.group)) {
		agent_err(&a, "serve takes no output, group, duration nor command: it hands its bundles out on --listen");
		return 2;
	}
	if (!serve_cmd && (o.listen_given || o.keep_given || o.max_mib_given || o.config)) {
		agent_err(&a, "--listen, --keep, --max-mib and --config are for serve");
		return 2;
	}
	/* serve: the configuration file fills in what the command line did not say */
	if (serve_cmd) {
		cfg.a = &a;
		if (agent_config_read(&a, o.config ?: DEFAULT_CONFIG, !o.config, config_set, &cfg))
			return 2;
	}
	if (!record && (o.cmd || o.duration >= 0)) {
		agent_err(&a, "snapshot takes neither a duration nor a command");
		return 2;
	}
	if (!record && !serve_cmd && a.switch_slots) {
		agent_err(&a, "--switches is for record and serve: a snapshot has no window to log switches in");
		return 2;
	}
	if (record && o.cmd && o.duration >= 0) {
		agent_err(&a, "record takes a duration or a command, not both");
		return 2;
	}

	if (!realpath(a.root, real)) {
		agent_err(&a, "%s: %s", a.root, strerror(errno));
		return 1;
	}
	a.real_root = !strcmp(real, "/");
	a.kmod_dir = kmod_dir ? strdup(kmod_dir) : agent_path(&a, "proc/vmctx_guest");
	a.bundle = vmctx_bundle_new();
	a.elves = agent_elf_cache_new();
	if (!a.kmod_dir || !a.bundle || !a.elves) {
		agent_err(&a, "%s", a.elves ? strerror(ENOMEM) : "libelf does not work");
		err = -ENOMEM;
		goto out;
	}

	/* No SA_RESTART: a signal also ends a wait for a slow file or the command. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = agent_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	vmctx_set_log(lib_log, &a);

	err = serve_cmd ? serve(&a, &o) : run(&a, record, &o);
	if (err && !agent_said_error())
		agent_err(&a, "failed: %s", vmctx_strerror(err));
out:
	agent_elf_cache_free(a.elves);
	vmctx_bundle_free(a.bundle);
	agent_tasks_free(&a.tasks);
	agent_switch_log_free(&a.switches);
	agent_switch_store_free(&a.store);
	free(a.pairs.v);
	agent_task_table_free(&a.table);
	free(a.kmod_dir);
	return err ? 1 : 0;
}
