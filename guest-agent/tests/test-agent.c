// SPDX-License-Identifier: GPL-2.0
/*
 * vmctx-agent end to end, without a VM and without root: a fake tree
 * (module files, /proc/PID/maps, kallsyms, modules, identity) around real
 * processes running fixture programs this test compiles, with known
 * function names.  The processes print their functions' run-time
 * addresses, and the bundle the agent writes must resolve exactly those.
 *
 * Environment: VMCTX_AGENT (the binary; default
 * $top_builddir/guest-agent/vmctx-agent), CC (default cc).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <vmctx.h>

#include "check.h"

#define T0_NS	1000000000ULL	/* the fake module's clock at the first table */

static char top[PATH_MAX];	/* the temporary directory */
static char fake[PATH_MAX + 8];	/* the fake root inside it */
static const char *agent;

struct proc {
	pid_t pid;
	FILE *in;		/* closing it ends the process */
	uint64_t hot, stat, lib;
};

static void die(const char *f, ...) __attribute__((format(printf, 1, 2), noreturn));
static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

static void die(const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	fprintf(stderr, "test-agent: setup failed: ");
	vfprintf(stderr, f, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(99);	/* automake: a hard error, not a test failure */
}

/* fmt()'s strings live until exit: callers pass them inline. */
static char **fmt_pool;
static size_t fmt_n, fmt_cap;

static void fmt_free(void)
{
	while (fmt_n)
		free(fmt_pool[--fmt_n]);
	free(fmt_pool);
}

static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		die("out of memory");
	va_end(ap);
	if (fmt_n == fmt_cap) {
		char **p = realloc(fmt_pool, (fmt_cap ? fmt_cap * 2 : 64) * sizeof(*p));

		if (!p)
			die("out of memory");
		if (!fmt_pool)
			atexit(fmt_free);
		fmt_pool = p;
		fmt_cap = fmt_cap ? fmt_cap * 2 : 64;
	}
	fmt_pool[fmt_n++] = s;
	return s;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		die("%s: %s", path, strerror(errno));
}

/* A string literal, which may hold NULs, at the end of @path. */
#define APPEND(path, lit)	append(path, lit, sizeof(lit) - 1)

static void append(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "a");

	if (!f || fwrite(text, 1, len, f) != len || fclose(f))
		die("%s: %s", path, strerror(errno));
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = NULL;
	size_t n = 0;

	if (!f)
		return strdup("");
	if (getdelim(&s, &n, '\0', f) < 0) {
		free(s);
		s = strdup("");
	}
	fclose(f);
	return s;
}

static void sh(const char *cmd)
{
	int st = system(cmd);

	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st))
		die("command failed: %s", cmd);
}

