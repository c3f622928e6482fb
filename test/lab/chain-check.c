// SPDX-License-Identifier: GPL-2.0
/*
 * lab-chain-check: check the guest call chains of a lab-record -g recording
 * against the call graph the lab's guest was built with (vmm/guest.S).
 *
 * usage: lab-chain-check -t truth.txt -s samples.txt [-B] [-m min_chains]
 *        lab-chain-check -t truth.txt -p script.txt [-m min_chains]
 *        lab-chain-check -t truth.txt -f stacks.folded [-m min_chains]
 *   -B  the walk had no time (kvm.perf_callchain_budget_us=0): every chain
 *       must hold the sampled IP alone, ended by the budget (or at once,
 *       with a frame pointer of 0)
 *
 * Each guest-mode sample of a vCPU thread is paired with the next
 * kvm_guest_callchain record of its thread: KVM walks the stack in that
 * thread before the guest runs again.  Each chain is resolved with the
 * truth's function ranges (the sampled IP, then return address - 1) and
 * sorted into:
 *   exact   walked to the outermost frame (end "last"), every frame the
 *           caller of the one before in the guest's call graph, ending
 *           at a function with no caller
 *   marked  ended by a bound or a bad frame, every frame so far right
 *   wrong   anything else: a frame not called by the one before (a caller
 *           skipped, as a plain frame-pointer walk does at a function's
 *           first instructions and at its ret), an address in no
 *           function, a CPL or IP other than the sample's
 * Checks: no wrong chain; exact >= 99% of the chains of functions that
 * build no hostile stack; every sample paired (but those of each vCPU
 * thread's last exit, whose walk may never come); with a hostile stack (truth
 * "hostile KIND"), at least 20 chains of b_hostile/b_deep end with the
 * kind's reason (loop: order, kernel: kernel, unmapped: fault, deep:
 * depth with 127 frames).  Prints the time each walk held its vCPU.
 * Several samples at one exit (one IP) share its chain.
 *
 * -p: the same guest, recorded by perf record --vmcs-ctx -g and printed by
 * perf script --guest-maps -F comm,tid,ip,sym,dso (one sample per block of
 * frame lines): each sample whose leaf frame is a guest function must go
 * on through the guest's call graph to a function with no caller (a ring-0
 * leaf alone: perf keeps a guest kernel's leaf only), and then into the
 * host, KVM_RUN's kvm_arch_vcpu_ioctl_run or vcpu_enter_guest (where not
 * inlined) among the frames; >= 99% so, and none with
 * a guest frame that does not call the one before.
 * -f: the same for perf report --guest-export=folded's stacks (root first,
 * "frame;frame;... ticks", a frame "function" or "function (object)"),
 * counted in ticks.
 * Exits 1 on a miss, 2 on bad input.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "samples.h"

#define CHECKER		"lab-chain-check"
#define VERDICT_PREFIX	"lab-chain-check: "
#include "exp-verdict.h"

#define MAX_RANGES	64
#define MAX_VCPUS	8

/* arch/x86/kvm/trace.h, KVM_GUEST_CHAIN_END_* */
static const char *const end_names[] = {
	"last", "depth", "fault", "order", "range", "align", "kernel", "budget",
	"changed", "mode", "nomem",
};
#define END_LAST	0
#define END_DEPTH	1
#define END_FAULT	2
#define END_ORDER	3
#define END_KERNEL	6
#define END_BUDGET	7
#define NR_ENDS		(sizeof(end_names) / sizeof(end_names[0]))

/*
 * The guest's call graph (vmm/guest.S): each function and the functions
 * that call it; no entry means no caller (the walk ends there).
 */
static const struct {
	const char *callee, *callers[2];
} graph[] = {
	{ "kwork_a",	{ "kernel_entry" } },
	{ "kwork_b",	{ "kernel_entry" } },
	{ "a_run",	{ "a_main" } },
	{ "a_compute",	{ "a_run" } },
	{ "a_hash",	{ "a_run" } },
	{ "b_scan",	{ "b_main" } },
	{ "b_sort",	{ "b_main" } },
	{ "b_hostile",	{ "b_main" } },
	{ "b_deep",	{ "b_hostile", "b_deep" } },
};

struct range {
	uint64_t start, end;
	char name[64];
	int ring;
	unsigned long chains, exact;
};

