// SPDX-License-Identifier: GPL-2.0
/*
 * lab-exp-check: check what perf report --guest-maps printed for the
 * paper's experiments (Yamamoto et al., section 4) against what the lab's
 * VMM built into its guests.  It reads perf's own output, so what is
 * checked is what a user sees: ROWS is
 *
 *   perf report --guest-maps=... --stdio -t ';' -F sample,period,vm,vcpu,pid,dso,sym
 *
 * (every event's rows: cpu-clock's guest processes and functions, and
 * vcpu-blank's [steal] and [idle], whose periods are host time in ns), and
 * VIEW is a --guest-view's output, whose header lines give each VM's and
 * vCPU's time and its OS:USER:steal:idle shares, and the host's
 * OS:USER:idle:VM.
 *
 *   lab-exp-check 1 TRUTH ROWS       function mix of one process, within 3 points
 *                                    of the guest's own measure
 *   lab-exp-check 2 TRUTH ROWS       two instances of a program (guest pids 1 and 2):
 *                                    their split per function within 3 points of
 *                                    the guest's measure
 *   lab-exp-check 3 VCPU ROWS        two vCPUs on one pCPU: [steal] (on vcpuN) 50% +- 5
 *                                    of each vCPU's time
 *   lab-exp-check 4 GUEST ROWS SCRIPT
 *                                    three VMs on one pCPU: steal charged to the other
 *                                    VMs = the time the other VMs' processes ran (perf
 *                                    script --show-switch-events -F pid,cpu,time)
 *                                    +- 1 point, steal 66.7% +- 5
 *   lab-exp-check 5 GUEST HOST       busy a third, then halted: [idle] 66.7% +- 5, and
 *                                    within 2 points of the host's idle share
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
#include "report-rows.h"

#define MAX_MIX		8

/* ROWS' keys, after sample and period */
enum { K_VM, K_VCPU, K_PID, K_DSO, K_SYM, NKEYS };

#define CLOCK		"cpu-clock"
#define BLANK		"vcpu-blank"

static struct rr_report rep;

/* Is @row one of @event's ("cpu-clock" matches "cpu-clock:HG")? */
static int of_event(const struct rr_row *row, const char *event)
{
	size_t n = strlen(event);

	return !strncmp(row->event, event, n) && (!row->event[n] || row->event[n] == ':');
}

/* cpu-clock samples of a guest in @function, of guest pid @pid (-1: any). */
static double lookup(const char *function, int pid)
{
	double sum = 0;
	int i;

	for (i = 0; i < rep.nrows; i++) {
		const struct rr_row *w = &rep.rows[i];

		if (of_event(w, CLOCK) && strcmp(w->key[K_VM], "-") &&
		    !strcmp(w->key[K_SYM], function) &&
		    (pid < 0 || rr_pid(w->key[K_PID], NULL) == pid))
			sum += w->samples;
	}
	return sum;
}

/* vcpu-blank time (ns) of @comm ("[steal]") in VM @vm, vCPU @vcpu (-1: any),
 * whose object starts with @by. */
static double blank(int vm, int vcpu, const char *comm, const char *by)
{
	double sum = 0;
	const char *c;
	int i;

	for (i = 0; i < rep.nrows; i++) {
		const struct rr_row *w = &rep.rows[i];

		if (!of_event(w, BLANK) || atoi(w->key[K_VM]) != vm ||
		    (vcpu >= 0 && atoi(w->key[K_VCPU]) != vcpu))
			continue;
		rr_pid(w->key[K_PID], &c);
		if (!strcmp(c, comm) && !strncmp(w->key[K_DSO], by, strlen(by)))
			sum += w->period;
	}
	return sum;
}

static void need_keys(const char *path)
{
	if (!rep.nrows)
		die("%s: no rows (want perf report -t ';' -F sample,period,vm,vcpu,pid,dso,sym)",
		    path);
	if (rep.nkeys != NKEYS)
		die("%s: %d keys a row, want vm,vcpu,pid,dso,sym", path, rep.nkeys);
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
	double obs = 0, want = 0, built = 0;
	int n = read_mix(truth, mix), i;

	n = n > 3 ? 3 : n;		/* process A */
	for (i = 0; i < n; i++) {
		obs += lookup(mix[i].name, -1);
		want += work(mix, i);
		built += mix[i].loops;
	}
	figure(obs > 300, "%.0f samples in the mix's functions (want > 300)", obs);
	for (i = 0; i < n && obs > 0; i++) {
		double got = 100 * lookup(mix[i].name, -1) / obs;
		double exp = 100 * work(mix, i) / want;

		figure(fabs(got - exp) <= 3.0, "%-10s %6.2f%% of the mix, %s %6.2f%% (+-3; built as %.2f%%)",
		       mix[i].name, got, mix[0].ticks > 0 ? "the guest's measure" : "built as", exp,
		       100 * mix[i].loops / built);
	}
}

