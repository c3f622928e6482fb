// SPDX-License-Identifier: GPL-2.0
/*
 * lab-check: compare lab-record samples with lab-vmm's ground truth.
 *
 * usage: lab-check -t truth.txt -s samples.txt -i svm|vmx [-S] [-m min_guest]
 *   -S  stock mode: the kernel has no PERF_SAMPLE_GUEST_CTX; only measure how
 *       often perf's guest user/kernel flag disagrees with the ring of the
 *       code at the sample IP (informational, exits 0 if there were samples)
 *
 * Checks (patched kernel), each printed with its figures:
 *   cr3      >= 99% of guest-mode samples in a range owned by one process
 *            carry that process's root
 *   pcid     ... and, when the guest uses PCID (truth "pcid 1": the L1 CPU has
 *            it, as bochs' Haswell does), its PCID (A 1, B 2) in CR3 11:0
 *   cpl      100% of guest-mode samples in known code carry the range's ring,
 *            in the block's CPL and in perf's guest user/kernel flag
 *   ip       >= 99% of guest-mode samples fall in known guest code
 *   asid     non-zero in every guest-mode sample; VMX: one VPID per vCPU
 *   vcpu     the vCPU id is the one of the sampling thread, the ISA flag is
 *            right, and only vCPU threads carry a valid block
 *   host     host-mode samples of a vCPU thread that carry a valid block
 *            have the HOST_FOR_VCPU flag and a known exit reason
 * Exits 1 on any miss, 2 on bad input or too few samples.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "samples.h"

#define MAX_RANGES		64
#define MAX_VCPUS		8
#define MAX_ASIDS		64
#define MAX_EXITS		8

struct range {
	uint64_t start, end;
	char name[64];
	int ring;
	char root;
	unsigned long samples;
};

static struct range ranges[MAX_RANGES];
static int nr_ranges;
static uint64_t root_a, root_b;
static int pcid;	/* the guest tags root A with PCID 1, B with 2 */
static int vcpu_tid[MAX_VCPUS], nr_vcpus, vm_pid;
static int failed;

/* What the command line asks for. */
struct opts {
	const char *truth, *samples, *isa;
	unsigned long min_guest;
	int stock, svm;
};

/* What the samples showed; the checks are figures over these counts. */
struct tally {
	unsigned long total, lost, by_idle, by_vmm, by_other;
	/* perf's guest user/kernel label (misc), patched or not */
	unsigned long misc_guest, misc_in_range, misc_bad;
	/* valid blocks outside vCPU threads */
	unsigned long vmm_other, vmm_other_ok, stray;
	/* valid blocks in vCPU threads */
	unsigned long vcpu_ok, isa_ok;
	unsigned long host, host_ok, unknown_exit;
	uint32_t exit_val[MAX_EXITS];
	unsigned long exit_hist[MAX_EXITS];
	int nr_exit;
	unsigned long guest, asid_zero, vmx_vpid_changes;
	uint32_t vpid_seen[MAX_VCPUS], asid_list[MAX_ASIDS];
	int nr_asids;
	unsigned long in_range, cpl_ok, misc_ok, cr3_checked, cr3_ok, pcid_ok;
	/* guest-mode samples outside known code: the first IPs, each counted */
	struct { uint64_t ip, cr3; unsigned int cpl; unsigned long n; } stray_ip[16];
	int nr_stray_ip;
};

__attribute__((format(printf, 3, 4)))
static void result(const char *name, int ok, const char *fmt, ...)
{
	va_list ap;

	printf("lab-check: %-5s %s: ", name, ok ? "PASS" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!ok)
		failed = 1;
}

static double pct(unsigned long a, unsigned long b)
{
	return b ? 100.0 * a / b : 0.0;
}

static void add_range(unsigned long long s, unsigned long long e, const char *name, int ring,
		      char root)
{
	struct range *r = &ranges[nr_ranges++];

	r->start = s;
	r->end = e;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->ring = ring;
	r->root = root;
}

static void read_truth_line(const char *line)
{
	char name[64], root;
	unsigned long long s, e;
	int id, tid, ring;

	if (sscanf(line, "vm %d", &id) == 1) {
		vm_pid = id;
	} else if (sscanf(line, "root A %llx", &s) == 1) {
		root_a = s;
	} else if (sscanf(line, "root B %llx", &s) == 1) {
		root_b = s;
	} else if (sscanf(line, "pcid %d", &pcid) == 1) {
		;
	} else if (sscanf(line, "range %llx %llx %63s ring %d root %c",
			  &s, &e, name, &ring, &root) == 5 && nr_ranges < MAX_RANGES) {
		add_range(s, e, name, ring, root);
	} else if (sscanf(line, "vcpu %d tid %d", &id, &tid) == 2 &&
		   id >= 0 && id < MAX_VCPUS) {
		vcpu_tid[id] = tid;
		if (id + 1 > nr_vcpus)
			nr_vcpus = id + 1;
	}
}

