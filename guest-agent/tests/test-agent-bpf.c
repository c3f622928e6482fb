// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF backend on this machine's own kernel: vmctx-agent record
 * --backend=bpf runs, from one shell (sh under a name of its own), two
 * sleeps at once (sleep(1) under a name of its own), a subshell forked
 * without exec that counts for a while, and this program again
 * (--thread), whose second thread lives 0.2 s.  The bundle must hold this
 * test process (alive at start) and the two sleeps, each with a
 * page-aligned root under the machine's memory, the two sleeps with
 * different roots (both alive at once), and each sleep's lifetime inside
 * the window the test saw; every fork of the shell, the subshell among
 * them, with a root of its own, not the shell's; the new thread as a task
 * of its own with its process's root, as every thread must have; a window
 * inside the test's; and "backend=bpf" as what wrote it.  Then, as user
 * nobody (util-linux's setpriv): without capabilities --backend=bpf fails
 * with one line that names CAP_BPF; with CAP_BPF, CAP_PERFMON and
 * CAP_SYS_PTRACE it records, and sees this root-owned process with its
 * root.  With --switches: every online CPU's task is known from the
 * window's start (the agent ran a program on each), the idle task is
 * logged with pid 0 where the CPUs idled 0.3 s while the agent ran
 * (/proc/stat says), the command's own process is switched to under its
 * name, and every switch lies within the window; with a ring of 64
 * switches read once a second around 300 processes run in turn, the
 * overrun is warned of and each gap leaves its CPU unknown over it.  Skipped (77) without root or
 * BTF.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <vmctx.h>

#include "../agent-tsc.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int fails;

#define CHECK(cond, ...) do { if (!(cond)) { fails++; fprintf(stderr, "FAIL: " __VA_ARGS__); fputc('\n', stderr); } } while (0)

static void *nap(void *arg)
{
	(void)arg;
	usleep(200000);
	return NULL;
}

/* --thread: a process that starts a second thread inside the window */
static int thread_child(void)
{
	pthread_t t;

	usleep(50000);
	if (pthread_create(&t, NULL, nap, NULL))
		return 1;
	return pthread_join(t, NULL) ? 1 : 0;
}

/*
 * Run the agent as user nobody with @caps (setpriv's list, or NULL for
 * none) recording 0.2 s into @dir/out.vmctx; its stderr into @dir/err.
 * Returns its exit status, or -1.
 */
static int run_as_nobody(const char *agent, const char *dir, const char *caps)
{
	char out[256], err[256], inh[128], amb[128];
	int st;
	pid_t p;

	snprintf(out, sizeof(out), "%s/out.vmctx", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	snprintf(inh, sizeof(inh), "--inh-caps=%s", caps ? caps : "-all");
	snprintf(amb, sizeof(amb), "--ambient-caps=%s", caps ? caps : "-all");
	p = fork();
	if (!p) {
		if (!freopen(err, "w", stderr))
			_exit(126);
		execlp("setpriv", "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
		       inh, amb, agent, "record", "--backend=bpf", "--no-kallsyms", "-o", out,
		       "-d", "0.2", (char *)NULL);
		_exit(127);
	}
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Record with @args into @out, around the shell command @run; the bundle, or NULL. */
static struct vmctx_bundle *record_switches(const char *agent, const char *args, const char *out,
					    const char *run, const char *errfile)
{
	struct vmctx_bundle *b = NULL;
	char cmd[1024];
	int st, err;

	snprintf(cmd, sizeof(cmd),
		 "%s record --backend=bpf --no-kallsyms %s -o %s -- sh -c '%s' 2>%s", agent, args,
		 out, run, errfile);
	st = system(cmd);
	CHECK(st == 0, "%s: status %d", cmd, st);
	if (st)
		return NULL;
	err = vmctx_bundle_read_file(out, NULL, &b);
	CHECK(!err, "the switch log's bundle does not read: %s", vmctx_strerror(err));
	return b;
}

static bool file_has(const char *path, const char *needle)
{
	char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

/*
 * The machine's idle time so far, in USER_HZ ticks, summed over its CPUs
 * (/proc/stat's fourth column), or -1: whether some CPU idled while the
 * agent recorded, which the kernel's own accounting tells.
 */
static long long idle_ticks(void)
{
	unsigned long long user, nice, sys, idle;
	long long sum = 0;
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "cpu", 3) && line[3] >= '0' && line[3] <= '9' &&
		    sscanf(line, "%*s %llu %llu %llu %llu", &user, &nice, &sys, &idle) == 4) {
			sum += idle;
			n++;
		}
	fclose(f);
	return n ? sum : -1;
}

/* The switch log on this kernel: see the top.  @dir is the test's own. */
static void check_switches(const char *agent, const char *dir)
{
	char prog[128], out[160], errfile[160], run[256];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	enum vmctx_task_kind kind;
	struct vmctx_bundle *b;
	uint64_t ws, we, ns, from, to;
	int pid, tgid, idle = 0, mine = 0, outside = 0, unknown = 0;
	long long idle0, idle1;
	unsigned int cpu;
	const char *comm;
	size_t i;

	snprintf(prog, sizeof(prog), "%s/vbswitch", dir);
	snprintf(out, sizeof(out), "%s/sw.vmctx", dir);
	snprintf(errfile, sizeof(errfile), "%s/sw.err", dir);
	if (symlink("/bin/sleep", prog))
		return;
	snprintf(run, sizeof(run), "exec %s 0.3", prog);
	idle0 = idle_ticks();
	b = record_switches(agent, "--switches", out, run, errfile);
	idle1 = idle_ticks();
	if (b && !vmctx_bundle_window(b, &ws, &we)) {
		for (i = 0; i < vmctx_bundle_nswitches(b); i++) {
			vmctx_bundle_switch(b, i, &cpu, &ns, &pid, &tgid, &kind, &comm);
			outside += ns < ws || ns > we;
			idle += kind == VMCTX_TASK_IDLE && !pid && !strncmp(comm, "swapper/", 8);
			mine += kind == VMCTX_TASK_USER && pid == tgid && !strcmp(comm, "vbswitch");
		}
		for (cpu = 0; cpu < (unsigned int)cpus; cpu++)
			unknown += !!vmctx_bundle_running(b, cpu, ws, NULL, NULL, NULL, NULL);
		CHECK(vmctx_bundle_nswitches(b) > 0 && !outside,
		      "%zu switches, %d outside the window", vmctx_bundle_nswitches(b), outside);
		CHECK(!unknown, "%d of %ld online CPUs with no task at the window's start", unknown,
		      cpus);
		CHECK(mine >= 1, "the command (vbswitch) is never switched to");
		/*
		 * The idle task runs only where a CPU idles: on a machine kept
		 * busy by others (a build, emulators) it may never run in the
		 * window.  Demanded where the CPUs idled 0.3 s or more between
		 * them while the agent ran (the command sleeps 0.3 s).
		 */
		if (idle0 >= 0 && idle1 - idle0 >= sysconf(_SC_CLK_TCK) * 3 / 10)
			CHECK(idle >= 1, "the idle task is never switched to, as pid 0 swapper/N, though the CPUs idled %lld ticks",
			      idle1 - idle0);
		else
			printf("# the CPUs idled %lld ticks while the agent ran: no idle switch demanded\n",
			       idle1 - idle0);
	}
	vmctx_bundle_free(b);

	/* 64 slots a CPU read once a second, and 300 processes run one after another */
	snprintf(run, sizeof(run), "i=0; while [ $i -lt 300 ]; do %s 0; i=$((i + 1)); done", prog);
	b = record_switches(agent, "--switches=64 -i 1000", out, run, errfile);
	CHECK(file_has(errfile, "context switches were lost on"),
	      "an overrun of the switch rings is not warned of");
	CHECK(b && vmctx_bundle_nswitch_gaps(b) > 0, "an overrun left no gap in the log");
	for (i = 0; b && i < vmctx_bundle_nswitch_gaps(b); i++) {
		vmctx_bundle_switch_gap(b, i, &cpu, &from, &to);
		CHECK(vmctx_bundle_running(b, cpu, from, NULL, NULL, NULL, NULL) == -VMCTX_E_GAP &&
		      vmctx_bundle_running(b, cpu, to, NULL, NULL, NULL, NULL) == -VMCTX_E_GAP,
		      "CPU %u is known inside its gap [%llu, %llu]", cpu, (unsigned long long)from,
		      (unsigned long long)to);
	}
	vmctx_bundle_free(b);
	unlink(prog);
	unlink(out);
	unlink(errfile);
}

/*
 * Can user nobody run @agent?  Not where the build tree is private (a
 * packager's mktemp -d is mode 0700): then there is nothing to check.
 */
static bool nobody_can_run(const char *agent)
{
	char *abs = realpath(agent, NULL);
	int st;
	pid_t p;

	/* the whole path: libtool's wrapper runs the agent by it */
	if (!abs)
		return false;
	p = fork();
	if (!p) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		_exit(access(abs, X_OK) ? 1 : 0);
	}
	free(abs);
	return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st);
}

