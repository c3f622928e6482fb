// SPDX-License-Identifier: GPL-2.0
/*
 * lab-linux-check: check host samples of a real Linux L2 guest against the
 * bundle its vmctx-agent wrote.
 *
 *   lab-linux-check -s SAMPLES -b BUNDLE -p QEMU_PID -y SYMS [-t TABLE_ROWS]
 *                   [-w PID:ROUNDS,PID:ROUNDS (the work each hot instance did)]
 *
 * SAMPLES is lab-record's text ("S cpu pid tid time ip cpumode cr3 asid
 * exit vcpu flags" lines).  SYMS is "nm -S" of the hot test program, linked
 * at an address no other guest program uses, so an IP in its text is known
 * to be hot's code without asking the bundle.  Checks, with figures:
 *  - >= 99% of guest-user samples carry a CR3 that is a root in the bundle;
 *  - >= 95% of guest-user samples in hot's code resolve, through the bundle,
 *    to a hot/blip process and to the function the IP is really in;
 *  - hot's function mix is 60/30/10 within 5 points;
 *  - the two "hot" instances split 50/50 within 5 points;
 *  - "blip", which exited during the window, has samples and an exit time.
 * Then it prints the guest-level table of the unified report.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "samples.h"
#include "vmctx.h"

#define MAX_ROOTS	64

struct fn {
	char name[64];
	uint64_t start, end;
	uint64_t truth, right;
};

static struct fn fns[8];
static int nfns;
static uint64_t text_lo = UINT64_MAX, text_hi;

static int failures;

#define CHECK(cond, ...)						\
	do {								\
		printf("lab-linux-check: %s: ", (cond) ? "ok" : "FAIL");	\
		printf(__VA_ARGS__);					\
		putchar('\n');						\
		failures += !(cond);					\
	} while (0)

/* What the command line asks for. */
struct opts {
	const char *samples, *bundle, *syms;
	int qemu, rows;
	int work_pid[2];	/* -w: the work each hot instance reported */
	unsigned long work[2];
};

/* The guest as the checks see it: its bundle, its VM, its clock. */
struct guest {
	struct vmctx_bundle *b;
	int qemu;		/* the VM's host pid */
	int64_t offset;		/* guest - host clock, or VMCTX_OFFSET_UNKNOWN */
	struct vmctx_clock *clock;	/* offset and rate; NULL if none fitted */
	uint64_t window;	/* the agent's start, guest ns */
};

/* A page-table root that guest-user samples carried. */
struct root_seen {
	uint64_t root, count, hot, first, last;
};

/* What the guest-user samples in the agent's window showed. */
struct tally {
	uint64_t user, early, with_pcid, with_pti_bit;
	uint64_t root_ok, in_hot, right, blip;
	uint64_t inst[2];	/* samples of the two hot instances */
	int inst_task[2], blip_task;
	struct root_seen roots[MAX_ROOTS];
	int nroots;
};

static int guest_user(const struct lab_sample *s, int qemu)
{
	return (int)s->pid == qemu && (s->flags & PERF_GUEST_CTX_GUEST_MODE) &&
	       lab_sample_cpl(s) == 3;
}

static void read_syms(const char *path)
{
	char line[256], type, name[64];
	uint64_t start, size;
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		exit(2);
	}
	while (fgets(line, sizeof(line), f) && nfns < 8) {
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %c %63s", &start, &size, &type, name) != 4)
			continue;
		if (strncmp(name, "hot_", 4))
			continue;
		snprintf(fns[nfns].name, sizeof(fns[nfns].name), "%s", name);
		fns[nfns].start = start;
		fns[nfns].end = start + size;
		if (start < text_lo)
			text_lo = start;
		if (start + size > text_hi)
			text_hi = start + size;
		nfns++;
	}
	fclose(f);
	if (nfns != 3) {
		fprintf(stderr, "lab-linux-check: %s: want hot_alpha/beta/gamma, found %d\n", path,
			nfns);
		exit(2);
	}
}

static struct fn *fn_at(uint64_t ip)
{
	int i;

	for (i = 0; i < nfns; i++)
		if (ip >= fns[i].start && ip < fns[i].end)
			return &fns[i];
	return NULL;
}

