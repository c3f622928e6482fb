// SPDX-License-Identifier: GPL-2.0
/*
 * vmctx-agent's pieces without any file: the load-bias rule, the module's
 * line formats, how events and tables become task records, how a
 * buffer read whole splits into lines, and how the switch rings of a fake
 * backend become the bundle's switch log.
 */
#include "agent.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent-tsc.h"
#include "check.h"

static void test_bias_rule(void)
{
	/* A PIE as ld -z separate-code lays it out: r--, r-x, r--, rw- (p_offset != p_vaddr). */
	static const uint64_t pie[][4] = {
		{ 0x0, 0x0, 0x628, PF_R },
		{ 0x1000, 0x1000, 0x1d5, PF_R | PF_X },
		{ 0x2000, 0x2000, 0x10c, PF_R },
		{ 0x2db8, 0x3db8, 0x268, PF_R | PF_W },
	};
	/* An old layout: text and data share file page 0, data is 0x200000 above. */
	static const uint64_t old[][4] = {
		{ 0x0, 0x400000, 0x7a4, PF_R | PF_X },
		{ 0xe10, 0x600e10, 0x228, PF_R | PF_W },
	};
	/* A shared library: text at file offset 0x26000, vaddr 0x26000. */
	static const uint64_t so[][4] = {
		{ 0x0, 0x0, 0x25f00, PF_R },
		{ 0x26000, 0x26000, 0x155000, PF_R | PF_X },
		{ 0x17b000, 0x17b000, 0x56000, PF_R },
	};
	uint64_t bias;
	int err;

	err = agent_elf_bias_for(pie, 4, 0x555555555000, 0x1000, PF_R | PF_X, &bias);
	CHECK(!err && bias == 0x555555554000,
	      "a PIE's text mapping has the load base as bias (got 0x%llx)", (unsigned long long)bias);
	err = agent_elf_bias_for(pie, 4, 0x555555556000, 0x2000, PF_R, &bias);
	CHECK(!err && bias == 0x555555554000, "its rodata mapping has the same bias");
	/* Data: file page 0x2000 again, but mapped at vaddr page 0x3000. */
	err = agent_elf_bias_for(pie, 4, 0x555555557000, 0x2000, PF_R | PF_W, &bias);
	CHECK(!err && bias == 0x555555554000,
	      "a data mapping sharing rodata's file page takes the writable segment (got 0x%llx)",
	      (unsigned long long)bias);
	err = agent_elf_bias_for(old, 2, 0x400000, 0x0, PF_R | PF_X, &bias);
	CHECK(!err && bias == 0, "a non-PIE executable's text has bias 0");
	err = agent_elf_bias_for(old, 2, 0x600000, 0x0, PF_R | PF_W, &bias);
	CHECK(!err && bias == 0,
	      "a non-PIE data mapping of file page 0 has bias 0, not 0x200000 (got 0x%llx)",
	      (unsigned long long)bias);
	err = agent_elf_bias_for(so, 3, 0x7f0000026000, 0x26000, PF_R | PF_X, &bias);
	CHECK(!err && bias == 0x7f0000000000, "a shared library's text gives its base");
	err = agent_elf_bias_for(pie, 4, 0x555555560000, 0xc000, PF_R, &bias);
	CHECK(!err && bias == 0x555555560000 - 0xc000 + 0x2db8 - 0x3db8,
	      "a mapping past the segments falls back to the last one below");
	err = agent_elf_bias_for(NULL, 0, 0x1000, 0, PF_R, &bias);
	CHECK(err == -ENOENT && bias == 0x1000, "without PT_LOAD, ELF addresses are file offsets");
}

static void test_task_line(void)
{
	char l1[] = "42 40 123456 0x1a2b000 0x1a2c000 my%20prog%25";
	char l2[] = "2 2 0 - - kthreadd";
	char bad1[] = "42 40 123456 0x1a2b000 0x1a2c000";
	char bad2[] = "42 40 123456 1a2b000 - x";
	char bad3[] = "42 40 123456 - - a%00b";
	char bad4[] = "-1 40 1 - - x";
	char bad5[] = "1 1 1 - - x y";
	struct agent_task_row t;

	CHECK(!agent_kmod_parse_task_line(l1, &t) && t.pid == 42 && t.tgid == 40 &&
	      t.start_ns == 123456 && t.root == 0x1a2b000 && t.user_root == 0x1a2c000 &&
	      !strcmp(t.comm, "my prog%"), "a task line parses, and its comm is unescaped");
	CHECK(!agent_kmod_parse_task_line(l2, &t) && t.root == AGENT_NO_ROOT &&
	      t.user_root == AGENT_NO_ROOT, "a kernel thread has no root");
	CHECK(agent_kmod_parse_task_line(bad1, &t), "a line without comm is refused");
	CHECK(agent_kmod_parse_task_line(bad2, &t), "a root without 0x is refused");
	CHECK(agent_kmod_parse_task_line(bad3, &t), "an escaped NUL is refused");
	CHECK(agent_kmod_parse_task_line(bad4, &t), "a negative pid is refused");
	CHECK(agent_kmod_parse_task_line(bad5, &t), "a raw space in comm is refused");
}

static void test_event_line(void)
{
	char l1[] = "17 exec 99887766 5000 300 300 301 4000 0xb000 - sh";
	char lost[] = "lost 12";
	char bad[] = "17 spawn 1 2 3 3 0 1 - - x";
	struct agent_event e;

	CHECK(!agent_kmod_parse_event_line(l1, &e) && e.seq == 17 && e.type == AGENT_EVENT_EXEC &&
	      e.tsc == 99887766 && e.ns == 5000 && e.task.pid == 300 && e.task.tgid == 300 &&
	      e.other == 301 && e.task.start_ns == 4000 && e.task.root == 0xb000 &&
	      e.task.user_root == AGENT_NO_ROOT && !strcmp(e.task.comm, "sh"),
	      "an event line parses field by field");
	CHECK(agent_kmod_parse_event_line(lost, &e) == -ENODATA, "a lost line is recognised");
	CHECK(agent_kmod_parse_event_line(bad, &e) == -EINVAL, "an unknown event type is refused");
}