static struct range ranges[MAX_RANGES];
static int nr_ranges, vcpu_tid[MAX_VCPUS], nr_vcpus;
static char hostile[16];

struct event {
	uint64_t time;
	int is_chain;
	union {
		struct lab_sample s;
		struct lab_chain *c;
	};
};

static struct event *events;
static size_t nr_events, cap_events;

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

static struct event *new_event(void)
{
	if (nr_events == cap_events) {
		cap_events = cap_events ? 2 * cap_events : 4096;
		events = xrealloc(events, cap_events * sizeof(*events));
	}
	return &events[nr_events++];
}

static void read_truth(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long s, e;
	char line[256], name[64];
	int id, tid, ring;
	char root;

	if (!f)
		die("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "range %llx %llx %63s ring %d root %c", &s, &e, name, &ring,
			   &root) == 5 && nr_ranges < MAX_RANGES) {
			struct range *r = &ranges[nr_ranges++];

			r->start = s;
			r->end = e;
			r->ring = ring;
			snprintf(r->name, sizeof(r->name), "%s", name);
		} else if (sscanf(line, "vcpu %d tid %d", &id, &tid) == 2 && id >= 0 &&
			   id < MAX_VCPUS) {
			vcpu_tid[id] = tid;
			if (id + 1 > nr_vcpus)
				nr_vcpus = id + 1;
		} else if (sscanf(line, "hostile %15s", hostile) == 1) {
			;
		}
	}
	fclose(f);
	if (!nr_ranges || !nr_vcpus)
		die("%s: incomplete ground truth", path);
}

static int vcpu_of_tid(unsigned int tid)
{
	for (int i = 0; i < nr_vcpus; i++)
		if ((unsigned int)vcpu_tid[i] == tid)
			return i;
	return -1;
}

static struct range *find_range(uint64_t ip)
{
	for (int i = 0; i < nr_ranges; i++)
		if (ip >= ranges[i].start && ip < ranges[i].end)
			return &ranges[i];
	return NULL;
}

static int calls(const char *caller, const char *callee)
{
	for (size_t i = 0; i < sizeof(graph) / sizeof(graph[0]); i++) {
		if (strcmp(graph[i].callee, callee))
			continue;
		for (int j = 0; j < 2; j++)
			if (graph[i].callers[j] && !strcmp(graph[i].callers[j], caller))
				return 1;
	}
	return 0;
}

static int has_caller(const char *callee)
{
	for (size_t i = 0; i < sizeof(graph) / sizeof(graph[0]); i++)
		if (!strcmp(graph[i].callee, callee))
			return 1;
	return 0;
}

enum verdict { EXACT, MARKED, WRONG, NR_VERDICTS };
static const char *const verdict_names[] = { "exact", "marked", "wrong" };

static enum verdict judge(const struct lab_sample *s, const struct lab_chain *c,
			  const char **why)
{
	const struct range *fn[LAB_CHAIN_MAX];

	if (!c->nr || c->ips[0] != s->ip) {
		*why = "the chain's IP is not the sample's";
		return WRONG;
	}
	if (c->cpl != (unsigned int)lab_sample_cpl(s)) {
		*why = "the chain's CPL is not the sample's";
		return WRONG;
	}
	for (unsigned int i = 0; i < c->nr; i++) {
		fn[i] = find_range(i ? c->ips[i] - 1 : c->ips[i]);
		if (!fn[i]) {
			*why = "a frame in no function";
			return WRONG;
		}
	}
	for (unsigned int i = 1; i < c->nr; i++) {
		if (!calls(fn[i]->name, fn[i - 1]->name)) {
			*why = "a frame that does not call the one before";
			return WRONG;
		}
	}
	if (c->end == END_LAST && has_caller(fn[c->nr - 1]->name)) {
		*why = "a chain that ends before the outermost function";
		return WRONG;
	}
	return c->end == END_LAST ? EXACT : MARKED;
}