/* -p 0: the VM is the process with the most samples carrying a vCPU. */
static int busiest_vm(const char *path)
{
	static unsigned int count[1 << 16];
	unsigned int best = 0;
	struct lab_sample s;
	enum lab_record rec;
	FILE *f = fopen(path, "r");
	uint64_t lost;

	if (!f)
		return -1;
	while ((rec = lab_samples_next(f, &s, &lost)) != LAB_RECORD_END) {
		if (rec != LAB_RECORD_SAMPLE || !(s.flags & PERF_GUEST_CTX_VALID) ||
		    s.pid >= (1u << 16))
			continue;
		if (++count[s.pid] > count[best])
			best = s.pid;
	}
	fclose(f);
	printf("lab-linux-check: the VM is host pid %u (%u samples with a vCPU)\n", best,
	       count[best]);
	return best;
}

/* A guest's comm, printable (the guest wrote it). */
static const char *escaped(const char *s, char *buf, size_t size)
{
	return vmctx_escape(buf, size, s) < 0 ? "?" : buf;
}

/* The end of a task's lifetime, in s; a task still alive at the end is "living". */
static const char *until(uint64_t exit_ns, char *buf, size_t size)
{
	if (exit_ns == VMCTX_TIME_NONE)
		return "living";
	snprintf(buf, size, "%.3f", exit_ns / 1e9);
	return buf;
}

/*
 * Feed the guest-user samples to @fit, and note for each task the first and
 * last sample that found it by root alone, and how many did.
 */
static void fit_samples(FILE *f, int qemu, const struct vmctx_bundle *b,
			struct vmctx_clock_fit *fit, uint64_t *first, uint64_t *last,
			uint64_t *cnt)
{
	struct lab_sample s;
	enum lab_record rec;
	uint64_t lost;
	int t;

	while ((rec = lab_samples_next(f, &s, &lost)) != LAB_RECORD_END) {
		/*
		 * User mode only: guest kernel threads and idle run on the
		 * last process's page tables (lazy TLB), so a kernel-mode CR3
		 * can be a dead process's root.
		 */
		if (rec != LAB_RECORD_SAMPLE || !guest_user(&s, qemu))
			continue;
		t = vmctx_bundle_find_task(b, s.cr3, VMCTX_TIME_NONE);
		vmctx_clock_fit_add(fit, s.time, s.cr3);
		if (t < 0)
			continue;
		if (!cnt[t]++)
			first[t] = s.time;
		last[t] = s.time;
	}
}

/* the task table and the roots the samples carry, for the record */
static void print_tasks(const struct vmctx_bundle *b)
{
	size_t n = vmctx_bundle_ntasks(b), i;
	char name[64], end[32];

	for (i = 0; i < n; i++) {
		const char *comm;
		uint64_t root, start, exit_ns;
		int tpid, tgid;

		vmctx_bundle_task(b, i, &root, &tpid, &tgid, &comm, &start, &exit_ns);
		if (root)
			printf("lab-linux-check: bundle task %d/%d %-12s root 0x%" PRIx64
			       " [%.3f, %s)\n", tpid, tgid, escaped(comm, name, sizeof(name)),
			       root, start / 1e9, until(exit_ns, end, sizeof(end)));
	}
}

/* what each unambiguous process says, for the record */
static void print_task_spans(const struct vmctx_bundle *b, const uint64_t *first,
			     const uint64_t *last, const uint64_t *cnt)
{
	size_t n = vmctx_bundle_ntasks(b), i;
	char name[64], end[32];

	for (i = 0; i < n; i++) {
		const char *comm;
		uint64_t start, exit_ns;
		int tpid;

		if (cnt[i] < 5)
			continue;
		vmctx_bundle_task(b, i, NULL, &tpid, NULL, &comm, &start, &exit_ns);
		printf("lab-linux-check: task %d %-12s guest [%.3f, %s) s, host samples [%.3f, %.3f] "
		       "s (%" PRIu64 ")\n", tpid, escaped(comm, name, sizeof(name)), start / 1e9,
		       until(exit_ns, end, sizeof(end)), first[i] / 1e9, last[i] / 1e9, cnt[i]);
	}
}

static double pct(uint64_t a, uint64_t b);

/*
 * Pass 1: how the host's clock relates to the guest's, from the guest
 * samples: an offset and a rate (vmctx_clock_fit_solve()).  Under a slow
 * or loaded emulator the nested guest's clock drifts against L1's, and one
 * offset no longer fits a whole window.  When fewer than half of the
 * samples agree even so, the run cannot be judged: say so, with the
 * figures, and exit 3 (l1-init.sh hands that on as RESULT SLOW).
 */