static void test_switch_line(void)
{
	char task[] = "switch 3 123456789 4242 4240 task my%20worker";
	char kthread[] = "switch 0 5 17 17 kthread ksoftirqd/0";
	char idle[] = "switch 1 6 0 0 idle swapper/1";
	char lost[] = "lost 2 1000 2000 37";
	char losing[] = "lost 2 3000 - 4";
	char far[] = "switch 9000 1 5 5 task x";
	char bad_kind[] = "switch 0 1 5 5 user x";
	char bad_pid[] = "switch 0 1 -5 5 task x";
	char big_pid[] = "switch 0 1 99999999999 5 task x";
	char no_comm[] = "switch 0 1 5 5 task";
	char nul[] = "switch 0 1 5 5 task a%00b";
	char bad_lost[] = "lost 2 1000 x 37";
	char other[] = "wakeup 0 1 5 5 task x";
	struct agent_switch s;

	CHECK(!agent_kmod_parse_switch_line(task, &s) && s.type == AGENT_SWITCH && s.cpu == 3 &&
	      s.ns == 123456789 && s.pid == 4242 && s.tgid == 4240 &&
	      s.kind == VMCTX_TASK_USER && !strcmp(s.comm, "my worker"),
	      "a switch line parses field by field: \"task\" is a task with user space");
	CHECK(!agent_kmod_parse_switch_line(kthread, &s) && s.kind == VMCTX_TASK_KTHREAD &&
	      s.pid == 17, "\"kthread\" is a kernel thread");
	CHECK(!agent_kmod_parse_switch_line(idle, &s) && s.kind == VMCTX_TASK_IDLE && !s.pid &&
	      !s.tgid && s.cpu == 1, "\"idle\" is the idle task");
	CHECK(!agent_kmod_parse_switch_line(lost, &s) && s.type == AGENT_SWITCH_LOST &&
	      s.cpu == 2 && s.ns == 1000 && s.lost_to == 2000 && s.nlost == 37,
	      "a loss gives its CPU, first and last lost switch and count");
	CHECK(!agent_kmod_parse_switch_line(losing, &s) && s.type == AGENT_SWITCH_LOST &&
	      s.ns == 3000 && s.lost_to == AGENT_TIME_NONE && s.nlost == 4,
	      "a loss under way has no end");
	CHECK(!agent_kmod_parse_switch_line(far, &s) && s.cpu == 9000,
	      "a CPU past the cap parses (the switch log refuses it)");
	CHECK(agent_kmod_parse_switch_line(bad_kind, &s), "an unknown kind is refused");
	CHECK(agent_kmod_parse_switch_line(bad_pid, &s), "a negative pid is refused");
	CHECK(agent_kmod_parse_switch_line(big_pid, &s), "a pid beyond an int is refused");
	CHECK(agent_kmod_parse_switch_line(no_comm, &s), "a switch without comm is refused");
	CHECK(agent_kmod_parse_switch_line(nul, &s), "an escaped NUL in comm is refused");
	CHECK(agent_kmod_parse_switch_line(bad_lost, &s), "a loss with a bad end is refused");
	CHECK(agent_kmod_parse_switch_line(other, &s), "an unknown record is refused");
}

static struct agent_event ev(enum agent_event_type type, uint64_t ns, int pid,
				  int tgid, int other, uint64_t root, const char *comm)
{
	struct agent_event e = { .type = type, .ns = ns, .other = other };

	e.task.pid = pid;
	e.task.tgid = tgid;
	e.task.root = root;
	e.task.start_ns = 10;
	strcpy(e.task.comm, comm);
	return e;
}

static const struct agent_task *find(const struct agent_tasks *ts, int pid, uint64_t root)
{
	size_t i;

	for (i = 0; i < ts->n; i++)
		if (ts->v[i].pid == pid && ts->v[i].root == root)
			return &ts->v[i];
	return NULL;
}

static void test_lifetimes(void)
{
	struct agent_tasks ts = { 0 };
	struct agent_task_row rows[2] = {
		{ .pid = 1, .tgid = 1, .start_ns = 5, .root = 0x1000, .comm = "init" },
		{ .pid = 70, .tgid = 70, .start_ns = 7, .root = 0x7000, .comm = "renamed" },
	};
	struct agent_task_table tab = { .ns = 1000, .ntasks = 2, .tasks = rows };
	const struct agent_task *t;
	struct agent_event e;

	e = ev(AGENT_EVENT_FORK, 100, 50, 50, 1, 0x5000, "init");
	agent_tasks_apply_event(&ts, &e);
	e = ev(AGENT_EVENT_EXEC, 110, 50, 50, 50, 0x6000, "short");
	agent_tasks_apply_event(&ts, &e);
	e = ev(AGENT_EVENT_EXIT, 120, 50, 50, 0, 0x6000, "short");
	agent_tasks_apply_event(&ts, &e);
	t = find(&ts, 50, 0x5000);
	CHECK(t && t->start == 100 && t->exit == 110 && !strcmp(t->comm, "init"),
	      "fork opens a record with the child's root, exec closes it");
	t = find(&ts, 50, 0x6000);
	CHECK(t && t->start == 110 && t->exit == 120 && !strcmp(t->comm, "short"),
	      "exec opens a record with the new root and comm, exit closes it");

	/* pid 55 renames itself after its exec: its record ends with the new name. */
	e = ev(AGENT_EVENT_EXEC, 130, 55, 55, 55, 0x6800, "exe");
	agent_tasks_apply_event(&ts, &e);
	e = ev(AGENT_EVENT_EXIT, 140, 55, 55, 0, 0x6800, "cat");
	agent_tasks_apply_event(&ts, &e);
	t = find(&ts, 55, 0x6800);
	CHECK(t && t->exit == 140 && !strcmp(t->comm, "cat"),
	      "a process renamed after its exec is named as it was at its exit");

	/* pid 60: a thread of 50's tgid execs; the process takes the leader's pid. */
	e = ev(AGENT_EVENT_FORK, 200, 80, 80, 1, 0x8000, "mt");
	agent_tasks_apply_event(&ts, &e);
	e = ev(AGENT_EVENT_FORK, 210, 81, 80, 80, 0x8000, "mt");
	agent_tasks_apply_event(&ts, &e);
	e = ev(AGENT_EVENT_EXIT, 220, 80, 80, 0, 0x8000, "mt");
	agent_tasks_apply_event(&ts, &e);
	e = ev(AGENT_EVENT_EXEC, 230, 80, 80, 81, 0x9000, "new");
	agent_tasks_apply_event(&ts, &e);
	t = find(&ts, 81, 0x8000);
	CHECK(t && t->exit == 230, "exec from a thread closes the thread's record (old pid)");
	t = find(&ts, 80, 0x9000);
	CHECK(t && t->start == 230 && t->exit == AGENT_TIME_NONE,
	      "... and the process goes on under the leader's pid");

	/* An exit of a task never seen: it lived from its start time. */
	e = ev(AGENT_EVENT_EXIT, 300, 90, 90, 0, 0xa000, "old");
	agent_tasks_apply_event(&ts, &e);
	t = find(&ts, 90, 0xa000);
	CHECK(t && t->start == 10 && t->exit == 300,
	      "an exit alone gives a record from the task's start");

	/* pid 70 is in the table with a root we had not seen, pid 1 too. */
	e = ev(AGENT_EVENT_FORK, 400, 70, 70, 1, 0x7000, "child");
	agent_tasks_apply_event(&ts, &e);
	agent_tasks_apply_table(&ts, &tab);
	t = find(&ts, 70, 0x7000);
	CHECK(t && t->start == 400 && !strcmp(t->comm, "renamed"),
	      "a table row with the same root updates comm and keeps the event's start");
	t = find(&ts, 1, 0x1000);
	CHECK(t && t->start == 5 && t->exit == AGENT_TIME_NONE,
	      "a table row unseen in events opens a record");
	agent_tasks_close_missing(&ts, &tab);
	t = find(&ts, 80, 0x9000);
	CHECK(t && t->exit == 1000, "a record the final table lacks is closed at the table's time");
	t = find(&ts, 1, 0x1000);
	CHECK(t && t->exit == AGENT_TIME_NONE, "a record the final table holds stays open");
	agent_tasks_drop_before(&ts, 225);
	CHECK(!find(&ts, 50, 0x6000) && !find(&ts, 80, 0x8000) && find(&ts, 90, 0xa000) &&
	      find(&ts, 81, 0x8000),
	      "records that ended before the window are dropped, the others kept");
	CHECK(agent_tasks_open_of(&ts, 1) && agent_tasks_open_of(&ts, 1)->pid == 1,
	      "open records are still found after dropping");
	agent_tasks_free(&ts);
}

