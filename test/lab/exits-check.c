// SPDX-License-Identifier: GPL-2.0
/*
 * lab-exits-check TRUTH EXITS SCRIPT [TRACECMD]: check what 'perf report
 * --guest-maps' charged to each guest process, and what
 * plugin_vmctx printed for each exit, against where the exits really
 * happened.
 *
 * The lab's guest runs process A (no CPUID) and process B, which makes N
 * CPUIDs a round from b_main (lab-vmm -X N); KVM intercepts every CPUID.
 * TRUTH is lab-vmm's ground truth: the code ranges of each process ("range
 * START END NAME ring 3 root A|B").  SCRIPT is 'perf script -F event,trace'
 * of the same recording: each kvm:kvm_exit's reason and guest RIP, as the
 * kernel wrote them, which says whose code each exit interrupted.  EXITS
 * is perf report's rows of kvm:kvm_exit by comm, pid and exit_reason
 * (read_exits() says how).  Checks:
 *   - B's code made CPUID exits (at least 100), A's none;
 *   - perf report charges B with 99-101% of the CPUID exits in B's code, and
 *     A with at most 1% of them;
 *   - each process is charged at least 99% of all the exits in its own
 *     user code (its rows also hold kernel-mode exits under its root);
 *   - B's CPUID row is timed (kvm_entry followed its exits);
 *   - per exit, in SCRIPT (perf script with $VMCTX_GUEST_MAPS) and in
 *     TRACECMD ('trace-cmd report -O vmctx:maps=...'), when given: at least
 *     99% of the exits whose RIP lies in a process's user code are printed
 *     with that process ("guest=proc_a[1]"), none with the other one.
 * Prints one line per figure and "lab-exp: exp6 PASS|FAIL".
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CHECKER "lab-exits-check"
#include "exp-verdict.h"
#include "report-rows.h"

#define MAX_RANGES	64

struct range {
	uint64_t start, end;
	char root;
};

static struct range ranges[MAX_RANGES];
static int nranges;


static FILE *open_or_die(const char *path)
{
	FILE *f = fopen(path, "r");

	if (!f)
		die("cannot open %s", path);
	return f;
}

/* User code ranges (ring 3) of each process, by root. */
static void read_truth(const char *path)
{
	FILE *f = open_or_die(path);
	unsigned long long s, e;
	char line[512], name[128], root;
	int ring;

	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "range %llx %llx %127s ring %d root %c", &s, &e, name, &ring,
			   &root) == 5 && ring == 3) {
			if (nranges == MAX_RANGES)
				die("%s: too many ranges", path);
			ranges[nranges++] = (struct range){ s, e, root };
		}
	fclose(f);
	if (!nranges)
		die("%s: no user code ranges", path);
}

/* 'A', 'B', or 0: whose user code holds @rip. */
static char owner(uint64_t rip)
{
	int i;

	for (i = 0; i < nranges; i++)
		if (rip >= ranges[i].start && rip < ranges[i].end)
			return ranges[i].root;
	return 0;
}

/* CPUID: "cpuid" in SVM's and VMX's tables, 0x72 and 10 as numbers. */
static int is_cpuid(const char *reason)
{
	return !strcasecmp(reason, "cpuid") || !strcmp(reason, "0x72") ||
	       !strcmp(reason, "0xa") || !strcmp(reason, "10");
}

struct counts {
	double exits, cpuid;
	double named_right, named_wrong;	/* plugin_vmctx's guest= per exit */
};

/* What a line's "guest=" item names: 'A', 'B', '?' (another), 0 (none). */
static char named(const char *line)
{
	const char *g = strstr(line, " guest=");

	if (!g)
		return 0;
	g += 7;
	if (!strncmp(g, "proc_a[", 7))
		return 'A';
	if (!strncmp(g, "proc_b[", 7))
		return 'B';
	return '?';
}

/*
 * kvm_exit lines of perf script or trace-cmd report: "... kvm_exit: ...
 * reason NAME ... rip 0xHEX ...", maybe with plugin_vmctx's "guest=...".
 */
static void read_script(const char *path, struct counts *a, struct counts *b, double *all)
{
	FILE *f = open_or_die(path);
	char line[1024], reason[64];
	unsigned long long rip;
	const char *p, *q;
	char who;

	*all = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "kvm_exit:"))
			continue;
		p = strstr(line, " reason ");
		q = strstr(line, " rip 0x");
		if (!p || !q || sscanf(p, " reason %63s", reason) != 1 ||
		    sscanf(q, " rip %llx", &rip) != 1)
			die("%s: cannot read a kvm_exit line: %s", path, line);
		(*all)++;
		who = named(line);
		switch (owner(rip)) {
		case 'A':
			a->exits++;
			a->cpuid += is_cpuid(reason);
			a->named_right += who == 'A';
			a->named_wrong += who == 'B';
			break;
		case 'B':
			b->exits++;
			b->cpuid += is_cpuid(reason);
			b->named_right += who == 'B';
			b->named_wrong += who == 'A';
			break;
		}
	}
	fclose(f);
}