static void fit_clock(const char *path, struct guest *g)
{
	struct vmctx_clock_fit *fit = vmctx_clock_fit_new(g->b);
	uint64_t agree = 0, used = 0, agree1 = 0, host_ref = 0;
	uint64_t *first, *last, *cnt;
	FILE *f = fopen(path, "r");
	int64_t rate = 0;
	size_t n;

	g->offset = VMCTX_OFFSET_UNKNOWN;
	g->clock = vmctx_clock_new();
	if (!f || !fit || !g->clock) {
		perror(path);
		exit(2);
	}
	n = vmctx_bundle_ntasks(g->b);
	first = calloc(n + 1, 8);
	last = calloc(n + 1, 8);
	cnt = calloc(n + 1, 8);
	fit_samples(f, g->qemu, g->b, fit, first, last, cnt);
	print_tasks(g->b);
	print_task_spans(g->b, first, last, cnt);
	free(first);
	free(last);
	free(cnt);
	fclose(f);
	if (vmctx_clock_fit_offset(fit, &g->offset, &agree1, &used) ||
	    vmctx_clock_fit_solve(fit, g->clock, &agree, &used) ||
	    vmctx_clock_linear(g->clock, &host_ref, &g->offset, &rate)) {
		printf("lab-linux-check: no clock could be fitted; roots must be unique\n");
		vmctx_clock_free(g->clock);
		g->clock = NULL;
		g->offset = VMCTX_OFFSET_UNKNOWN;
	} else {
		printf("lab-linux-check: clock guest - host = %.6f s at host %.3f s, rate %+.1f ppm: "
		       "agreed by %" PRIu64 " of %" PRIu64 " samples with known roots (%.2f%%; "
		       "%" PRIu64 " with the offset alone)\n", g->offset / 1e9, host_ref / 1e9,
		       rate / 1e3, agree, used, pct(agree, used), agree1);
	}
	vmctx_clock_fit_free(fit);
	if (g->clock && agree * 2 < used) {
		printf("lab-linux-check: SLOW the clock fit agreed with only %" PRIu64 " of %" PRIu64
		       " samples (%.2f%%, want 50%%): the guest's clock drifted too far from the "
		       "host's for the checks to judge this run\n", agree, used, pct(agree, used));
		exit(3);
	}
}

/* The guest time of a host time, or VMCTX_TIME_NONE without a clock. */
static uint64_t guest_time(const struct guest *g, uint64_t host_ns)
{
	uint64_t t;

	if (!g->clock || vmctx_clock_guest_ns(g->clock, host_ns, &t))
		return VMCTX_TIME_NONE;
	return t;
}

static void print_view(struct vmctx_session *s, const char *title, enum vmctx_view view,
		       int vm_tgid, int rows)
{
	VMCTX_OPTS(vmctx_format_opts, o, .max_rows = rows);
	struct vmctx_table *t = vmctx_table_new(s, view, vm_tgid, -1);
	char *text;

	if (t && !vmctx_table_format(t, &o, &text)) {
		printf("---- %s\n%s", title, text);
		free(text);
	}
	vmctx_table_free(t);
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * a / b : 0.0;
}

static void on_log(enum vmctx_log_level level, const char *msg, void *ctx)
{
	fprintf(stderr, "libvmctx: %s\n", msg);
}

static int usage(void)
{
	fprintf(stderr, "usage: lab-linux-check -s SAMPLES -b BUNDLE -p QEMU_PID -y SYMS [-t ROWS] [-w PID:ROUNDS,PID:ROUNDS]\n");
	return 2;
}

