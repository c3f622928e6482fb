// SPDX-License-Identifier: GPL-2.0
/*
 * lab-vmm: a tiny KVM VMM for the vmctx lab.  It runs guest.elf (see guest.S)
 * in long mode on N vCPU threads and writes the ground truth the checker
 * needs: page-table roots, code ranges with ring and root, and which host
 * thread runs which vCPU.  It is also the guest's agent: with -b it writes
 * the guest's vmctx bundle (its two processes' roots, maps and symbols,
 * the guest kernel's symbols), which a real guest gets from vmctx-agent.
 *
 * usage: lab-vmm [options], see usage() below.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lab-guest.h"
#include "vmctx.h"

#define MAX_RANGES	64
#define RACE_FRAMES	32	/* -R: frames a walk takes at most */

struct range {
	uint64_t start, end;
	char name[32];
	int ring;
	char root;	/* 'A', 'B' or '*' (any) */
};

struct vcpu {
	int id;
	int fd;
	pid_t tid;
	struct kvm_run *run;
	pthread_t thread;
	unsigned long runs, hlts, ios;
	double done_s;		/* -r: seconds to do the rounds */
	int failed;
	/* -R: the walk at the stop, the registers it started from */
	timer_t race_timer;
	unsigned int race_seed, race_n;
	int race_phase, race_delay;
	uint64_t race_rip, race_rbp;
	int race_nr;
	uint64_t race_ips[RACE_FRAMES];
};

static int kvm_fd, vm_fd;
static uint8_t *mem;
static struct range ranges[MAX_RANGES];
static int nr_ranges;
static uint64_t entry, sym_syscall, sym_fault;
static volatile int stop;
static long halt_us = 1000;
static int in_kernel_halt;	/* -I: KVM handles HLT, the vCPU thread blocks */
static int use_pcid = -1;	/* -1: if the CPU has it; 0: -p */
static struct timespec t_start;
/*
 * -r: what the host did meanwhile, from the vCPUs' start to the end of the
 * rounds: the parent's CPU time (the profiler, when one runs the VMM, as
 * perf record and lab-record do), and the host's context switches and
 * interrupts (/proc/stat ctxt and intr, all CPUs)
 */
static struct host_use {
	pid_t parent;
	double parent_cpu_s;
	unsigned long long ctxt, intr;
} use_start, use_end;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "lab-vmm: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (errno)
		fprintf(stderr, ": %s", strerror(errno));
	fprintf(stderr, "\n");
	exit(1);
}

static double since_start(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec - t_start.tv_sec + (now.tv_nsec - t_start.tv_nsec) / 1e9;
}

/* utime + stime of @pid in seconds, -1 if unknown */
static double proc_cpu_s(pid_t pid)
{
	unsigned long long ut, st;
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* after "(comm)", which may hold spaces: state is field 3, utime 14 */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

static void host_use(struct host_use *u)
{
	char line[256];
	FILE *f;

	u->parent = getppid();
	u->parent_cpu_s = proc_cpu_s(u->parent);
	f = fopen("/proc/stat", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "ctxt %llu", &u->ctxt);
		sscanf(line, "intr %llu", &u->intr);
	}
	fclose(f);
}

/* The ground truth's "host" line: what the host did between the two readings. */
static void print_host_use(FILE *f)
{
	fprintf(f, "host parent %d cpu_s %.2f ctxt %llu intr %llu\n", (int)use_end.parent,
		use_start.parent_cpu_s < 0 || use_end.parent_cpu_s < 0 ? -1 :
		use_end.parent_cpu_s - use_start.parent_cpu_s,
		use_end.ctxt - use_start.ctxt, use_end.intr - use_start.intr);
}

/*
 * -L: no VM, a fixed amount of host work instead (the overhead benchmark's
 * samples with no vCPU loaded), timed and reported as -r's rounds are
 */