/*
 * EXITS is perf report --stdio -t ';' -F sample,period,comm,pid,exit_reason
 * of the recording: kvm:kvm_exit's rows, each guest process's exits by
 * reason, with the exit-to-entry time (ns) as their period.
 */
enum { K_COMM, K_PID, K_REASON, NKEYS };

static struct rr_report rep;

static void read_exits(const char *path, struct counts *a, struct counts *b, double *b_avg)
{
	double b_ns = 0, b_timed = 0;
	int i, rows = 0;

	*b_avg = -1;
	rr_read(&rep, path, "");
	if (rep.nrows && rep.nkeys != NKEYS)
		die("%s: %d keys a row, want comm,pid,exit_reason", path, rep.nkeys);
	for (i = 0; i < rep.nrows; i++) {
		const struct rr_row *w = &rep.rows[i];
		struct counts *c = NULL;
		char reason[64];

		if (strcmp(w->event, "kvm:kvm_exit"))
			continue;
		rows++;
		if (!strcmp(w->key[K_COMM], "proc_a"))
			c = a;
		else if (!strcmp(w->key[K_COMM], "proc_b"))
			c = b;
		if (!c)
			continue;
		c->exits += w->samples;
		/* "cpuid (0x72)": the name, then the number */
		if (sscanf(w->key[K_REASON], "%63s", reason) == 1 && is_cpuid(reason)) {
			c->cpuid += w->samples;
			/* an untimed exit (no kvm_entry after it) has period 1 */
			if (c == b && w->period > w->samples) {
				b_ns += w->period;
				b_timed += w->samples;
			}
		}
	}
	if (!rows)
		die("%s: no kvm:kvm_exit rows", path);
	if (b_timed)
		*b_avg = b_ns / b_timed / 1000;
}

/* plugin_vmctx's names in @what, per exit, against the code the RIP lies in */
static void check_names(const char *what, const struct counts *a, const struct counts *b)
{
	figure(a->exits && a->named_right >= 0.99 * a->exits && !a->named_wrong,
	       "%s: %.0f of the %.0f exits in A's code say guest=proc_a (>= 99%%), %.0f proc_b",
	       what, a->named_right, a->exits, a->named_wrong);
	figure(b->exits && b->named_right >= 0.99 * b->exits && !b->named_wrong,
	       "%s: %.0f of the %.0f exits in B's code say guest=proc_b (>= 99%%), %.0f proc_a",
	       what, b->named_right, b->exits, b->named_wrong);
}

int main(int argc, char **argv)
{
	struct counts ta = { 0 }, tb = { 0 }, ra = { 0 }, rb = { 0 };
	double all, b_avg;

	if (argc != 4 && argc != 5)
		die("usage: lab-exits-check TRUTH EXITS SCRIPT [TRACECMD]");
	read_truth(argv[1]);
	read_script(argv[3], &ta, &tb, &all);
	read_exits(argv[2], &ra, &rb, &b_avg);

	printf("lab-exp:   %.0f kvm_exit events; in A's user code %.0f (CPUID %.0f), in B's %.0f (CPUID %.0f)\n",
	       all, ta.exits, ta.cpuid, tb.exits, tb.cpuid);
	figure(tb.cpuid >= 100, "B's code made %.0f CPUID exits (>= 100)", tb.cpuid);
	figure(ta.cpuid == 0, "A's code made %.0f CPUID exits (none)", ta.cpuid);
	figure(tb.cpuid && rb.cpuid >= 0.99 * tb.cpuid && rb.cpuid <= 1.01 * tb.cpuid,
	       "CPUID exits charged to proc_b: %.0f of the %.0f in its code (99-101%%)", rb.cpuid,
	       tb.cpuid);
	figure(ra.cpuid <= 0.01 * tb.cpuid,
	       "CPUID exits charged to proc_a: %.0f (<= 1%% of %.0f)", ra.cpuid, tb.cpuid);
	figure(ra.exits >= 0.99 * ta.exits,
	       "proc_a's rows: %.0f exits, >= 99%% of the %.0f in its user code", ra.exits,
	       ta.exits);
	figure(rb.exits >= 0.99 * tb.exits,
	       "proc_b's rows: %.0f exits, >= 99%% of the %.0f in its user code", rb.exits,
	       tb.exits);
	figure(b_avg > 0, "proc_b's CPUID exits are timed to kvm_entry: average %.3f us", b_avg);
	check_names("perf script", &ta, &tb);
	if (argc == 5) {
		struct counts ca = { 0 }, cb = { 0 };
		double call;

		read_script(argv[4], &ca, &cb, &call);
		printf("lab-exp:   trace-cmd report: %.0f kvm_exit events; in A's user code %.0f, in B's %.0f\n",
		       call, ca.exits, cb.exits);
		figure(cb.cpuid >= 100, "trace-cmd report: %.0f CPUID exits in B's code (>= 100)",
		       cb.cpuid);
		check_names("trace-cmd report", &ca, &cb);
	}
	printf("lab-exp: exp6 %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