/*
 * Experiment 2 (Table 7): two instances of one program, guest pids 1 and
 * 2, function by function.
 */
static void experiment2(const char *truth)
{
	struct mix mix[MAX_MIX];
	int n = read_mix(truth, mix), i;

	if (n != 6)
		die("%s: want the mix of two processes", truth);
	for (i = 0; i < 3; i++) {
		const char *fa = mix[i].name, *fb = mix[i + 3].name;
		/* the kernel's work for each process has its own function */
		int kernel = strcmp(fa, fb) != 0;
		double a = lookup(fa, kernel ? -1 : 1);
		double b = lookup(fb, kernel ? -1 : 2);
		double share = a + b > 0 ? 100 * a / (a + b) : 0;
		double wa = work(mix, i), wb = work(mix, i + 3);
		double want = wa + wb > 0 ? 100 * wa / (wa + wb) : 50;

		/*
		 * The processes' functions are checked.  The guest kernel's
		 * work for each (kwork_a, kwork_b) are two kernel functions,
		 * whose samples go to whichever process's page tables were
		 * loaded: printed only.
		 */
		if (kernel) {
			printf("lab-exp:   info kernel     kwork_a %5.0f  kwork_b %5.0f  -> %5.2f%% : "
			       "%5.2f%% (the guest kernel's work for each; %s %.2f : %.2f)\n", a, b,
			       share, a + b > 0 ? 100 - share : 0,
			       mix[0].ticks > 0 ? "the guest's measure" : "built as", want, 100 - want);
			continue;
		}
		figure(a + b > 100 && fabs(share - want) <= 3.0,
		       "%-10s pid 1 %5.0f  pid 2 %5.0f  -> %5.2f%% : %5.2f%% (%s %.2f : %.2f, +-3)",
		       fa, a, b, share, a + b > 0 ? 100 - share : 0,
		       mix[0].ticks > 0 ? "the guest's measure" : "built as", want, 100 - want);
	}
}

/* The one VM of experiments 1, 2, 3 and 5. */
static const struct rr_vm *one_vm(void)
{
	if (rep.nvms != 1)
		die("want one '# VM pid' header line, got %d", rep.nvms);
	return &rep.vms[0];
}

/*
 * Experiment 3 (Tables 8-9): two vCPUs of one VM on one pCPU.  Each
 * vCPU's steal charged to the other, "[steal]" in "(on vcpuN)", against
 * the vCPU's time.
 */
static void experiment3(void)
{
	const struct rr_vm *vm = one_vm();
	int id;

	for (id = 0; id < 2; id++) {
		const struct rr_share *v = &vm->vcpu[id];
		char other[32];
		double on;

		if (!vm->has_vcpu[id])
			die("no '#   vcpu%d:' header line", id);
		snprintf(other, sizeof(other), "(on vcpu%d)", !id);
		on = blank(vm->pid, id, "[steal]", other) / 1e6;
		figure(v->ms > 0 && fabs(100 * on / v->ms - 50) <= 5.0,
		       "vcpu%d: [steal] %-11s %6.2f%% of its %.0f ms (50 +-5); steal in all %6.2f%%",
		       id, other, v->ms ? 100 * on / v->ms : 0, v->ms, v->pct[2]);
	}
}

