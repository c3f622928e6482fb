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

/* from include/uapi/linux/perf_event.h of the patched tree */
#define CTX_VALID		0x01
#define CTX_ISA_VMX		0x02
#define CTX_ISA_SVM		0x04
#define CTX_GUEST_MODE		0x08
#define CTX_CPL_SHIFT		4
#define CTX_CPL_MASK		0x30
#define CTX_HOST_FOR_VCPU	0x40

#define MISC_GUEST_KERNEL	4
#define MISC_GUEST_USER		5

#define MAX_RANGES		64
#define MAX_VCPUS		8

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

static void read_truth(const char *path)
{
	char line[256], name[64], root;
	unsigned long long s, e;
	FILE *f = fopen(path, "r");
	int id, tid, ring;

	if (!f) {
		perror(path);
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
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
			struct range *r = &ranges[nr_ranges++];

			r->start = s;
			r->end = e;
			snprintf(r->name, sizeof(r->name), "%s", name);
			r->ring = ring;
			r->root = root;
		} else if (sscanf(line, "vcpu %d tid %d", &id, &tid) == 2 &&
			   id >= 0 && id < MAX_VCPUS) {
			vcpu_tid[id] = tid;
			if (id + 1 > nr_vcpus)
				nr_vcpus = id + 1;
		}
	}
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