static void read_truth(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];

	if (!f) {
		perror(path);
		exit(2);
	}
	while (fgets(line, sizeof(line), f))
		read_truth_line(line);
	fclose(f);
	if (!nr_ranges || !root_a || !root_b || !nr_vcpus || !vm_pid) {
		fprintf(stderr, "lab-check: %s: incomplete ground truth\n", path);
		exit(2);
	}
}

static struct range *find_range(uint64_t ip)
{
	int i;

	for (i = 0; i < nr_ranges; i++)
		if (ip >= ranges[i].start && ip < ranges[i].end)
			return &ranges[i];
	return NULL;
}

static int vcpu_of_tid(int tid)
{
	int i;

	for (i = 0; i < nr_vcpus; i++)
		if (vcpu_tid[i] == tid)
			return i;
	return -1;
}

/* Exit reasons a vCPU of this guest can plausibly have taken. */
static int known_exit(int svm, uint32_t reason)
{
	if (svm)
		return reason <= 0x8f || (reason >= 0x400 && reason <= 0x403);
	/* VMX: basic reason in bits 15:0; bit 31 is VM-entry failure */
	return !(reason & 0x80000000u) && (reason & 0xffff) <= 75;
}


static void count_task(struct tally *t, const struct lab_sample *s)
{
	t->total++;
	if (!s->pid)
		t->by_idle++;
	else if (s->pid == (unsigned int)vm_pid)
		t->by_vmm++;
	else
		t->by_other++;
}

/* perf's own guest user/kernel label, patched or not */
static void count_perf_label(struct tally *t, const struct lab_sample *s, int stock)
{
	int user = s->misc == PERF_RECORD_MISC_GUEST_USER;
	struct range *r;

	if (!user && s->misc != PERF_RECORD_MISC_GUEST_KERNEL)
		return;
	t->misc_guest++;
	r = find_range(s->ip);
	if (!r)
		return;
	t->misc_in_range++;
	if (stock)
		r->samples++;
	if (user != (r->ring == 3))
		t->misc_bad++;
}

/*
 * A valid block outside the vCPU threads.  Other VMM threads load a vCPU
 * for vCPU ioctls (setup); that is host code for the vCPU.  Anywhere else a
 * valid block is wrong.
 */
static void count_other_thread(struct tally *t, const struct lab_sample *s)
{
	if (s->pid != (unsigned int)vm_pid) {
		t->stray++;
		return;
	}
	t->vmm_other++;
	if ((s->flags & PERF_GUEST_CTX_HOST_FOR_VCPU) && !(s->flags & PERF_GUEST_CTX_GUEST_MODE))
		t->vmm_other_ok++;
}

static void count_host_mode(struct tally *t, const struct lab_sample *s, int svm)
{
	int i;

	t->host++;
	for (i = 0; i < t->nr_exit && t->exit_val[i] != s->exit_reason; i++)
		;
	if (i == t->nr_exit && t->nr_exit < MAX_EXITS)
		t->exit_val[t->nr_exit++] = s->exit_reason;
	if (i < MAX_EXITS)
		t->exit_hist[i]++;
	if (!known_exit(svm, s->exit_reason))
		t->unknown_exit++;
	else if (s->flags & PERF_GUEST_CTX_HOST_FOR_VCPU)
		t->host_ok++;
}

static void count_asid(struct tally *t, const struct lab_sample *s, int svm, int vcpu)
{
	int i;

	if (!s->asid) {
		t->asid_zero++;
		return;
	}
	for (i = 0; i < t->nr_asids && t->asid_list[i] != s->asid; i++)
		;
	if (i == t->nr_asids && t->nr_asids < MAX_ASIDS)
		t->asid_list[t->nr_asids++] = s->asid;
	if (!svm && vcpu < MAX_VCPUS) {
		if (t->vpid_seen[vcpu] && t->vpid_seen[vcpu] != s->asid)
			t->vmx_vpid_changes++;
		t->vpid_seen[vcpu] = s->asid;
	}
}