/*
 * How long the other VMs' processes than @vm held the pCPU while @vm's vCPU
 * waited for it, in ms, from the host scheduler's own record: SCRIPT is
 * perf script --show-switch-events -F pid,tid,cpu,time,guest_cpl, whose
 * switch lines are "PID/TID [CPU] TIME: PERF_RECORD_SWITCH_CPU_WIDE IN|OUT
 * ...", the task that comes in or goes out (a VMM's threads, in guest mode
 * or not, are its VM's time), and whose samples are "PID/TID [CPU] TIME:
 * cpl:N" in guest mode.  Exact where a sampling timer misses ticks.
 *
 * @vm's vCPU is the thread of its guest-mode samples, all on one pCPU, and
 * it waits from each time it goes out until it comes in again: its
 * thread's host work before its first guest-mode sample (setting up,
 * faulting its memory in) is a vCPU's too, and others' time while it
 * waits then is its steal (on a loaded machine that start took 90 ms,
 * 1.1 points of the guest's time).  Between a task's OUT and the next
 * one's IN the pCPU is in the scheduler, either task's time, which splits
 * it where perf cannot see: *@lo is the time from another VM's IN to its
 * OUT, *@hi adds the switches to and from them (1.5 points of the guest's
 * time on a loaded machine: 481 waits, three switches of about 0.09 ms
 * each).  *@whole: the other VMs' IN to OUT time on that pCPU over the
 * whole recording (their VMMs setting up and writing bundles too), for
 * the record.
 */
#define MAX_VCPUS	8

/* One switch line of SCRIPT: 1 and its fields, or 0 for another line. */
static int switch_line(const char *line, int *pid, int *tid, int *cpu, double *t, char dir[8])
{
	return sscanf(line, " %d/%d [%d] %lf: PERF_RECORD_SWITCH%*s %7s", pid, tid, cpu, t, dir) == 5;
}

static int is_other_vm(int pid, int vm)
{
	int i;

	for (i = 0; i < rep.nvms; i++)
		if (rep.vms[i].pid == pid && pid != vm)
			return 1;
	return 0;
}

/* Whether @tid is one of the @n vCPU threads in @vt. */
static int is_vcpu(const int *vt, int n, int tid)
{
	int i;

	for (i = 0; i < n; i++)
		if (vt[i] == tid)
			return 1;
	return 0;
}

static void other_vms(const char *script, int vm, double *lo, double *hi, double *whole)
{
	FILE *f = fopen(script, "r");
	double t, since = 0, out_at = -1, wait_from = -1, s = 0, g = 0, ps = 0, pg = 0, w = 0;
	int vt[MAX_VCPUS], nvt = 0, vcpu_cpu = -1, on_pid = -1, on_tid = -1, out_pid = -1;
	int pid, tid, cpu, cpl;
	char line[512], dir[8];

	if (!f)
		die("cannot open %s", script);
	/* @vm's vCPU threads and their pCPU, from its guest-mode samples */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %d/%d [%d] %lf: cpl:%d", &pid, &tid, &cpu, &t, &cpl) != 5 ||
		    pid != vm)
			continue;
		if (vcpu_cpu < 0)
			vcpu_cpu = cpu;
		if (cpu != vcpu_cpu)
			die("%s: VM pid %d ran its guest on pCPU %d and %d (one pCPU wanted)",
			    script, vm, vcpu_cpu, cpu);
		if (is_vcpu(vt, nvt, tid))
			continue;
		if (nvt == MAX_VCPUS)
			die("%s: VM pid %d has more than %d vCPU threads", script, vm, MAX_VCPUS);
		vt[nvt++] = tid;
	}
	if (vcpu_cpu < 0)
		die("%s: no guest-mode sample of VM pid %d (want perf script -F pid,tid,cpu,time,guest_cpl)",
		    script, vm);
	/*
	 * A wait runs from a vCPU's OUT to its next IN; what the other VMs
	 * took during it (ps, pg) counts once the vCPU comes back in, so a
	 * wait that never ends (after the vCPU's last switch) counts nothing.
	 */
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		int vcpu;

		if (!switch_line(line, &pid, &tid, &cpu, &t, dir) || cpu != vcpu_cpu)
			continue;
		vcpu = is_vcpu(vt, nvt, tid);
		if (!strcmp(dir, "IN")) {
			/* the switch from out_pid to pid, while a vCPU waited */
			if (on_tid < 0 && out_at >= 0 && wait_from >= 0 &&
			    (is_other_vm(out_pid, vm) || is_other_vm(pid, vm)))
				pg += t - fmax(out_at, wait_from);
			if (vcpu && wait_from >= 0) {
				s += ps;
				g += pg;
				wait_from = -1;
			}
			on_pid = pid;
			on_tid = tid;
			since = t;
			continue;
		}
		if (strcmp(dir, "OUT") || on_tid != tid)
			continue;
		if (is_other_vm(pid, vm)) {
			w += t - since;
			if (wait_from >= 0)
				ps += t - fmax(since, wait_from);
		}
		if (vcpu) {
			wait_from = t;
			ps = 0;
			pg = 0;
		}
		on_tid = -1;
		out_pid = on_pid;
		out_at = t;
	}
	fclose(f);
	*lo = s * 1e3;
	*hi = (s + g) * 1e3;
	*whole = w * 1e3;
}

