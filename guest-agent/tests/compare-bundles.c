// SPDX-License-Identifier: GPL-2.0
/*
 * compare-bundles A B: for the lab, two bundles of one guest taken at the
 * same time by the two backends (vmctx-agent --backend=kmod and
 * --backend=bpf), B's window covering A's.  Each process alive at the end
 * of A's window (1 ms after the latest start or exit A records; its last
 * image, after any exec) must be alive in B at that time too, with the
 * same pid, tgid and root, or have started in B within 20 ms of A's stamp
 * (one that started in A's last moment), or have had A's root in B until an
 * exec within 20 ms of A's end (one that B stamped before A's end, A after
 * it), or, where A stamped the image with its window's end (its last read
 * found it), have it in B from then on; and each image of a process that
 * ended in A's window must be in B too, with its root, over the same time
 * (1 ms either side).  Each of those processes and images must also have
 * the same executable mappings in B as in A (start, end, file offset and
 * path), B
 * perhaps more: A's module takes them at exec and exit, B's BPF as they
 * are made.  Prints the counts; exits 1 on any difference, 2 on a bundle
 * that does not read.
 *
 * Both agents also read /proc/PID/maps, and a read made while an exec is
 * under way shows the new image before the exec's event: each agent leaves
 * such a read out (agent_task_take_read()), so no difference is let through.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <vmctx.h>

/* The task of @pid alive at @t in @b (*@at): 1 with @root, -1 another, 0 none. */
static int same_in(const struct vmctx_bundle *b, int pid, uint64_t root, uint64_t t, size_t *at)
{
	size_t i;

	for (i = 0; i < vmctx_bundle_ntasks(b); i++) {
		uint64_t r, s, e;
		int p;

		vmctx_bundle_task(b, i, &r, &p, NULL, NULL, &s, &e);
		if (p == pid && s <= t && (e == VMCTX_TIME_NONE || e > t)) {
			*at = i;
			return r == root ? 1 : -1;
		}
	}
	return 0;
}

/*
 * Two stamps of one fork or exec, the module's hook's and BPF's
 * tracepoint's, are microseconds apart, unless the guest's vCPU stops
 * between them: under the lab's emulator, milliseconds (5 ms once).
 */
#define SKEW_NS		20000000ULL

/*
 * A task of @pid with @root in @b that started in [@s - @before, @s +
 * @after]: 1 and *@at, or 0.
 */
static int started_within(const struct vmctx_bundle *b, int pid, uint64_t root, uint64_t s,
			  uint64_t before, uint64_t after, size_t *at)
{
	size_t i;

	for (i = 0; i < vmctx_bundle_ntasks(b); i++) {
		uint64_t r, s2;
		int p;

		vmctx_bundle_task(b, i, &r, &p, NULL, NULL, &s2, NULL);
		if (p == pid && r == root && s2 + before >= s && (s2 <= s || s2 - s <= after)) {
			*at = i;
			return 1;
		}
	}
	return 0;
}

/*
 * An image that started in A's last moment, which B stamped a little
 * later: B's task of @pid with @root that started within SKEW_NS of @s.
 */
static int started_near(const struct vmctx_bundle *b, int pid, uint64_t root, uint64_t s,
			size_t *at)
{
	return started_within(b, pid, root, s, SKEW_NS, SKEW_NS, at);
}

/* started_near(), and if so, says how far apart the two starts are */
static int said_near(const struct vmctx_bundle *b, int pid, uint64_t root, uint64_t s,
		     const char *name, const char *verb, size_t *at)
{
	uint64_t s2;

	if (!started_near(b, pid, root, s, at))
		return 0;
	vmctx_bundle_task(b, *at, NULL, NULL, NULL, NULL, &s2, NULL);
	printf("pid %d (%s): %s %.3f ms apart, at the end of A's window\n", pid, name, verb,
	       ((double)s2 - (double)s) / 1e6);
	return 1;
}

/*
 * A stamps an image its last read found at its window's end with that
 * end, though the exec came later, between the end and the read: B's
 * task of @pid with @root that started from @t (less 1 ms) on.
 */
static int started_after(const struct vmctx_bundle *b, int pid, uint64_t root, uint64_t t,
			 size_t *at)
{
	return started_within(b, pid, root, t, 1000000, UINT64_MAX, at);
}