static struct agent_event map_ev(uint64_t seq, uint64_t ns, int pid, uint64_t root,
				      uint64_t start, const char *path)
{
	struct agent_event e = ev(AGENT_EVENT_MAP, ns, pid, pid, 0, root, "");

	e.seq = seq;
	e.start = start;
	e.end = start + 0x1000;
	e.path = (char *)path;
	return e;
}

static bool has_map(const struct agent_task *t, uint64_t start, const char *path)
{
	size_t i;

	for (i = 0; t && i < t->nmaps; i++)
		if (t->maps[i].start == start && !strcmp(t->maps[i].path, path))
			return true;
	return false;
}

/*
 * A /proc/PID/maps read over [from, to], as vmctx-agent makes it, of the
 * mapping @path at @start and, unless @path2 is NULL, @path2 at @start2.
 * Returns whether the record took it.
 */
static bool poll_maps(struct agent_tasks *ts, int pid, uint64_t from, uint64_t to,
		      uint64_t start, const char *path, uint64_t start2, const char *path2)
{
	struct agent_task *t = agent_tasks_open_of(ts, pid);
	size_t n = path2 ? 2 : 1;
	struct agent_map *m = calloc(n, sizeof(*m));

	m[0].start = start;
	m[0].end = start + 0x1000;
	m[0].path = strdup(path);
	if (path2) {
		m[1].start = start2;
		m[1].end = start2 + 0x1000;
		m[1].path = strdup(path2);
	}
	if (agent_task_take_read(t, m, n, from, to))
		return true;
	agent_free_maps(m, n);
	return false;
}

/*
 * @parent forks pid P at P * 10 ns (root P / 10 * 0x2000), whose maps are
 * read over [from, to]; P execs at P * 10 + 10 (root + 0x1000).
 */
static bool fork_read_exec(struct agent_tasks *ts, int parent, int pid, uint64_t from,
			   uint64_t to, uint64_t start, const char *path, uint64_t start2,
			   const char *path2)
{
	struct agent_event e;
	bool took;

	e = ev(AGENT_EVENT_FORK, pid * 10, pid, pid, parent, pid / 10 * 0x2000, "sh");
	agent_tasks_apply_event(ts, &e);
	took = poll_maps(ts, pid, from, to, start, path, start2, path2);
	e = ev(AGENT_EVENT_EXEC, pid * 10 + 10, pid, pid, pid, pid / 10 * 0x2000 + 0x1000, "prog");
	agent_tasks_apply_event(ts, &e);
	return took;
}