/*
 * The capabilities the BPF backend needs without root, and the message
 * without them; false if user nobody cannot run the agent here.
 */
static bool check_without_root(const char *agent)
{
	char dir[] = "/tmp/test-agent-bpf-nobody-XXXXXX", path[300], line[512];
	struct vmctx_bundle *b = NULL;
	uint64_t root = 0;
	int rc, lines = 0, pid, self = 0;
	bool names_cap = false;
	FILE *f;
	size_t i;

	if (!nobody_can_run(agent)) {
		printf("skip: as nobody: user nobody cannot reach %s (a private build directory)\n",
		       agent);
		return false;
	}
	if (!mkdtemp(dir) || chown(dir, 65534, 65534)) {
		CHECK(0, "cannot make a directory for user nobody");
		return true;
	}
	rc = run_as_nobody(agent, dir, NULL);
	snprintf(path, sizeof(path), "%s/err", dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		lines++;
		names_cap |= !!strstr(line, "CAP_BPF");
	}
	if (f)
		fclose(f);
	CHECK(rc == 1 && lines == 1 && names_cap,
	      "as nobody without capabilities: status %d, %d line(s), CAP_BPF %snamed", rc, lines,
	      names_cap ? "" : "not ");
	rc = run_as_nobody(agent, dir, "+bpf,+perfmon,+sys_ptrace");
	CHECK(rc == 0, "as nobody with CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE: status %d", rc);
	snprintf(path, sizeof(path), "%s/out.vmctx", dir);
	if (!rc && !vmctx_bundle_read_file(path, NULL, &b)) {
		for (i = 0; i < vmctx_bundle_ntasks(b); i++) {
			vmctx_bundle_task(b, i, &root, &pid, NULL, NULL, NULL, NULL);
			if (pid == getpid() && root && !(root & 0xfff))
				self = 1;
		}
		CHECK(self, "as nobody with capabilities: this root-owned process or its root is missing");
		CHECK(strstr(vmctx_bundle_agent(b), " backend=bpf") != NULL,
		      "as nobody: the bundle does not say backend=bpf");
		vmctx_bundle_free(b);
	}
	unlink(path);
	snprintf(path, sizeof(path), "%s/err", dir);
	unlink(path);
	rmdir(dir);
	return true;
}

