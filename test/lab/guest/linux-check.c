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

#include "vmctx.h"

#define CTX_VALID	0x01
#define CTX_ISA_VMX	0x02
#define CTX_ISA_SVM	0x04
#define CTX_GUEST	0x08
#define CTX_CPL(f)	(((f) >> 4) & 3)
#define CTX_HOST	0x40

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
	unsigned int cpu, pid, tid, flags, best = 0;
	static unsigned int count[1 << 16];
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "S %u %u %u %*u %*x %*u %*x %*u %*x %*u 0x%x", &cpu, &pid, &tid,
			   &flags) != 4 || !(flags & CTX_VALID) || pid >= (1u << 16))
			continue;
		if (++count[pid] > count[best])
			best = pid;
	}
	fclose(f);
	printf("lab-linux-check: the VM is host pid %u (%u samples with a vCPU)\n", best,
	       count[best]);
	return best;
}

/* Pass 1: the host-to-guest clock offset that the guest samples agree with. */
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

static int64_t fit_offset(const char *path, int qemu, struct vmctx_bundle *b)
{
	struct vmctx_clock_fit *fit = vmctx_clock_fit_new(b);
	uint64_t time, cr3, agree = 0, used = 0;
	unsigned int pid, flags;
	int64_t offset = VMCTX_OFFSET_UNKNOWN;
	char line[512], name[64], end[32];
	FILE *f = fopen(path, "r");

	if (!f || !fit) {
		perror(path);
		exit(2);
	}
	size_t n = vmctx_bundle_ntasks(b), i;
	uint64_t *first = calloc(n + 1, 8), *last = calloc(n + 1, 8), *cnt = calloc(n + 1, 8);

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "S %*u %u %*u %" SCNu64 " %*x %*u 0x%" SCNx64 " %*u %*x %*u 0x%x",
			   &pid, &time, &cr3, &flags) == 4 && (int)pid == qemu &&
		    (flags & CTX_GUEST) && CTX_CPL(flags) == 3) {
			/*
			 * User mode only: guest kernel threads and idle run on
			 * the last process's page tables (lazy TLB), so a
			 * kernel-mode CR3 can be a dead process's root.
			 */
			int t = vmctx_bundle_find_task(b, cr3, VMCTX_TIME_NONE);

			vmctx_clock_fit_add(fit, time, cr3);
			if (t >= 0) {
				if (!cnt[t]++)
					first[t] = time;
				last[t] = time;
			}
		}
	}
	/* the task table and the roots the samples carry, for the record */
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
	/* what each unambiguous process says, for the record */
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
	free(first);
	free(last);
	free(cnt);
	fclose(f);
	if (vmctx_clock_fit_offset(fit, &offset, &agree, &used))
		printf("lab-linux-check: no clock offset could be fitted; roots must be unique\n");
	else
		printf("lab-linux-check: clock offset guest - host = %.6f s, agreed by %" PRIu64
		       " of %" PRIu64 " samples with known roots\n", offset / 1e9, agree, used);
	vmctx_clock_fit_free(fit);
	return offset;
}