static void test_maps_find_their_image(void)
{
	struct agent_tasks ts = { 0 };
	const struct agent_task *t;
	struct agent_event e;
	bool took;

	/* a shell with its maps; its fork runs its code before any exec */
	e = ev(AGENT_EVENT_FORK, 100, 10, 10, 1, 0x1000, "sh");
	agent_tasks_apply_event(&ts, &e);
	poll_maps(&ts, 10, 105, 106, 0x400000, "/bin/sh", 0, NULL);
	e = ev(AGENT_EVENT_FORK, 110, 11, 11, 10, 0x2000, "sh");
	agent_tasks_apply_event(&ts, &e);
	t = find(&ts, 11, 0x2000);
	CHECK(has_map(t, 0x400000, "/bin/sh") && t->nmaps == 1,
	      "a forked child starts with its parent's mappings");
	e = ev(AGENT_EVENT_FORK, 115, 12, 10, 10, 0x1000, "sh");
	agent_tasks_apply_event(&ts, &e);
	t = find(&ts, 12, 0x1000);
	CHECK(t && !t->nmaps, "a new thread has none of its own (it uses its leader's)");

	/*
	 * 11 execs "prog": BPF logs the program's mapping (root 0x3000) at 120,
	 * and the exec event at 130 comes in a later read of the ring.
	 */
	e = map_ev(1, 121, 11, 0x3000, 0x30000000, "/bin/prog");
	agent_tasks_apply_event(&ts, &e);
	t = find(&ts, 11, 0x2000);
	CHECK(has_map(t, 0x400000, "/bin/sh") && !has_map(t, 0x30000000, "/bin/prog"),
	      "a mapping of an image not open yet does not go to the one open");
	e = ev(AGENT_EVENT_EXEC, 130, 11, 11, 11, 0x3000, "prog");
	agent_tasks_apply_event(&ts, &e);
	t = find(&ts, 11, 0x3000);
	CHECK(has_map(t, 0x30000000, "/bin/prog") && t->nmaps == 1,
	      "... it goes to the image that exec opens");
	CHECK(!ts.npending, "and waits no longer");

	/* pids 50 and 60 come from a parent not seen: only a read gives their maps */
	fork_read_exec(&ts, 2, 50, 515, 516, 0x50000000, "/bin/other", 0, NULL);
	CHECK(!has_map(find(&ts, 50, 0xa000), 0x50000000, "/bin/other") &&
	      has_map(find(&ts, 50, 0xb000), 0x50000000, "/bin/other"),
	      "maps read from /proc after an exec go to the new image");
	fork_read_exec(&ts, 2, 60, 605, 615, 0x60000000, "/bin/either", 0, NULL);
	t = find(&ts, 60, 0xc000);
	CHECK(t && !t->nmaps && !find(&ts, 60, 0xd000)->nmaps,
	      "maps read across an exec go to neither image");

	/* pids 20, 40, 70 and 80 are the shell's: they start with its /bin/sh */
	took = fork_read_exec(&ts, 10, 40, 401, 402, 0x400000, "/bin/sh", 0, NULL);
	CHECK(took && has_map(find(&ts, 40, 0x8000), 0x400000, "/bin/sh") &&
	      !find(&ts, 40, 0x9000)->nmaps, "maps read before an exec stay with the old image");
	/* the module's map events name no root: the image open at their time */
	e = map_ev(9, 411, 40, AGENT_NO_ROOT, 0x70000000, "/bin/late");
	agent_tasks_apply_event(&ts, &e);
	CHECK(has_map(find(&ts, 40, 0x9000), 0x70000000, "/bin/late"),
	      "a map event without a root goes to the open image");
	/*
	 * An exec maps its program before its event is logged: a read in
	 * between shows the new image while the old one's record is open,
	 * and ends before the exec's time.  No time tells it; the mappings do.
	 */
	took = fork_read_exec(&ts, 10, 80, 801, 802, 0x30000000, "/bin/prog", 0, NULL);
	t = find(&ts, 80, 0x10000);
	CHECK(!took && has_map(t, 0x400000, "/bin/sh") && t->nmaps == 1 &&
	      !find(&ts, 80, 0x11000)->nmaps,
	      "a read without the mappings a fork gave is another image's: neither takes it");
	took = fork_read_exec(&ts, 10, 20, 215, 216, 0x50000000, "/bin/other", 0, NULL);
	CHECK(!took && has_map(find(&ts, 20, 0x4000), 0x400000, "/bin/sh") &&
	      !find(&ts, 20, 0x5000)->nmaps, "... read after the exec too");
	took = fork_read_exec(&ts, 10, 70, 705, 715, 0x400000, "/bin/sh", 0x7f0000000000,
			      "/lib/libc.so");
	t = find(&ts, 70, 0xe000);
	CHECK(took && has_map(t, 0x400000, "/bin/sh") && t->nmaps == 1 &&
	      !find(&ts, 70, 0xf000)->nmaps,
	      "a read across an exec takes back what it added, and keeps what the fork gave");
	agent_tasks_free(&ts);
}

static void test_unescape(void)
{
	char a[] = "caf%C3%A9%25";
	char b[] = "x%2";
	char c[] = "x%zz";

	CHECK(!agent_unescape(a) && !strcmp(a, "caf\xc3\xa9%"), "%%XX escapes decode");
	CHECK(agent_unescape(b) == -EINVAL, "a cut escape is refused");
	CHECK(agent_unescape(c) == -EINVAL, "a non-hex escape is refused");
}

static void test_lines(void)
{
	char buf[] = "one\n\ntw\0o\nthree";
	struct agent_lines it;
	char *l1, *l2, *l3, *l4, *l5;
	bool n1, n2, n3, n4, n5 = false;

	agent_lines_init(&it, buf, sizeof(buf) - 1);
	l1 = agent_lines_next(&it, &n1);
	l2 = agent_lines_next(&it, &n2);
	l3 = agent_lines_next(&it, &n3);
	l4 = agent_lines_next(&it, &n4);
	l5 = agent_lines_next(&it, &n5);
	CHECK(l1 && !strcmp(l1, "one") && !n1 && l2 && !*l2 && !n2,
	      "lines split at newlines; an empty line is a line");
	CHECK(l3 && n3, "a line holding a NUL byte is flagged");
	CHECK(l4 && !strcmp(l4, "three") && !n4 && it.lineno == 4,
	      "the lines after a NUL byte are read, numbered on; the last needs no newline");
	CHECK(!l5 && !n5, "the end is NULL");
}

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static void test_clock_pairs(void)
{
	struct agent_pairs p = { 0 };
	uint64_t n0, n1, t0, t1, tsc = 0, ns = 0, span;

	/* a pair's TSC and clock were both read between the test's own reads */
	n0 = mono();
	t0 = agent_tsc();
	span = agent_clock_pair(&tsc, &ns);
	t1 = agent_tsc();
	n1 = mono();
	CHECK(n0 <= ns && ns <= n1 && t0 <= tsc && tsc <= t1 && span <= n1 - n0,
	      "the pair's clock and TSC lie between the reads around it");

	CHECK(!agent_pairs_note(&p, 1000, 5000000, 100) && p.n == 1, "a first pair is kept");
	CHECK(!agent_pairs_note(&p, 2000, 5000000 + AGENT_PAIR_EVERY_NS - 1, 100) && p.n == 1,
	      "a pair sooner than AGENT_PAIR_EVERY_NS after the last is not");
	CHECK(!agent_pairs_note(&p, 3000, 5000000 + AGENT_PAIR_EVERY_NS, AGENT_PAIR_MAX_SPAN_NS + 1) &&
	      p.n == 1 && p.dropped == 1, "a pair read over more than the span allowed is dropped");
	CHECK(!agent_pairs_note(&p, 999, 5000000 + 2 * AGENT_PAIR_EVERY_NS, 100) && p.n == 1,
	      "a pair whose TSC went back is not kept");
	CHECK(!agent_pairs_note(&p, 4000, 5000000 + 2 * AGENT_PAIR_EVERY_NS, AGENT_PAIR_MAX_SPAN_NS) &&
	      p.n == 2 && p.v[1].tsc == 4000 && p.max_span == AGENT_PAIR_MAX_SPAN_NS,
	      "a pair read within the span, later, is kept");
	free(p.v);
}