/* Run the agent; returns its exit status, its stderr in *err. */
static int run_agent(const char *args, char **err)
{
	char *errfile = fmt("%s/agent.err", top);
	char *cmd = fmt("%s %s 2>%s", agent, args, errfile);
	int st = system(cmd);

	*err = slurp(errfile);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Start the agent in the background (its stderr to agent.err), for signals. */
static pid_t spawn_agent(const char *args)
{
	char *cmd = fmt("exec %s %s 2>%s/agent.err", agent, args, top);
	pid_t pid = fork();

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Wait for a spawned agent, SIGKILL it after @limit seconds (SIGTERM is
 * what ends a wait in the agent, so it would hide one).  Its exit status,
 * or -1 when it was killed; its stderr in *err.
 */
static int wait_agent(pid_t pid, double limit, char **err)
{
	struct timespec nap = { .tv_nsec = 10000000 };
	double t0 = now_s();
	pid_t r;
	int st;

	while (!(r = waitpid(pid, &st, WNOHANG)) && now_s() - t0 < limit)
		nanosleep(&nap, NULL);
	if (!r) {
		kill(pid, SIGKILL);
		r = waitpid(pid, &st, 0);
	}
	if (r != pid)
		die("waitpid: %s", strerror(errno));
	*err = slurp(fmt("%s/agent.err", top));
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char lib_src[] =
	"int vmctx_fix_lib(int x)\n"
	"{\n"
	"	int i, s = 0;\n"
	"\n"
	"	for (i = 0; i < x; i++)\n"
	"		s += i * x;\n"
	"	return s;\n"
	"}\n"
	"\n"
	"void *vmctx_fix_lib_addr(void)\n"
	"{\n"
	"	return (void *)vmctx_fix_lib;\n"
	"}\n";

static const char prog_src[] =
	"#include <stdio.h>\n"
	"#include <unistd.h>\n"
	"int vmctx_fix_lib(int x);\n"
	"void *vmctx_fix_lib_addr(void);\n"
	"static __attribute__((noinline)) int vmctx_fix_static(int x)\n"
	"{\n"
	"	return x * 3 + 1;\n"
	"}\n"
	"__attribute__((noinline)) int vmctx_fix_hot(int x)\n"
	"{\n"
	"	return vmctx_fix_static(x) + vmctx_fix_lib(x);\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	char c;\n"
	"\n"
	"	printf(\"%p %p %p\\n\", (void *)vmctx_fix_hot, (void *)vmctx_fix_static,\n"
	"	       vmctx_fix_lib_addr());\n"
	"	fflush(stdout);\n"
	"	while (read(0, &c, 1) > 0)\n"
	"		;\n"
	"	return vmctx_fix_hot(argc) == 12345;\n"
	"}\n";

/*
 * /opt/vt/prog keeps .symtab (its static function is only there); the
 * library is stripped (.dynsym only) and installed twice, in a/ and b/,
 * byte for byte: one object by build-id.
 */
static void build_fixtures(void)
{
	const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	char *cmd;

	sh(fmt("mkdir -p %s/opt/vt/a %s/opt/vt/b %s/proc/vmctx_guest %s/proc/sys/kernel/random",
	       fake, fake, fake, fake));
	put(fmt("%s/lib.c", top), lib_src);
	put(fmt("%s/prog.c", top), prog_src);
	cmd = fmt("%s -O1 -shared -fPIC -s -Wl,--build-id=sha1 -o %s/opt/vt/a/libvmctxfix.so %s/lib.c",
		  cc, fake, top);
	sh(cmd);
	sh(fmt("cp %s/opt/vt/a/libvmctxfix.so %s/opt/vt/b/", fake, fake));
	cmd = fmt("%s -O1 -fPIE -pie -Wl,--build-id=sha1 -o %s/opt/vt/prog %s/prog.c -L%s/opt/vt/a -lvmctxfix",
		  cc, fake, top, fake);
	sh(cmd);
	/* Non-PIE: text at vaddr 0x401000 from file offset 0x1000, so bias is 0, not start - pgoff. */
	cmd = fmt("%s -O1 -fno-pie -no-pie -Wl,--build-id=sha1 -o %s/opt/vt/prog-nopie %s/prog.c -L%s/opt/vt/a -lvmctxfix",
		  cc, fake, top, fake);
	sh(cmd);
	/* The system's libraries (libc, ld.so) appear at their own paths. */
	sh(fmt("ln -s /usr %s/usr && ln -s /lib %s/lib && ln -s /lib64 %s/lib64 || true", fake,
	       fake, fake));
}

/* Start /opt/vt/@prog with the library from @libdir, and learn its addresses. */
static void start_prog(struct proc *p, const char *name, const char *libdir)
{
	int in[2], out[2];
	char line[256];
	FILE *f;

	/* Close-on-exec: another child holding our stdin's end would keep us alive. */
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	p->pid = fork();
	if (p->pid < 0)
		die("fork: %s", strerror(errno));
	if (!p->pid) {
		char *prog = fmt("%s/opt/vt/%s", fake, name);

		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		setenv("LD_LIBRARY_PATH", fmt("%s/opt/vt/%s", fake, libdir), 1);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in = fdopen(in[1], "w");
	f = fdopen(out[0], "r");
	if (!p->in || !f || !fgets(line, sizeof(line), f) ||
	    sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNx64, &p->hot, &p->stat, &p->lib) != 3)
		die("fixture program did not start");
	fclose(f);
}

static void start_proc(struct proc *p, const char *libdir)
{
	start_prog(p, "prog", libdir);
}

static void stop_proc(struct proc *p)
{
	fclose(p->in);
	waitpid(p->pid, NULL, 0);
}

/* The process's real maps, with the fake root's prefix taken off its paths. */
static void fake_maps(const struct proc *p)
{
	char *src = fmt("/proc/%d/maps", p->pid);
	char *dir = fmt("%s/proc/%d", fake, p->pid);
	char *text = slurp(src), *q;
	size_t n = strlen(fake);

	if (!*text)
		die("%s: empty", src);
	while ((q = strstr(text, fake)))
		memmove(q, q + n, strlen(q + n) + 1);
	mkdir(dir, 0755);
	put(fmt("%s/maps", dir), text);
	free(text);
}

static void write_tasks(const struct proc *p1, const struct proc *p2, uint64_t ns)
{
	char *text = fmt("vmctx_guest 1 tsc_khz=2994375 tsc=777 ns=%" PRIu64 " pti=1 cr3_mask=0x0 tasks=5\n"
			 "1 1 100 0x1000 0x2000 init\n"
			 "2 2 0 - - kthreadd\n"
			 "%d %d 5000 0x10000 0x11000 prog\n"
			 "90001 %d 6000 0x10000 0x11000 prog%%20worker\n"
			 "%d %d 7000 0x20000 0x21000 prog\n",
			 ns, p1->pid, p1->pid, p1->pid, p2->pid, p2->pid);
	char *tmp = fmt("%s/proc/vmctx_guest/tasks.new", fake);

	put(tmp, text);
	if (rename(tmp, fmt("%s/proc/vmctx_guest/tasks", fake)))
		die("rename: %s", strerror(errno));
}

static void write_tree(const struct proc *p1, const struct proc *p2)
{
	write_tasks(p1, p2, T0_NS);
	/* 4242: forked, exec'd and exited before the table; p2's exec seen. */
	put(fmt("%s/proc/vmctx_guest/events", fake),
	    fmt("0 fork 11 500000000 4242 4242 1 499000000 0x9000 0xa000 bash\n"
		"1 exec 12 600000000 4242 4242 4242 499000000 0xb000 0xc000 short%%20one\n"
		"2 exit 13 700000000 4242 4242 0 499000000 0xb000 0xc000 short%%20one\n"
		"3 exec 14 900000000 %d %d %d 7000 0x20000 0x21000 prog\n",
		p2->pid, p2->pid, p2->pid));
	put(fmt("%s/proc/kallsyms", fake),
	    "ffffffff81000000 T _stext\n"
	    "ffffffff81001000 t vmctx_fix_kfunc\n"
	    "ffffffff81002000 D some_data\n"
	    "ffffffffc0001000 t vmctx_fix_modfunc\t[fixmod]\n"
	    "ffffffffc0002000 t bpf_prog_x\t[bpf]\n");
	put(fmt("%s/proc/modules", fake), "fixmod 16384 0 - Live 0xffffffffc0001000\n");
	put(fmt("%s/proc/sys/kernel/hostname", fake), "guest-one\n");
	put(fmt("%s/proc/sys/kernel/osrelease", fake), "6.1.0-56-amd64\n");
	put(fmt("%s/proc/sys/kernel/random/boot_id", fake), "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n");
	put(fmt("%s/proc/sys/kernel/kptr_restrict", fake), "0\n");
	fake_maps(p1);
	fake_maps(p2);
}

static int task_of(const struct vmctx_bundle *b, int pid, uint64_t root)
{
	size_t i;

	for (i = 0; i < vmctx_bundle_ntasks(b); i++) {
		uint64_t r;
		int p;

		vmctx_bundle_task(b, i, &r, &p, NULL, NULL, NULL, NULL);
		if (p == pid && r == root)
			return i;
	}
	return -1;
}

static bool resolves(struct vmctx_bundle *b, int task, uint64_t ip, const char *want_sym,
		     const char *want_dso)
{
	const char *sym = NULL, *dso = NULL;

	if (task < 0 || vmctx_bundle_resolve_user(b, task, ip, &sym, &dso))
		return false;
	return sym && !strcmp(sym, want_sym) && dso && !strcmp(dso, want_dso);
}

/* The number a shell command prints, 0 if none. */
static uint64_t sh_u64(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	unsigned long long v = 0;

	if (!f)
		die("%s: %s", cmd, strerror(errno));
	if (fscanf(f, "%llx", &v) != 1)
		v = 0;
	pclose(f);
	return v;
}

/* Lines of the bundle's text that start with @prefix and contain @needle. */
static int count_lines(const char *path, const char *prefix, const char *needle)
{
	gzFile z = gzopen(path, "rb");
	char line[70000];
	int n = 0;

	if (!z)
		return -1;
	while (gzgets(z, line, sizeof(line)))
		if (!strncmp(line, prefix, strlen(prefix)) && strstr(line, needle))
			n++;
	gzclose(z);
	return n;
}

static struct vmctx_bundle *read_bundle(const char *path)
{
	struct vmctx_bundle *b = NULL;
	int err = vmctx_bundle_read_file(path, NULL, &b);

	CHECK(!err, "the agent's bundle reads back (%s)", vmctx_strerror(err));
	return b;
}

static void test_snapshot(const struct proc *p1, const struct proc *p2)
{
	char *out = fmt("%s/snap.vmctx", top), *err;
	struct vmctx_bundle *b;
	uint64_t root, start, exit_ns, khz, tsc, ns, plt, hot;
	const char *comm, *sym, *mod;
	int rc, t1, t2, th, t, tgid, pid;

	rc = run_agent(fmt("snapshot -r %s -o %s", fake, out), &err);
	CHECK(rc == 0, "snapshot of the fake tree succeeds (status %d: %s)", rc, err);
	CHECK(!*err, "snapshot prints nothing without -v (got: %s)", err);
	b = read_bundle(out);
	if (!b)
		return;

	CHECK_EQ(vmctx_bundle_ntasks(b), 7, "tasks: 5 from the table and 4242's two roots");
	CHECK(vmctx_bundle_window(b, NULL, NULL) == -ENOENT, "a snapshot has no window");
	CHECK(!strcmp(vmctx_bundle_agent(b), "vmctx-agent " PACKAGE_VERSION " backend=kmod"),
	      "the bundle says which backend wrote it (got \"%s\")", vmctx_bundle_agent(b));
	t = task_of(b, 1, 0x1000);
	CHECK(t >= 0 && !vmctx_bundle_task(b, t, NULL, NULL, &tgid, &comm, &start, &exit_ns) &&
	      tgid == 1 && !strcmp(comm, "init") && start == 100 && exit_ns == VMCTX_TIME_NONE,
	      "init is a live task with its root and start");
	t = task_of(b, 2, 0);
	CHECK(t >= 0 && !vmctx_bundle_task(b, t, NULL, NULL, NULL, &comm, NULL, NULL) &&
	      !strcmp(comm, "kthreadd"), "a kernel thread is present with no root");
	th = task_of(b, 90001, 0x10000);
	CHECK(th >= 0 && !vmctx_bundle_task(b, th, NULL, NULL, &tgid, &comm, NULL, NULL) &&
	      tgid == p1->pid && !strcmp(comm, "prog worker"),
	      "a thread is its own task, with its tgid and unescaped comm");
	t2 = task_of(b, p2->pid, 0x20000);
	CHECK(t2 >= 0 && !vmctx_bundle_task(b, t2, NULL, NULL, NULL, NULL, &start, NULL) &&
	      start == 900000000, "a start seen in an exec event beats the table's task start");

	t = task_of(b, 4242, 0x9000);
	CHECK(t >= 0 && !vmctx_bundle_task(b, t, NULL, NULL, NULL, &comm, &start, &exit_ns) &&
	      !strcmp(comm, "bash") && start == 500000000 && exit_ns == 600000000,
	      "an exited process keeps its pre-exec root from fork to exec");
	t = task_of(b, 4242, 0xb000);
	CHECK(t >= 0 && !vmctx_bundle_task(b, t, NULL, NULL, NULL, &comm, &start, &exit_ns) &&
	      !strcmp(comm, "short one") && start == 600000000 && exit_ns == 700000000,
	      "an exited process is present with its root, comm and lifetime from the event log");

	/* CR3 as a host sees it: PCID in 11:0, the PTI user bit 12. */
	t1 = vmctx_bundle_find_task(b, 0x10000 | 0x1000 | 0x5, 2000000000);
	CHECK(t1 >= 0 && !vmctx_bundle_task(b, t1, &root, &pid, NULL, NULL, NULL, NULL) &&
	      pid == p1->pid, "a raw CR3 with PCID and PTI bits finds the process leader");
	CHECK(vmctx_bundle_find_task(b, 0xb000, 650000000) == task_of(b, 4242, 0xb000),
	      "the exited root resolves within its lifetime");
	CHECK(vmctx_bundle_find_task(b, 0xb000, 800000000) == -ENOENT,
	      "... and to nobody after its exit");

	CHECK(resolves(b, t1, p1->hot, "vmctx_fix_hot", "prog"),
	      "the executable's function resolves at its run-time address (bias right)");
	CHECK(resolves(b, t1, p1->hot + 1, "vmctx_fix_hot", "prog"),
	      "an address inside the function resolves to it");
	CHECK(resolves(b, t1, p1->stat, "vmctx_fix_static", "prog"),
	      "a static function resolves (.symtab read)");
	CHECK(resolves(b, t1, p1->lib, "vmctx_fix_lib", "libvmctxfix.so"),
	      "a stripped library's function resolves (.dynsym read, shared-object bias right)");
	CHECK(resolves(b, t2, p2->hot, "vmctx_fix_hot", "prog") &&
	      resolves(b, t2, p2->lib, "vmctx_fix_lib", "libvmctxfix.so"),
	      "the second process resolves at its own addresses");
	CHECK(resolves(b, th, p1->hot, "vmctx_fix_hot", "prog"),
	      "a thread resolves through its leader's maps");
	/* The program's second PLT stub, at its run-time address. */
	plt = sh_u64(fmt("readelf -SW %s/opt/vt/prog | awk '{ for (i = 1; i < NF; i++) if ($i == \".plt\") print $(i + 2) }'",
			 fake));
	hot = sh_u64(fmt("nm %s/opt/vt/prog | awk '$3 == \"vmctx_fix_hot\" { print $1 }'", fake));
	if (!plt || !hot)
		die("no .plt or vmctx_fix_hot in %s/opt/vt/prog", fake);
	sym = NULL;
	CHECK(!vmctx_bundle_resolve_user(b, t1, p1->hot - hot + plt + 16, &sym, &mod) &&
	      (!sym || strcmp(sym, "_init")),
	      "a PLT stub is not named after _init, the zero-sized label before it (got %s)",
	      sym ? sym : "no name");

	CHECK_EQ(count_lines(out, "object ", "path=/opt/vt/prog"), 1,
		 "one object for the executable both processes map");
	CHECK_EQ(count_lines(out, "object ", "libvmctxfix.so"), 1,
		 "one object for the library installed at two paths (same build-id)");
	CHECK_EQ(count_lines(out, "sym ", " vmctx_fix_lib\n"), 1,
		 "the deduplicated object's symbols are added once");
	CHECK_EQ(count_lines(out, "map ", "/opt/vt/b/libvmctxfix.so"), 1,
		 "the second path's mapping is kept, pointing at the shared object");

	CHECK(!vmctx_bundle_resolve_kernel(b, 0xffffffff81001010, &sym, &mod) && sym &&
	      !strcmp(sym, "vmctx_fix_kfunc") && !strcmp(mod, "vmlinux"),
	      "a kernel address resolves to its kallsyms function");
	CHECK(!vmctx_bundle_resolve_kernel(b, 0xffffffffc0001010, &sym, &mod) && sym &&
	      !strcmp(sym, "vmctx_fix_modfunc") && !strcmp(mod, "fixmod"),
	      "a module address resolves to its function and module");
	CHECK_EQ(vmctx_bundle_nksyms(b), 3, "text symbols only, pseudo-modules left out");
	CHECK(!strcmp(vmctx_bundle_hostname(b), "guest-one") &&
	      !strcmp(vmctx_bundle_release(b), "6.1.0-56-amd64") &&
	      !strcmp(vmctx_bundle_boot_id(b), "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"),
	      "identity comes from hostname, osrelease and boot_id");
	CHECK(!vmctx_bundle_clock(b, &khz, &tsc, &ns) && khz == 2994375 && tsc == 777 &&
	      ns == T0_NS, "the clock pair and TSC rate come from the module's header");
	/* this machine's clock is not the fake tree's: no pairs from it */
	CHECK_EQ(vmctx_bundle_nclock_pairs(b), 0, "no clock pairs under a fake root");
	CHECK(!vmctx_bundle_guest_ns(b, 777 + 2994375, &ns) && ns == T0_NS + 1000000,
	      "a millisecond of TSC (tsc_khz ticks) past the header's pair is a millisecond of guest time (got %" PRIu64 ")",
	      ns);
	vmctx_bundle_free(b);
	free(err);
}

/* Whether object @obj's table @kind holds the bytes of section @name of @file. */
static bool table_is_section(const struct vmctx_bundle *b, int obj, enum vmctx_unwind_kind kind,
			     const char *file, const char *name)
{
	uint64_t addr, off, size, vaddr;
	const void *data;
	bool same = false;
	size_t n;
	char *buf;
	FILE *f;

	/* readelf -SW: [Nr] Name Type Address Off Size ... */
	addr = sh_u64(fmt("readelf -SW %s | awk '{ for (i = 1; i < NF; i++) if ($i == \"%s\") print $(i + 2) }'",
			  file, name));
	off = sh_u64(fmt("readelf -SW %s | awk '{ for (i = 1; i < NF; i++) if ($i == \"%s\") print $(i + 3) }'",
			 file, name));
	size = sh_u64(fmt("readelf -SW %s | awk '{ for (i = 1; i < NF; i++) if ($i == \"%s\") print $(i + 4) }'",
			  file, name));
	if (!size || vmctx_bundle_object_unwind(b, obj, kind, &vaddr, &data, &n) || n != size ||
	    vaddr != addr)
		return false;
	buf = malloc(size);
	f = fopen(file, "rb");
	if (buf && f && !fseek(f, off, SEEK_SET) && fread(buf, 1, size, f) == size)
		same = !memcmp(buf, data, size);
	if (f)
		fclose(f);
	free(buf);
	return same;
}

/* The index of the object whose path ends with @tail, or -1. */
static int object_named(const struct vmctx_bundle *b, const char *tail)
{
	for (size_t i = 0; i < vmctx_bundle_nobjects(b); i++) {
		const char *path;

		if (!vmctx_bundle_object(b, i, &path, NULL) && strlen(path) >= strlen(tail) &&
		    !strcmp(path + strlen(path) - strlen(tail), tail))
			return i;
	}
	return -1;
}

/*
 * --unwind: each mapped object's .eh_frame_hdr and .eh_frame, byte for
 * byte with their addresses, the stripped library's too, once for an
 * object at two paths; none without the option.
 */
static void test_unwind(const struct proc *p1, const struct proc *p2)
{
	/* (fmt()'s strings live until exit) */
	char *out = fmt("%s/unwind.vmctx", top), *err;
	char *prog = fmt("%s/opt/vt/prog", fake), *lib = fmt("%s/opt/vt/a/libvmctxfix.so", fake);
	struct vmctx_bundle *b;
	int rc, exe, so, n;

	(void)p1;
	(void)p2;
	rc = run_agent(fmt("snapshot --unwind -r %s -o %s", fake, out), &err);
	CHECK(rc == 0, "snapshot --unwind succeeds (status %d: %s)", rc, err);
	b = read_bundle(out);
	if (b) {
		exe = object_named(b, "/opt/vt/prog");
		so = object_named(b, "libvmctxfix.so");
		CHECK(exe >= 0 && table_is_section(b, exe, VMCTX_UNWIND_EH_FRAME, prog, ".eh_frame") &&
		      table_is_section(b, exe, VMCTX_UNWIND_EH_FRAME_HDR, prog, ".eh_frame_hdr"),
		      "the executable's .eh_frame and .eh_frame_hdr, byte for byte, at their addresses");
		CHECK(so >= 0 && table_is_section(b, so, VMCTX_UNWIND_EH_FRAME, lib, ".eh_frame"),
		      "the stripped library's .eh_frame");
		CHECK(vmctx_bundle_object_unwind(b, exe, VMCTX_UNWIND_DEBUG_FRAME, NULL, NULL,
						 NULL) == -ENOENT,
		      "no .debug_frame where there is an .eh_frame");
		n = 0;
		for (size_t i = 0; i < vmctx_bundle_nobjects(b); i++)
			n += !vmctx_bundle_object_unwind(b, i, VMCTX_UNWIND_EH_FRAME, NULL, NULL,
							 NULL);
		CHECK(n >= 2 && n <= (int)vmctx_bundle_nobjects(b),
		      "objects with an .eh_frame: %d of %zu", n, vmctx_bundle_nobjects(b));
		vmctx_bundle_free(b);
	}
	free(err);
	rc = run_agent(fmt("snapshot -r %s -o %s", fake, out), &err);
	CHECK(rc == 0 && count_lines(out, "x-unwind ", "") == 0,
	      "without --unwind, no table (status %d)", rc);
	free(err);
}

static void test_record(const struct proc *p1, const struct proc *p2)
{
	char *out = fmt("%s/rec.vmctx", top), *err, *script = fmt("%s/step.sh", top);
	char *events = fmt("%s/proc/vmctx_guest/events", fake);
	struct vmctx_bundle *b;
	uint64_t start, exit_ns;
	const char *comm;
	struct proc p3;
	int rc, t;

	/* p3, non-PIE, is born and dies inside the window; only the events tell of it. */
	start_prog(&p3, "prog-nopie", "a");
	fake_maps(&p3);
	put(script, fmt("sleep 0.4\n"
			"printf '4 exec 15 1500000000 %d %d %d 1400000000 0x30000 - prog\\n' >> %s\n"
			"sleep 0.6\n"
			"rm -r %s/proc/%d\n"
			"printf '7 exit 16 2000000000 %d %d 0 1400000000 0x30000 - prog\\n' >> %s\n"
			"printf 'vmctx_guest 1 tsc_khz=2994375 tsc=999 ns=3000000000 pti=1 cr3_mask=0x0 tasks=1\\n1 1 100 0x1000 0x2000 init\\n' > %s/proc/vmctx_guest/tasks\n",
			p3.pid, p3.pid, p3.pid, events, fake, p3.pid, p3.pid, p3.pid, events,
			fake));

	rc = run_agent(fmt("record -i 10 -r %s -o %s -- sh %s", fake, out, script), &err);
	CHECK(rc == 0, "record around a command succeeds (status %d: %s)", rc, err);
	CHECK(strstr(err, "2 process events were lost"),
	      "a gap in the event numbers is reported as lost events (got: %s)", err);
	b = read_bundle(out);
	if (b) {
		t = task_of(b, p3.pid, 0x30000);
		CHECK(t >= 0 &&
		      !vmctx_bundle_task(b, t, NULL, NULL, NULL, &comm, &start, &exit_ns) &&
		      !strcmp(comm, "prog") && start == 1500000000 && exit_ns == 2000000000,
		      "a process that lived only inside the window is present with its lifetime");
		CHECK(resolves(b, t, p3.hot, "vmctx_fix_hot", "prog-nopie") &&
		      resolves(b, t, p3.stat, "vmctx_fix_static", "prog-nopie") &&
		      resolves(b, t, p3.lib, "vmctx_fix_lib", "libvmctxfix.so"),
		      "its maps, read while it lived, resolve its functions (non-PIE bias 0)");
		CHECK(task_of(b, 4242, 0xb000) < 0,
		      "a process that exited before the window is left out");
		t = task_of(b, p1->pid, 0x10000);
		CHECK(t >= 0 && !vmctx_bundle_task(b, t, NULL, NULL, NULL, NULL, NULL, &exit_ns) &&
		      exit_ns == 3000000000ULL,
		      "a process gone from the final table ends at the table's time");
		CHECK(resolves(b, t, p1->hot, "vmctx_fix_hot", "prog"),
		      "... and keeps the maps read at the window's start");
		t = task_of(b, 1, 0x1000);
		CHECK(t >= 0 && !vmctx_bundle_task(b, t, NULL, NULL, NULL, NULL, NULL, &exit_ns) &&
		      exit_ns == VMCTX_TIME_NONE, "a process alive at the end has no exit");
		CHECK(!vmctx_bundle_window(b, &start, &exit_ns) && start == T0_NS &&
		      exit_ns == 3000000000ULL,
		      "the window runs from the first table's time to the last one's");
		CHECK(vmctx_bundle_find_task(b, 0x1000, 3000000001ULL) == -ENOENT,
		      "after the window, the root of a process alive at its end has no owner");
		vmctx_bundle_free(b);
	}
	free(err);
	stop_proc(&p3);

	/* Restore the tree for the tests that follow. */
	write_tree(p1, p2);
	rc = run_agent(fmt("record -d 0.05 -r %s -o %s", fake, out), &err);
	CHECK(rc == 0, "record for a duration succeeds (status %d: %s)", rc, err);
	b = read_bundle(out);
	CHECK(b && vmctx_bundle_ntasks(b) == 5,
	      "a record holds the live tasks and drops those that ended before it");
	vmctx_bundle_free(b);
	free(err);
}

static void test_errors(const struct proc *p1, const struct proc *p2)
{
	char *out = fmt("%s/err.vmctx", top), *err, *kptr;
	struct vmctx_bundle *b;
	int rc;

	rc = run_agent(fmt("snapshot -r %s -k %s/nowhere -o %s", fake, fake, out), &err);
	CHECK(rc == 1 && strstr(err, "not loaded") && strstr(err, "load vmctx_guest.ko"),
	      "a missing module is an error that says to load vmctx_guest.ko (got: %s)", err);
	CHECK(access(out, F_OK), "no bundle is written when the module is missing");
	free(err);

	put(fmt("%s/proc/kallsyms", fake),
	    "0000000000000000 T _stext\n0000000000000000 t vmctx_fix_kfunc\n");
	put(fmt("%s/proc/sys/kernel/kptr_restrict", fake), "2\n");
	rc = run_agent(fmt("snapshot -r %s -o %s", fake, out), &err);
	CHECK(rc == 1 && strstr(err, "zero addresses") && strstr(err, "kptr_restrict"),
	      "zeroed kallsyms is an error naming kptr_restrict (got: %s)", err);
	kptr = slurp(fmt("%s/proc/sys/kernel/kptr_restrict", fake));
	kptr[strcspn(kptr, "\n")] = '\0';
	CHECK(!strcmp(kptr, "2"), "kptr_restrict is restored after the attempt (got '%s')", kptr);
	CHECK(access(out, F_OK), "no bundle is written with zeroed kallsyms");
	free(kptr);
	free(err);

	rc = run_agent(fmt("snapshot --no-kallsyms -r %s -o %s", fake, out), &err);
	b = rc == 0 ? read_bundle(out) : NULL;
	CHECK(b && vmctx_bundle_nksyms(b) == 0 && vmctx_bundle_ntasks(b) == 7,
	      "--no-kallsyms writes a bundle without kernel symbols (status %d: %s)", rc, err);
	vmctx_bundle_free(b);
	free(err);
	write_tree(p1, p2);

	put(fmt("%s/proc/vmctx_guest/tasks", fake), "vmctx_guest 3 tsc_khz=1 tsc=1 ns=1\n");
	rc = run_agent(fmt("snapshot -r %s -o %s.2", fake, out), &err);
	CHECK(rc == 1 && strstr(err, "format 3"),
	      "a module speaking another format is refused clearly (got: %s)", err);
	free(err);
	write_tree(p1, p2);

	if (geteuid() != 0) {
		chmod(fmt("%s/proc/vmctx_guest/tasks", fake), 0);
		rc = run_agent(fmt("snapshot -r %s -o %s.3", fake, out), &err);
		CHECK(rc == 1 && strstr(err, "run vmctx-agent as root"),
		      "an unreadable task table says to run as root (got: %s)", err);
		free(err);
		chmod(fmt("%s/proc/vmctx_guest/tasks", fake), 0644);

		rc = run_agent(fmt("snapshot -o %s.4", out), &err);
		CHECK(rc == 1 && strstr(err, "must run as root"),
		      "on the real root, a non-root agent stops and says why (got: %s)", err);
		free(err);
	}

	rc = run_agent("snapshot -d 3", &err);
	CHECK(rc == 2 && strstr(err, "neither a duration"), "snapshot refuses a duration");
	free(err);
	rc = run_agent("frobnicate", &err);
	CHECK(rc == 2 && strstr(err, "unknown command"), "an unknown command is refused");
	free(err);
}

/*
 * /proc/modules as a Debian 12 KVM guest (6.1.0-*-amd64) shows it: the
 * modules such a guest loads with their sizes and dependency lists, in
 * load order, newest first, and a tainted out-of-tree one.  The addresses
 * are laid out to match the sizes, not copied from one machine.
 */
static const char debian_modules[] =
	"binfmt_misc 24576 1 - Live 0xffffffffc0a69000\n"
	"nls_ascii 16384 1 - Live 0xffffffffc0a64000\n"
	"nls_cp437 20480 1 - Live 0xffffffffc0a5e000\n"
	"vfat 20480 1 - Live 0xffffffffc0a58000\n"
	"fat 86016 1 vfat, Live 0xffffffffc0a42000\n"
	"intel_rapl_msr 20480 0 - Live 0xffffffffc0a3c000\n"
	"intel_rapl_common 32768 1 intel_rapl_msr, Live 0xffffffffc0a33000\n"
	"kvm_intel 380928 0 - Live 0xffffffffc09d5000\n"
	"kvm 1142784 1 kvm_intel, Live 0xffffffffc08bd000\n"
	"irqbypass 16384 1 kvm, Live 0xffffffffc08b8000\n"
	"ghash_clmulni_intel 16384 0 - Live 0xffffffffc08b3000\n"
	"sha512_ssse3 49152 0 - Live 0xffffffffc08a6000\n"
	"sha512_generic 16384 1 sha512_ssse3, Live 0xffffffffc08a1000\n"
	"aesni_intel 393216 0 - Live 0xffffffffc0840000\n"
	"crypto_simd 16384 1 aesni_intel, Live 0xffffffffc083b000\n"
	"cryptd 28672 2 ghash_clmulni_intel,crypto_simd, Live 0xffffffffc0833000\n"
	"snd_hda_codec_generic 98304 1 - Live 0xffffffffc081a000\n"
	"snd_hda_intel 57344 0 - Live 0xffffffffc080b000\n"
	"snd_intel_dspcfg 36864 1 snd_hda_intel, Live 0xffffffffc0801000\n"
	"snd_hda_codec 184320 2 snd_hda_codec_generic,snd_hda_intel, Live 0xffffffffc07d3000\n"
	"snd_hwdep 16384 1 snd_hda_codec, Live 0xffffffffc07ce000\n"
	"snd_hda_core 118784 3 snd_hda_codec_generic,snd_hda_intel,snd_hda_codec, Live 0xffffffffc07b0000\n"
	"snd_pcm 155648 3 snd_hda_intel,snd_hda_codec,snd_hda_core, Live 0xffffffffc0789000\n"
	"snd_timer 49152 1 snd_pcm, Live 0xffffffffc077c000\n"
	"snd 126976 6 snd_hda_codec_generic,snd_hda_intel,snd_hda_codec,snd_hwdep,snd_pcm,snd_timer, Live 0xffffffffc075c000\n"
	"soundcore 16384 1 snd, Live 0xffffffffc0757000\n"
	"virtio_balloon 24576 0 - Live 0xffffffffc0750000\n"
	"virtio_console 45056 1 - Live 0xffffffffc0744000\n"
	"joydev 28672 0 - Live 0xffffffffc073c000\n"
	"evdev 28672 3 - Live 0xffffffffc0734000\n"
	"serio_raw 20480 0 - Live 0xffffffffc072e000\n"
	"button 24576 0 - Live 0xffffffffc0727000\n"
	"vmctx_guest 24576 0 - Live 0xffffffffc0720000 (OE)\n"
	"fuse 176128 1 - Live 0xffffffffc06f4000\n"
	"dm_mod 184320 0 - Live 0xffffffffc06c6000\n"
	"loop 32768 0 - Live 0xffffffffc06bd000\n"
	"efi_pstore 16384 0 - Live 0xffffffffc06b8000\n"
	"configfs 57344 1 - Live 0xffffffffc06a9000\n"
	"qemu_fw_cfg 20480 0 - Live 0xffffffffc06a3000\n"
	"ip_tables 36864 0 - Live 0xffffffffc0699000\n"
	"x_tables 53248 1 ip_tables, Live 0xffffffffc068b000\n"
	"autofs4 53248 2 - Live 0xffffffffc067d000\n"
	"ext4 987136 1 - Live 0xffffffffc058b000\n"
	"crc16 16384 1 ext4, Live 0xffffffffc0586000\n"
	"mbcache 16384 1 ext4, Live 0xffffffffc0581000\n"
	"jbd2 184320 1 ext4, Live 0xffffffffc0553000\n"
	"crc32c_generic 16384 0 - Live 0xffffffffc054e000\n"
	"virtio_net 69632 0 - Live 0xffffffffc053c000\n"
	"net_failover 24576 1 virtio_net, Live 0xffffffffc0535000\n"
	"failover 16384 1 net_failover, Live 0xffffffffc0530000\n"
	"virtio_blk 24576 2 - Live 0xffffffffc0529000\n"
	"crc32_pclmul 16384 0 - Live 0xffffffffc0524000\n"
	"crc32c_intel 24576 2 - Live 0xffffffffc051d000\n"
	"psmouse 188416 0 - Live 0xffffffffc04ee000\n"
	"virtio_pci 24576 0 - Live 0xffffffffc04e7000\n"
	"virtio_pci_legacy_dev 16384 1 virtio_pci, Live 0xffffffffc04e2000\n"
	"virtio_pci_modern_dev 20480 1 virtio_pci, Live 0xffffffffc04dc000\n"
	"virtio 16384 6 virtio_balloon,virtio_console,virtio_net,virtio_blk,virtio_pci, Live 0xffffffffc04d7000\n"
	"virtio_ring 45056 6 virtio_balloon,virtio_console,virtio_net,virtio_blk,virtio_pci, Live 0xffffffffc04cb000\n"
;

static void test_many_modules(const struct proc *p1, const struct proc *p2)
{
	char *out = fmt("%s/mods.vmctx", top), *err;
	struct vmctx_bundle *b;
	const char *sym, *mod;
	int rc;

	put(fmt("%s/proc/modules", fake), debian_modules);
	put(fmt("%s/proc/kallsyms", fake),
	    "ffffffff81000000 T _stext\n"
	    "ffffffffc0a5e010 t cp437_uni2char\t[nls_cp437]\n"
	    "ffffffffc0789100 t snd_pcm_open\t[snd_pcm]\n"
	    "ffffffffc0720040 t vg_events_read\t[vmctx_guest]\n"
	    "ffffffffc04cb200 T virtqueue_add_sgs\t[virtio_ring]\n");
	rc = run_agent(fmt("snapshot -r %s -o %s", fake, out), &err);
	CHECK(rc == 0 && !*err,
	      "a guest with 59 kernel modules gets a bundle, silently (status %d: %s)", rc, err);
	CHECK_EQ(count_lines(out, "kmod ", ""), 59, "every module of /proc/modules is in the bundle");
	b = rc == 0 ? read_bundle(out) : NULL;
	CHECK(b && !vmctx_bundle_resolve_kernel(b, 0xffffffffc0789180, &sym, &mod) && sym &&
	      !strcmp(sym, "snd_pcm_open") && !strcmp(mod, "snd_pcm"),
	      "a symbol of a module in the middle resolves with its module");
	CHECK(b && !vmctx_bundle_resolve_kernel(b, 0xffffffffc04cb210, &sym, &mod) && sym &&
	      !strcmp(sym, "virtqueue_add_sgs") && !strcmp(mod, "virtio_ring"),
	      "... and one of the last module");
	CHECK(b && !vmctx_bundle_resolve_kernel(b, 0xffffffffc0720050, &sym, &mod) && sym &&
	      !strcmp(mod, "vmctx_guest"), "a tainted module's line (OE) is read too");
	vmctx_bundle_free(b);
	free(err);
	write_tree(p1, p2);
}

/* Who @b says @cpu ran at @ns: the pid, or -1 for unknown (ENOENT), -2 for a gap */
static int ran(const struct vmctx_bundle *b, unsigned int cpu, uint64_t ns,
	       enum vmctx_task_kind *kind)
{
	int pid, err = vmctx_bundle_running(b, cpu, ns, &pid, NULL, kind, NULL);

	if (err == -ENOENT)
		return -1;
	if (err == -VMCTX_E_GAP)
		return -2;
	return err ? -3 : pid;
}

/*
 * record --switches with the module's switches file: what it held when
 * the window opened (each CPU's task then, a loss, and records a guest
 * could not have written) and what came during the window (a loss still
 * under way at the end, a switch after it).  The window runs from the
 * first table's T0_NS to the last one's, 3 s.
 */
static void test_switches(const struct proc *p1, const struct proc *p2)
{
	char *out = fmt("%s/sw.vmctx", top), *err, *size, *script = fmt("%s/sw.sh", top);
	char *sws = fmt("%s/proc/vmctx_guest/switches", fake);
	char *param = fmt("%s/sys/module/vmctx_guest/parameters", fake);
	enum vmctx_task_kind kind = VMCTX_TASK_USER;
	struct vmctx_bundle *b;
	int rc;

	put(sws, fmt("switch 0 900000000 1 1 task init\n"
		     "switch 1 950000000 0 0 idle swapper/1\n"
		     "switch 0 1500000000 2 2 kthread kthreadd\n"
		     "lost 0 1600000000 1700000000 12\n"
		     "switch 0 1800000000 %d %d task prog\n"
		     "switch 9000 1500000000 5 5 task far\n"
		     "switch 1 1500000000 5000000 5000000 task huge%%20pid\n"
		     "switch 1 1500000000 7 7 sleeping x\n",
		     p1->pid, p1->pid));
	put(script, fmt("sleep 0.2\n"
			"printf 'lost 1 2000000000 - 3\\nswitch 0 3500000000 9 9 task late\\n' >> %s\n"
			"printf 'vmctx_guest 1 tsc_khz=2994375 tsc=999 ns=3000000000 pti=1 cr3_mask=0x0 tasks=1\\n1 1 100 0x1000 0x2000 init\\n' > %s/proc/vmctx_guest/tasks\n"
			"sleep 0.2\n", sws, fake));
	sh(fmt("mkdir -p %s", param));
	put(fmt("%s/switch_ring_size", param), "4096\n");

	rc = run_agent(fmt("record -i 10 --switches=128 -r %s -o %s -- sh %s", fake, out, script),
		       &err);
	CHECK(rc == 0, "record --switches succeeds (status %d: %s)", rc, err);
	CHECK(strstr(err, "15 context switches were lost on 2 CPUs"),
	      "the switches lost are counted, with their CPUs (got: %s)", err);
	CHECK(strstr(err, "2 switch records refused (the first, of CPU 9000: a CPU beyond 8191)"),
	      "records with a CPU or pid out of range are refused and counted (got: %s)", err);
	CHECK(strstr(err, "/proc/vmctx_guest/switches:8: bad line skipped"),
	      "a line of an unknown kind is a bad line (got: %s)", err);
	size = slurp(fmt("%s/switch_ring_size", param));
	CHECK(!strcmp(size, "128\n"), "--switches=128 sets the module's switch_ring_size (got %s)",
	      size);
	free(size);
	b = rc == 0 ? read_bundle(out) : NULL;
	if (b) {
		CHECK(ran(b, 0, T0_NS, &kind) == 1 && kind == VMCTX_TASK_USER,
		      "CPU 0 runs from the window's start the task it switched to before");
		CHECK(ran(b, 1, T0_NS, &kind) == 0 && kind == VMCTX_TASK_IDLE,
		      "CPU 1 idles from the start");
		CHECK(ran(b, 0, 1500000000, &kind) == 2 && kind == VMCTX_TASK_KTHREAD,
		      "a kernel thread runs from its switch");
		CHECK(ran(b, 0, 1650000000, NULL) == -2 && ran(b, 0, 1800000000, NULL) == p1->pid,
		      "a loss is a gap until the next switch");
		CHECK(ran(b, 0, 3000000000ULL, NULL) == p1->pid,
		      "a switch after the window is left out");
		CHECK(ran(b, 1, 2000000000, NULL) == -2 && ran(b, 1, 3000000000ULL, NULL) == -2,
		      "a loss still under way at the end is a gap to the end");
		CHECK_EQ(vmctx_bundle_nswitches(b), 4, "switches in the bundle");
		CHECK_EQ(vmctx_bundle_nswitch_gaps(b), 2, "gaps in the bundle");
		vmctx_bundle_free(b);
	}
	free(err);

	rc = run_agent(fmt("record -d 0 -r %s -o %s", fake, out), &err);
	CHECK(rc == 0 && count_lines(out, "vmctx-bundle 1", "") == 1 &&
	      count_lines(out, "switch ", "") == 0,
	      "without --switches, a record has no switch log: a version-1 bundle (status %d: %s)",
	      rc, err);
	free(err);
	rc = run_agent(fmt("snapshot --switches -r %s -o %s", fake, out), &err);
	CHECK(rc == 2 && strstr(err, "--switches is for record"),
	      "a snapshot takes no --switches (status %d: %s)", rc, err);
	free(err);
	rc = run_agent(fmt("record -d 0 --switches=10 -r %s -o %s", fake, out), &err);
	CHECK(rc == 2 && strstr(err, "64 to 1048576"),
	      "a ring size out of range is refused, with the range (status %d: %s)", rc, err);
	free(err);
	unlink(sws);
	rc = run_agent(fmt("record -d 0 --switches -r %s -o %s", fake, out), &err);
	CHECK(rc == 1 && strstr(err, "this vmctx_guest module logs no context switches"),
	      "a module without the switches file is named as the reason (status %d: %s)", rc,
	      err);
	free(err);
	sh(fmt("rm -r %s/sys", fake));
	write_tree(p1, p2);
}

/* A FIFO where a process's mapped file was: opening it must not wait for a writer. */
static void test_fifo_map(const struct proc *p1, const struct proc *p2)
{
	char *out = fmt("%s/fifo.vmctx", top), *err;
	double t0 = now_s();
	int rc;

	struct inotify_event ev;
	int ino;

	if (mkfifo(fmt("%s/opt/vt/fifo", fake), 0644))
		die("mkfifo: %s", strerror(errno));
	/* a device's driver would see an open(): inotify sees it too, an O_PATH look not */
	ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ino < 0 || inotify_add_watch(ino, fmt("%s/opt/vt/fifo", fake), IN_OPEN) < 0)
		die("inotify: %s", strerror(errno));
	APPEND(fmt("%s/proc/%d/maps", fake, p1->pid),
	       "7f1234560000-7f1234561000 r-xp 00000000 00:05 77 /opt/vt/fifo\n");
	rc = wait_agent(spawn_agent(fmt("snapshot -v -r %s -o %s", fake, out)), 10, &err);
	CHECK(rc == 0 && now_s() - t0 < 5,
	      "a FIFO at a mapped path is skipped at once, not waited on (status %d after %.1f s)",
	      rc, now_s() - t0);
	CHECK(strstr(err, "/opt/vt/fifo: not a regular file"),
	      "-v says the FIFO is no regular file (got: %s)", err);
	CHECK(read(ino, &ev, sizeof(ev)) < 0 && errno == EAGAIN,
	      "the FIFO is looked at, never opened (as a device node would be)");
	close(ino);
	free(err);
	unlink(fmt("%s/opt/vt/fifo", fake));
	write_tree(p1, p2);
}

/* Maps that vanish or cannot be read are skipped and counted, never a silent failure. */
static void test_unreadable_maps(const struct proc *p1, const struct proc *p2)
{
	char *out = fmt("%s/unread.vmctx", top), *err;
	struct vmctx_bundle *b;
	int rc;

	APPEND(fmt("%s/proc/vmctx_guest/tasks", fake),
	       "90002 90002 8000 0x40000 - odd\n90003 90003 9000 0x50000 - gone\n");
	/* read() of a directory fails with EISDIR, whoever runs the test. */
	sh(fmt("mkdir -p %s/proc/90002/maps", fake));
	rc = run_agent(fmt("snapshot -r %s -o %s", fake, out), &err);
	CHECK(rc == 0, "unreadable maps do not stop the snapshot (status %d: %s)", rc, err);
	CHECK(strstr(err, "warning: the maps of 1 process could not be read"),
	      "they are counted in one warning (got: %s)", err);
	CHECK(!strstr(err, "90003"), "a process that exited is no warning (got: %s)", err);
	b = rc == 0 ? read_bundle(out) : NULL;
	CHECK(b && task_of(b, 90002, 0x40000) >= 0 && task_of(b, 90003, 0x50000) >= 0 &&
	      resolves(b, task_of(b, p1->pid, 0x10000), p1->hot, "vmctx_fix_hot", "prog"),
	      "both stay tasks without maps, and the others resolve as before");
	vmctx_bundle_free(b);
	free(err);

	rc = run_agent(fmt("snapshot -v -r %s -o %s", fake, out), &err);
	CHECK(rc == 0 && strstr(err, "pid 90002 (odd): /proc/90002/maps: Is a directory") &&
	      strstr(err, "pid 90003 (gone) exited before its maps were read") &&
	      strstr(err, "processes gone before their maps were read, 1 with unreadable maps"),
	      "-v names each, and the summary counts them (got: %s)", err);
	free(err);
	sh(fmt("rm -r %s/proc/90002", fake));
	write_tree(p1, p2);
}

/* A bad line of the task table, /proc/modules or kallsyms is skipped, counted and named. */
static void test_bad_lines(const struct proc *p1, const struct proc *p2)
{
	char *out = fmt("%s/bad.vmctx", top), *err, *big = calloc(1, 9000);
	char *syms = fmt("%s/proc/kallsyms", fake);
	struct vmctx_bundle *b;
	const char *sym, *mod;
	int rc;

	if (!big)
		die("out of memory");
	APPEND(fmt("%s/proc/vmctx_guest/tasks", fake), "oops\n91000 91000 1 0x60000 - late\n");
	APPEND(fmt("%s/proc/modules", fake),
	       "huge 18446744073709551615 0 - Live 0xffffffffc0100000\n"
	       "fixmod 16384 0 - Live 0xffffffffc0001000\n"
	       "later 4096 0 - Live 0xffffffffc0200000\n");
	APPEND(syms, "ffffffff81003000 t \t[fixmod]\n");
	memset(big, 'x', 8999);
	APPEND(syms, "ffffffff81004000 t ");
	append(syms, big, 8999);
	APPEND(syms,
	       "\nffffffff81005000 t no_bracket\tfixmod\nffffffff81006000 T after_bad\n"
	       "ffffffffc0200100 t later_func\t[later]\n");
	free(big);

	rc = run_agent(fmt("snapshot -r %s -o %s", fake, out), &err);
	CHECK(rc == 0, "bad lines do not stop the snapshot (status %d: %s)", rc, err);
	CHECK(strstr(err, "/proc/vmctx_guest/tasks:7: bad line skipped (not \"pid tgid"),
	      "the task table's bad line is named by file and line (got: %s)", err);
	CHECK(strstr(err, "/proc/modules:2: bad line skipped (module runs past the end") &&
	      strstr(err, "; 2 bad lines skipped in this file"),
	      "the modules' first bad line is named, with the count (got: %s)", err);
	CHECK(strstr(err, "/proc/kallsyms:6: bad line skipped (no symbol name); 3 bad lines"),
	      "kallsyms' first bad line is named, with the count (got: %s)", err);
	b = rc == 0 ? read_bundle(out) : NULL;
	CHECK(b && task_of(b, 91000, 0x60000) >= 0, "the task line after the bad one is read");
	CHECK(b && !vmctx_bundle_resolve_kernel(b, 0xffffffff81006000, &sym, &mod) && sym &&
	      !strcmp(sym, "after_bad"), "the kallsyms line after the bad ones is read");
	CHECK(b && !vmctx_bundle_resolve_kernel(b, 0xffffffffc0200100, &sym, &mod) && sym &&
	      !strcmp(mod, "later"), "the module after the bad ones is read");
	vmctx_bundle_free(b);
	free(err);

	rc = run_agent(fmt("snapshot -v -r %s -o %s", fake, out), &err);
	CHECK(strstr(err, "/proc/modules:3: bad line skipped (module listed twice)") &&
	      strstr(err, "/proc/kallsyms:7: bad line skipped (") &&
	      strstr(err, "/proc/kallsyms:8: bad line skipped (module not in [brackets])"),
	      "-v names every bad line (got: %.2000s)", err);
	free(err);
	write_tree(p1, p2);
}

/* A NUL byte makes its line bad; the lines after it are read. */
static void test_nul_bytes(const struct proc *p1, const struct proc *p2)
{
	char *out = fmt("%s/nul.vmctx", top), *err;
	struct vmctx_bundle *b;
	const char *sym, *mod;
	int rc;

	APPEND(fmt("%s/proc/vmctx_guest/tasks", fake),
	       "92000 92000 1 0x70000 - ev\0il\n92001 92001 1 0x71000 - fine\n");
	APPEND(fmt("%s/proc/kallsyms", fake),
	       "ffffffff81007000 t nul\0here\nffffffff81008000 t past_nul\n");
	APPEND(fmt("%s/proc/modules", fake),
	       "nulmod 4096 0 - Live 0xffff\0ffffc0300000\n"
	       "okmod 4096 0 - Live 0xffffffffc0400000\n");
	APPEND(fmt("%s/proc/%d/maps", fake, p1->pid),
	       "7f1234560000-7f1234561000 r-xp 00000000 00:05 77 /opt/\0vt/x\n"
	       "7f1234570000-7f1234571000 r-xp 00000000 00:05 78 /opt/vt/y\n");
	rc = run_agent(fmt("snapshot -r %s -o %s", fake, out), &err);
	CHECK(rc == 0, "NUL bytes do not stop the snapshot (status %d: %s)", rc, err);
	CHECK(strstr(err, "tasks:7: bad line skipped (NUL byte)") &&
	      strstr(err, "kallsyms:6: bad line skipped (NUL byte)") &&
	      strstr(err, "modules:2: bad line skipped (NUL byte)") &&
	      strstr(err, fmt("/proc/%d/maps", p1->pid)),
	      "each line holding a NUL is named (got: %s)", err);
	b = rc == 0 ? read_bundle(out) : NULL;
	CHECK(b && task_of(b, 92000, 0x70000) < 0 && task_of(b, 92001, 0x71000) >= 0,
	      "the task line with a NUL is left out, and the next one read");
	CHECK(b && !vmctx_bundle_resolve_kernel(b, 0xffffffff81008000, &sym, &mod) && sym &&
	      !strcmp(sym, "past_nul"), "the kallsyms line after the NUL is read");
	CHECK(b && count_lines(out, "kmod ", "okmod") == 1 && count_lines(out, "kmod ", "nulmod") == 0,
	      "the module line after the NUL is read, the one with it left out");
	CHECK(b && count_lines(out, "map ", "/opt/vt/y") == 1 && count_lines(out, "map ", "/opt/\n") == 0,
	      "the maps line after the NUL is read, the one with it left out");
	vmctx_bundle_free(b);
	free(err);
	write_tree(p1, p2);
}

/* Guest strings in messages: an escape sequence is shown, never sent to the terminal. */
static void test_escapes(const struct proc *p1, const struct proc *p2)
{
	char *out = fmt("%s/esc.vmctx", top), *err;
	int rc;

	APPEND(fmt("%s/proc/vmctx_guest/tasks", fake), "93000 93000 1 0x80000 - %1b]0;owned%07\n");
	APPEND(fmt("%s/proc/modules", fake), "bad\x1b[2J 1 0 - Live zz\n");
	APPEND(fmt("%s/proc/%d/maps", fake, p1->pid),
	       "7f1234560000-7f1234561000 r-xp 00000000 00:05 77 /opt/\x1b[31mred\n");
	rc = run_agent(fmt("snapshot -v -r %s -o %s", fake, out), &err);
	CHECK(rc == 0 && strstr(err, "pid 93000 (\\x1b]0;owned\\x07) exited") &&
	      strstr(err, "\"bad\\x1b[2J 1 0") && strstr(err, "/opt/\\x1b[31mred: No such file"),
	      "a comm, a module line and a path show their control bytes as \\xNN (got: %s)", err);
	CHECK(!strchr(err, '\x1b') && !strchr(err, '\x07'), "no raw control byte reaches stderr");
	free(err);
	write_tree(p1, p2);

	/* C1 controls (a lone 0x9b, UTF-8 C2 9B) and a bidi override (U+202E) */
	APPEND(fmt("%s/proc/vmctx_guest/tasks", fake), "93001 93001 1 0x81000 - a%9bb%c2%9bc%e2%80%aed\n");
	rc = run_agent(fmt("snapshot -v -r %s -o %s", fake, out), &err);
	CHECK(rc == 0 && strstr(err, "pid 93001 (a\\x9bb\\xc2\\x9bc\\xe2\\x80\\xaed) exited"),
	      "a comm's C1 bytes and bidi override show as the tables show them (got: %s)", err);
	CHECK(!strchr(err, '\x9b') && !strstr(err, "\xe2\x80\xae"),
	      "no raw C1 byte or bidi control reaches stderr");
	free(err);
	write_tree(p1, p2);
}

/*
 * SIGTERM stops a snapshot at once and writes nothing.  A FIFO as the
 * task table holds the agent at a known point: in its read.
 */
static void test_sigterm_snapshot(const struct proc *p1, const struct proc *p2)
{
	char *tasks = fmt("%s/proc/vmctx_guest/tasks", fake), *out = fmt("%s/term.vmctx", top);
	char *rest = slurp(tasks), *err;
	struct timespec nap = { .tv_nsec = 300000000 };
	pid_t pid;
	int fd, rc;

	unlink(tasks);
	if (mkfifo(tasks, 0644))
		die("mkfifo: %s", strerror(errno));
	pid = spawn_agent(fmt("snapshot -r %s -o %s", fake, out));
	fd = open(tasks, O_WRONLY);
	if (fd < 0 || write(fd, rest, 20) != 20)
		die("%s: %s", tasks, strerror(errno));
	nanosleep(&nap, NULL);
	kill(pid, SIGTERM);
	nanosleep(&nap, NULL);
	/* The rest of the table: an agent that ignored the signal goes on with it. */
	if (write(fd, rest + 20, strlen(rest) - 20) < 0 && errno != EPIPE)
		die("%s: %s", tasks, strerror(errno));
	close(fd);
	rc = wait_agent(pid, 10, &err);
	CHECK(rc == 1 && strstr(err, "stopped by SIGTERM: no bundle written"),
	      "SIGTERM stops a snapshot with status 1 and says so (status %d: %s)", rc, err);
	CHECK(access(out, F_OK), "an interrupted snapshot writes no bundle");
	free(err);
	free(rest);
	unlink(tasks);
	write_tree(p1, p2);
}

/* SIGTERM ends a record's window at once, the command's run too. */
static void test_sigterm_record(void)
{
	char *out = fmt("%s/rterm.vmctx", top), *err;
	struct timespec nap = { .tv_nsec = 500000000 };
	double t0 = now_s();
	pid_t pid;
	int rc;

	pid = spawn_agent(fmt("record -r %s -o %s -- sleep 20", fake, out));
	nanosleep(&nap, NULL);
	kill(pid, SIGTERM);
	rc = wait_agent(pid, 15, &err);
	CHECK(rc == 0 && now_s() - t0 < 10,
	      "SIGTERM ends a record around a command promptly, with a bundle (status %d after %.1f s: %s)",
	      rc, now_s() - t0, err);
	CHECK(!access(out, F_OK), "the record's bundle is written");
	free(err);
}

/*
 * serve: the agent keeps its record and hands out bundles on a Unix
 * socket (vsock in a guest): each fetch gives a sealed bundle that
 * resolves the processes as a snapshot's does, with a window; a request
 * not of the protocol is dropped and the service goes on; the socket is
 * 0600; SIGTERM ends the service with status 0 and removes the socket.
 * Settings come from the configuration file where the command line does
 * not give them, and a bad one is refused with its file and line.
 */
static void test_serve(const struct proc *p1, const struct proc *p2)
{
	char *sock = fmt("%s/agent.sock", top), *conf = fmt("%s/agent.conf", top), *err;
	char *sws = fmt("%s/proc/vmctx_guest/switches", fake);
	char *param = fmt("%s/sys/module/vmctx_guest/parameters", fake);
	enum vmctx_task_kind kind = VMCTX_TASK_USER;
	struct timespec nap = { .tv_nsec = 20000000 };
	VMCTX_OPTS(vmctx_fetch_opts, o, .unix_path = sock, .timeout_ms = 5000);
	struct vmctx_bundle *b = NULL;
	uint64_t start, end;
	struct stat st;
	size_t len;
	void *data;
	int i, t1, fd, rc;
	FILE *f;
	pid_t pid;

	f = fopen(conf, "w");
	if (!f)
		die("%s: %s", conf, strerror(errno));
	fprintf(f, "# the service's settings\n  keep = 120\nlisten = unix:%s\n\ninterval=10\nswitches = 128\nunwind = on\n",
		sock);
	fclose(f);
	unlink(sock);
	/* a switch log: each request replays what the service kept into its window */
	put(sws, "switch 0 900000000 1 1 task init\nswitch 1 950000000 0 0 idle swapper/1\n");
	sh(fmt("mkdir -p %s", param));
	put(fmt("%s/switch_ring_size", param), "4096\n");
	pid = spawn_agent(fmt("serve -v -r %s --config %s", fake, conf));
	for (i = 0; i < 500 && access(sock, F_OK); i++)
		nanosleep(&nap, NULL);
	/* (seen as soon as it exists: no moment with another mode) */
	CHECK(!stat(sock, &st) && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0600,
	      "serve's socket is the configured one, mode 0600 from the start (mode %o)",
	      st.st_mode & 0777);

	/*
	 * A request not of the protocol: dropped, and the service goes on.
	 * Sent once serve listens: bind() makes the socket before listen(),
	 * and a loaded machine can run the test in between.
	 */
	for (i = 0; i < 500; i++) {
		struct sockaddr_un un = { .sun_family = AF_UNIX };

		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		snprintf(un.sun_path, sizeof(un.sun_path), "%s", sock);
		if (fd < 0 || !connect(fd, (struct sockaddr *)&un, sizeof(un)))
			break;
		close(fd);
		fd = -1;
		nanosleep(&nap, NULL);
	}
	CHECK(fd >= 0, "serve takes a connection on its socket");
	if (fd >= 0) {
		CHECK(write(fd, "GET / HTTP/1.0\n", 15) == 15, "a stray request sent");
		close(fd);
	}
	for (i = 0; i < 3; i++) {
		/* the third asks for more than the agent has been keeping */
		o.span_ns = i == 2 ? 1000000000000ull : 0;
		data = NULL;
		rc = vmctx_fetch(&o, &data, &len);
		CHECK(!rc, "fetch %d from serve: %s", i, vmctx_strerror(rc));
		b = NULL;
		rc = data ? vmctx_bundle_read_mem(data, len, NULL, &b) : -1;
		CHECK(!rc, "fetch %d: the bundle reads (%d)", i, rc);
		free(data);
		if (!b)
			continue;
		t1 = vmctx_bundle_find_task(b, 0x10000 | 0x1000, VMCTX_TIME_NONE);
		CHECK(t1 >= 0 && resolves(b, t1, p1->hot, "vmctx_fix_hot", "prog") &&
		      resolves(b, t1, p1->lib, "vmctx_fix_lib", "libvmctxfix.so"),
		      "fetch %d: the served bundle resolves the process as a snapshot's", i);
		CHECK(!vmctx_bundle_window(b, &start, &end) && start <= end,
		      "fetch %d: the served bundle has a window", i);
		CHECK(!strcmp(vmctx_bundle_agent(b), "vmctx-agent " PACKAGE_VERSION " backend=kmod"),
		      "fetch %d: it says which agent served it", i);
		CHECK(object_named(b, "/opt/vt/prog") >= 0 &&
		      !vmctx_bundle_object_unwind(b, object_named(b, "/opt/vt/prog"),
						  VMCTX_UNWIND_EH_FRAME, NULL, NULL, NULL),
		      "fetch %d: with unwind = on, the served bundle has the objects' tables", i);
		CHECK(ran(b, 0, end, &kind) == 1 && kind == VMCTX_TASK_USER &&
		      ran(b, 1, end, &kind) == 0 && kind == VMCTX_TASK_IDLE,
		      "fetch %d: each CPU's switch before the window, kept, says what it ran", i);
		vmctx_bundle_free(b);
	}
	kill(pid, SIGTERM);
	rc = wait_agent(pid, 10, &err);
	CHECK(rc == 0 && strstr(err, "serve: stopped by SIGTERM") && strstr(err, "a request dropped"),
	      "SIGTERM ends serve with status 0, the stray request said with -v (status %d: %s)",
	      rc, err);
	CHECK(strstr(err, "serve: asked for the last 1000.000 s, serving since "),
	      "a span longer than the agent has kept is said: %s", err);
	CHECK(access(sock, F_OK), "the socket is gone after serve ends");
	free(err);
	unlink(sws);
	sh(fmt("rm -r %s/sys", fake));
	write_tree(p1, p2);

	f = fopen(conf, "w");
	if (!f)
		die("%s: %s", conf, strerror(errno));
	fprintf(f, "keep = 120\nlisten = tcp:80\n");
	fclose(f);
	rc = run_agent(fmt("serve -r %s --config %s", fake, conf), &err);
	CHECK(rc == 2 && strstr(err, "agent.conf:2: listen = 'tcp:80': bad value"),
	      "a bad setting is refused with its file and line (status %d: %s)", rc, err);
	free(err);
	f = fopen(conf, "w");
	if (!f)
		die("%s: %s", conf, strerror(errno));
	fprintf(f, "unwind = yes\n");
	fclose(f);
	rc = run_agent(fmt("serve -r %s --config %s", fake, conf), &err);
	CHECK(rc == 2 && strstr(err, "agent.conf:1: unwind = 'yes': bad value"),
	      "unwind takes on or off (status %d: %s)", rc, err);
	free(err);
	rc = run_agent(fmt("serve -r %s --config %s/nowhere.conf", fake, top), &err);
	CHECK(rc == 2 && strstr(err, "nowhere.conf: No such file"),
	      "a configuration file named but missing is an error (status %d: %s)", rc, err);
	free(err);
	rc = run_agent(fmt("serve -r %s --max-mib=5x --config %s/nowhere.conf", fake, top), &err);
	CHECK(rc == 2 && strstr(err, "--max-mib: bad size '5x'"),
	      "a size with junk after it is refused (status %d: %s)", rc, err);
	free(err);
	rc = run_agent(fmt("record -i 50x -d 0 -r %s -o %s/x.vmctx", fake, top), &err);
	CHECK(rc == 2 && strstr(err, "bad interval '50x'"),
	      "an interval with junk after it is refused (status %d: %s)", rc, err);
	free(err);
	rc = run_agent(fmt("serve -r %s -o %s/x.vmctx", fake, top), &err);
	CHECK(rc == 2 && strstr(err, "serve takes no output"),
	      "serve refuses an output file (status %d: %s)", rc, err);
	free(err);
	unlink(conf);
}

/*
 * The bundle is its owner's alone, whatever the umask: it holds the
 * guest's KASLR and ASLR.  --group shares it read-only with one group.
 */
static void test_bundle_mode(const struct proc *p1, const struct proc *p2)
{
	char *out = fmt("%s/mode.vmctx", top), *err;
	struct group *g = getgrgid(getegid());
	mode_t old = umask(0);
	struct stat st;
	int rc;

	rc = run_agent(fmt("snapshot -r %s -o %s", fake, out), &err);
	CHECK(rc == 0 && !stat(out, &st) && (st.st_mode & 07777) == 0600,
	      "with umask 0 the bundle is 0600 (status %d, mode %o)", rc, st.st_mode & 07777);
	free(err);
	if (!g)
		die("no name for group %d", (int)getegid());
	rc = run_agent(fmt("snapshot -r %s -o %s --group %s", fake, out, g->gr_name), &err);
	CHECK(rc == 0 && !stat(out, &st) && (st.st_mode & 07777) == 0640 && st.st_gid == getegid(),
	      "--group %s makes it 0640 and that group's (status %d, mode %o: %s)", g->gr_name, rc,
	      st.st_mode & 07777, err);
	free(err);
	rc = run_agent(fmt("snapshot -r %s -o %s --group no-such-group-vmctx", fake, out), &err);
	CHECK(rc == 2 && strstr(err, "--group: no group 'no-such-group-vmctx'"),
	      "an unknown group is refused before anything is read (status %d: %s)", rc, err);
	free(err);
	umask(old);
	write_tree(p1, p2);
}

/* A maps file that never ends (/dev/zero in a fake tree) is cut short, not read to ENOMEM. */
static void test_endless_maps(const struct proc *p1, const struct proc *p2)
{
	char *maps = fmt("%s/proc/%d/maps", fake, p2->pid), *out = fmt("%s/zero.vmctx", top), *err;
	double t0 = now_s();
	int rc;

	unlink(maps);
	if (symlink("/dev/zero", maps))
		die("symlink: %s", strerror(errno));
	rc = wait_agent(spawn_agent(fmt("snapshot -r %s -o %s", fake, out)), 30, &err);
	CHECK(rc == 0 && strstr(err, "the maps of 1 process could not be read"),
	      "an endless maps file is one process's unreadable maps, and the bundle is written (status %d after %.1f s: %s)",
	      rc, now_s() - t0, err);
	free(err);
	unlink(maps);
	write_tree(p1, p2);
}

/*
 * One process mapping a file thousands of times under long paths adds its
 * share and no more: the bundle stays readable, with every other process.
 */
static void test_greedy_process(const struct proc *p1, const struct proc *p2)
{
	char *maps = fmt("%s/proc/%d/maps", fake, p2->pid), *out = fmt("%s/greedy.vmctx", top);
	char *err, path[4001];
	struct vmctx_bundle *b;
	FILE *f = fopen(maps, "a");
	int i, rc;

	if (!f)
		die("%s: %s", maps, strerror(errno));
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	/* 20,000 executable mappings of 4,000-byte paths: 80 MB of text */
	for (i = 0; i < 20000; i++)
		fprintf(f, "%llx-%llx r-xp 00000000 00:05 %d %s%05d\n",
			0x100000000000ULL + i * 0x1000ULL, 0x100000001000ULL + i * 0x1000ULL, i,
			path, i);
	if (fclose(f))
		die("%s: %s", maps, strerror(errno));
	rc = run_agent(fmt("snapshot -r %s -o %s", fake, out), &err);
	CHECK(rc == 0 && strstr(err, fmt("pid %d (", p2->pid)) &&
	      strstr(err, "executable mappings left out: over one process's share"),
	      "the greedy process's mappings beyond its share are left out, with a warning (status %d: %.500s)",
	      rc, err);
	b = rc == 0 ? read_bundle(out) : NULL;
	CHECK(b && resolves(b, task_of(b, p1->pid, 0x10000), p1->hot, "vmctx_fix_hot", "prog"),
	      "the bundle is readable, and the other processes resolve as before");
	vmctx_bundle_free(b);
	free(err);
	write_tree(p1, p2);
}

/* Over the reader's default size (64 MiB of text) perf would refuse the bundle: an error. */
static void test_too_big(const struct proc *p1, const struct proc *p2)
{
	char *syms = fmt("%s/proc/kallsyms", fake), *out = fmt("%s/big.vmctx", top), *err;
	char name[8001];
	FILE *f = fopen(syms, "w");
	int i, rc;

	if (!f)
		die("%s: %s", syms, strerror(errno));
	memset(name, 'k', 8000);
	name[8000] = '\0';
	/* 8,500 names of 8,000 bytes: 68 MB of text. */
	for (i = 0; i < 8500; i++)
		fprintf(f, "ffffffff%08x t %s\n", 0x81000000 + i * 16, name);
	if (fclose(f))
		die("%s: %s", syms, strerror(errno));
	rc = run_agent(fmt("snapshot -r %s -o %s", fake, out), &err);
	CHECK(rc == 1 && strstr(err, "too big to use") && strstr(err, "64 MiB"),
	      "a bundle over the reader's default size is an error that says why (status %d: %s)",
	      rc, err);
	free(err);
	unlink(out);
	write_tree(p1, p2);
}

/* "0xSTART 0xEND 0xPGOFF" of @p's mapping of @path with permissions @perm, from its maps. */
static char *mapping_of(const struct proc *p, const char *path, const char *perm)
{
	char *text = slurp(fmt("%s/proc/%d/maps", fake, p->pid)), *line, *save = NULL;
	uint64_t start, end, off;
	char perms[8], file[4096];

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %4095s", &start,
			   &end, perms, &off, file) == 5 &&
		    !strcmp(perms, perm) && strstr(file, path)) {
			free(text);
			return fmt("0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " %s", start, end, off,
				   file);
		}
	}
	die("no %s mapping of %s in pid %d's maps", perm, path, p->pid);
}