/*
 * An image of @pid that overlaps [@s, @e] in @b (1 ms either side): 1 if
 * one has @root (*@at), else -1 if any other does, else 0.
 */
static int overlap_in(const struct vmctx_bundle *b, int pid, uint64_t root, uint64_t s,
		      uint64_t e, size_t *at)
{
	int found = 0;
	size_t i;

	for (i = 0; i < vmctx_bundle_ntasks(b); i++) {
		uint64_t r, s2, e2;
		int p;

		vmctx_bundle_task(b, i, &r, &p, NULL, NULL, &s2, &e2);
		if (p != pid || s2 >= e + 1000000 || (e2 != VMCTX_TIME_NONE && e2 + 1000000 <= s))
			continue;
		if (r == root) {
			*at = i;
			return 1;
		}
		found = -1;
	}
	return found;
}

/* Whether task @tb of @b has the mapping @start-@end at @pgoff of @path. */
static int has_map(const struct vmctx_bundle *b, size_t tb, uint64_t start, uint64_t end,
		   uint64_t pgoff, const char *path)
{
	uint64_t s, e, o;
	const char *p;
	size_t i;

	for (i = 0; !vmctx_bundle_task_map(b, tb, i, &s, &e, &o, &p); i++)
		if (s == start && e == end && o == pgoff && p && path && !strcmp(p, path))
			return 1;
	return 0;
}

/*
 * The file-backed mappings of task @ta of @a (not [vdso], [stack] and the
 * like, which only /proc shows) that task @tb of @b lacks: counted in
 * *@same and *@missing, each missing one printed.
 */
static void compare_maps(const struct vmctx_bundle *a, size_t ta, const struct vmctx_bundle *b,
			 size_t tb, const char *what, size_t *same, size_t *missing)
{
	uint64_t s, e, o;
	const char *p;
	char name[256];
	size_t i;

	for (i = 0; !vmctx_bundle_task_map(a, ta, i, &s, &e, &o, &p); i++) {
		if (!p || p[0] != '/')
			continue;
		if (has_map(b, tb, s, e, o, p)) {
			(*same)++;
			continue;
		}
		(*missing)++;
		vmctx_escape(name, sizeof(name), p);
		printf("%s: mapping %#llx-%#llx at %#llx of %s only in A\n", what,
		       (unsigned long long)s, (unsigned long long)e, (unsigned long long)o, name);
	}
}

/* The latest start or end that @b records: its window ends no earlier. */
static uint64_t last_time(const struct vmctx_bundle *b)
{
	uint64_t t = 0;
	size_t i;

	for (i = 0; i < vmctx_bundle_ntasks(b); i++) {
		uint64_t s, e;

		vmctx_bundle_task(b, i, NULL, NULL, NULL, NULL, &s, &e);
		if (s != VMCTX_TIME_NONE && s > t)
			t = s;
		if (e != VMCTX_TIME_NONE && e > t)
			t = e;
	}
	return t;
}

/* A guest's comm, with anything but printable ASCII as '?' */
static void printable(char *out, size_t len, const char *in)
{
	size_t i;

	for (i = 0; in && in[i] && i + 1 < len; i++)
		out[i] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?';
	out[i] = 0;
}