/*
 * The module logs each mapping of an exit (or exec) on its own, so another
 * CPU's event may come between two of them, as in a CI run where churn
 * forked on the other vCPU during hot's exit.  The batch is still one:
 * hot keeps its program beside the libraries.  BPF's batches come in a
 * row, and there a batch after another process's event is a new view.
 */
static void test_batch_across_other_events(void)
{
	struct agent_tasks ts = { .batch_by_process = true };
	const struct agent_task *t;
	struct agent_event e;
	bool bpf;

	for (bpf = false; ; bpf = true) {
		memset(&ts, 0, sizeof(ts));
		ts.batch_by_process = !bpf;
		e = ev(AGENT_EVENT_FORK, 100, 20, 20, 1, 0x5000, "sh");
		agent_tasks_apply_event(&ts, &e);
		e = ev(AGENT_EVENT_EXEC, 110, 20, 20, 20, 0x6000, "hot");
		e.seq = 2;
		agent_tasks_apply_event(&ts, &e);
		/* the exec's batch: the program and its interpreter */
		e = map_ev(3, 111, 20, AGENT_NO_ROOT, 0x20001000, "/bin/hot");
		agent_tasks_apply_event(&ts, &e);
		e = map_ev(4, 111, 20, AGENT_NO_ROOT, 0x7f0000001000, "/lib64/ld.so");
		agent_tasks_apply_event(&ts, &e);
		/* the exit's, cut by another process's fork after its first mapping */
		e = map_ev(10, 500, 20, AGENT_NO_ROOT, 0x20001000, "/bin/hot");
		e.other = 1;
		agent_tasks_apply_event(&ts, &e);
		e = ev(AGENT_EVENT_FORK, 501, 30, 30, 1, 0x7000, "sh");
		e.seq = 11;
		agent_tasks_apply_event(&ts, &e);
		e = map_ev(12, 502, 20, AGENT_NO_ROOT, 0x7e0000001000, "/lib/libc.so.6");
		e.other = 1;
		agent_tasks_apply_event(&ts, &e);
		e = map_ev(13, 502, 20, AGENT_NO_ROOT, 0x7f0000001000, "/lib64/ld.so");
		e.other = 1;
		agent_tasks_apply_event(&ts, &e);
		t = find(&ts, 20, 0x6000);
		if (bpf) {
			CHECK(t && t->nmaps == 2 && !has_map(t, 0x20001000, "/bin/hot"),
			      "BPF: a batch after another process's event replaces the one before");
			break;
		}
		CHECK(t && t->nmaps == 3 && has_map(t, 0x20001000, "/bin/hot") &&
		      has_map(t, 0x7e0000001000, "/lib/libc.so.6") &&
		      has_map(t, 0x7f0000001000, "/lib64/ld.so"),
		      "module: an exit's batch cut by another process's event keeps all its mappings");
		agent_tasks_free(&ts);
	}
	agent_tasks_free(&ts);
}

/* ---- The switch log, from a fake backend --------------------------------- */

/* The fake backend's rings: each read hands out the next batch. */
static const struct agent_switch *const *fake_batches;
static const size_t *fake_counts;
static size_t fake_next;

static int fake_read_switches(struct agent *a, struct agent_switch **sw, size_t *n,
			      size_t *cap)
{
	size_t k = fake_counts[fake_next], i;
	struct agent_switch *v;

	if (!k) {
		fake_next++;
		return 0;
	}
	v = realloc(*sw, (*n + k) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	*sw = v;
	for (i = 0; i < k; i++)
		(*sw)[(*n)++] = fake_batches[fake_next][i];
	*cap = *n;
	fake_next++;
	return 0;
}

static const struct agent_backend_ops fake_ops = {
	.name = "fake",
	.read_switches = fake_read_switches,
};

static struct agent_switch sw(unsigned int cpu, uint64_t ns, int pid, int tgid,
			      enum vmctx_task_kind kind, const char *comm)
{
	struct agent_switch s = { .type = AGENT_SWITCH, .cpu = cpu, .ns = ns, .pid = pid,
				  .tgid = tgid, .kind = kind };

	snprintf(s.comm, sizeof(s.comm), "%s", comm);
	return s;
}

/* @n switches of @cpu lost over [@from, @to]; @to AGENT_TIME_NONE: still losing */
static struct agent_switch lost(unsigned int cpu, uint64_t from, uint64_t to, uint64_t n)
{
	struct agent_switch s = { .type = AGENT_SWITCH_LOST, .cpu = cpu, .ns = from,
				  .lost_to = to, .nlost = n };

	return s;
}

/*
 * Record a window [@start, @end] from the fake backend: one drain at the
 * window's start, one for each of @nbatches - 1 more batches at @start
 * ("now" under a fake root: the first table's time), and the final drain
 * at @end.  The sealed bundle, or NULL.
 */
static struct vmctx_bundle *record_switches(struct agent *a, uint64_t start, uint64_t end,
					    const struct agent_switch *const *batches,
					    const size_t *counts, size_t nbatches)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	size_t i;
	int err = b ? 0 : -ENOMEM;

	memset(a, 0, sizeof(*a));
	a->prog = "test-agent-units";
	a->ops = &fake_ops;
	a->table.ns = start;
	fake_batches = batches;
	fake_counts = counts;
	fake_next = 0;
	agent_switch_log_init(&a->switches, b, start);
	for (i = 0; !err && i + 1 < nbatches; i++)
		err = agent_switch_log_drain(a, false);
	a->table.ns = end;
	if (!err)
		err = agent_switch_log_drain(a, true);
	if (!err)
		err = vmctx_bundle_set_window(b, start, end);
	if (!err)
		err = vmctx_bundle_seal(b);
	CHECK(!err, "the switch log goes into a bundle that seals (%s)", vmctx_strerror(err));
	if (err) {
		vmctx_bundle_free(b);
		b = NULL;
	}
	return b;
}