static void print_view(struct vmctx_session *s, const char *title, enum vmctx_view view,
		       int vm_tgid, int rows)
{
	struct vmctx_table *t = vmctx_table_new(s, view, vm_tgid, -1);
	char *text;

	if (t && !vmctx_table_format(t, rows, &text)) {
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

int main(int argc, char **argv)
{
	const char *samples = NULL, *bundle = NULL, *syms = NULL;
	uint64_t user = 0, root_ok = 0, in_hot = 0, right = 0, blip = 0;
	uint64_t inst[2] = { 0, 0 };
	int inst_task[2] = { -1, -1 }, qemu = -1, rows = 15, c, err, blip_task = -1;
	int work_pid[2] = { -1, -1 };
	unsigned long work[2] = { 0, 0 };
	struct vmctx_session_opts so = { .sz = sizeof(so) };
	int64_t offset;
	uint64_t window = 0, early = 0, with_pcid = 0, with_pti_bit = 0;
	size_t i;
	uint64_t roots[64], rcount[64] = { 0 }, rhot[64] = { 0 }, rfirst[64], rlast[64];
	int nroots = 0;
	struct vmctx_bundle *b = NULL;
	struct vmctx_session *s;
	char line[512];
	FILE *f;

	while ((c = getopt(argc, argv, "s:b:p:y:t:w:")) != -1) {
		switch (c) {
		case 's': samples = optarg; break;
		case 'b': bundle = optarg; break;
		case 'p': qemu = atoi(optarg); break;
		case 'y': syms = optarg; break;
		case 't': rows = atoi(optarg); break;
		case 'w':
			if (sscanf(optarg, "%d:%lu,%d:%lu", &work_pid[0], &work[0], &work_pid[1],
				   &work[1]) != 4)
				goto usage;
			break;
		default: goto usage;
		}
	}
	if (!samples || !bundle || !syms || qemu < 0)
		goto usage;
	if (!qemu)
		qemu = busiest_vm(samples);
	read_syms(syms);
	vmctx_set_log(on_log, NULL);
	err = vmctx_bundle_read_file(bundle, NULL, &b);
	if (err) {
		fprintf(stderr, "lab-linux-check: %s: %s\n", bundle, vmctx_strerror(err));
		return 2;
	}
	printf("lab-linux-check: bundle %s: host %s, kernel %s, %zu tasks, %zu objects\n", bundle,
	       vmctx_bundle_hostname(b), vmctx_bundle_release(b), vmctx_bundle_ntasks(b),
	       vmctx_bundle_nobjects(b));

	/*
	 * L1's perf clock and L2's CLOCK_MONOTONIC are not related by anything
	 * recorded here: fit the offset from the samples (pass 1).
	 */
	offset = fit_offset(samples, qemu, b);
	for (i = 0; i < vmctx_bundle_ntasks(b); i++) {
		const char *comm;
		uint64_t start;

		vmctx_bundle_task(b, i, NULL, NULL, NULL, &comm, &start, NULL);
		if (!strcmp(comm, "vmctx-agent"))
			window = start;
	}
	s = vmctx_session_new(&so);
	vmctx_session_add_vm(s, qemu, "guest1");
	vmctx_session_attach_bundle(s, qemu, b, offset);

	f = fopen(samples, "r");
	if (!f) {
		perror(samples);
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned int cpu, pid, tid, mode, asid, exit_reason, vcpu, flags;
		uint64_t time, ip, cr3;
		struct vmctx_sample smp = { .sz = sizeof(smp) };

		if (line[0] == 'L') {
			uint64_t n = strtoull(line + 2, NULL, 10);

			vmctx_session_lost(s, 0, 0, n);
			continue;
		}
		if (sscanf(line, "S %u %u %u %" SCNu64 " 0x%" SCNx64 " %u 0x%" SCNx64 " %u 0x%x %u 0x%x",
			   &cpu, &pid, &tid, &time, &ip, &mode, &cr3, &asid, &exit_reason, &vcpu,
			   &flags) != 11)
			continue;
		smp.time = time;
		smp.cpu = cpu;
		smp.pid = pid;
		smp.tid = tid;
		smp.vm_tgid = -1;
		smp.vcpu = -1;
		smp.ip = ip;
		if ((flags & CTX_VALID) && (int)pid == qemu) {
			smp.vm_tgid = pid;
			smp.vcpu = vcpu;
			smp.isa = flags & CTX_ISA_VMX ? VMCTX_ISA_VMX : VMCTX_ISA_SVM;
			smp.exit_reason = exit_reason;
			smp.cr3 = cr3;
			smp.cpl = CTX_CPL(flags);
			if (flags & CTX_GUEST)
				smp.flags = VMCTX_SAMPLE_GUEST;
			else if (flags & CTX_HOST)
				smp.flags = VMCTX_SAMPLE_HOST_VCPU;
		} else if (!pid) {
			smp.flags = VMCTX_SAMPLE_IDLE;
		}
		/* no host symbols here: name host work by mode (perf's cpumode) */
		if (!(smp.flags & (VMCTX_SAMPLE_GUEST | VMCTX_SAMPLE_IDLE))) {
			bool user = mode == 2;

			smp.flags |= user ? VMCTX_SAMPLE_USER : 0;
			smp.host_sym = user ? "[host user]" : "[host kernel]";
			smp.host_dso = (int)pid == qemu ? "qemu" : user ? "[host]" : "vmlinux";
		}
		if (smp.time && vmctx_session_sample(s, &smp))
			continue;

		if (!(flags & CTX_GUEST) || CTX_CPL(flags) != 3 || (int)pid != qemu)
			continue;
		/* the agent's window: processes before it are not in its bundle */
		if (offset != VMCTX_OFFSET_UNKNOWN && (int64_t)time + offset < (int64_t)window) {
			early++;
			continue;
		}
		user++;
		/* what normalisation has to drop: the PCID, PTI's user-half bit */
		if (cr3 & 0xfff)
			with_pcid++;
		if (cr3 & 0x1000)
			with_pti_bit++;
		{
			uint64_t r = vmctx_cr3_normalize(cr3, 0);
			int k;

			for (k = 0; k < nroots && roots[k] != r; k++)
				;
			if (k == nroots && nroots < 64) {
				roots[nroots] = r;
				rfirst[nroots] = time;
				nroots++;
			}
			if (k < 64) {
				rcount[k]++;
				rlast[k] = time;
				if (fn_at(ip))
					rhot[k]++;
			}
		}
		{
			int task = offset == VMCTX_OFFSET_UNKNOWN ?
				   vmctx_bundle_find_task(b, cr3, VMCTX_TIME_NONE) :
				   vmctx_bundle_find_task(b, cr3, time + offset);
			const char *sym = NULL, *dso = NULL, *comm = NULL;
			struct fn *truth = fn_at(ip);
			size_t k;

			for (k = 0; k < vmctx_bundle_ntasks(b); k++) {
				uint64_t root;

				vmctx_bundle_task(b, k, &root, NULL, NULL, NULL, NULL, NULL);
				if (vmctx_cr3_normalize(root, 0) == vmctx_cr3_normalize(cr3, 0)) {
					root_ok++;
					break;
				}
			}
			if (!truth)
				continue;
			in_hot++;
			truth->truth++;
			if (task < 0)
				continue;
			vmctx_bundle_task(b, task, NULL, NULL, NULL, &comm, NULL, NULL);
			vmctx_bundle_resolve_user(b, task, ip, &sym, &dso);
			if (!comm || (strcmp(comm, "hot") && strcmp(comm, "blip")) || !sym ||
			    strcmp(sym, truth->name))
				continue;
			right++;
			if (!strcmp(comm, "blip")) {
				blip++;
				blip_task = task;
				continue;
			}
			truth->right++;
			for (k = 0; k < 2; k++) {
				if (inst_task[k] < 0)
					inst_task[k] = task;
				if (inst_task[k] == task) {
					inst[k]++;
					break;
				}
			}
		}
	}
	fclose(f);
	vmctx_session_finish(s, 0);

	printf("lab-linux-check: %" PRIu64 " guest-user samples in the agent's window (from "
	       "guest %.3f s; %" PRIu64 " before it left out), %" PRIu64 " in hot's code\n",
	       user, window / 1e9, early, in_hot);
	for (c = 0; c < nroots; c++)
		printf("lab-linux-check: root 0x%" PRIx64 ": %" PRIu64 " user samples (%" PRIu64
		       " in hot's code), host [%.3f, %.3f] s\n", roots[c], rcount[c], rhot[c],
		       rfirst[c] / 1e9, rlast[c] / 1e9);
	printf("lab-linux-check: raw CR3 of the guest-user samples: %" PRIu64 " carry a PCID "
	       "(bits 11:0), %" PRIu64 " PTI's user-half bit (12)\n", with_pcid, with_pti_bit);
	CHECK(user > 200 && pct(root_ok, user) >= 99.0,
	      "CR3 is a bundle root for %" PRIu64 "/%" PRIu64 " guest-user samples (%.2f%%)",
	      root_ok, user, pct(root_ok, user));
	CHECK(in_hot > 200 && pct(right, in_hot) >= 95.0,
	      "%" PRIu64 "/%" PRIu64 " samples in hot's code resolve to hot/blip and the right "
	      "function (%.2f%%)", right, in_hot, pct(right, in_hot));
	{
		uint64_t sum = fns[0].right + fns[1].right + fns[2].right;
		static const double want[] = { 60.0, 30.0, 10.0 };
		static const char *const name[] = { "hot_alpha", "hot_beta", "hot_gamma" };
		int k, j;

		for (k = 0; k < 3; k++)
			for (j = 0; j < nfns; j++)
				if (!strcmp(fns[j].name, name[k])) {
					double got = pct(fns[j].right, sum);

					CHECK(got > want[k] - 5 && got < want[k] + 5,
					      "%s share %.2f%% (want %.0f%% +- 5)", name[k], got,
					      want[k]);
				}
	}
	/*
	 * The two instances are separate processes, and each gets the share
	 * of the samples that its share of the work says: about half, but the
	 * guest's scheduler decides, so the work each reported is the truth.
	 */
	{
		double share = pct(inst[0], inst[0] + inst[1]), want = -1;
		int pid0 = -1, k;

		if (inst_task[0] >= 0)
			vmctx_bundle_task(b, inst_task[0], NULL, &pid0, NULL, NULL, NULL, NULL);
		for (k = 0; k < 2; k++)
			if (work_pid[k] == pid0 && work[0] + work[1])
				want = 100.0 * work[k] / (work[0] + work[1]);
		CHECK(inst[0] && inst[1] && want >= 0 && share > want - 3 && share < want + 3,
		      "two hot instances split %" PRIu64 ":%" PRIu64 " (%.2f%% : %.2f%%), their work "
		      "%.2f%% : %.2f%% (+- 3)", inst[0], inst[1], share, 100 - share, want,
		      want >= 0 ? 100 - want : -1);
		CHECK(share > 40 && share < 60, "the split is about 50/50 (%.2f%%, 50 +- 10)", share);
	}
	{
		uint64_t exit_ns = VMCTX_TIME_NONE;

		if (blip_task >= 0)
			vmctx_bundle_task(b, blip_task, NULL, NULL, NULL, NULL, NULL, &exit_ns);
		CHECK(blip > 0 && exit_ns != VMCTX_TIME_NONE,
		      "blip, exited during the window, has %" PRIu64 " samples and an exit time",
		      blip);
	}

	print_view(s, "guest level: guest1 (VM1)", VMCTX_VIEW_GUEST, qemu, rows);
	print_view(s, "host level", VMCTX_VIEW_HOST, -1, rows);
	print_view(s, "per vCPU: guest1 (VM1)", VMCTX_VIEW_VCPUS, qemu, rows);
	print_view(s, "unified", VMCTX_VIEW_UNIFIED, -1, rows);
	vmctx_session_free(s);
	vmctx_bundle_free(b);
	printf("lab-linux-check: RESULT %s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
usage:
	fprintf(stderr, "usage: lab-linux-check -s SAMPLES -b BUNDLE -p QEMU_PID -y SYMS [-t ROWS] [-w PID:ROUNDS,PID:ROUNDS]\n");
	return 2;
}
