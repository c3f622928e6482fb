// SPDX-License-Identifier: GPL-2.0
/*
 * lab-exp-check: check the tables 'perf report --guest-maps --guest-view'
 * printed for the paper's experiments (Yamamoto et al., section 4) against
 * what the lab's VMM built into its guests.  It reads perf's text, so what
 * is checked is what a user sees.
 *
 *   lab-exp-check 1 TRUTH GUEST    function mix of one process, within 3 points
 *                                  of the guest's own measure
 *   lab-exp-check 2 TRUTH GUEST    two instances of a program: their split per
 *                                  function within 3 points of the guest's measure
 *   lab-exp-check 3 GUEST VCPU     two vCPUs on one pCPU: [steal] (on vcpuN) 50% +- 5
 *   lab-exp-check 4 HOST GUEST     three VMs on one pCPU: steal charged to the other VMs =
 *                                  their host-level share +- 1, steal 66.7% +- 5
 *   lab-exp-check 5 GUEST HOST     busy a third, then halted: [idle] 66.7% +- 5, and
 *                                  within 2 points of the host's idle share
 *
 * TRUTH is lab-vmm's ground truth: "mix FUNCTION LOOPS" lines, the busy-loop
 * iterations per round the guest was built with, process A's first, and
 * "time FUNCTION TICKS" lines in the same order, the TSC ticks the guest
 * measured those loops to take over the run.  The checks hold perf's
 * shares against the measure (under TCG a function's time strays from its
 * iterations by several points, differently from boot to boot) and print
 * the built mix beside it; a truth without "time" lines is checked
 * against the mix.  Prints one line per figure and "lab-exp: expN
 * PASS|FAIL"; exits 0 only on PASS.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECKER "lab-exp-check"
#include "exp-verdict.h"

#define MAX_TABLES	16
#define MAX_ROWS	256
#define MAX_MIX		8

struct row {
	double samples;
	double ratio;
	char function[128];
	char module[128];
};

struct vcpu_row {
	int id;
	double samples;
	double pct[5];		/* OS USER steal idle lost */
};

struct table {
	char title[256];
	double total;
	char labels[64];	/* "OS:USER:steal:idle" or "OS:USER:idle:VM" */
	double cls[4];
	struct row rows[MAX_ROWS];
	int nrows;
	struct vcpu_row vcpus[16];
	int nvcpus;
};

static struct table tables[2][MAX_TABLES];
static int ntables[2];