/* Who @b says @cpu ran at @ns: the pid, or -1 for unknown (ENOENT), -2 for a gap */
static int ran(const struct vmctx_bundle *b, unsigned int cpu, uint64_t ns)
{
	int pid, err = vmctx_bundle_running(b, cpu, ns, &pid, NULL, NULL, NULL);

	if (err == -ENOENT)
		return -1;
	if (err == -VMCTX_E_GAP)
		return -2;
	return err ? -3 : pid;
}

static void test_switch_window(void)
{
	const struct agent_switch b1[] = {
		sw(0, 500, 10, 10, VMCTX_TASK_USER, "early"),
		sw(0, 800, 11, 11, VMCTX_TASK_USER, "at start"),
		sw(1, 900, 2, 2, VMCTX_TASK_KTHREAD, "kthreadd"),
		sw(0, 2000, 0, 0, VMCTX_TASK_IDLE, "swapper/0"),
		sw(2, 1500, 300, 299, VMCTX_TASK_USER, "worker"),
		sw(0, 6000, 12, 12, VMCTX_TASK_USER, "late"),
		sw(2, 5000, 301, 301, VMCTX_TASK_USER, "at end"),
	};
	const struct agent_switch *batches[] = { b1, NULL };
	const size_t counts[] = { 7, 0 };
	enum vmctx_task_kind kind;
	struct vmctx_bundle *b;
	const char *comm;
	struct agent a;
	int pid, tgid;

	b = record_switches(&a, 1000, 5000, batches, counts, 2);
	if (!b)
		return;
	CHECK(ran(b, 0, 1000) == 11 && ran(b, 0, 1999) == 11,
	      "a CPU's last switch before the window runs from the window's start");
	CHECK(!vmctx_bundle_running(b, 0, 2000, &pid, &tgid, &kind, &comm) && pid == 0 &&
	      tgid == 0 && kind == VMCTX_TASK_IDLE && !strcmp(comm, "swapper/0"),
	      "the idle task is logged as idle, pid 0");
	CHECK(ran(b, 0, 5000) == 0, "... and runs to the window's end");
	CHECK(!vmctx_bundle_running(b, 1, 3000, &pid, NULL, &kind, &comm) && pid == 2 &&
	      kind == VMCTX_TASK_KTHREAD && !strcmp(comm, "kthreadd"),
	      "a CPU with nothing in the window runs its task of before throughout, kind kept");
	CHECK(ran(b, 2, 1200) == -1, "before a CPU's first switch, nobody is known");
	CHECK(!vmctx_bundle_running(b, 2, 1500, &pid, &tgid, &kind, NULL) && pid == 300 &&
	      tgid == 299 && kind == VMCTX_TASK_USER, "a thread is logged with its tgid");
	CHECK(ran(b, 2, 5000) == 301, "a switch at the window's end is in it");
	CHECK_EQ(vmctx_bundle_nswitches(b), 5, "switches: two carried to the start, three inside");
	CHECK_EQ(a.switches.outside, 1, "the switch after the window is dropped and counted");
	CHECK(!a.switches.refused && !a.switches.lost, "nothing refused or lost");
	agent_switch_log_free(&a.switches);
	vmctx_bundle_free(b);
}

/* Gaps of the overrun test, as the bundle has them sealed: CPU, start, end. */
static const uint64_t want_gaps[][3] = {
	{ 0, 1200, 1900 },
	{ 0, 3000, 3200 },
	{ 1, 1600, 10000 },
	{ 2, 1600, 1700 },
	{ 3, 1000, 1200 },
	{ 6, 9000, 10000 },
};

static struct vmctx_bundle *overrun_bundle(struct agent *a)
{
	const struct agent_switch b1[] = {
		sw(0, 1100, 20, 20, VMCTX_TASK_USER, "a"),
		lost(0, 1200, 1900, 7),
		sw(0, 2000, 21, 21, VMCTX_TASK_USER, "b"),
		lost(0, 3000, 3100, 2),
		sw(0, 3100, 22, 22, VMCTX_TASK_USER, "c"),
		lost(0, 3100, 3200, 1),
		sw(0, 3300, 23, 23, VMCTX_TASK_USER, "d"),
		sw(1, 1500, 30, 30, VMCTX_TASK_USER, "e"),
		lost(1, 1600, AGENT_TIME_NONE, 4),
		sw(2, 1500, 40, 40, VMCTX_TASK_USER, "f"),
		lost(2, 1600, AGENT_TIME_NONE, 2),
		sw(3, 500, 50, 50, VMCTX_TASK_USER, "g"),
		lost(3, 600, 1200, 9),
		sw(3, 1300, 51, 51, VMCTX_TASK_USER, "h"),
		sw(4, 500, 60, 60, VMCTX_TASK_USER, "i"),
		lost(4, 600, 700, 1),
		sw(4, 2000, 61, 61, VMCTX_TASK_USER, "j"),
		sw(5, 1500, 70, 70, VMCTX_TASK_USER, "k"),
		lost(5, 11000, 12000, 5),
		sw(6, 1500, 80, 80, VMCTX_TASK_USER, "l"),
		lost(6, 9000, 11000, 6),
	};
	/* CPU 2's loss ends at the next read, CPU 1's never */
	const struct agent_switch b2[] = {
		lost(1, 1600, AGENT_TIME_NONE, 9),
		lost(2, 1600, 1700, 3),
		sw(2, 1800, 41, 41, VMCTX_TASK_USER, "m"),
	};
	const struct agent_switch *batches[] = { b1, b2, NULL };
	const size_t counts[] = { sizeof(b1) / sizeof(b1[0]), sizeof(b2) / sizeof(b2[0]), 0 };

	return record_switches(a, 1000, 10000, batches, counts, 3);
}