static int host_work(const char *path, unsigned long long loops, int pin)
{
	volatile unsigned long long i;
	double done_s;
	FILE *f;

	if (pin >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(pin, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			die("pin to CPU %d", pin);
	}
	host_use(&use_start);
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	for (i = 0; i < loops; i++)
		;
	done_s = since_start();
	host_use(&use_end);
	f = fopen(path, "w");
	errno = 0;
	if (!f)
		die("open %s", path);
	fprintf(f, "# vmctx lab host work (lab-vmm -L)\nhost_work loops %llu done_s %.6f\n",
		loops, done_s);
	print_host_use(f);
	if (fclose(f))
		die("write %s", path);
	fprintf(stderr, "lab-vmm: %llu host loops in %.6f s\n", loops, done_s);
	return 0;
}

static void add_range(const char *name, uint64_t start, uint64_t size)
{
	struct range *r;
	size_t len;

	if (nr_ranges == MAX_RANGES)
		die("too many functions in the guest");
	r = &ranges[nr_ranges++];
	r->start = start;
	r->end = start + size;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->ring = start >= UTEXT_A_ADDR ? 3 : 0;
	len = strlen(name);
	if (start >= UTEXT_B_ADDR || (len > 2 && !strcmp(name + len - 2, "_b")))
		r->root = 'B';
	else if (start >= UTEXT_A_ADDR || (len > 2 && !strcmp(name + len - 2, "_a")))
		r->root = 'A';
	else
		r->root = '*';	/* kernel loop and entry code run under both */
}

/* Copy the PT_LOAD segments into guest memory, collect FUNC symbols. */
static void load_guest(const char *path)
{
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	struct stat st;
	uint8_t *img;
	int fd, i;

	errno = 0;
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		die("open %s", path);
	img = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (img == MAP_FAILED)
		die("mmap %s", path);
	close(fd);
	eh = (Elf64_Ehdr *)img;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		die("%s: not an ELF64 file", path);
	entry = eh->e_entry;

	for (i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(img + eh->e_phoff) + i;

		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_paddr + ph->p_memsz > GUEST_MEM_SIZE || ph->p_filesz > ph->p_memsz)
			die("%s: segment outside guest memory", path);
		memcpy(mem + ph->p_paddr, img + ph->p_offset, ph->p_filesz);
	}

	sh = (Elf64_Shdr *)(img + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		Elf64_Sym *sym;
		const char *strtab;
		size_t n, j;

		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		sym = (Elf64_Sym *)(img + sh[i].sh_offset);
		strtab = (const char *)img + sh[sh[i].sh_link].sh_offset;
		n = sh[i].sh_size / sizeof(*sym);
		for (j = 0; j < n; j++) {
			const char *name = strtab + sym[j].st_name;

			if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC || !sym[j].st_size)
				continue;
			add_range(name, sym[j].st_value, sym[j].st_size);
			if (!strcmp(name, "syscall_entry"))
				sym_syscall = sym[j].st_value;
			else if (!strcmp(name, "fault_entry"))
				sym_fault = sym[j].st_value;
		}
	}
	if (!sym_syscall || !sym_fault || !nr_ranges)
		die("%s: missing symbols", path);
}

static void put64(uint64_t addr, uint64_t val)
{
	memcpy(mem + addr, &val, sizeof(val));
}

static uint64_t get64(uint64_t addr)
{
	uint64_t val;

	memcpy(&val, mem + addr, sizeof(val));
	return val;
}

static void set_idt_gate(int vec, uint64_t handler, int dpl)
{
	uint64_t lo, hi;

	lo = (handler & 0xffff) | ((uint64_t)SEL_KCODE << 16) |
	     ((uint64_t)(0x8e | (dpl << 5)) << 40) | ((handler >> 16 & 0xffff) << 48);
	hi = handler >> 32;
	put64(IDT_ADDR + vec * 16, lo);
	put64(IDT_ADDR + vec * 16 + 8, hi);
}

/*
 * Two roots: the kernel in both, each process only in its own.  With
 * @same, process B is a second instance of A's program: root B maps A's
 * virtual addresses to a copy of A's region at B's physical addresses.
 */
static void build_tables(int nr_vcpus, int nprocs, int halts, int same, long rounds,
			 long cpuids, int hostile)
{
	int i;

	for (i = 0; i < 2; i++) {
		uint64_t root = i ? ROOT_B : ROOT_A;

		put64(root, (root + 0x1000) | 0x7);
		put64(root + 0x1000, (root + 0x2000) | 0x7);
		put64(root + 0x2000, 0x0 | 0x83);		/* kernel: P RW PS */
		if (i && same)
			put64(root + 0x2000 + 8, UTEXT_B_ADDR | 0x87);	/* + US */
		else if (i)
			put64(root + 0x2000 + 16, UTEXT_B_ADDR | 0x87);
		else
			put64(root + 0x2000 + 8, UTEXT_A_ADDR | 0x87);
	}
	if (same)
		memcpy(mem + UTEXT_B_ADDR, mem + UTEXT_A_ADDR, REGION_SIZE);

	put64(CFG_ADDR + CFG_NPROCS, nprocs);
	put64(CFG_ADDR + CFG_HALTS, halts);
	put64(CFG_ADDR + CFG_STOP, 0);
	put64(CFG_ADDR + CFG_ENTRY_B, same ? UTEXT_A_ENTRY : UTEXT_B_ENTRY);
	put64(CFG_ADDR + CFG_STACK_B, same ? USTACK_A_TOP : USTACK_B_TOP);
	put64(CFG_ADDR + CFG_ROUNDS, rounds);
	put64(CFG_ADDR + CFG_CPUID_B, same ? 0 : cpuids | (uint64_t)hostile << 32);

	put64(GDT_ADDR + SEL_KCODE, 0x00af9b000000ffffULL);
	put64(GDT_ADDR + SEL_KDATA, 0x00cf93000000ffffULL);
	put64(GDT_ADDR + SEL_UDATA, 0x00cff3000000ffffULL);
	put64(GDT_ADDR + SEL_UCODE, 0x00affb000000ffffULL);

	for (i = 0; i < 256; i++)
		set_idt_gate(i, sym_fault, 0);
	set_idt_gate(0x80, sym_syscall, 3);

	for (i = 0; i < nr_vcpus; i++) {
		uint64_t tss = TSS_ADDR + i * TSS_STRIDE;

		/* RSP0 at offset 4, I/O bitmap base beyond the limit */
		memcpy(mem + tss + 4, &(uint64_t){ KSTACK_BASE + (i + 1) * KSTACK_SIZE }, 8);
		memcpy(mem + tss + 0x66, &(uint16_t){ 0x68 }, 2);
	}
}