/*
 * Experiment 4 (Tables 12-13): three VMs on one pCPU.  A guest's steal
 * charged to the other VMs ("[steal]" in "(VMj)") must match the time the
 * other VMs' processes held the pCPU while its vCPU waited, as the host's
 * context switches record it (other_vms(): from their IN to their OUT, up
 * to that with the switches to and from them), within 1 point of the
 * guest's time.  The rest of the guest's steal, "(outside)", is host work
 * (its exits, switching between the vCPU threads), printed.
 */
static void experiment4(const char *script)
{
	int k;

	if (rep.nvms != 3)
		die("want 3 '# VM pid' header lines, one per VM, got %d", rep.nvms);
	for (k = 0; k < 3; k++) {
		const struct rr_vm *vm = &rep.vms[k];
		double lo, hi, whole, by_vms = blank(vm->pid, -1, "[steal]", "(VM") / 1e6;

		if (!vm->all.ms)
			die("VM pid %d: no time", vm->pid);
		other_vms(script, vm->pid, &lo, &hi, &whole);
		figure(100 * (lo - by_vms) / vm->all.ms <= 1.0 && 100 * (by_vms - hi) / vm->all.ms <= 1.0,
		       "VM pid %d: [steal] by the other VMs %6.2f%%, their processes' time %6.2f%% "
		       "to %6.2f%% with the switches to and from them, of its %.0f ms (+-1; "
		       "%.2f%% over the whole recording)", vm->pid,
		       100 * by_vms / vm->all.ms, 100 * lo / vm->all.ms, 100 * hi / vm->all.ms,
		       vm->all.ms, 100 * whole / vm->all.ms);
		figure(fabs(vm->all.pct[2] - 200.0 / 3) <= 5.0,
		       "VM pid %d: guest [steal] %6.2f%% (66.67 +-5), of which host work (outside) %.2f%%",
		       vm->pid, vm->all.pct[2], vm->all.pct[2] - 100 * by_vms / vm->all.ms);
	}
}

/* Experiment 5 (Tables 14-15): busy for a third, then HLT-idle. */
static void experiment5(void)
{
	const struct rr_vm *vm = one_vm();
	double gi = vm->all.pct[3], hi = rep.total.pct[2];

	if (!rep.has_total)
		die("no '# Total:' header line (the host view's)");
	if (strcmp(vm->all.labels, "OS:USER:steal:idle") || strcmp(rep.total.labels, "OS:USER:idle:VM"))
		die("unexpected headers '%s' and '%s'", vm->all.labels, rep.total.labels);
	figure(fabs(gi - 200.0 / 3) <= 5.0, "guest [idle] %6.2f%% (66.67 +-5)", gi);
	figure(fabs(gi - hi) <= 2.0, "guest [idle] %6.2f%%, host idle %6.2f%% (+-2)", gi, hi);
	figure(vm->all.pct[2] <= 5.0, "guest [steal] %6.2f%% (<= 5: halted time is not steal)",
	       vm->all.pct[2]);
}

int main(int argc, char **argv)
{
	int exp = argc > 1 ? atoi(argv[1]) : 0;

	if (argc != 4 + (exp == 4) || exp < 1 || exp > 5)
		die("usage: lab-exp-check 1|2 TRUTH ROWS | 3 VCPU ROWS | 4 GUEST ROWS SCRIPT | 5 GUEST HOST");
	if (exp <= 2) {
		rr_read(&rep, argv[3], NULL);
		need_keys(argv[3]);
	} else {
		rr_read(&rep, argv[2], "");
		rr_read(&rep, argv[3], exp == 5 ? "" : NULL);
		if (exp != 5)
			need_keys(argv[3]);
	}
	switch (exp) {
	case 1: experiment1(argv[2]); break;
	case 2: experiment2(argv[2]); break;
	case 3: experiment3(); break;
	case 4: experiment4(argv[4]); break;
	case 5: experiment5(); break;
	}
	printf("lab-exp: exp%d %s\n", exp, failed ? "FAIL" : "PASS");
	return failed;
}