static void test_switch_overrun(void)
{
	struct vmctx_bundle *b;
	struct agent a;
	size_t i;

	b = overrun_bundle(&a);
	if (!b)
		return;
	CHECK(ran(b, 0, 1199) == 20 && ran(b, 0, 1200) == -2 && ran(b, 0, 1999) == -2 &&
	      ran(b, 0, 2000) == 21, "an overrun is a gap from its first lost switch until the next switch after its last");
	CHECK(ran(b, 0, 3150) == -2 && ran(b, 0, 3300) == 23,
	      "losses with a switch inside them make one gap");
	CHECK(ran(b, 1, 1599) == 30 && ran(b, 1, 9999) == -2,
	      "a loss still under way at the end is a gap to the end");
	CHECK(ran(b, 2, 1650) == -2 && ran(b, 2, 1800) == 41,
	      "a loss seen under way, then closed, is a gap to its last lost switch");
	CHECK(ran(b, 3, 1000) == -2 && ran(b, 3, 1300) == 51,
	      "a loss over the window's start leaves the start unknown");
	CHECK(ran(b, 4, 1000) == -1 && ran(b, 4, 2000) == 61,
	      "after a loss before the window, nobody is known until the next switch");
	CHECK(ran(b, 5, 9999) == 70, "a loss after the window is dropped");
	CHECK(ran(b, 6, 8999) == 80 && ran(b, 6, 10000) == -2,
	      "a loss over the window's end is a gap to the end");
	CHECK_EQ(vmctx_bundle_nswitch_gaps(b), sizeof(want_gaps) / sizeof(want_gaps[0]),
		 "gaps in the bundle");
	for (i = 0; i < vmctx_bundle_nswitch_gaps(b); i++) {
		uint64_t from, to;
		unsigned int cpu;

		CHECK(!vmctx_bundle_switch_gap(b, i, &cpu, &from, &to) &&
		      cpu == want_gaps[i][0] && from == want_gaps[i][1] && to == want_gaps[i][2],
		      "gap %zu is CPU %u [%llu, %llu], not [%llu, %llu]", i, cpu,
		      (unsigned long long)from, (unsigned long long)to,
		      (unsigned long long)want_gaps[i][1], (unsigned long long)want_gaps[i][2]);
	}
	CHECK_EQ(a.switches.lost, 7 + 2 + 1 + 9 + 3 + 9 + 6, "switches lost within the window");
	CHECK_EQ(a.switches.lost_cpus, 5, "CPUs that lost switches within the window");
	agent_switch_log_free(&a.switches);
	vmctx_bundle_free(b);
}

static void test_switch_hostile(void)
{
	const struct agent_switch b1[] = {
		sw(9000, 1500, 10, 10, VMCTX_TASK_USER, "far cpu"),
		sw(0, 1500, -1, 1, VMCTX_TASK_USER, "negative"),
		sw(0, 1500, 5000000, 5000000, VMCTX_TASK_USER, "huge pid"),
		sw(0, 1500, 5, 5, VMCTX_TASK_IDLE, "idle pid"),
		sw(0, 1500, 0, 0, VMCTX_TASK_USER, "pid 0"),
		sw(0, 1500, 7, 7, (enum vmctx_task_kind)9, "kind 9"),
		lost(0, 1600, 1500, 1),
		sw(1, 2000, 100, 100, VMCTX_TASK_USER, "first"),
		sw(1, 1900, 101, 101, VMCTX_TASK_USER, "stepped back"),
	};
	const struct agent_switch *batches[] = { b1, NULL };
	const size_t counts[] = { sizeof(b1) / sizeof(b1[0]), 0 };
	struct vmctx_bundle *b;
	struct agent a;

	b = record_switches(&a, 1000, 5000, batches, counts, 2);
	if (!b)
		return;
	CHECK_EQ(a.switches.refused, 7, "records a guest could not have written are refused");
	CHECK(a.switches.refused_why && strstr(a.switches.refused_why, "8191") &&
	      a.switches.refused_cpu == 9000, "the first refusal is named (got %s)",
	      a.switches.refused_why ? a.switches.refused_why : "none");
	CHECK(ran(b, 0, 2000) == -1 && !vmctx_bundle_nswitch_gaps(b),
	      "nothing of a refused record is in the bundle");
	CHECK(ran(b, 1, 2000) == 101 && ran(b, 1, 4000) == 101,
	      "a switch whose clock stepped back keeps its place in the ring's order");
	CHECK_EQ(vmctx_bundle_nswitches(b), 2, "switches added");
	agent_switch_log_free(&a.switches);
	vmctx_bundle_free(b);
}

/* Where a poll's clock is behind a record, it waits, and the window's end may drop it. */
static void test_switch_later_than_clock(void)
{
	const struct agent_switch b1[] = {
		sw(0, 1500, 10, 10, VMCTX_TASK_USER, "in"),
		lost(0, 2500, 3500, 4),
		sw(0, 3600, 11, 11, VMCTX_TASK_USER, "out"),
		sw(1, 2000, 20, 20, VMCTX_TASK_USER, "in too"),
	};
	const struct agent_switch b2[] = {
		sw(1, 4000, 21, 21, VMCTX_TASK_USER, "out too"),
	};
	const struct agent_switch *batches[] = { b1, b2 };
	const size_t counts[] = { 4, 1 };
	struct vmctx_bundle *b;
	struct agent a;

	b = record_switches(&a, 1000, 3000, batches, counts, 2);
	if (!b)
		return;
	CHECK(ran(b, 0, 2000) == 10 && ran(b, 0, 2500) == -2 && ran(b, 0, 3000) == -2 &&
	      ran(b, 1, 3000) == 20, "records read before the clock passed them go in by the window's end");
	CHECK(vmctx_bundle_nswitches(b) == 2 && a.switches.outside == 2,
	      "switches after the window's end are dropped, whenever they were read");
	agent_switch_log_free(&a.switches);
	vmctx_bundle_free(b);
}

/* Every answer of vmctx_bundle_running() over a grid of CPUs and times. */
static bool same_running(const struct vmctx_bundle *x, const struct vmctx_bundle *y)
{
	unsigned int cpu;
	uint64_t ns;

	for (cpu = 0; cpu < 8; cpu++) {
		for (ns = 900; ns <= 10100; ns += 50) {
			enum vmctx_task_kind k1 = VMCTX_TASK_USER, k2 = VMCTX_TASK_USER;
			const char *c1 = "", *c2 = "";
			int p1 = -1, p2 = -1, g1 = -1, g2 = -1, e1, e2;

			e1 = vmctx_bundle_running(x, cpu, ns, &p1, &g1, &k1, &c1);
			e2 = vmctx_bundle_running(y, cpu, ns, &p2, &g2, &k2, &c2);
			if (e1 != e2 || p1 != p2 || g1 != g2 || k1 != k2 || strcmp(c1, c2))
				return false;
		}
	}
	return true;
}