int main(int argc, char **argv)
{
	struct vmctx_bundle *a = NULL, *b = NULL;
	size_t i, same = 0, differ = 0, missing = 0;
	size_t ended_same = 0, ended_differ = 0, ended_missing = 0;
	size_t maps_same = 0, maps_missing = 0, ended_maps_same = 0, ended_maps_missing = 0;
	uint64_t end, a_end;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: compare-bundles A.vmctx B.vmctx\n");
		return 2;
	}
	err = vmctx_bundle_read_file(argv[1], NULL, &a);
	if (!err)
		err = vmctx_bundle_read_file(argv[2], NULL, &b);
	if (err) {
		fprintf(stderr, "compare-bundles: %s\n", vmctx_strerror(err));
		return 2;
	}
	{
		char wa[128], wb[128];

		vmctx_escape(wa, sizeof(wa), vmctx_bundle_agent(a));
		vmctx_escape(wb, sizeof(wb), vmctx_bundle_agent(b));
		printf("A written by \"%s\", B by \"%s\"\n", wa, wb);
	}
	/*
	 * 1 ms on: the backends stamp one event some microseconds apart (the
	 * module's hook and BPF's tracepoint), and A's last event may be an
	 * exec that B then still places in the old image.
	 */
	end = last_time(a) + 1000000;
	if (vmctx_bundle_window(a, NULL, &a_end))
		a_end = VMCTX_TIME_NONE;
	for (i = 0; i < vmctx_bundle_ntasks(a); i++) {
		const char *comm = NULL;
		char name[64];
		char what[96];
		uint64_t r, s, e;
		size_t at = 0;
		int p, t;

		vmctx_bundle_task(a, i, &r, &p, &t, &comm, &s, &e);
		printable(name, sizeof(name), comm);
		/*
		 * (a task that only its exit showed, after its memory was
		 * gone, has no root: 0 from the module, none from BPF)
		 */
		if (p != t || r == UINT64_MAX || r == 0)
			continue;
		if (e != VMCTX_TIME_NONE) {
			/* an image that ended in the window: in B as well */
			switch (overlap_in(b, p, r, s, e, &at)) {
			case 1:
				ended_same++;
				snprintf(what, sizeof(what), "pid %d (%s, ended)", p, name);
				compare_maps(a, i, b, at, what, &ended_maps_same,
					     &ended_maps_missing);
				break;
			case -1:
				ended_differ++;
				printf("pid %d (%s, ended): root %#llx in %s, another in %s\n", p, name,
				       (unsigned long long)r, argv[1], argv[2]);
				break;
			default:
				ended_missing++;
				printf("pid %d (%s, %llu-%llu ns): in %s, not in %s\n", p, name,
				       (unsigned long long)s, (unsigned long long)e, argv[1], argv[2]);
			}
			continue;
		}
		switch (same_in(b, p, r, end, &at)) {
		case 1:
			same++;
			snprintf(what, sizeof(what), "pid %d (%s)", p, name);
			compare_maps(a, i, b, at, what, &maps_same, &maps_missing);
			break;
		case -1:
			/*
			 * B's next image, from an exec that B stamped before A's
			 * end and A after its window (the two stamps of one exec
			 * lie up to SKEW_NS apart): A's image in B up to then.
			 */
			if ((end > SKEW_NS && same_in(b, p, r, end - SKEW_NS, &at) == 1) ||
			    (s == a_end && started_after(b, p, r, a_end, &at))) {
				printf("pid %d (%s): exec'd in B near the end of A's window\n", p, name);
				same++;
				snprintf(what, sizeof(what), "pid %d (%s)", p, name);
				compare_maps(a, i, b, at, what, &maps_same, &maps_missing);
				break;
			}
			/*
			 * A's last exec, which B stamped more than 1 ms later
			 * (2.5 ms once, in CI beside a second emulator): B
			 * still has the old image at @end, and the new one
			 * from a moment on.
			 */
			if (said_near(b, p, r, s, name, "exec'd", &at)) {
				same++;
				snprintf(what, sizeof(what), "pid %d (%s)", p, name);
				compare_maps(a, i, b, at, what, &maps_same, &maps_missing);
				break;
			}
			differ++;
			printf("pid %d (%s): root %#llx in %s, another in %s\n", p, name,
			       (unsigned long long)r, argv[1], argv[2]);
			break;
		default:
			if (said_near(b, p, r, s, name, "started", &at)) {
				same++;
				snprintf(what, sizeof(what), "pid %d (%s)", p, name);
				compare_maps(a, i, b, at, what, &maps_same, &maps_missing);
				break;
			}
			missing++;
			printf("pid %d (%s, from %llu ns): in %s, not in %s\n", p, name,
			       (unsigned long long)s, argv[1], argv[2]);
		}
	}
	printf("processes alive at the end of A: %zu same root, %zu another root, %zu missing\n",
	       same, differ, missing);
	printf("images that ended in A's window: %zu same root, %zu another root, %zu missing\n",
	       ended_same, ended_differ, ended_missing);
	printf("their file mappings in A: %zu in B too, %zu missing; of the images that ended, %zu in B too, %zu missing\n",
	       maps_same + ended_maps_same, maps_missing + ended_maps_missing, ended_maps_same,
	       ended_maps_missing);
	vmctx_bundle_free(a);
	vmctx_bundle_free(b);
	return differ || missing || ended_differ || ended_missing || maps_missing ||
	       ended_maps_missing;
}