static void set_seg(struct kvm_segment *s, uint16_t sel, int type, int code)
{
	memset(s, 0, sizeof(*s));
	s->selector = sel;
	s->limit = 0xffffffff;
	s->type = type;
	s->present = 1;
	s->s = 1;
	s->g = 1;
	s->l = code;
	s->db = !code;
}

static void setup_vcpu(struct vcpu *v)
{
	struct kvm_cpuid2 *cpuid;
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	int n = 128, mmap_size;

	errno = 0;
	v->fd = ioctl(vm_fd, KVM_CREATE_VCPU, v->id);
	if (v->fd < 0)
		die("KVM_CREATE_VCPU");
	mmap_size = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	v->run = mmap(NULL, mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED)
		die("mmap kvm_run");

	/* long mode needs the host's CPUID (LM, PAE...) in the guest */
	for (;;) {
		cpuid = calloc(1, sizeof(*cpuid) + n * sizeof(cpuid->entries[0]));
		if (!cpuid)
			die("calloc");
		cpuid->nent = n;
		if (!ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, cpuid))
			break;
		if (errno != E2BIG)
			die("KVM_GET_SUPPORTED_CPUID");
		free(cpuid);
		n *= 2;
		errno = 0;
	}
	if (ioctl(v->fd, KVM_SET_CPUID2, cpuid) < 0)
		die("KVM_SET_CPUID2");
	/* PCID (CPUID.1:ECX bit 17): processes get PCIDs 1 and 2, as Linux does */
	if (use_pcid < 0) {
		unsigned int k;

		use_pcid = 0;
		for (k = 0; k < cpuid->nent; k++)
			if (cpuid->entries[k].function == 1 && (cpuid->entries[k].ecx & (1u << 17)))
				use_pcid = 1;
	}
	free(cpuid);

	if (ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0)
		die("KVM_GET_SREGS");
	sregs.cr0 = 0x80050033;		/* PG AM WP NE ET MP PE */
	sregs.cr3 = ROOT_A;
	sregs.cr4 = 0x20;		/* PAE */
	if (use_pcid > 0)
		sregs.cr4 |= 1u << 17;	/* PCIDE (CR3 is ROOT_A, PCID 0, here) */
	sregs.efer = 0x500;		/* LMA LME */
	set_seg(&sregs.cs, SEL_KCODE, 11, 1);
	set_seg(&sregs.ds, SEL_KDATA, 3, 0);
	sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
	memset(&sregs.tr, 0, sizeof(sregs.tr));
	sregs.tr.base = TSS_ADDR + v->id * TSS_STRIDE;
	sregs.tr.limit = 0x67;
	sregs.tr.selector = SEL_TSS;
	sregs.tr.type = 11;
	sregs.tr.present = 1;
	memset(&sregs.ldt, 0, sizeof(sregs.ldt));
	sregs.ldt.type = 2;
	sregs.ldt.unusable = 1;
	sregs.gdt.base = GDT_ADDR;
	sregs.gdt.limit = SEL_TSS + 16 - 1;
	sregs.idt.base = IDT_ADDR;
	sregs.idt.limit = 256 * 16 - 1;
	if (ioctl(v->fd, KVM_SET_SREGS, &sregs) < 0)
		die("KVM_SET_SREGS");

	memset(&regs, 0, sizeof(regs));
	regs.rip = entry;
	regs.rsp = KSTACK_BASE + (v->id + 1) * KSTACK_SIZE;
	regs.rdi = v->id;
	regs.rflags = 0x202;	/* IF, see enter_user in guest.S */
	if (ioctl(v->fd, KVM_SET_REGS, &regs) < 0)
		die("KVM_SET_REGS");
}