static void test_switch_log_reads_back(void)
{
	struct vmctx_bundle *b, *r = NULL;
	struct agent a;
	size_t len;
	void *buf;
	int err;

	b = overrun_bundle(&a);
	if (!b)
		return;
	err = vmctx_bundle_write_mem(b, &buf, &len);
	if (!err)
		err = vmctx_bundle_read_mem(buf, len, NULL, &r);
	CHECK(!err, "a bundle with a switch log is written and read back (%s)",
	      vmctx_strerror(err));
	CHECK(r && same_running(b, r),
	      "the bundle read back answers who ran where and when as the one written");
	CHECK(r && vmctx_bundle_nswitches(r) == vmctx_bundle_nswitches(b) &&
	      vmctx_bundle_nswitch_gaps(r) == vmctx_bundle_nswitch_gaps(b),
	      "... with the same switches and gaps");
	if (!err)
		free(buf);
	vmctx_bundle_free(r);
	agent_switch_log_free(&a.switches);
	vmctx_bundle_free(b);
}

/*
 * serve's switch store, pruned at 1000: each CPU keeps its last switch
 * before (what it ran when a window opens there) and everything after; a
 * loss that reaches past 1000, or is still under way, stays; older ones go.
 */
static void test_switch_store_prune(void)
{
	static const struct agent_switch in[] = {
		{ .type = AGENT_SWITCH, .cpu = 0, .ns = 100, .pid = 1 },
		{ .type = AGENT_SWITCH, .cpu = 1, .ns = 200, .pid = 2 },
		{ .type = AGENT_SWITCH, .cpu = 0, .ns = 300, .pid = 3 },	/* CPU 0's last before */
		{ .type = AGENT_SWITCH_LOST, .cpu = 1, .ns = 400, .lost_to = 500, .nlost = 2 },
		{ .type = AGENT_SWITCH_LOST, .cpu = 1, .ns = 600, .lost_to = 1200, .nlost = 2 },
		{ .type = AGENT_SWITCH, .cpu = 0, .ns = 1000, .pid = 4 },
		{ .type = AGENT_SWITCH_LOST, .cpu = 2, .ns = 700, .lost_to = AGENT_TIME_NONE, .nlost = 9 },
		{ .type = AGENT_SWITCH, .cpu = 1, .ns = 1500, .pid = 5 },
	};
	static const int kept_pid[] = { 2, 3, -1, 4, -1, 5 };	/* -1: a loss */
	struct agent_switch_store st = { 0 };
	size_t i;

	CHECK(!agent_switch_store_add(&st, in, 4) && !agent_switch_store_add(&st, in + 4, 4),
	      "records added in two reads");
	CHECK_EQ(st.n, 8, "all kept before pruning");
	agent_switch_store_prune(&st, 1000);
	CHECK_EQ(st.n, 6, "two switches and a loss that ended before 1000 go");
	for (i = 0; i < st.n && i < 6; i++)
		CHECK(kept_pid[i] < 0 ? st.v[i].type == AGENT_SWITCH_LOST :
		      st.v[i].type == AGENT_SWITCH && st.v[i].pid == kept_pid[i],
		      "record %zu kept, in order", i);
	agent_switch_store_prune(&st, 1000);
	CHECK_EQ(st.n, 6, "pruning again at the same time keeps the same");
	agent_switch_store_free(&st);
	CHECK(!st.v && !st.n, "freed");
}

/*
 * serve's --max-mib: what is kept (switches and ended tasks, newest
 * first; live tasks whatever they cost) is cut at the first record that
 * would pass nine tenths of the bound, and nothing when all fits.
 */
static void test_budget(void)
{
	static char lib[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct agent_map maps[2] = { { .path = lib }, { .path = (char *)"" } };
	struct agent_task v[4] = {
		{ .pid = 1, .exit = AGENT_TIME_NONE, .nmaps = 2, .maps = maps },	/* alive */
		{ .pid = 2, .exit = 100 },
		{ .pid = 3, .exit = 200 },
		{ .pid = 4, .exit = 300 },
	};
	static const struct agent_switch sw[] = {
		{ .type = AGENT_SWITCH, .cpu = 0, .ns = 50, .pid = 2 },
		{ .type = AGENT_SWITCH, .cpu = 0, .ns = 250, .pid = 4 },
	};
	struct agent_tasks ts = { .n = 4, .cap = 4, .v = v };
	struct agent_switch_store st = { 0 };
	size_t t = sizeof(struct agent_task), w = sizeof(struct agent_switch);
	size_t alive = t + 2 * sizeof(struct agent_map) + sizeof(lib) + 1;
	size_t all = alive + 3 * t + 2 * w, four;

	CHECK_EQ(agent_task_bytes(&v[0]), alive, "a task's bytes: the record, its maps, their paths");
	CHECK(!agent_switch_store_add(&st, sw, 2), "switches stored");
	CHECK_EQ(agent_budget_from(&ts, &st, 10, all), 10, "all fits: nothing cut");
	CHECK_EQ(agent_budget_from(&ts, &st, 10, 0), 10, "no bound: nothing cut");
	/* the alive task, and the newest three (300, the switch at 250, 200) in 9/10 */
	four = alive + 2 * t + w;
	CHECK_EQ(agent_budget_from(&ts, &st, 10, four * 10 / 9 + 10), 101,
		 "over the bound: cut after the task that ended at 100, the switch at 50 too");
	CHECK_EQ(agent_budget_from(&ts, &st, 150, four * 10 / 9 + 10), 150,
		 "never before the time given");
	CHECK_EQ(agent_budget_from(&ts, &st, 10, alive + 1), 301,
		 "a bound the live task alone fills: every ended record goes");
	agent_switch_store_free(&st);
}

int main(void)
{
	test_clock_pairs();
	test_bias_rule();
	test_task_line();
	test_event_line();
	test_switch_line();
	test_lifetimes();
	test_maps_find_their_image();
	test_batch_across_other_events();
	test_unescape();
	test_lines();
	test_switch_window();
	test_switch_overrun();
	test_switch_hostile();
	test_switch_later_than_clock();
	test_switch_log_reads_back();
	test_switch_store_prune();
	test_budget();
	return check_result("test-agent-units");
}
