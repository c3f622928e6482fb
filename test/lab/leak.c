// SPDX-License-Identifier: GPL-2.0
/*
 * lab-leak: does one tenant's guest context reach another user's per-task
 * event?  (kernel patch 2: only the running task's events and CPU-wide
 * events get the block.)
 *
 * usage: lab-leak -c CPU -- VMM [ARGS...]
 *
 * A sleeper owned by uid 65534 and pinned to CPU wakes from an hrtimer
 * every millisecond.  While the VMM's vCPU thread runs on the same CPU,
 * the timer fires while it runs, often in guest mode, and the wakeup then
 * runs in the vCPU thread with the vCPU loaded (on VMX in KVM's IRQ
 * window): perf_tp_event() delivers sched:sched_waking to the sleeper's
 * per-task events (the tracepoint's __perf_task()) while the vCPU thread is
 * current, and a sample's pid is current's.
 *
 *  - uid 65534, at perf_event_paranoid 1, opens a per-task
 *    sched:sched_waking event on the sleeper with PERF_SAMPLE_GUEST_CTX:
 *    none of its samples may carry a guest context;
 *  - root opens the same event CPU-wide on CPU: some of its samples taken
 *    in the VMM's threads must carry the context of a loaded vCPU, which
 *    shows that the wakeups did run there.
 *
 * On 6.12.117 the per-task event gets (next to) none of the wakeups that
 * run in the VMM's threads: perf_swevent_event() only samples an active
 * event, and a sleeping task's events are not active, so the kernel
 * patch's gate is not what keeps them out here.  The count is printed;
 * a kernel that does deliver them must deliver them without the block.
 *
 * Prints one line per event and exits 0 if both hold, 1 if not, 2 on a
 * usage or setup error.  perf_event_paranoid is restored.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sysctl-int.h"

#define NOBODY		65534
#define RING_PAGES	64
#define TRACEPOINT_ID	"/sys/kernel/tracing/events/sched/sched_waking/id"
#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size;
};

/* what one event saw: samples in the VMM's threads, and how many had a block */
struct tally {
	unsigned long all, vmm, ctx;
};