/*
 * -R: what a later read of a guest stack gets wrong, the race kernel patch
 * 9 closes by walking before the vCPU's next entry.  Each vCPU thread
 * stops its vCPU at a random moment (a timer signal ends KVM_RUN) and, if
 * the guest was in user mode, walks its frame chain from the registers
 * there, as KVM walks with the vCPU stopped at the exit.  Then the guest
 * runs on for a delay, and the thread walks again from the same registers
 * through guest memory as it is then: what a reader gets that took the
 * registers at the sample and read the stack later (from the VMM, or
 * perf's reader in user space).  The delays take turns; for each, the
 * walks, how many gave the same chain, the same functions through other
 * call sites (another return address in the same caller), and other
 * functions or another depth.  A delay of 0 walks twice at once: the
 * comparison's own check.
 */
static int race;
static const long race_delays_us[] = { 0, 10, 100, 1000, 10000 };
#define NR_RACE_DELAYS	(sizeof(race_delays_us) / sizeof(race_delays_us[0]))
static struct race_tally {
	unsigned long walks, same, sites, other;
} race_tally[MAX_VCPUS][NR_RACE_DELAYS];
static __thread struct kvm_run *race_run;

static void on_race_timer(int sig)
{
	(void)sig;
	if (race_run)
		race_run->immediate_exit = 1;
}

static void race_arm(struct vcpu *v, long us)
{
	struct itimerspec it = {
		.it_value = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 },
	};

	timer_settime(v->race_timer, 0, &it, NULL);
}

/* A frame-pointer walk through guest memory (identity mapped, lab-guest.h). */
static int race_walk(uint64_t rip, uint64_t rbp, uint64_t *ips)
{
	int nr = 0;

	ips[nr++] = rip;
	while (nr < RACE_FRAMES && rbp && !(rbp & 7) && rbp + 16 <= GUEST_MEM_SIZE) {
		uint64_t next = get64(rbp);

		ips[nr++] = get64(rbp + 8);
		if (next <= rbp)
			break;
		rbp = next;
	}
	return nr;
}

static int range_of(uint64_t ip)
{
	for (int i = 0; i < nr_ranges; i++)
		if (ip >= ranges[i].start && ip < ranges[i].end)
			return i;
	return -1;
}

static void race_step(struct vcpu *v)
{
	struct race_tally *t;
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	uint64_t ips[RACE_FRAMES];
	int nr, i, sites = 0, other = 0;

	if (v->race_phase == 0) {
		if (ioctl(v->fd, KVM_GET_REGS, &regs) || ioctl(v->fd, KVM_GET_SREGS, &sregs) ||
		    (sregs.cs.selector & 3) != 3) {
			race_arm(v, 500 + rand_r(&v->race_seed) % 1000);
			return;
		}
		v->race_rip = regs.rip;
		v->race_rbp = regs.rbp;
		v->race_nr = race_walk(regs.rip, regs.rbp, v->race_ips);
		v->race_delay = v->race_n++ % NR_RACE_DELAYS;
		v->race_phase = 1;
		if (race_delays_us[v->race_delay]) {
			race_arm(v, race_delays_us[v->race_delay]);
			return;
		}
	}
	nr = race_walk(v->race_rip, v->race_rbp, ips);
	for (i = 0; i < nr && i < v->race_nr; i++) {
		int fn;

		if (ips[i] == v->race_ips[i])
			continue;
		fn = range_of(ips[i]);
		if (fn >= 0 && fn == range_of(v->race_ips[i]))
			sites = 1;
		else
			other = 1;
	}
	t = &race_tally[v->id][v->race_delay];
	t->walks++;
	if (other || nr != v->race_nr)
		t->other++;
	else if (sites)
		t->sites++;
	else
		t->same++;
	v->race_phase = 0;
	race_arm(v, 500 + rand_r(&v->race_seed) % 1000);
}

static void race_start(struct vcpu *v)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR2 };

	sev._sigev_un._tid = v->tid;
	race_run = v->run;
	v->race_seed = v->tid;
	if (timer_create(CLOCK_MONOTONIC, &sev, &v->race_timer)) {
		fprintf(stderr, "lab-vmm: vcpu %d: timer_create: %s\n", v->id, strerror(errno));
		v->failed = 1;
		stop = 1;
		return;
	}
	race_arm(v, 1000);
}

static void race_print(int nr_vcpus)
{
	for (size_t d = 0; d < NR_RACE_DELAYS; d++) {
		struct race_tally sum = {};

		for (int i = 0; i < nr_vcpus; i++) {
			sum.walks += race_tally[i][d].walks;
			sum.same += race_tally[i][d].same;
			sum.sites += race_tally[i][d].sites;
			sum.other += race_tally[i][d].other;
		}
		printf("race: re-read after %ld us: %lu user-mode stops, %lu the same chain, %lu the same functions through other call sites, %lu other functions or depth\n",
		       race_delays_us[d], sum.walks, sum.same, sum.sites, sum.other);
	}
}

/*
 * Where each vCPU stopped must be the guest's: its code, under one of its
 * two roots.  A vCPU whose state the hypervisor (or the emulator under
 * it) lost runs elsewhere or nowhere, and may do so without an exit the
 * VMM would see: say so, and fail the run.
 */