int main(int argc, char **argv)
{
	unsigned long guest = 0, in_range = 0, cr3_checked = 0, cr3_ok = 0, cpl_ok = 0;
	unsigned long pcid_ok = 0;
	unsigned long misc_ok = 0, asid_zero = 0, vcpu_ok = 0, isa_ok = 0, host = 0, host_ok = 0;
	unsigned long total = 0, lost = 0, stray = 0, vmx_vpid_changes = 0, unknown_exit = 0;
	unsigned long misc_guest = 0, misc_in_range = 0, misc_bad = 0, min_guest = 200;
	unsigned long vmm_other = 0, vmm_other_ok = 0, exit_hist[8] = { 0 };
	unsigned long by_idle = 0, by_vmm = 0, by_other = 0;
	uint32_t exit_val[8];
	int nr_exit = 0;
	const char *truth = NULL, *samples = NULL, *isa = NULL;
	uint32_t vpid_seen[MAX_VCPUS] = { 0 }, asid_list[64];
	int c, stock = 0, svm, nr_asids = 0, i;
	char line[512];
	FILE *f;

	while ((c = getopt(argc, argv, "t:s:i:Sm:")) != -1) {
		switch (c) {
		case 't': truth = optarg; break;
		case 's': samples = optarg; break;
		case 'i': isa = optarg; break;
		case 'S': stock = 1; break;
		case 'm': min_guest = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: %s -t truth -s samples -i svm|vmx [-S] [-m n]\n", argv[0]);
			return 2;
		}
	}
	if (!truth || !samples || !isa || (strcmp(isa, "svm") && strcmp(isa, "vmx"))) {
		fprintf(stderr, "lab-check: -t, -s and -i svm|vmx are required\n");
		return 2;
	}
	svm = !strcmp(isa, "svm");
	read_truth(truth);

	f = fopen(samples, "r");
	if (!f) {
		perror(samples);
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned int cpu, pid, tid, misc, asid, exit_reason, vcpu, flags;
		unsigned long long time, ip, cr3;
		unsigned long long n;
		struct range *r;
		int tv;

		if (sscanf(line, "L %llu", &n) == 1) {
			lost += n;
			continue;
		}
		if (sscanf(line, "S %u %u %u %llu %llx %u %llx %u %x %u %x", &cpu, &pid, &tid,
			   &time, &ip, &misc, &cr3, &asid, &exit_reason, &vcpu, &flags) != 11)
			continue;
		total++;
		tv = vcpu_of_tid(tid);
		if (!pid)
			by_idle++;
		else if (pid == (unsigned int)vm_pid)
			by_vmm++;
		else
			by_other++;

		/* perf's own guest user/kernel label, patched or not */
		if (misc == MISC_GUEST_KERNEL || misc == MISC_GUEST_USER) {
			misc_guest++;
			r = find_range(ip);
			if (r) {
				misc_in_range++;
				if (stock)
					r->samples++;
				if ((misc == MISC_GUEST_USER) != (r->ring == 3))
					misc_bad++;
			}
		}
		if (stock)
			continue;

		if (!(flags & CTX_VALID))
			continue;
		if (tv < 0) {
			/*
			 * Other VMM threads load a vCPU for vCPU ioctls (setup);
			 * that is host code for the vCPU.  Anywhere else a valid
			 * block is wrong.
			 */
			if (pid == (unsigned int)vm_pid) {
				vmm_other++;
				if ((flags & CTX_HOST_FOR_VCPU) && !(flags & CTX_GUEST_MODE))
					vmm_other_ok++;
			} else {
				stray++;
			}
			continue;
		}
		if (vcpu == (unsigned int)tv)
			vcpu_ok++;
		if (!!(flags & CTX_ISA_SVM) == svm && !!(flags & CTX_ISA_VMX) == !svm)
			isa_ok++;

		if (!(flags & CTX_GUEST_MODE)) {
			host++;
			for (i = 0; i < nr_exit && exit_val[i] != exit_reason; i++)
				;
			if (i == nr_exit && nr_exit < 8)
				exit_val[nr_exit++] = exit_reason;
			if (i < 8)
				exit_hist[i]++;
			if (!known_exit(svm, exit_reason))
				unknown_exit++;
			else if (flags & CTX_HOST_FOR_VCPU)
				host_ok++;
			continue;
		}

		guest++;
		if (!asid) {
			asid_zero++;
		} else {
			for (i = 0; i < nr_asids && asid_list[i] != asid; i++)
				;
			if (i == nr_asids && nr_asids < 64)
				asid_list[nr_asids++] = asid;
			if (!svm && tv < MAX_VCPUS) {
				if (vpid_seen[tv] && vpid_seen[tv] != asid)
					vmx_vpid_changes++;
				vpid_seen[tv] = asid;
			}
		}
		r = find_range(ip);
		if (!r)
			continue;
		in_range++;
		r->samples++;
		if ((int)((flags & CTX_CPL_MASK) >> CTX_CPL_SHIFT) == r->ring &&
		    !(flags & CTX_HOST_FOR_VCPU))
			cpl_ok++;
		if ((misc == MISC_GUEST_USER) == (r->ring == 3) &&
		    (misc == MISC_GUEST_USER || misc == MISC_GUEST_KERNEL))
			misc_ok++;
		if (r->root != '*') {
			cr3_checked++;
			/* the root in bits 51:12; with PCID, the PCID in 11:0 */
			if ((cr3 & ~0xfffULL) == (r->root == 'A' ? root_a : root_b))
				cr3_ok++;
			if ((cr3 & 0xfff) == (pcid ? (r->root == 'A' ? 1 : 2) : 0))
				pcid_ok++;
		}
	}
	fclose(f);

	printf("lab-check: %s, %d vCPUs: %lu samples (%lu lost), %lu perf-guest, %lu guest-mode in vCPU threads, %lu host-mode with a vCPU loaded\n",
	       isa, nr_vcpus, total, lost, misc_guest, guest, host);
	printf("lab-check:   by task: %lu idle, %lu VMM process, %lu other\n", by_idle, by_vmm,
	       by_other);
	for (i = 0; i < nr_ranges; i++)
		printf("lab-check:   %-14s ring %d root %c  %6lu guest samples\n", ranges[i].name,
		       ranges[i].ring, ranges[i].root, ranges[i].samples);

	if (stock) {
		printf("lab-check: stock CPL label: %lu of %lu guest samples in known code mislabelled user/kernel (%.2f%%)\n",
		       misc_bad, misc_in_range, pct(misc_bad, misc_in_range));
		return misc_in_range ? 0 : 2;
	}

	if (guest < min_guest) {
		result("count", 0, "%lu guest-mode samples, need at least %lu", guest, min_guest);
		return 2;
	}
	result("ip", in_range * 100 >= guest * 99, "%lu/%lu guest-mode samples in known code (%.2f%%)",
	       in_range, guest, pct(in_range, guest));
	result("cr3", cr3_checked && cr3_ok * 100 >= cr3_checked * 99,
	       "%lu/%lu samples in per-process code carry that process's root (%.2f%%)",
	       cr3_ok, cr3_checked, pct(cr3_ok, cr3_checked));
	result("pcid", cr3_checked && pcid_ok * 100 >= cr3_checked * 99,
	       "%lu/%lu of them carry the PCID of their process in CR3 bits 11:0 (guest %s PCID)",
	       pcid_ok, cr3_checked, pcid ? "uses" : "has no");
	result("cpl", in_range && cpl_ok == in_range,
	       "%lu/%lu CPL matches the ring of the code (%.2f%%)", cpl_ok, in_range,
	       pct(cpl_ok, in_range));
	result("cpl", in_range && misc_ok == in_range,
	       "%lu/%lu perf guest user/kernel flag matches the ring (%.2f%%)", misc_ok, in_range,
	       pct(misc_ok, in_range));
	printf("lab-check:   %s values seen:", svm ? "ASID" : "VPID");
	for (i = 0; i < nr_asids; i++)
		printf(" %u", asid_list[i]);
	printf("\n");
	if (svm)
		result("asid", !asid_zero, "%lu guest-mode samples with ASID 0 (SVM ASIDs are per vCPU and per pCPU: %d distinct)",
		       asid_zero, nr_asids);
	else
		result("asid", !asid_zero && !vmx_vpid_changes && nr_asids == nr_vcpus,
		       "%lu samples with VPID 0, %lu VPID changes within a vCPU, %d VPIDs for %d vCPUs",
		       asid_zero, vmx_vpid_changes, nr_asids, nr_vcpus);
	result("vcpu", vcpu_ok == guest + host && isa_ok == guest + host && !stray &&
	       vmm_other_ok == vmm_other,
	       "vCPU id right in %lu/%lu, ISA flag right in %lu/%lu; other VMM threads: %lu/%lu host-for-vCPU; %lu valid blocks outside the VMM",
	       vcpu_ok, guest + host, isa_ok, guest + host, vmm_other_ok, vmm_other, stray);
	printf("lab-check:   host-mode exit reasons:");
	for (i = 0; i < nr_exit; i++)
		printf(" 0x%x:%lu", exit_val[i], exit_hist[i]);
	printf("\n");
	result("host", host && host_ok == host,
	       "%lu/%lu host-mode samples of vCPU threads carry HOST_FOR_VCPU and a known exit reason (%lu unknown reasons)",
	       host_ok, host, unknown_exit);
	printf("lab-check: %s\n", failed ? "FAILED" : "all checks passed");
	return failed;
}