static int by_time(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* a chain comes after the samples of its time */
	return x->is_chain - y->is_chain;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(unsigned long a, unsigned long b)
{
	return b ? 100.0 * a / b : 0.0;
}

static int is_hostile_fn(const char *name)
{
	return !strcmp(name, "b_hostile") || !strcmp(name, "b_deep");
}

/*
 * perf script's frame line: "\t    ip sym (dso)" (sym "[unknown]" when
 * unresolved; a sample's header starts with a space, not a tab); the
 * symbol into @sym, the DSO into @dso.
 */
static int script_frame(const char *line, char *sym, size_t sym_size, char *dso, size_t dso_size)
{
	const char *p = line, *open, *close;
	size_t n;

	if (*p != '\t')
		return 0;
	while (*p == ' ' || *p == '\t')
		p++;
	while (*p && *p != ' ')		/* the address */
		p++;
	while (*p == ' ')
		p++;
	open = strrchr(p, '(');
	close = open ? strrchr(open, ')') : NULL;
	if (!open || !close || open == p)
		return 0;
	n = (size_t)(open - p);
	while (n && p[n - 1] == ' ')
		n--;
	snprintf(sym, sym_size, "%.*s", (int)n, p);
	snprintf(dso, dso_size, "%.*s", (int)(close - open - 1), open + 1);
	/* "sym+0x1c": the symbol alone */
	if (strchr(sym, '+'))
		*strchr(sym, '+') = '\0';
	return 1;
}

/* The guest function called @name, NULL for a host frame. */
static const struct range *guest_fn(const char *name)
{
	for (int i = 0; i < nr_ranges; i++)
		if (!strcmp(ranges[i].name, name))
			return &ranges[i];
	return NULL;
}

#define SCRIPT_MAX_FRAMES	512

static int script_checks(const char *what, unsigned long guest, unsigned long exact,
			 unsigned long wrong, unsigned long with_host, unsigned long min_chains);

/*
 * One sample's frames, leaf first, standing for @w samples: judge its guest
 * part and whether the host's follows.
 */
static void script_sample(char (*syms)[128], int n, unsigned long w, unsigned long *guest,
			  unsigned long *exact, unsigned long *wrong, unsigned long *with_host,
			  unsigned long *printed)
{
	int g = 0, kvm = 0, ok = 1;

	if (!n || !guest_fn(syms[0]))
		return;
	*guest += w;
	while (g < n && guest_fn(syms[g]))
		g++;
	for (int i = 1; i < g; i++)
		if (!calls(syms[i], syms[i - 1]))
			ok = 0;
	if (!ok) {
		*wrong += w;
	} else if (guest_fn(syms[0])->ring == 0 ? g == 1 : !has_caller(syms[g - 1])) {
		*exact += w;
	}
	for (int i = g; i < n; i++)
		if (!strcmp(syms[i], "vcpu_enter_guest") ||
		    !strcmp(syms[i], "kvm_arch_vcpu_ioctl_run"))
			kvm = 1;
	*with_host += kvm ? w : 0;
	if ((!ok || !kvm) && (*printed)++ < 10) {
		printf("lab-chain-check: perf script sample%s%s:", ok ? "" : " (wrong)",
		       kvm ? "" : " (no KVM frame)");
		for (int i = 0; i < n && i < 12; i++)
			printf(" %s", syms[i]);
		putchar('\n');
	}
}

static int check_script(const char *path, unsigned long min_chains)
{
	static char syms[SCRIPT_MAX_FRAMES][128];
	unsigned long guest = 0, exact = 0, wrong = 0, with_host = 0, printed = 0;
	char line[1024], sym[128], dso[256];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f) {
		perror(path);
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		if (script_frame(line, sym, sizeof(sym), dso, sizeof(dso))) {
			if (n < SCRIPT_MAX_FRAMES)
				snprintf(syms[n++], sizeof(syms[0]), "%s", sym);
			continue;
		}
		/* a header or a blank line ends the sample before it */
		script_sample(syms, n, 1, &guest, &exact, &wrong, &with_host, &printed);
		n = 0;
	}
	script_sample(syms, n, 1, &guest, &exact, &wrong, &with_host, &printed);
	fclose(f);
	return script_checks("perf script", guest, exact, wrong, with_host, min_chains);
}