static void trim(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

/* A table's title line, "# ...": the start of a new table in @slot. */
static struct table *new_table(int slot, const char *path, const char *line)
{
	struct table *t;

	if (ntables[slot] == MAX_TABLES)
		die("%s: too many tables", path);
	t = &tables[slot][ntables[slot]++];
	memset(t, 0, sizeof(*t));
	snprintf(t->title, sizeof(t->title), "%.255s", line + 2);
	return t;
}

/* "Total samples: N  OS:USER:steal:idle = a%:b%:c%:d%" */
static int parse_header(struct table *t, const char *line)
{
	double a, b, c, d, s;

	if (sscanf(line, "Total samples: %lf %63s = %lf%%:%lf%%:%lf%%:%lf%%", &s, t->labels,
		   &a, &b, &c, &d) != 6)
		return 0;
	t->total = s;
	t->cls[0] = a;
	t->cls[1] = b;
	t->cls[2] = c;
	t->cls[3] = d;
	return 1;
}

/* A per-vCPU view's row: "vcpuN samples OS% USER% steal% idle% lost%" */
static int parse_vcpu_row(struct table *t, const char *line)
{
	double a, b, c, d, r, s;
	struct vcpu_row *v;
	int id;

	if (sscanf(line, "vcpu%d %lf %lf%% %lf%% %lf%% %lf%% %lf%%", &id, &s, &a, &b, &c, &d,
		   &r) != 7 || t->nvcpus >= 16)
		return 0;
	v = &t->vcpus[t->nvcpus++];
	v->id = id;
	v->samples = s;
	v->pct[0] = a;
	v->pct[1] = b;
	v->pct[2] = c;
	v->pct[3] = d;
	v->pct[4] = r;
	return 1;
}

/* A function row: "samples ratio function module" */
static void parse_row(struct table *t, const char *line)
{
	char fn[128], mod[128];
	struct row *w;
	double s, r;
	int n = 0;

	if (sscanf(line, " %lf %lf %127s %n", &s, &r, fn, &n) != 3 || !n || t->nrows >= MAX_ROWS)
		return;
	w = &t->rows[t->nrows++];
	snprintf(mod, sizeof(mod), "%.127s", line + n);
	w->samples = s;
	w->ratio = r;
	snprintf(w->function, sizeof(w->function), "%s", fn);
	snprintf(w->module, sizeof(w->module), "%s", mod);
}

/* Read the tables of one perf report output into tables[slot]; echo it. */
static void read_report(int slot, const char *path)
{
	FILE *f = fopen(path, "r");
	struct table *t = NULL;
	char line[1024];

	if (!f)
		die("cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		fputs(line, stdout);
		trim(line);
		/* how perf related the guest clocks: said once, before the tables */
		if (!strncmp(line, "# guest clock of ", 17))
			continue;
		if (!strncmp(line, "# ", 2))
			t = new_table(slot, path, line);
		else if (t && !parse_header(t, line) && !parse_vcpu_row(t, line))
			parse_row(t, line);
	}
	fclose(f);
	if (!ntables[slot] || !tables[slot][0].total)
		die("%s: no table with a 'Total samples' header", path);
}

/* Samples of the rows of @t matching @function and @module (NULL: any). */
static double lookup(const struct table *t, const char *function, const char *module)
{
	double sum = 0;
	int i;

	for (i = 0; i < t->nrows; i++)
		if ((!function || !strcmp(t->rows[i].function, function)) &&
		    (!module || !strcmp(t->rows[i].module, module)))
			sum += t->rows[i].samples;
	return sum;
}

struct mix {
	char name[64];
	double loops;
	double ticks;		/* 0: not measured */
};

static int read_mix(const char *path, struct mix *mix)
{
	FILE *f = fopen(path, "r");
	char line[256], name[64];
	int n = 0, nt = 0;
	double ticks;

	if (!f)
		die("cannot open %s", path);

	while (fgets(line, sizeof(line), f))
		if (n < MAX_MIX && sscanf(line, "mix %63s %lf", mix[n].name, &mix[n].loops) == 2)
			mix[n++].ticks = 0;
		else if (sscanf(line, "time %63s %lf", name, &ticks) == 2 && nt < n &&
			 !strcmp(name, mix[nt].name))
			mix[nt++].ticks = ticks;
	fclose(f);
	if (!n)
		die("%s: no 'mix' lines", path);
	if (nt && nt != n)
		die("%s: %d 'time' lines for %d 'mix' lines", path, nt, n);
	return n;
}

/* The measure of mix[i] if the guest measured it, else its built work. */
static double work(const struct mix *mix, int i)
{
	return mix[0].ticks > 0 ? mix[i].ticks : mix[i].loops;
}

/* Experiment 1 (Tables 3-4): one process's function shares vs its known mix. */
static void experiment1(const char *truth)
{
	struct mix mix[MAX_MIX];
	const struct table *g = &tables[0][0];
	double obs = 0, want = 0, built = 0;
	int n = read_mix(truth, mix), i;

	n = n > 3 ? 3 : n;		/* process A */
	for (i = 0; i < n; i++) {
		obs += lookup(g, mix[i].name, NULL);
		want += work(mix, i);
		built += mix[i].loops;
	}
	figure(obs > 300, "%.0f samples in the mix's functions (want > 300)", obs);
	for (i = 0; i < n && obs > 0; i++) {
		double got = 100 * lookup(g, mix[i].name, NULL) / obs;
		double exp = 100 * work(mix, i) / want;

		figure(fabs(got - exp) <= 3.0, "%-10s %6.2f%% of the mix, %s %6.2f%% (+-3; built as %.2f%%)",
		       mix[i].name, got, mix[0].ticks > 0 ? "the guest's measure" : "built as", exp,
		       100 * mix[i].loops / built);
	}
}

/* Experiment 2 (Table 7): two instances of one program, function by function. */
static void experiment2(const char *truth)
{
	struct mix mix[MAX_MIX];
	const struct table *g = &tables[0][0];
	int n = read_mix(truth, mix), i;

	if (n != 6)
		die("%s: want the mix of two processes", truth);
	for (i = 0; i < 3; i++) {
		const char *fa = mix[i].name, *fb = mix[i + 3].name;
		/* the kernel's work for each process has its own function */
		int kernel = strcmp(fa, fb) != 0;
		double a = lookup(g, fa, kernel ? NULL : "work(1)");
		double b = lookup(g, fb, kernel ? NULL : "work(2)");
		double share = a + b > 0 ? 100 * a / (a + b) : 0;
		double wa = work(mix, i), wb = work(mix, i + 3);
		double want = wa + wb > 0 ? 100 * wa / (wa + wb) : 50;

		/*
		 * The processes' functions are checked.  The guest kernel's
		 * work for each (kwork_a, kwork_b) are two kernel functions,
		 * shown under vmlinux, not the processes': printed only.
		 */
		if (kernel) {
			printf("lab-exp:   info kernel     kwork_a %5.0f  kwork_b %5.0f  -> %5.2f%% : "
			       "%5.2f%% (the guest kernel's work for each; %s %.2f : %.2f)\n", a, b,
			       share, a + b > 0 ? 100 - share : 0,
			       mix[0].ticks > 0 ? "the guest's measure" : "built as", want, 100 - want);
			continue;
		}
		figure(a + b > 100 && fabs(share - want) <= 3.0,
		       "%-10s work(1) %5.0f  work(2) %5.0f  -> %5.2f%% : %5.2f%% (%s %.2f : %.2f, +-3)",
		       fa, a, b, share, a + b > 0 ? 100 - share : 0,
		       mix[0].ticks > 0 ? "the guest's measure" : "built as", want, 100 - want);
	}
}

static const struct vcpu_row *vcpu_row(const struct table *t, int id)
{
	int i;

	for (i = 0; i < t->nvcpus; i++)
		if (t->vcpus[i].id == id)
			return &t->vcpus[i];
	return NULL;
}

/* Experiment 3 (Tables 8-9): two vCPUs of one VM on one pCPU. */
static void experiment3(void)
{
	const struct table *g = &tables[0][0], *v = &tables[1][0];
	int id;

	for (id = 0; id < 2; id++) {
		const struct vcpu_row *r = vcpu_row(v, id);
		char other[32];
		double on;

		if (!r)
			die("no vcpu%d row", id);
		snprintf(other, sizeof(other), "(on vcpu%d)", !id);
		on = lookup(g, "[steal]", other);
		figure(r->samples > 0 && fabs(100 * on / r->samples - 50) <= 5.0,
		       "vcpu%d: [steal] %-11s %6.2f%% of its %.0f ticks (50 +-5); steal in all %6.2f%%",
		       id, other, r->samples ? 100 * on / r->samples : 0, r->samples, r->pct[2]);
	}
}

/*
 * The other VMs' rows of the host-level view @h, "[name] (VMj)" for every
 * j but @vm: their samples, and their %Ratio in *ratio.
 */
static double other_vms(const struct table *h, int vm, double *ratio)
{
	double samples = 0;
	char tag[16];
	int i;

	*ratio = 0;
	snprintf(tag, sizeof(tag), "(VM%d)", vm);
	for (i = 0; i < h->nrows; i++)
		if (h->rows[i].function[0] == '[' && !strncmp(h->rows[i].module, "(VM", 3) &&
		    strcmp(h->rows[i].module, tag)) {
			samples += h->rows[i].samples;
			*ratio += h->rows[i].ratio;
		}
	return samples;
}

/* A guest-level table's steal charged to other VMs, "[steal] (VMj)". */
static double steal_by_vms(const struct table *g)
{
	double samples = 0;
	int i;

	for (i = 0; i < g->nrows; i++)
		if (!strcmp(g->rows[i].function, "[steal]") && !strncmp(g->rows[i].module, "(VM", 3))
			samples += g->rows[i].samples;
	return samples;
}

/*
 * Experiment 4 (Tables 12-13): three VMs on one pCPU.  A guest's steal
 * charged to the other VMs, "[steal] (VMj)", must match the other VMs'
 * rows in the host-level view.  Both are compared over the guest's time
 * (the host view's %Ratio is over the whole recording, which starts and
 * ends a little before and after a given vCPU's stream, by up to 2% here).
 * The rest of the guest's steal, "(outside)", is host work (its exits,
 * switching between the vCPU threads), printed.
 */
static void experiment4(void)
{
	const struct table *h = &tables[0][0];
	int k;

	if (ntables[1] != 3)
		die("want 3 guest-level tables, one per VM, got %d", ntables[1]);
	for (k = 0; k < 3; k++) {
		const struct table *g = &tables[1][k];
		double others_ratio;
		double others = other_vms(h, k + 1, &others_ratio);
		double by_vms = steal_by_vms(g);

		if (!g->total)
			die("VM%d: empty guest table", k + 1);
		figure(fabs(100 * (by_vms - others) / g->total) <= 1.0,
		       "VM%d: [steal] by the other VMs %6.2f%%, their host-level rows %6.2f%% of "
		       "its %.0f ticks (+-1; %.2f%% of the whole recording)", k + 1,
		       100 * by_vms / g->total, 100 * others / g->total, g->total, others_ratio);
		figure(fabs(g->cls[2] - 200.0 / 3) <= 5.0,
		       "VM%d: guest [steal] %6.2f%% (66.67 +-5), of which host work (outside) %.2f%%",
		       k + 1, g->cls[2], g->cls[2] - 100 * by_vms / g->total);
	}
}

/* Experiment 5 (Tables 14-15): busy for a third, then HLT-idle. */
static void experiment5(void)
{
	const struct table *g = &tables[0][0], *h = &tables[1][0];
	double gi = g->cls[3], hi = h->cls[2];

	if (strcmp(g->labels, "OS:USER:steal:idle") || strcmp(h->labels, "OS:USER:idle:VM"))
		die("unexpected headers '%s' and '%s'", g->labels, h->labels);
	figure(fabs(gi - 200.0 / 3) <= 5.0, "guest [idle] %6.2f%% (66.67 +-5)", gi);
	figure(fabs(gi - hi) <= 2.0, "guest [idle] %6.2f%%, host idle %6.2f%% (+-2)", gi, hi);
	figure(g->cls[2] <= 5.0, "guest [steal] %6.2f%% (<= 5: halted time is not steal)",
	       g->cls[2]);
}

int main(int argc, char **argv)
{
	int exp = argc > 1 ? atoi(argv[1]) : 0;

	if (argc != 4 || exp < 1 || exp > 5)
		die("usage: lab-exp-check 1|2 TRUTH GUEST | 3 GUEST VCPU | 4 HOST GUEST | 5 GUEST HOST");
	if (exp <= 2) {
		read_report(0, argv[3]);
	} else {
		read_report(0, argv[2]);
		read_report(1, argv[3]);
	}
	switch (exp) {
	case 1: experiment1(argv[2]); break;
	case 2: experiment2(argv[2]); break;
	case 3: experiment3(); break;
	case 4: experiment4(); break;
	case 5: experiment5(); break;
	}
	printf("lab-exp: exp%d %s\n", exp, failed ? "FAIL" : "PASS");
	return failed;
}