static int check_end_state(struct vcpu *vcpus, int nr_vcpus)
{
	int i, bad = 0;

	for (i = 0; i < nr_vcpus; i++) {
		struct kvm_sregs sregs;
		struct kvm_regs regs;
		uint64_t root;

		if (ioctl(vcpus[i].fd, KVM_GET_REGS, &regs) ||
		    ioctl(vcpus[i].fd, KVM_GET_SREGS, &sregs)) {
			fprintf(stderr, "lab-vmm: vcpu %d: cannot read its registers: %s\n",
				i, strerror(errno));
			bad = 1;
			continue;
		}
		root = sregs.cr3 & ~0xfffULL;
		if (range_of(regs.rip) >= 0 && (root == ROOT_A || root == ROOT_B))
			continue;
		fprintf(stderr, "lab-vmm: vcpu %d ended at rip 0x%llx cr3 0x%llx, outside the guest's code and roots: its state was lost (%lu runs, %lu hlt exits)\n",
			i, regs.rip, sregs.cr3, vcpus[i].runs, vcpus[i].hlts);
		bad = 1;
	}
	return bad;
}

static void *vcpu_thread(void *arg)
{
	struct timespec pause = { .tv_nsec = halt_us * 1000 };
	struct vcpu *v = arg;
	struct kvm_regs regs;

	v->tid = syscall(SYS_gettid);
	if (race)
		race_start(v);
	for (;;) {
		if (stop)
			return NULL;
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			/* the main thread signals us at the end of the run */
			if ((errno == EINTR || errno == EAGAIN) && stop)
				return NULL;
			if (errno == EINTR && race) {
				v->run->immediate_exit = 0;
				race_step(v);
				continue;
			}
			if (errno == EINTR || errno == EAGAIN)
				continue;
			fprintf(stderr, "lab-vmm: vcpu %d: KVM_RUN: %s\n", v->id, strerror(errno));
			v->failed = 1;
			return NULL;
		}
		v->runs++;
		switch (v->run->exit_reason) {
		case KVM_EXIT_HLT:
			v->hlts++;
			if (stop)
				return NULL;
			if (halt_us)
				nanosleep(&pause, NULL);
			break;
		case KVM_EXIT_IO:
			v->ios++;
			if (v->run->io.port == PORT_DONE) {
				v->done_s = since_start();
				return NULL;
			}
			if (v->run->io.port != PORT_FAULT)
				break;
			ioctl(v->fd, KVM_GET_REGS, &regs);
			fprintf(stderr, "lab-vmm: vcpu %d: guest exception, rip 0x%llx rsp 0x%llx\n",
				v->id, regs.rip, regs.rsp);
			v->failed = 1;
			return NULL;
		default:
			ioctl(v->fd, KVM_GET_REGS, &regs);
			fprintf(stderr, "lab-vmm: vcpu %d: unexpected exit %u (hw reason 0x%llx), rip 0x%llx\n",
				v->id, v->run->exit_reason,
				(unsigned long long)v->run->fail_entry.hardware_entry_failure_reason,
				regs.rip);
			v->failed = 1;
			return NULL;
		}
	}
}

/* Guest work per round on average, in busy-loop iterations (guest.S, lab-guest.h). */
static const struct {
	const char *name;
	long loops;
} mix[] = {
	{ "kwork_a", KWORK_LOOPS }, { "a_compute", 2 * ULOOPS }, { "a_hash", ULOOPS },
	{ "kwork_b", KWORK_LOOPS }, { "b_scan", ULOOPS }, { "b_sort", ULOOPS },
};

/* -Z's kinds, HOSTILE_* - 1; and the kind asked for, 0 for none */
static const char *const hostile_names[] = { "loop", "kernel", "unmapped", "deep" };
static int hostile;