/* Folded stacks: each line a sample's frames, root first, then its ticks. */
static int check_folded(const char *path, unsigned long min_chains)
{
	static char syms[SCRIPT_MAX_FRAMES][128], line[65536];
	unsigned long guest = 0, exact = 0, wrong = 0, with_host = 0, printed = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		char *count = strrchr(line, ' '), *frame, *save = NULL;
		int n = 0;

		if (!count)
			continue;
		*count++ = '\0';
		for (frame = strtok_r(line, ";", &save); frame && n < SCRIPT_MAX_FRAMES;
		     frame = strtok_r(NULL, ";", &save))
			snprintf(syms[n++], sizeof(syms[0]), "%.*s", (int)strcspn(frame, " "), frame);
		/* leaf first */
		for (int i = 0; i < n / 2; i++) {
			char t[128];

			memcpy(t, syms[i], sizeof(t));
			memcpy(syms[i], syms[n - 1 - i], sizeof(t));
			memcpy(syms[n - 1 - i], t, sizeof(t));
		}
		script_sample(syms, n, strtoul(count, NULL, 10), &guest, &exact, &wrong, &with_host,
			      &printed);
	}
	fclose(f);
	return script_checks("folded stacks", guest, exact, wrong, with_host, min_chains);
}

static int script_checks(const char *what, unsigned long guest, unsigned long exact,
			 unsigned long wrong, unsigned long with_host, unsigned long min_chains)
{
	printf("lab-chain-check: %s: %lu samples with a guest leaf: %lu exact guest chains, %lu wrong, %lu going on into KVM\n",
	       what, guest, exact, wrong, with_host);
	figure(guest >= min_chains, "%lu guest samples (at least %lu)", guest, min_chains);
	figure(wrong == 0, "%lu guest chains with a frame that does not call the one before", wrong);
	figure(pct(exact, guest) >= 99.0, "%lu/%lu guest chains exact (%.2f%%, at least 99%%)",
	      exact, guest, pct(exact, guest));
	figure(pct(with_host, guest) >= 99.0,
	      "%lu/%lu chains go on into the host's KVM_RUN (%.2f%%, at least 99%%)",
	      with_host, guest, pct(with_host, guest));
	return failed;
}

static const char *samples_path;

/* Every record of the chain's thread from 1 ms before it to 3 ms after, in any mode. */
static void print_window(const struct lab_chain *c)
{
	struct lab_chain ch;
	struct lab_sample s;
	unsigned int shown = 0;
	uint64_t lost;
	FILE *f = fopen(samples_path, "r");

	if (!f)
		return;
	for (;;) {
		enum lab_record r = lab_samples_next_chain(f, &s, &lost, &ch);
		long long dt;

		if (r == LAB_RECORD_END || shown >= 80)
			break;
		if (r == LAB_RECORD_LOST) {
			printf("lab-chain-check:   lost %llu\n", (unsigned long long)lost);
			continue;
		}
		if ((r == LAB_RECORD_SAMPLE ? s.tid : ch.tid) != c->tid)
			continue;
		dt = (long long)((r == LAB_RECORD_SAMPLE ? s.time : ch.time) - c->time);
		if (dt < -1000000 || dt > 3000000)
			continue;
		shown++;
		if (r == LAB_RECORD_SAMPLE)
			printf("lab-chain-check:   %+9lld ns cpu %u sample ip 0x%llx misc %u flags 0x%x exit 0x%x\n",
			       dt, s.cpu, (unsigned long long)s.ip, s.misc, s.flags, s.exit_reason);
		else
			printf("lab-chain-check:   %+9lld ns cpu %u chain ip 0x%llx nr %u walk %u\n",
			       dt, ch.cpu, (unsigned long long)ch.ips[0], ch.nr, ch.walk_ns);
	}
	fclose(f);
}

/*
 * A chain with no sample before it in time: print it, then its thread's
 * records around it (print_window), so that a miss says whether the
 * sample is missing or its time came after the chain's (another CPU).
 */
static void print_orphan(size_t i)
{
	const struct lab_chain *c = events[i].c;
	size_t before = 0, all = 0;

	for (size_t k = 0; k < nr_events; k++)
		if (events[k].is_chain && events[k].c->tid == c->tid) {
			all++;
			before += k < i;
		}
	printf("lab-chain-check: a chain with no sample: tid %u cpu %u time %llu ip 0x%llx nr %u walk %u ns (its thread's chain %zu of %zu)\n",
	       c->tid, c->cpu, (unsigned long long)c->time, (unsigned long long)c->ips[0],
	       c->nr, c->walk_ns, before + 1, all);
	print_window(c);
}