/* 0, or the exit status of a bad command line. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;

	while ((c = getopt(argc, argv, "s:b:p:y:t:w:")) != -1) {
		switch (c) {
		case 's': o->samples = optarg; break;
		case 'b': o->bundle = optarg; break;
		case 'p': o->qemu = atoi(optarg); break;
		case 'y': o->syms = optarg; break;
		case 't': o->rows = atoi(optarg); break;
		case 'w':
			if (sscanf(optarg, "%d:%lu,%d:%lu", &o->work_pid[0], &o->work[0],
				   &o->work_pid[1], &o->work[1]) != 4)
				return usage();
			break;
		default: return usage();
		}
	}
	if (!o->samples || !o->bundle || !o->syms || o->qemu < 0)
		return usage();
	return 0;
}

static struct vmctx_bundle *open_bundle(const char *path)
{
	struct vmctx_bundle *b = NULL;
	int err = vmctx_bundle_read_file(path, NULL, &b);

	if (err) {
		fprintf(stderr, "lab-linux-check: %s: %s\n", path, vmctx_strerror(err));
		exit(2);
	}
	printf("lab-linux-check: bundle %s: host %s, kernel %s, %zu tasks, %zu objects\n", path,
	       vmctx_bundle_hostname(b), vmctx_bundle_release(b), vmctx_bundle_ntasks(b),
	       vmctx_bundle_nobjects(b));
	return b;
}

/* The agent's window starts with the agent: processes before it are not in its bundle. */
static uint64_t agent_window(const struct vmctx_bundle *b)
{
	uint64_t window = 0;
	size_t i;

	for (i = 0; i < vmctx_bundle_ntasks(b); i++) {
		const char *comm;
		uint64_t start;

		vmctx_bundle_task(b, i, NULL, NULL, NULL, &comm, &start, NULL);
		if (!strcmp(comm, "vmctx-agent"))
			window = start;
	}
	return window;
}

/* Hand one sample to the session; 0 if it took it or it has no time. */
static int feed_session(struct vmctx_session *vs, int qemu, const struct lab_sample *s)
{
	struct vmctx_sample smp = { .sz = sizeof(smp) };

	smp.time = s->time;
	smp.cpu = s->cpu;
	smp.pid = s->pid;
	smp.tid = s->tid;
	smp.vm_tgid = -1;
	smp.vcpu = -1;
	smp.ip = s->ip;
	if ((s->flags & PERF_GUEST_CTX_VALID) && (int)s->pid == qemu) {
		smp.vm_tgid = s->pid;
		smp.vcpu = s->vcpu_id;
		smp.isa = s->flags & PERF_GUEST_CTX_ISA_VMX ? VMCTX_ISA_VMX : VMCTX_ISA_SVM;
		smp.exit_reason = s->exit_reason;
		smp.cr3 = s->cr3;
		smp.cpl = lab_sample_cpl(s);
		if (s->flags & PERF_GUEST_CTX_GUEST_MODE)
			smp.flags = VMCTX_SAMPLE_GUEST;
		else if (s->flags & PERF_GUEST_CTX_HOST_FOR_VCPU)
			smp.flags = VMCTX_SAMPLE_HOST_VCPU;
	} else if (!s->pid) {
		smp.flags = VMCTX_SAMPLE_IDLE;
	}
	/* no host symbols here: name host work by mode (perf's cpumode) */
	if (!(smp.flags & (VMCTX_SAMPLE_GUEST | VMCTX_SAMPLE_IDLE))) {
		bool user = s->misc == PERF_RECORD_MISC_USER;

		smp.flags |= user ? VMCTX_SAMPLE_USER : 0;
		smp.host_sym = user ? "[host user]" : "[host kernel]";
		smp.host_dso = (int)s->pid == qemu ? "qemu" : user ? "[host]" : "vmlinux";
	}
	return smp.time ? vmctx_session_sample(vs, &smp) : 0;
}

/* The roots the guest-user samples carried, normalised, with their spans. */
static void count_root(struct tally *t, const struct lab_sample *s)
{
	uint64_t r = vmctx_cr3_normalize(s->cr3, 0);
	int k;

	for (k = 0; k < t->nroots && t->roots[k].root != r; k++)
		;
	if (k == t->nroots && t->nroots < MAX_ROOTS) {
		t->roots[k].root = r;
		t->roots[k].first = s->time;
		t->nroots++;
	}
	if (k >= MAX_ROOTS)
		return;
	t->roots[k].count++;
	t->roots[k].last = s->time;
	if (fn_at(s->ip))
		t->roots[k].hot++;
}

static int root_in_bundle(const struct vmctx_bundle *b, uint64_t cr3)
{
	size_t k;

	for (k = 0; k < vmctx_bundle_ntasks(b); k++) {
		uint64_t root;

		vmctx_bundle_task(b, k, &root, NULL, NULL, NULL, NULL, NULL);
		if (vmctx_cr3_normalize(root, 0) == vmctx_cr3_normalize(cr3, 0))
			return 1;
	}
	return 0;
}

/* A sample in hot's code that resolved rightly: blip, or one of the two hots. */
static void count_right(struct tally *t, struct fn *truth, const char *comm, int task)
{
	int k;

	t->right++;
	if (!strcmp(comm, "blip")) {
		t->blip++;
		t->blip_task = task;
		return;
	}
	truth->right++;
	for (k = 0; k < 2; k++) {
		if (t->inst_task[k] < 0)
			t->inst_task[k] = task;
		if (t->inst_task[k] == task) {
			t->inst[k]++;
			return;
		}
	}
}