static void write_truth(const char *path, struct vcpu *vcpus, int nr_vcpus, int nprocs, int same)
{
	FILE *f = fopen(path, "w");
	int i;

	errno = 0;
	if (!f)
		die("open %s", path);
	fprintf(f, "# vmctx lab ground truth v1 (lab-vmm)\n");
	fprintf(f, "vm %d vcpus %d\n", getpid(), nr_vcpus);
	fprintf(f, "root A 0x%x\nroot B 0x%x\n", ROOT_A, ROOT_B);
	fprintf(f, "pcid %d\n", use_pcid > 0);
	if (hostile > 0)
		fprintf(f, "hostile %s\n", hostile_names[hostile - 1]);
	for (i = 0; i < nr_ranges; i++)
		fprintf(f, "range 0x%llx 0x%llx %s ring %d root %c\n",
			(unsigned long long)ranges[i].start, (unsigned long long)ranges[i].end,
			ranges[i].name, ranges[i].ring, ranges[i].root);
	/* process A's work, then B's (A's program again with -S) */
	for (i = 0; i < 3 * nprocs; i++) {
		int j = same && i > 3 ? i - 3 : i;

		fprintf(f, "mix %s %ld\n", mix[j].name, mix[j].loops);
	}
	/*
	 * What the guest measured of the same work (guest.S BUSY): TSC ticks
	 * per function over all vCPUs, in the mix's order.  Process B counts
	 * in its own region, whichever program it runs.
	 */
	for (i = 0; i < 3 * nprocs; i++) {
		int j = same && i > 3 ? i - 3 : i, v;
		uint64_t at, ticks = 0;

		if (i % 3 == 0)
			at = KSTATS_ADDR + 8 * (i / 3);
		else
			at = (i < 3 ? UTEXT_A_ADDR : UTEXT_B_ADDR) + USTATS_OFF + 8 * (i % 3 - 1);
		for (v = 0; v < nr_vcpus; v++)
			ticks += get64(at + ((uint64_t)v << STATS_SHIFT));
		fprintf(f, "time %s %" PRIu64 "\n", mix[j].name, ticks);
	}
	for (i = 0; i < nr_vcpus; i++)
		fprintf(f, "vcpu %d tid %d runs %lu hlt %lu io %lu done_s %.6f\n", vcpus[i].id,
			vcpus[i].tid, vcpus[i].runs, vcpus[i].hlts, vcpus[i].ios, vcpus[i].done_s);
	if (use_end.parent)
		print_host_use(f);
	if (fclose(f))
		die("write %s", path);
}

/*
 * The guest's bundle, as vmctx-agent would write it in a real guest:
 * process A ("work", or "proc_a"), process B ("work" again with -S, else
 * "proc_b"), their user code as maps of the guest ELF, and the kernel
 * functions as kernel symbols.  Nothing exits during the run.
 */
static void write_bundle(const char *path, const char *name, int nprocs, int same)
{
	struct vmctx_bundle *b = vmctx_bundle_new();
	int obj[2], task, i, err = 0;

	if (!b)
		die("vmctx_bundle_new");
	err = vmctx_bundle_set_identity(b, name, "lab-guest", NULL);
	obj[0] = vmctx_bundle_add_object(b, "/lab/work", NULL);
	obj[1] = same ? obj[0] : vmctx_bundle_add_object(b, "/lab/proc_b", NULL);
	if (err || obj[0] < 0 || obj[1] < 0)
		goto fail;
	for (i = 0; i < nr_ranges; i++) {
		const struct range *r = &ranges[i];
		uint64_t size = r->end - r->start;

		if (r->ring == 0)
			err = vmctx_bundle_add_ksym(b, r->start, r->name, NULL);
		else if (same && r->root == 'B')
			continue;	/* B's own code is not mapped */
		else
			err = vmctx_bundle_add_symbol(b, obj[r->root == 'B'], r->start, size,
						      r->name);
		if (err)
			goto fail;
	}
	for (i = 0; i < nprocs; i++) {
		uint64_t start = i && !same ? UTEXT_B_ADDR : UTEXT_A_ADDR;

		task = vmctx_bundle_add_task(b, i ? ROOT_B : ROOT_A, i + 1, i + 1,
					     same ? "work" : i ? "proc_b" : "proc_a", 0,
					     VMCTX_TIME_NONE);
		if (task < 0) {
			err = task;
			goto fail;
		}
		err = vmctx_bundle_add_map(b, task, start, start + REGION_SIZE, 0, 0, obj[i],
					   i && !same ? "/lab/proc_b" : "/lab/work");
		if (err)
			goto fail;
	}
	err = vmctx_bundle_seal(b);
	if (!err)
		err = vmctx_bundle_write_file(b, path);
	if (err)
		goto fail;
	vmctx_bundle_free(b);
	return;
fail:
	errno = 0;
	die("bundle %s: %s", path, vmctx_strerror(err ? err : -EINVAL));
}

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * perf record --control=fifo:FIFO -D -1: perf starts with its events off
 * and this VMM turns them on when its vCPUs start and off when they have
 * stopped, so that the recording covers the run and nothing else (guest
 * views count from a vCPU's first sample, host views from the first
 * sample at all).
 */