int main(int argc, char **argv)
{
	const char *agent = getenv("VMCTX_AGENT") ? getenv("VMCTX_AGENT") : "guest-agent/vmctx-agent";
	char out[] = "/tmp/test-agent-bpf-XXXXXX", sleeper[64], shell[96], self[PATH_MAX];
	char self_comm[16];
	bool nobody;
	struct vmctx_bundle *b = NULL;
	uint64_t t0, t1, root, start, exit_ns, sleep_root[2] = { 0 }, self_root = 0;
	uint64_t mid_n0 = 0, mid_n1 = 0, mid_tsc = 0, mid_ns = 0;
	uint64_t ws = 0, we = 0, sh_start = UINT64_MAX, sh_root = 0;
	int fd, st, pid, tgid, nsleep = 0, err, sh_pid = 0, subshells = 0, threads = 0;
	const char *comm;
	size_t i, j;
	pid_t child;
	ssize_t n;

	if (argc == 2 && !strcmp(argv[1], "--thread"))
		return thread_child();

	if (geteuid() != 0 || access("/sys/kernel/btf/vmlinux", R_OK)) {
		printf("SKIP: needs root and /sys/kernel/btf/vmlinux\n");
		return 77;
	}
	fd = mkstemp(out);
	if (fd < 0)
		return 1;
	close(fd);
	/* a name no other process on the machine has: exec names the comm after it */
	snprintf(sleeper, sizeof(sleeper), "%s.d", out);
	if (mkdir(sleeper, 0700))
		return 1;
	/* and the shell too, so that make's shells on a busy machine are not taken for it */
	snprintf(shell, sizeof(shell), "%s/vbsh", sleeper);
	strcat(sleeper, "/vbsleep");
	if (symlink("/bin/sleep", sleeper) || symlink("/bin/sh", shell))
		return 1;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	/* the --thread child's comm: this program's file name, cut to 15 bytes */
	snprintf(self_comm, sizeof(self_comm), "%s", strrchr(self, '/') + 1);
	t0 = mono_ns();
	child = fork();
	if (!child) {
		execl(agent, agent, "record", "--backend=bpf", "-o", out, "--", shell, "-c",
		      "$0 0.3 & $0 0.3 & "
		      "(i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done) & "
		      "$1 --thread & wait", sleeper, self, (char *)NULL);
		_exit(127);
	}
	/* a TSC/ns reading of our own, inside the agent's window */
	if (child > 0) {
		struct timespec nap = { 0, 150000000 };

		nanosleep(&nap, NULL);
		mid_n0 = mono_ns();
		mid_tsc = agent_tsc();
		mid_n1 = mono_ns();
	}
	if (child < 0 || waitpid(child, &st, 0) != child)
		return 1;
	t1 = mono_ns();
	unlink(sleeper);
	unlink(shell);
	*strrchr(sleeper, '/') = '\0';
	rmdir(sleeper);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		/* built only with BPF, run as root with BTF: the agent must work */
		fprintf(stderr, "FAIL: %s --backend=bpf failed (status %d)\n", agent, st);
		unlink(out);
		return 1;
	}
	err = vmctx_bundle_read_file(out, NULL, &b);
	unlink(out);
	CHECK(!err, "bundle does not read: %s", vmctx_strerror(err));
	if (err)
		return 1;
	for (i = 0; i < vmctx_bundle_ntasks(b); i++) {
		vmctx_bundle_task(b, i, &root, &pid, &tgid, &comm, &start, &exit_ns);
		if (pid == getpid())
			self_root = root;
		if (strcmp(comm, "vbsleep") || pid != tgid || nsleep >= 2)
			continue;
		CHECK(start >= t0 && exit_ns != VMCTX_TIME_NONE && exit_ns <= t1 &&
		      exit_ns - start >= 250000000ULL,
		      "sleep %d lifetime [%llu, %llu) not inside [%llu, %llu] or under 0.25 s", pid,
		      (unsigned long long)start, (unsigned long long)exit_ns,
		      (unsigned long long)t0, (unsigned long long)t1);
		sleep_root[nsleep++] = root;
	}
	/*
	 * The clock pairs, one a poll (50 ms) over a run of 0.3 s or more, put
	 * this machine's TSC on its clock: our own reading, within its span
	 * and a margin for the interpolation on a loaded machine.
	 */
	CHECK(vmctx_bundle_nclock_pairs(b) >= 3, "%zu clock pairs over 0.3 s of polls",
	      vmctx_bundle_nclock_pairs(b));
	err = vmctx_bundle_guest_ns(b, mid_tsc, &mid_ns);
	CHECK(!err && mid_ns + 200000 >= mid_n0 && mid_ns <= mid_n1 + 200000,
	      "our TSC reading %llu is put at %llu ns, not in [%llu, %llu] ns +-200 us",
	      (unsigned long long)mid_tsc, (unsigned long long)mid_ns,
	      (unsigned long long)mid_n0, (unsigned long long)mid_n1);
	/* what wrote it, and its window, inside the one the test saw */
	CHECK(!strncmp(vmctx_bundle_agent(b), "vmctx-agent ", 12) &&
	      strstr(vmctx_bundle_agent(b), " backend=bpf"),
	      "the bundle does not say backend=bpf: \"%s\"", vmctx_bundle_agent(b));
	CHECK(!vmctx_bundle_window(b, &ws, &we) && ws >= t0 && we <= t1 && ws <= we,
	      "window [%llu, %llu] not inside [%llu, %llu]", (unsigned long long)ws,
	      (unsigned long long)we, (unsigned long long)t0, (unsigned long long)t1);
	/* the shell: the first "vbsh" to start; every other is a fork of it */
	for (i = 0; i < vmctx_bundle_ntasks(b); i++) {
		vmctx_bundle_task(b, i, &root, &pid, &tgid, &comm, &start, &exit_ns);
		if (!strcmp(comm, "vbsh") && pid == tgid && start >= t0 && start < sh_start) {
			sh_start = start;
			sh_root = root;
			sh_pid = pid;
		}
	}
	for (i = 0; i < vmctx_bundle_ntasks(b); i++) {
		vmctx_bundle_task(b, i, &root, &pid, &tgid, &comm, &start, &exit_ns);
		/* a fork of the shell, before its exec or without one: its own root */
		if (!strcmp(comm, "vbsh") && pid == tgid && pid != sh_pid) {
			CHECK(root && root != sh_root, "fork %d of the shell has its root %#llx", pid,
			      (unsigned long long)root);
			/* the subshell, which counts for a while without exec */
			subshells += exit_ns != VMCTX_TIME_NONE && exit_ns - start >= 20000000ULL;
		}
		/* the --thread child's second thread */
		if (pid != tgid && tgid != getpid() && start >= t0 && exit_ns <= t1 &&
		    !strcmp(comm, self_comm))
			threads++;
	}
	CHECK(subshells >= 1, "no subshell forked without exec in the bundle (shell %d)", sh_pid);
	CHECK(threads == 1, "%d new threads of the --thread child, not 1", threads);
	CHECK(self_root && !(self_root & 0xfff) && self_root < (1ULL << 46),
	      "this process (alive at start) has no page-aligned physical root: %#llx",
	      (unsigned long long)self_root);
	CHECK(nsleep == 2, "%d sleep processes, not 2", nsleep);
	CHECK(nsleep < 2 || sleep_root[0] != sleep_root[1],
	      "the two concurrent sleeps share root %#llx", (unsigned long long)sleep_root[0]);
	/* every thread has its process's root, over overlapping lifetimes */
	for (i = 0; i < vmctx_bundle_ntasks(b); i++) {
		uint64_t r1, s1, e1;
		int p1, g1;

		vmctx_bundle_task(b, i, &r1, &p1, &g1, NULL, &s1, &e1);
		if (p1 == g1)
			continue;
		for (j = 0; j < vmctx_bundle_ntasks(b); j++) {
			uint64_t r2, s2, e2;
			int p2, g2;

			vmctx_bundle_task(b, j, &r2, &p2, &g2, NULL, &s2, &e2);
			if (p2 != g1 || p2 != g2 || s1 >= e2 || s2 >= e1)
				continue;
			CHECK(r1 == r2, "thread %d root %#llx, its process %d %#llx", p1,
			      (unsigned long long)r1, p2, (unsigned long long)r2);
		}
	}
	vmctx_bundle_free(b);
	*strrchr(shell, '/') = '\0';
	if (!mkdir(shell, 0700)) {
		check_switches(agent, shell);
		rmdir(shell);
	}
	nobody = check_without_root(agent);
	if (!fails)
		printf("ok: BPF backend: roots, lifetimes, alive-at-start, %d subshell(s) forked without exec, %d new thread, window, backend=bpf, switch log and its overrun%s\n",
		       subshells, threads, nobody ? "; as nobody, capabilities needed and named" : "");
	return fails != 0;
}