/*
 * Module format 2: a process exec'd and exited between two polls, gone from
 * /proc before the agent could read its maps, keeps the code the module
 * logged with its exec (the program) and its exit (the program and its
 * library): the exit batch replaces the exec batch.  It maps p1's program
 * and library at p1's addresses, so p1's functions are its ground truth.
 */
static void test_map_events(const struct proc *p1, const struct proc *p2)
{
	char *out = fmt("%s/mapev.vmctx", top), *err;
	char *prog = mapping_of(p1, "/prog", "r-xp"), *lib = mapping_of(p1, "libvmctxfix", "r-xp");
	struct vmctx_bundle *b;
	int rc, t;

	put(fmt("%s/proc/vmctx_guest/events", fake),
	    fmt("0 fork 11 500000000 5151 5151 1 499000000 0x9000 0xa000 sh\n"
		"1 exec 12 600000000 5151 5151 5151 499000000 0xd000 0xe000 brief\n"
		"2 map 12 600000001 5151 5151 exec %s\n"
		"3 map 13 690000000 5151 5151 exit %s\n"
		"4 map 13 690000001 5151 5151 exit %s\n"
		"5 map 13 690000002 5151 5151 exit %s\n"
		"6 exit 13 700000000 5151 5151 0 499000000 0xd000 0xe000 brief\n"
		"7 map 13 700000001 5151 5151 exit 0x1000 0x2000 0x0 relative/path\n",
		prog, prog, lib, lib));
	rc = run_agent(fmt("snapshot -r %s -o %s", fake, out), &err);
	CHECK(rc == 0, "snapshot with map events succeeds (status %d: %s)", rc, err);
	CHECK(strstr(err, "events:8: bad line"),
	      "a map event with a relative path is a bad line (got: %s)", err);
	b = rc == 0 ? read_bundle(out) : NULL;
	t = b ? task_of(b, 5151, 0xd000) : -1;
	CHECK(t >= 0 && resolves(b, t, p1->hot, "vmctx_fix_hot", "prog"),
	      "a process gone before its maps were read resolves its program's functions");
	CHECK(t >= 0 && resolves(b, t, p1->lib, "vmctx_fix_lib", "libvmctxfix.so"),
	      "... and its library's, logged at its exit (logged twice: kept once)");
	vmctx_bundle_free(b);
	free(err);
	write_tree(p1, p2);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	const char *tb = getenv("top_builddir");
	char *dir = fmt("%s/vmctx-agent-test.XXXXXX", tmp);
	struct proc p1, p2;

	agent = getenv("VMCTX_AGENT");
	if (!agent)
		agent = fmt("%s/guest-agent/vmctx-agent", tb ? tb : ".");
	if (access(agent, X_OK))
		die("%s: %s (set VMCTX_AGENT)", agent, strerror(errno));
	if (!mkdtemp(dir) || !realpath(dir, top))
		die("mkdtemp: %s", strerror(errno));
	snprintf(fake, sizeof(fake), "%s/root", top);
	signal(SIGPIPE, SIG_IGN);

	build_fixtures();
	start_proc(&p1, "a");
	start_proc(&p2, "b");
	write_tree(&p1, &p2);

	test_snapshot(&p1, &p2);
	test_unwind(&p1, &p2);
	test_record(&p1, &p2);
	test_switches(&p1, &p2);
	test_errors(&p1, &p2);
	test_many_modules(&p1, &p2);
	test_fifo_map(&p1, &p2);
	test_unreadable_maps(&p1, &p2);
	test_bad_lines(&p1, &p2);
	test_nul_bytes(&p1, &p2);
	test_escapes(&p1, &p2);
	test_map_events(&p1, &p2);
	test_sigterm_snapshot(&p1, &p2);
	test_sigterm_record();
	test_serve(&p1, &p2);
	test_too_big(&p1, &p2);
	test_bundle_mode(&p1, &p2);
	test_endless_maps(&p1, &p2);
	test_greedy_process(&p1, &p2);

	stop_proc(&p1);
	stop_proc(&p2);
	if (!check_failures && !getenv("VMCTX_KEEP"))
		sh(fmt("rm -rf %s", top));
	else
		fprintf(stderr, "test-agent: files kept in %s\n", top);
	return check_result("test-agent");
}