/* Resolve a guest-user sample through the bundle; hot's code is the truth. */
static void count_resolution(const struct guest *g, struct tally *t, const struct lab_sample *s)
{
	int task = vmctx_bundle_find_task(g->b, s->cr3, guest_time(g, s->time));
	const char *sym = NULL, *dso = NULL, *comm = NULL;
	struct fn *truth = fn_at(s->ip);

	if (root_in_bundle(g->b, s->cr3))
		t->root_ok++;
	if (!truth)
		return;
	t->in_hot++;
	truth->truth++;
	if (task < 0)
		return;
	vmctx_bundle_task(g->b, task, NULL, NULL, NULL, &comm, NULL, NULL);
	vmctx_bundle_resolve_user(g->b, task, s->ip, &sym, &dso);
	if (!comm || (strcmp(comm, "hot") && strcmp(comm, "blip")) || !sym ||
	    strcmp(sym, truth->name))
		return;
	count_right(t, truth, comm, task);
}

static void count_user_sample(const struct guest *g, struct tally *t, const struct lab_sample *s)
{
	/* the agent's window: processes before it are not in its bundle */
	uint64_t gt = guest_time(g, s->time);

	if (gt != VMCTX_TIME_NONE && gt < g->window) {
		t->early++;
		return;
	}
	t->user++;
	/* what normalisation has to drop: the PCID, PTI's user-half bit */
	if (s->cr3 & 0xfff)
		t->with_pcid++;
	if (s->cr3 & 0x1000)
		t->with_pti_bit++;
	count_root(t, s);
	count_resolution(g, t, s);
}

/* Pass 2: every sample into the session, the guest-user ones counted. */
static void read_samples(const char *path, const struct guest *g, struct vmctx_session *vs,
			 struct tally *t)
{
	struct lab_sample s;
	enum lab_record rec;
	FILE *f = fopen(path, "r");
	uint64_t lost;

	if (!f) {
		perror(path);
		exit(2);
	}
	while ((rec = lab_samples_next(f, &s, &lost)) != LAB_RECORD_END) {
		if (rec == LAB_RECORD_LOST) {
			vmctx_session_lost(vs, 0, 0, lost);
			continue;
		}
		if (feed_session(vs, g->qemu, &s))
			continue;
		if (guest_user(&s, g->qemu))
			count_user_sample(g, t, &s);
	}
	fclose(f);
}

static void print_figures(const struct guest *g, const struct tally *t)
{
	int k;

	printf("lab-linux-check: %" PRIu64 " guest-user samples in the agent's window (from "
	       "guest %.3f s; %" PRIu64 " before it left out), %" PRIu64 " in hot's code\n",
	       t->user, g->window / 1e9, t->early, t->in_hot);
	for (k = 0; k < t->nroots; k++)
		printf("lab-linux-check: root 0x%" PRIx64 ": %" PRIu64 " user samples (%" PRIu64
		       " in hot's code), host [%.3f, %.3f] s\n", t->roots[k].root,
		       t->roots[k].count, t->roots[k].hot, t->roots[k].first / 1e9,
		       t->roots[k].last / 1e9);
	printf("lab-linux-check: raw CR3 of the guest-user samples: %" PRIu64 " carry a PCID "
	       "(bits 11:0), %" PRIu64 " PTI's user-half bit (12)\n", t->with_pcid,
	       t->with_pti_bit);
}

static void check_resolution(const struct tally *t)
{
	CHECK(t->user > 200 && pct(t->root_ok, t->user) >= 99.0,
	      "CR3 is a bundle root for %" PRIu64 "/%" PRIu64 " guest-user samples (%.2f%%)",
	      t->root_ok, t->user, pct(t->root_ok, t->user));
	CHECK(t->in_hot > 200 && pct(t->right, t->in_hot) >= 95.0,
	      "%" PRIu64 "/%" PRIu64 " samples in hot's code resolve to hot/blip and the right "
	      "function (%.2f%%)", t->right, t->in_hot, pct(t->right, t->in_hot));
}