static int ring_open(struct ring *r, int tp_id, pid_t pid, int cpu)
{
	struct perf_event_attr attr = {
		.type		= PERF_TYPE_TRACEPOINT,
		.size		= sizeof(attr),
		.config		= tp_id,
		.sample_period	= 1,
		.sample_type	= PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
				  PERF_SAMPLE_GUEST_CTX,
		.exclude_guest	= 0,
	};
	long page = sysconf(_SC_PAGESIZE);
	void *m;

	r->fd = syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	m = mmap(NULL, (RING_PAGES + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	r->meta = m;
	r->data = (unsigned char *)m + page;
	r->size = (uint64_t)RING_PAGES * page;
	return 0;
}

/* Count the samples in the ring, @vmm's and those with a guest context. */
static void ring_drain(struct ring *r, pid_t vmm, struct tally *t)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	unsigned char rec[512];

	while (tail < head) {
		struct perf_event_header h;
		uint64_t i;

		for (i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = r->data[(tail + i) % r->size];
		if (h.size < sizeof(h) || h.size > sizeof(rec) || tail + h.size > head)
			break;
		for (i = 0; i < h.size; i++)
			rec[i] = r->data[(tail + i) % r->size];
		tail += h.size;
		if (h.type != PERF_RECORD_SAMPLE)
			continue;
		/* pid, tid; time; cpu, res; block size, then the block */
		{
			uint32_t pid, flags = 0;
			uint64_t bsize;

			if (h.size < sizeof(h) + 32)
				continue;
			memcpy(&pid, rec + sizeof(h), 4);
			memcpy(&bsize, rec + sizeof(h) + 24, 8);
			if (bsize >= sizeof(struct perf_guest_ctx) &&
			    h.size >= sizeof(h) + 32 + sizeof(struct perf_guest_ctx))
				memcpy(&flags, rec + sizeof(h) + 32 +
				       offsetof(struct perf_guest_ctx, flags), 4);
			t->all++;
			if ((pid_t)pid != vmm)
				continue;
			t->vmm++;
			if (bsize && (flags & PERF_GUEST_CTX_VALID))
				t->ctx++;
		}
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* The sleeper: wakes from an hrtimer every millisecond until killed. */
static void sleeper(int cpu)
{
	struct timespec ms = { 0, 1000000 };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	pin(cpu);
	for (;;)
		nanosleep(&ms, NULL);
}

/*
 * The unprivileged side: as uid 65534, start the sleeper, open the
 * per-task event on it, say "ready" on @ready, and count until @ctl gives
 * the VMM's pid and closes.  Writes "all vmm ctx" on @res.
 */
static int unprivileged(int tp_id, int cpu, int ready, int ctl, int res)
{
	struct tally t = { 0 };
	struct ring r;
	pid_t s, vmm = -1;
	char buf[64];
	int err, n;

	if (setgid(NOBODY) || setuid(NOBODY))
		return 2;
	/* a process whose uid changed is not dumpable: perf's ptrace check */
	prctl(PR_SET_DUMPABLE, 1);
	s = fork();
	if (s < 0)
		return 2;
	if (!s)
		sleeper(cpu);
	err = ring_open(&r, tp_id, s, cpu);
	if (err) {
		fprintf(stderr, "lab-leak: uid %d: per-task event on the sleeper: %s\n",
			NOBODY, strerror(-err));
		kill(s, SIGKILL);
		return 2;
	}
	if (write(ready, "r", 1) != 1)
		return 2;
	for (;;) {
		struct pollfd p = { .fd = ctl, .events = POLLIN };

		ring_drain(&r, vmm, &t);
		if (poll(&p, 1, 20) <= 0)
			continue;
		n = read(ctl, &vmm, sizeof(vmm));
		if (n <= 0)
			break;
	}
	ring_drain(&r, vmm, &t);
	kill(s, SIGKILL);
	n = snprintf(buf, sizeof(buf), "%lu %lu %lu\n", t.all, t.vmm, t.ctx);
	return write(res, buf, n) == n ? 0 : 2;
}

int main(int argc, char **argv)
{
	int ready[2], ctl[2], res[2], c, cpu = 1, tp_id, paranoid, status, fails = 0;
	struct tally root = { 0 }, user = { 0 };
	pid_t child, vmm;
	struct ring r;
	char buf[64];
	ssize_t n;

	while ((c = getopt(argc, argv, "+c:")) != -1) {
		if (c != 'c') {
			fprintf(stderr, "usage: lab-leak [-c CPU] -- VMM [ARGS...]\n");
			return 2;
		}
		cpu = atoi(optarg);
	}
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (optind >= argc) {
		fprintf(stderr, "usage: lab-leak [-c CPU] -- VMM [ARGS...]\n");
		return 2;
	}
	if (read_int(TRACEPOINT_ID, &tp_id) || read_int(PARANOID, &paranoid)) {
		fprintf(stderr, "lab-leak: cannot read %s or %s\n", TRACEPOINT_ID, PARANOID);
		return 2;
	}
	if (write_int(PARANOID, 1) || pipe(ready) || pipe(ctl) || pipe(res))
		return 2;

	child = fork();
	if (child < 0)
		return 2;
	if (!child) {
		close(ready[0]);
		close(ctl[1]);
		close(res[0]);
		_exit(unprivileged(tp_id, cpu, ready[1], ctl[0], res[1]));
	}
	close(ready[1]);
	close(ctl[0]);
	close(res[1]);
	if (read(ready[0], buf, 1) != 1 || ring_open(&r, tp_id, -1, cpu)) {
		fprintf(stderr, "lab-leak: no unprivileged event, or no CPU-wide one\n");
		write_int(PARANOID, paranoid);
		return 2;
	}

	vmm = fork();
	if (!vmm) {
		execvp(argv[optind], argv + optind);
		_exit(127);
	}
	if (vmm < 0 || write(ctl[1], &vmm, sizeof(vmm)) != sizeof(vmm))
		return 2;
	while (waitpid(vmm, &status, WNOHANG) == 0) {
		ring_drain(&r, vmm, &root);
		usleep(20000);
	}
	ring_drain(&r, vmm, &root);
	close(ctl[1]);
	n = read(res[0], buf, sizeof(buf) - 1);
	waitpid(child, NULL, 0);
	write_int(PARANOID, paranoid);
	buf[n > 0 ? n : 0] = '\0';
	if (sscanf(buf, "%lu %lu %lu", &user.all, &user.vmm, &user.ctx) != 3) {
		fprintf(stderr, "lab-leak: the unprivileged side failed\n");
		return 2;
	}

	printf("lab-leak: uid %d, per-task sched_waking on its sleeper: %lu samples, %lu in the VMM's threads, %lu of them with a guest context (want 0)\n",
	       NOBODY, user.all, user.vmm, user.ctx);
	if (!user.vmm)
		printf("lab-leak: none of the wakeups in the VMM's threads reached the sleeper's event: this kernel samples no event of a task that is not running\n");
	printf("lab-leak: root, CPU-wide sched_waking on CPU %d: %lu samples, %lu in the VMM's threads, %lu of them with a guest context (want > 0)\n",
	       cpu, root.all, root.vmm, root.ctx);
	fails += !!user.ctx;
	fails += !root.ctx;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "lab-leak: the VMM failed\n");
		fails++;
	}
	return fails ? 1 : 0;
}