int main(int argc, char **argv)
{
	const char *truth = NULL, *samples = NULL, *script = NULL, *folded = NULL;
	unsigned long verdicts[NR_VERDICTS] = { 0 }, ends[NR_ENDS] = { 0 };
	unsigned long guest = 0, paired = 0, orphans = 0, unpaired = 0, lost_total = 0;
	unsigned long normal = 0, normal_exact = 0, hostile_hits = 0, budget_ok = 0;
	unsigned long min_chains = 100, nr_chains = 0, printed = 0;
	size_t pending[MAX_VCPUS][64], nr_pending[MAX_VCPUS] = { 0 };
	struct lab_chain chain;
	struct lab_sample s;
	uint32_t *walk_ns;
	int c, budget = 0, want_end = -1;
	uint64_t lost;
	FILE *f;

	while ((c = getopt(argc, argv, "t:s:p:f:Bm:")) != -1) {
		switch (c) {
		case 't': truth = optarg; break;
		case 's': samples = optarg; break;
		case 'p': script = optarg; break;
		case 'f': folded = optarg; break;
		case 'B': budget = 1; break;
		case 'm': min_chains = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: %s -t truth.txt -s samples.txt [-B] [-m min_chains]\n"
				"       %s -t truth.txt -p script.txt [-m min_chains]\n"
				"       %s -t truth.txt -f stacks.folded [-m min_chains]\n",
				argv[0], argv[0], argv[0]);
			return 2;
		}
	}
	if (!truth || (!samples && !script && !folded))
		die("-t and -s, -p or -f are needed");
	read_truth(truth);
	if (script)
		return check_script(script, min_chains);
	if (folded)
		return check_folded(folded, min_chains);
	if (!strcmp(hostile, "loop"))
		want_end = END_ORDER;
	else if (!strcmp(hostile, "kernel"))
		want_end = END_KERNEL;
	else if (!strcmp(hostile, "unmapped"))
		want_end = END_FAULT;
	else if (!strcmp(hostile, "deep"))
		want_end = END_DEPTH;
	else if (hostile[0])
		die("unknown hostile stack \"%s\"", hostile);

	samples_path = samples;
	f = fopen(samples, "r");
	if (!f) {
		perror(samples);
		return 2;
	}
	for (;;) {
		enum lab_record r = lab_samples_next_chain(f, &s, &lost, &chain);
		struct event *e;

		if (r == LAB_RECORD_END)
			break;
		if (r == LAB_RECORD_LOST) {
			lost_total += lost;
			continue;
		}
		if (r == LAB_RECORD_SAMPLE && (vcpu_of_tid(s.tid) < 0 ||
					       !(s.flags & PERF_GUEST_CTX_GUEST_MODE)))
			continue;
		e = new_event();
		e->is_chain = r == LAB_RECORD_CHAIN;
		if (e->is_chain) {
			e->c = xrealloc(NULL, sizeof(chain));
			*e->c = chain;
			e->time = chain.time;
			nr_chains++;
		} else {
			e->s = s;
			e->time = s.time;
			guest++;
		}
	}
	fclose(f);
	qsort(events, nr_events, sizeof(*events), by_time);
	walk_ns = xrealloc(NULL, (nr_chains + 1) * sizeof(*walk_ns));
	nr_chains = 0;

	for (size_t i = 0; i < nr_events; i++) {
		struct event *e = &events[i];
		int v = vcpu_of_tid(e->is_chain ? e->c->tid : e->s.tid);

		if (v < 0) {
			if (e->is_chain && orphans++ < 5)
				print_orphan(i);
			continue;
		}
		if (!e->is_chain) {
			if (nr_pending[v] < 64)
				pending[v][nr_pending[v]++] = i;
			else
				unpaired++;
			continue;
		}
		walk_ns[nr_chains++] = e->c->walk_ns;
		if (e->c->end < NR_ENDS)
			ends[e->c->end]++;
		if (!nr_pending[v] && orphans++ < 5)
			print_orphan(i);
		for (size_t k = 0; k < nr_pending[v]; k++) {
			const struct lab_sample *ps = &events[pending[v][k]].s;
			const char *why = "";
			enum verdict vd = judge(ps, e->c, &why);
			struct range *r = find_range(ps->ip);
			int hostile_fn = r && is_hostile_fn(r->name);

			paired++;
			verdicts[vd]++;
			if (r) {
				r->chains++;
				r->exact += vd == EXACT;
			}
			if (!hostile_fn) {
				normal++;
				normal_exact += vd == EXACT;
			} else if (want_end >= 0 && (int)e->c->end == want_end && vd == MARKED &&
				   (want_end != END_DEPTH || e->c->nr == LAB_CHAIN_MAX)) {
				hostile_hits++;
			}
			if (budget && e->c->nr == 1 &&
			    (e->c->end == END_BUDGET || e->c->end == END_LAST))
				budget_ok++;
			if ((vd == WRONG || (vd == MARKED && !hostile_fn && !budget) ||
			     (budget && e->c->nr != 1)) && printed++ < 10) {
				printf("lab-chain-check: %s chain (%s), end %s, sample ip 0x%llx:",
				       verdict_names[vd], why,
				       e->c->end < NR_ENDS ? end_names[e->c->end] : "?",
				       (unsigned long long)ps->ip);
				for (unsigned int j = 0; j < e->c->nr && j < 8; j++) {
					struct range *fr = find_range(j ? e->c->ips[j] - 1 :
								      e->c->ips[j]);
					printf(" %s", fr ? fr->name : "?");
				}
				putchar('\n');
			}
		}
		nr_pending[v] = 0;
	}
	/* the samples of each thread's last exit, whose walk never came */
	for (int v = 0; v < nr_vcpus; v++) {
		const struct lab_sample *last;

		if (!nr_pending[v])
			continue;
		last = &events[pending[v][nr_pending[v] - 1]].s;
		for (size_t k = 0; k + 1 < nr_pending[v]; k++) {
			const struct lab_sample *ps = &events[pending[v][k]].s;

			unpaired += ps->ip != last->ip || ps->cr3 != last->cr3;
		}
	}

	printf("lab-chain-check: %lu guest-mode samples of vCPU threads, %lu chains, %lu lost records\n",
	       guest, nr_chains, lost_total);
	for (int i = 0; i < nr_ranges; i++)
		if (ranges[i].chains)
			printf("lab-chain-check:   %-14s ring %d  %6lu chains, %6lu exact\n",
			       ranges[i].name, ranges[i].ring, ranges[i].chains, ranges[i].exact);
	printf("lab-chain-check: ends:");
	for (size_t i = 0; i < NR_ENDS; i++)
		if (ends[i])
			printf(" %s %lu", end_names[i], ends[i]);
	printf("\nlab-chain-check: verdicts:");
	for (int i = 0; i < NR_VERDICTS; i++)
		printf(" %s %lu", verdict_names[i], verdicts[i]);
	putchar('\n');
	if (nr_chains) {
		qsort(walk_ns, nr_chains, sizeof(*walk_ns), cmp_u32);
		printf("lab-chain-check: vCPU held per walk: median %u ns, 99th percentile %u ns, max %u ns\n",
		       walk_ns[nr_chains / 2], walk_ns[nr_chains * 99 / 100],
		       walk_ns[nr_chains - 1]);
	}

	figure(nr_chains >= min_chains, "%lu chains (at least %lu)", nr_chains, min_chains);
	figure(unpaired == 0, "%lu/%lu samples paired with a chain; %lu unpaired besides those of each vCPU thread's last exit",
	      paired, guest, unpaired);
	figure(orphans <= lost_total, "%lu chains with no sample (at most the %lu lost records)",
	      orphans, lost_total);
	figure(verdicts[WRONG] == 0, "%lu wrong chains", verdicts[WRONG]);
	if (budget) {
		figure(budget_ok == paired,
		      "%lu/%lu chains with no time hold the IP alone, ended by the budget",
		      budget_ok, paired);
	} else {
		figure(pct(normal_exact, normal) >= 99.0,
		      "%lu/%lu chains exact (%.2f%%, at least 99%%)", normal_exact, normal,
		      pct(normal_exact, normal));
	}
	if (want_end >= 0)
		figure(hostile_hits >= 20, "%lu chains on the %s stack end with \"%s\" (at least 20)",
		      hostile_hits, hostile, end_names[want_end]);
	return failed;
}