/* hot's function mix, as hot.c builds it */
static void check_mix(void)
{
	static const double want[] = { 60.0, 30.0, 10.0 };
	static const char *const name[] = { "hot_alpha", "hot_beta", "hot_gamma" };
	uint64_t sum = fns[0].right + fns[1].right + fns[2].right;
	int k, j;

	for (k = 0; k < 3; k++)
		for (j = 0; j < nfns; j++)
			if (!strcmp(fns[j].name, name[k])) {
				double got = pct(fns[j].right, sum);

				CHECK(got > want[k] - 5 && got < want[k] + 5,
				      "%s share %.2f%% (want %.0f%% +- 5)", name[k], got, want[k]);
			}
}

/*
 * The two instances are separate processes, and each gets the share
 * of the samples that its share of the work says: about half, but the
 * guest's scheduler decides, so the work each reported is the truth.
 */
static void check_split(const struct guest *g, const struct opts *o, const struct tally *t)
{
	double share = pct(t->inst[0], t->inst[0] + t->inst[1]), want = -1;
	unsigned long work = o->work[0] + o->work[1];
	int pid0 = -1, k;

	if (t->inst_task[0] >= 0)
		vmctx_bundle_task(g->b, t->inst_task[0], NULL, &pid0, NULL, NULL, NULL, NULL);
	for (k = 0; k < 2; k++)
		if (o->work_pid[k] == pid0 && work)
			want = 100.0 * o->work[k] / work;
	CHECK(t->inst[0] && t->inst[1] && want >= 0 && share > want - 3 && share < want + 3,
	      "two hot instances split %" PRIu64 ":%" PRIu64 " (%.2f%% : %.2f%%), their work "
	      "%.2f%% : %.2f%% (+- 3)", t->inst[0], t->inst[1], share, 100 - share, want,
	      want >= 0 ? 100 - want : -1);
	CHECK(share > 40 && share < 60, "the split is about 50/50 (%.2f%%, 50 +- 10)", share);
}

static void check_blip(const struct guest *g, const struct tally *t)
{
	uint64_t exit_ns = VMCTX_TIME_NONE;

	if (t->blip_task >= 0)
		vmctx_bundle_task(g->b, t->blip_task, NULL, NULL, NULL, NULL, NULL, &exit_ns);
	CHECK(t->blip > 0 && exit_ns != VMCTX_TIME_NONE,
	      "blip, exited during the window, has %" PRIu64 " samples and an exit time", t->blip);
}

static void print_views(struct vmctx_session *vs, int qemu, int rows)
{
	print_view(vs, "guest level: guest1 (VM1)", VMCTX_VIEW_GUEST, qemu, rows);
	print_view(vs, "host level", VMCTX_VIEW_HOST, -1, rows);
	print_view(vs, "per vCPU: guest1 (VM1)", VMCTX_VIEW_VCPUS, qemu, rows);
	print_view(vs, "unified", VMCTX_VIEW_UNIFIED, -1, rows);
}

int main(int argc, char **argv)
{
	struct opts o = { .qemu = -1, .rows = 15, .work_pid = { -1, -1 } };
	struct tally t = { .inst_task = { -1, -1 }, .blip_task = -1 };
	struct vmctx_session_opts so = { .sz = sizeof(so) };
	struct vmctx_session *vs;
	struct guest g;
	int err = parse_opts(argc, argv, &o);

	if (err)
		return err;
	g.qemu = o.qemu ? o.qemu : busiest_vm(o.samples);
	read_syms(o.syms);
	vmctx_set_log(on_log, NULL);
	g.b = open_bundle(o.bundle);
	/*
	 * L1's perf clock and L2's CLOCK_MONOTONIC are not related by anything
	 * recorded here: fit the offset from the samples (pass 1).
	 */
	fit_clock(o.samples, &g);
	g.window = agent_window(g.b);
	vs = vmctx_session_new(&so);
	vmctx_session_add_vm(vs, g.qemu, "guest1");
	vmctx_session_attach_bundle(vs, g.qemu, g.b, g.offset);
	if (g.clock)
		vmctx_session_set_clock(vs, g.qemu, g.clock);
	read_samples(o.samples, &g, vs, &t);
	vmctx_session_finish(vs, 0);

	print_figures(&g, &t);
	check_resolution(&t);
	check_mix();
	check_split(&g, &o, &t);
	check_blip(&g, &t);
	print_views(vs, g.qemu, o.rows);
	vmctx_session_free(vs);
	vmctx_clock_free(g.clock);
	vmctx_bundle_free(g.b);
	printf("lab-linux-check: RESULT %s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