/* A guest-mode sample in known code: its CPL, perf's label, its root. */
static void count_guest_code(struct tally *t, const struct lab_sample *s, struct range *r)
{
	int user = s->misc == PERF_RECORD_MISC_GUEST_USER;

	t->in_range++;
	r->samples++;
	if (lab_sample_cpl(s) == r->ring && !(s->flags & PERF_GUEST_CTX_HOST_FOR_VCPU))
		t->cpl_ok++;
	if (user == (r->ring == 3) && (user || s->misc == PERF_RECORD_MISC_GUEST_KERNEL))
		t->misc_ok++;
	if (r->root == '*')
		return;
	t->cr3_checked++;
	/* the root in bits 51:12; with PCID, the PCID in 11:0 */
	if ((s->cr3 & ~0xfffULL) == (r->root == 'A' ? root_a : root_b))
		t->cr3_ok++;
	if ((s->cr3 & 0xfff) == (pcid ? (r->root == 'A' ? 1u : 2u) : 0u))
		t->pcid_ok++;
}

/* A guest-mode sample in no known code: kept by IP, for the ip check to show. */
static void count_stray_ip(struct tally *t, const struct lab_sample *s)
{
	int i;

	for (i = 0; i < t->nr_stray_ip; i++)
		if (t->stray_ip[i].ip == s->ip) {
			t->stray_ip[i].n++;
			return;
		}
	if (t->nr_stray_ip == (int)(sizeof(t->stray_ip) / sizeof(t->stray_ip[0])))
		return;
	t->stray_ip[i].ip = s->ip;
	t->stray_ip[i].cr3 = s->cr3;
	t->stray_ip[i].cpl = lab_sample_cpl(s);
	t->stray_ip[i].n = 1;
	t->nr_stray_ip++;
}

/* A sample with a valid block (patched kernel). */
static void count_block(struct tally *t, const struct lab_sample *s, int svm)
{
	int vcpu = vcpu_of_tid(s->tid);
	struct range *r;

	if (vcpu < 0) {
		count_other_thread(t, s);
		return;
	}
	if (s->vcpu_id == (unsigned int)vcpu)
		t->vcpu_ok++;
	if (!!(s->flags & PERF_GUEST_CTX_ISA_SVM) == svm &&
	    !!(s->flags & PERF_GUEST_CTX_ISA_VMX) == !svm)
		t->isa_ok++;
	if (!(s->flags & PERF_GUEST_CTX_GUEST_MODE)) {
		count_host_mode(t, s, svm);
		return;
	}
	t->guest++;
	count_asid(t, s, svm, vcpu);
	r = find_range(s->ip);
	if (r)
		count_guest_code(t, s, r);
	else
		count_stray_ip(t, s);
}

static void read_samples(const struct opts *o, struct tally *t)
{
	struct lab_sample s;
	enum lab_record rec;
	FILE *f = fopen(o->samples, "r");
	uint64_t n;

	if (!f) {
		perror(o->samples);
		exit(2);
	}
	while ((rec = lab_samples_next(f, &s, &n)) != LAB_RECORD_END) {
		if (rec == LAB_RECORD_LOST) {
			t->lost += n;
			continue;
		}
		count_task(t, &s);
		count_perf_label(t, &s, o->stock);
		if (!o->stock && (s.flags & PERF_GUEST_CTX_VALID))
			count_block(t, &s, o->svm);
	}
	fclose(f);
}

static void print_summary(const struct opts *o, const struct tally *t)
{
	int i;

	printf("lab-check: %s, %d vCPUs: %lu samples (%lu lost), %lu perf-guest, %lu guest-mode in vCPU threads, %lu host-mode with a vCPU loaded\n",
	       o->isa, nr_vcpus, t->total, t->lost, t->misc_guest, t->guest, t->host);
	printf("lab-check:   by task: %lu idle, %lu VMM process, %lu other\n", t->by_idle,
	       t->by_vmm, t->by_other);
	for (i = 0; i < nr_ranges; i++)
		printf("lab-check:   %-14s ring %d root %c  %6lu guest samples\n", ranges[i].name,
		       ranges[i].ring, ranges[i].root, ranges[i].samples);
}

/* ip, cr3, pcid, cpl: where guest-mode samples fall and what they carry. */
static void check_code(const struct tally *t)
{
	result("ip", t->in_range * 100 >= t->guest * 99,
	       "%lu/%lu guest-mode samples in known code (%.2f%%)",
	       t->in_range, t->guest, pct(t->in_range, t->guest));
	for (int i = 0; i < t->nr_stray_ip; i++)
		printf("lab-check:   in no known code: ip 0x%llx cpl %u cr3 0x%llx, %lu samples\n",
		       (unsigned long long)t->stray_ip[i].ip, t->stray_ip[i].cpl,
		       (unsigned long long)t->stray_ip[i].cr3, t->stray_ip[i].n);
	result("cr3", t->cr3_checked && t->cr3_ok * 100 >= t->cr3_checked * 99,
	       "%lu/%lu samples in per-process code carry that process's root (%.2f%%)",
	       t->cr3_ok, t->cr3_checked, pct(t->cr3_ok, t->cr3_checked));
	result("pcid", t->cr3_checked && t->pcid_ok * 100 >= t->cr3_checked * 99,
	       "%lu/%lu of them carry the PCID of their process in CR3 bits 11:0 (guest %s PCID)",
	       t->pcid_ok, t->cr3_checked, pcid ? "uses" : "has no");
	result("cpl", t->in_range && t->cpl_ok == t->in_range,
	       "%lu/%lu CPL matches the ring of the code (%.2f%%)", t->cpl_ok, t->in_range,
	       pct(t->cpl_ok, t->in_range));
	result("cpl", t->in_range && t->misc_ok == t->in_range,
	       "%lu/%lu perf guest user/kernel flag matches the ring (%.2f%%)", t->misc_ok,
	       t->in_range, pct(t->misc_ok, t->in_range));
}