static void perf_control(const char *fifo, const char *cmd)
{
	int fd;

	if (!fifo)
		return;
	fd = open(fifo, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		die("perf control %s: %s", fifo, cmd);
	close(fd);
}

/*
 * -W FILE: start together with other VMMs.  Say we are ready by creating
 * FILE.PID, then wait for FILE to appear.
 */
static void wait_for(const char *path)
{
	char ready[4096];
	int fd;

	if (!path)
		return;
	snprintf(ready, sizeof(ready), "%s.%d", path, (int)getpid());
	fd = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		die("create %s", ready);
	close(fd);
	while (access(path, F_OK))
		sleep_s(0.001);
}

/*
 * Wait, at most @limit seconds, until vCPU 0 has done some of process A's
 * work: the guest's TSC ticks of a function (guest.S BUSY) are not 0.
 */
static void wait_for_work(double limit)
{
	double waited;
	int i;

	for (waited = 0; waited < limit; waited += 0.001) {
		for (i = 0; i < 3; i++)
			if (get64(i ? UTEXT_A_ADDR + USTATS_OFF + 8 * (i - 1) : KSTATS_ADDR))
				return;
		sleep_s(0.001);
	}
}

static void on_signal(int sig)
{
	(void)sig;	/* only makes KVM_RUN return EINTR */
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [options]\n"
		"  -g FILE   guest ELF (guest.elf)\n"
		"  -o FILE   ground truth to write (truth.txt)\n"
		"  -b FILE   also write the guest's vmctx bundle\n"
		"  -N NAME   guest host name in the bundle (lab)\n"
		"  -n N      vCPUs (2)\n"
		"  -t S      seconds to run (2)\n"
		"  -P N      guest processes, 1 or 2 (2)\n"
		"  -S        process B is a second instance of A's program\n"
		"  -X N      process B makes N CPUIDs (VM exits) each round (0)\n"
		"  -Z KIND   process B also works on a hostile stack each round: loop (a\n"
		"            frame linked to itself), kernel (linked to the kernel half),\n"
		"            unmapped (linked to unmapped memory) or deep (10,000 frames;\n"
		"            needs -n 1)\n"
		"  -h N      HLTs at the end of each round (2)\n"
		"  -H US     pause per HLT exit to user space (1000)\n"
		"  -I        in-kernel halt: KVM handles HLT, the vCPU thread blocks\n"
		"  -i F      go idle (HLT for good) after fraction F of the run\n"
		"  -r N      run N rounds per vCPU, then stop; report the time taken, and\n"
		"            the parent's CPU time and the host's context switches and\n"
		"            interrupts meanwhile (truth line \"host\")\n"
		"  -c CPU    pin the vCPU threads to host CPU CPU\n"
		"  -p        no PCID even if the CPU has it\n"
		"  -E FIFO   perf record's control fifo: enable at the start, disable at the end\n"
		"  -W FILE   when set up, create FILE.PID, then start the vCPUs when FILE exists\n"
		"  -L N      no VM: N iterations of a host loop (pinned by -c), timed as -r\n"
		"  -R        the race a later read of the guest's stacks loses: stop each\n"
		"            vCPU now and then, walk its user stack, walk it again from the\n"
		"            same registers after a delay; print the counts per delay\n",
		prog);
}

int main(int argc, char **argv)
{
	const char *guest = "guest.elf", *out = "truth.txt", *bundle = NULL, *name = "lab";
	const char *ctl = NULL, *go = NULL;
	struct vcpu vcpus[MAX_VCPUS];
	int nr_vcpus = 2, i, c, failed = 0, nprocs = 2, same = 0, halts = 2, pin = -1;
	double seconds = 2.0, idle_after = 0;
	long rounds = 0, cpuids = 0;
	unsigned long long host_loops = 0;
	struct sigaction sa;

	while ((c = getopt(argc, argv, "g:o:b:N:n:t:P:SX:Z:h:H:Ii:r:c:E:W:pL:R")) != -1) {
		switch (c) {
		case 'g': guest = optarg; break;
		case 'o': out = optarg; break;
		case 'b': bundle = optarg; break;
		case 'N': name = optarg; break;
		case 'n': nr_vcpus = atoi(optarg); break;
		case 't': seconds = atof(optarg); break;
		case 'P': nprocs = atoi(optarg); break;
		case 'S': same = 1; break;
		case 'X': cpuids = atol(optarg); break;
		case 'Z':
			for (hostile = 0; hostile < 4; hostile++)
				if (!strcmp(optarg, hostile_names[hostile]))
					break;
			hostile = hostile < 4 ? hostile + 1 : -1;
			break;
		case 'h': halts = atoi(optarg); break;
		case 'H': halt_us = atol(optarg); break;
		case 'I': in_kernel_halt = 1; break;
		case 'i': idle_after = atof(optarg); break;
		case 'r': rounds = atol(optarg); break;
		case 'c': pin = atoi(optarg); break;
		case 'E': ctl = optarg; break;
		case 'W': go = optarg; break;
		case 'p': use_pcid = 0; break;
		case 'L': host_loops = strtoull(optarg, NULL, 0); break;
		case 'R': race = 1; break;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	errno = 0;
	if (optind != argc || nr_vcpus < 1 || nr_vcpus > MAX_VCPUS || halt_us < 0 ||
	    halt_us >= 1000000 || nprocs < 1 || nprocs > 2 || halts < 0 || seconds <= 0 ||
	    idle_after < 0 || idle_after >= 1 || rounds < 0 || cpuids < 0 || cpuids > UINT32_MAX ||
	    pin < -1 || pin >= CPU_SETSIZE || hostile < 0 ||
	    (hostile == HOSTILE_DEEP && nr_vcpus > 1) || (hostile && (same || nprocs < 2)))
		die("bad option value (see -? for usage)");
	if (in_kernel_halt && halts)
		die("-I needs -h 0: nothing would wake a HLT in the rounds");
	if (host_loops)
		return host_work(out, host_loops, pin);

	/* SIGUSR1 ends a vCPU's KVM_RUN (no SA_RESTART) */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	/* -R: SIGUSR2 stops a vCPU for a walk, in KVM_RUN or before it */
	sa.sa_handler = on_race_timer;
	sigaction(SIGUSR2, &sa, NULL);

	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm_fd < 0)
		die("open /dev/kvm");
	vm_fd = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (vm_fd < 0)
		die("KVM_CREATE_VM");
	/* Needed by VMX without unrestricted guest; harmless elsewhere. */
	ioctl(vm_fd, KVM_SET_TSS_ADDR, 0xfffbd000UL);
	if (in_kernel_halt && ioctl(vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		die("KVM_CREATE_IRQCHIP");

	mem = mmap(NULL, GUEST_MEM_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap guest memory");
	struct kvm_userspace_memory_region region = {
		.slot = 0, .guest_phys_addr = 0, .memory_size = GUEST_MEM_SIZE,
		.userspace_addr = (uintptr_t)mem,
	};
	if (ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		die("KVM_SET_USER_MEMORY_REGION");

	load_guest(guest);
	build_tables(nr_vcpus, nprocs, halts, same, rounds, cpuids, hostile);
	/* before the run: the bundle does not change, and the run stays short */
	if (bundle)
		write_bundle(bundle, name, nprocs, same);

	memset(vcpus, 0, sizeof(vcpus));
	for (i = 0; i < nr_vcpus; i++) {
		vcpus[i].id = i;
		setup_vcpu(&vcpus[i]);
	}
	put64(CFG_ADDR + CFG_CR3_A, ROOT_A | (use_pcid > 0 ? 1 : 0));
	put64(CFG_ADDR + CFG_CR3_B, ROOT_B | (use_pcid > 0 ? 2 : 0));
	wait_for(go);
	perf_control(ctl, "enable");
	if (rounds)
		host_use(&use_start);
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	for (i = 0; i < nr_vcpus; i++) {
		if (pthread_create(&vcpus[i].thread, NULL, vcpu_thread, &vcpus[i]))
			die("pthread_create");
		if (pin >= 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(pin, &set);
			errno = pthread_setaffinity_np(vcpus[i].thread, sizeof(set), &set);
			if (errno)
				die("pin vCPU %d to CPU %d", i, pin);
		}
	}

	if (rounds) {
		/* fixed work: each vCPU stops by itself after its rounds */
		for (i = 0; i < nr_vcpus; i++) {
			pthread_join(vcpus[i].thread, NULL);
			failed |= vcpus[i].failed;
			fprintf(stderr, "lab-vmm: vcpu %d: %ld rounds in %.6f s\n", i, rounds,
				vcpus[i].done_s);
		}
		host_use(&use_end);
		perf_control(ctl, "disable");
		failed |= check_end_state(vcpus, nr_vcpus);
		write_truth(out, vcpus, nr_vcpus, nprocs, same);
		return failed;
	}

	if (idle_after > 0) {
		/*
		 * The busy part counts from the guest's first work, not from
		 * the threads' start: under an emulator a vCPU's first entry
		 * can take a good part of a second.
		 */
		wait_for_work(seconds);
		sleep_s(seconds * idle_after);
		put64(CFG_ADDR + CFG_STOP, 1);
		sleep_s(seconds * (1 - idle_after));
	} else {
		sleep_s(seconds);
	}
	/* immediate_exit covers a signal that lands outside KVM_RUN */
	stop = 1;
	for (i = 0; i < nr_vcpus; i++) {
		vcpus[i].run->immediate_exit = 1;
		pthread_kill(vcpus[i].thread, SIGUSR1);
	}
	for (i = 0; i < nr_vcpus; i++)
		pthread_join(vcpus[i].thread, NULL);
	/* after the joins: a halted vCPU's wake-up ends its halt in the recording */
	perf_control(ctl, "disable");
	for (i = 0; i < nr_vcpus; i++) {
		failed |= vcpus[i].failed;
		fprintf(stderr, "lab-vmm: vcpu %d (tid %d): %lu runs, %lu hlt exits\n",
			i, vcpus[i].tid, vcpus[i].runs, vcpus[i].hlts);
	}
	failed |= check_end_state(vcpus, nr_vcpus);
	write_truth(out, vcpus, nr_vcpus, nprocs, same);
	if (race)
		race_print(nr_vcpus);
	return failed;
}