static void check_asid(const struct tally *t, int svm)
{
	int i;

	printf("lab-check:   %s values seen:", svm ? "ASID" : "VPID");
	for (i = 0; i < t->nr_asids; i++)
		printf(" %u", t->asid_list[i]);
	printf("\n");
	if (svm)
		result("asid", !t->asid_zero, "%lu guest-mode samples with ASID 0 (SVM ASIDs are per vCPU and per pCPU: %d distinct)",
		       t->asid_zero, t->nr_asids);
	else
		result("asid", !t->asid_zero && !t->vmx_vpid_changes && t->nr_asids == nr_vcpus,
		       "%lu samples with VPID 0, %lu VPID changes within a vCPU, %d VPIDs for %d vCPUs",
		       t->asid_zero, t->vmx_vpid_changes, t->nr_asids, nr_vcpus);
}

static void check_vcpu(const struct tally *t)
{
	unsigned long blocks = t->guest + t->host;

	result("vcpu", t->vcpu_ok == blocks && t->isa_ok == blocks && !t->stray &&
	       t->vmm_other_ok == t->vmm_other,
	       "vCPU id right in %lu/%lu, ISA flag right in %lu/%lu; other VMM threads: %lu/%lu host-for-vCPU; %lu valid blocks outside the VMM",
	       t->vcpu_ok, blocks, t->isa_ok, blocks, t->vmm_other_ok, t->vmm_other, t->stray);
}

static void check_host(const struct tally *t)
{
	int i;

	printf("lab-check:   host-mode exit reasons:");
	for (i = 0; i < t->nr_exit; i++)
		printf(" 0x%x:%lu", t->exit_val[i], t->exit_hist[i]);
	printf("\n");
	result("host", t->host && t->host_ok == t->host,
	       "%lu/%lu host-mode samples of vCPU threads carry HOST_FOR_VCPU and a known exit reason (%lu unknown reasons)",
	       t->host_ok, t->host, t->unknown_exit);
}

static int usage(const char *argv0)
{
	fprintf(stderr, "usage: %s -t truth -s samples -i svm|vmx [-S] [-m n]\n", argv0);
	return 2;
}

/* 0, or the exit status of a bad command line. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;

	while ((c = getopt(argc, argv, "t:s:i:Sm:")) != -1) {
		switch (c) {
		case 't': o->truth = optarg; break;
		case 's': o->samples = optarg; break;
		case 'i': o->isa = optarg; break;
		case 'S': o->stock = 1; break;
		case 'm': o->min_guest = strtoul(optarg, NULL, 0); break;
		default: return usage(argv[0]);
		}
	}
	if (!o->truth || !o->samples || !o->isa ||
	    (strcmp(o->isa, "svm") && strcmp(o->isa, "vmx"))) {
		fprintf(stderr, "lab-check: -t, -s and -i svm|vmx are required\n");
		return 2;
	}
	o->svm = !strcmp(o->isa, "svm");
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .min_guest = 200 };
	struct tally t = { 0 };
	int err = parse_opts(argc, argv, &o);

	if (err)
		return err;
	read_truth(o.truth);
	read_samples(&o, &t);
	print_summary(&o, &t);
	if (o.stock) {
		printf("lab-check: stock CPL label: %lu of %lu guest samples in known code mislabelled user/kernel (%.2f%%)\n",
		       t.misc_bad, t.misc_in_range, pct(t.misc_bad, t.misc_in_range));
		return t.misc_in_range ? 0 : 2;
	}
	if (t.guest < o.min_guest) {
		result("count", 0, "%lu guest-mode samples, need at least %lu", t.guest, o.min_guest);
		return 2;
	}
	check_code(&t);
	check_asid(&t, o.svm);
	check_vcpu(&t);
	check_host(&t);
	printf("lab-check: %s\n", failed ? "FAILED" : "all checks passed");
	return failed;
}
