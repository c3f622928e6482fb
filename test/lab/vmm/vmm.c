// SPDX-License-Identifier: GPL-2.0
/*
 * lab-vmm: a tiny KVM VMM for the vmctx lab.  It runs guest.elf (see guest.S)
 * in long mode on N vCPU threads and writes the ground truth the checker
 * needs: page-table roots, code ranges with ring and root, and which host
 * thread runs which vCPU.
 *
 * usage: lab-vmm -g guest.elf -o truth.txt [-n vcpus] [-t seconds] [-H halt_us]
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/kvm.h>
#include <pthread.h>
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

#define MAX_RANGES	64

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
	int failed;
};

static int kvm_fd, vm_fd;
static uint8_t *mem;
static struct range ranges[MAX_RANGES];
static int nr_ranges;
static uint64_t entry, sym_syscall, sym_fault;
static volatile int stop;
static long halt_us = 1000;

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

static void set_idt_gate(int vec, uint64_t handler, int dpl)
{
	uint64_t lo, hi;

	lo = (handler & 0xffff) | ((uint64_t)SEL_KCODE << 16) |
	     ((uint64_t)(0x8e | (dpl << 5)) << 40) | ((handler >> 16 & 0xffff) << 48);
	hi = handler >> 32;
	put64(IDT_ADDR + vec * 16, lo);
	put64(IDT_ADDR + vec * 16 + 8, hi);
}

static void build_tables(int nr_vcpus)
{
	int i;

	/* two roots: the kernel in both, each process only in its own */
	for (i = 0; i < 2; i++) {
		uint64_t root = i ? ROOT_B : ROOT_A;

		put64(root, (root + 0x1000) | 0x7);
		put64(root + 0x1000, (root + 0x2000) | 0x7);
		put64(root + 0x2000, 0x0 | 0x83);		/* kernel: P RW PS */
		if (i)
			put64(root + 0x2000 + 16, UTEXT_B_ADDR | 0x87);	/* + US */
		else
			put64(root + 0x2000 + 8, UTEXT_A_ADDR | 0x87);
	}

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
	free(cpuid);

	if (ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0)
		die("KVM_GET_SREGS");
	sregs.cr0 = 0x80050033;		/* PG AM WP NE ET MP PE */
	sregs.cr3 = ROOT_A;
	sregs.cr4 = 0x20;		/* PAE */
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

static void *vcpu_thread(void *arg)
{
	struct timespec pause = { .tv_nsec = halt_us * 1000 };
	struct vcpu *v = arg;
	struct kvm_regs regs;

	v->tid = syscall(SYS_gettid);
	for (;;) {
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
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

static void write_truth(const char *path, struct vcpu *vcpus, int nr_vcpus)
{
	FILE *f = fopen(path, "w");
	int i;

	errno = 0;
	if (!f)
		die("open %s", path);
	fprintf(f, "# vmctx lab ground truth v1 (lab-vmm)\n");
	fprintf(f, "vm %d vcpus %d\n", getpid(), nr_vcpus);
	fprintf(f, "root A 0x%x\nroot B 0x%x\n", ROOT_A, ROOT_B);
	for (i = 0; i < nr_ranges; i++)
		fprintf(f, "range 0x%llx 0x%llx %s ring %d root %c\n",
			(unsigned long long)ranges[i].start, (unsigned long long)ranges[i].end,
			ranges[i].name, ranges[i].ring, ranges[i].root);
	for (i = 0; i < nr_vcpus; i++)
		fprintf(f, "vcpu %d tid %d runs %lu hlt %lu io %lu\n", vcpus[i].id, vcpus[i].tid,
			vcpus[i].runs, vcpus[i].hlts, vcpus[i].ios);
	if (fclose(f))
		die("write %s", path);
}

int main(int argc, char **argv)
{
	const char *guest = "guest.elf", *out = "truth.txt";
	struct vcpu vcpus[MAX_VCPUS];
	int nr_vcpus = 2, i, c, failed = 0;
	double seconds = 2.0;
	struct timespec ts;

	while ((c = getopt(argc, argv, "g:o:n:t:H:")) != -1) {
		switch (c) {
		case 'g': guest = optarg; break;
		case 'o': out = optarg; break;
		case 'n': nr_vcpus = atoi(optarg); break;
		case 't': seconds = atof(optarg); break;
		case 'H': halt_us = atol(optarg); break;
		default:
			fprintf(stderr, "usage: %s -g guest.elf -o truth.txt [-n vcpus] [-t s] [-H halt_us]\n",
				argv[0]);
			return 2;
		}
	}
	if (nr_vcpus < 1 || nr_vcpus > MAX_VCPUS || halt_us < 0 || halt_us >= 1000000)
		die("bad -n or -H");

	errno = 0;
	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm_fd < 0)
		die("open /dev/kvm");
	vm_fd = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (vm_fd < 0)
		die("KVM_CREATE_VM");
	/* Needed by VMX without unrestricted guest; harmless elsewhere. */
	ioctl(vm_fd, KVM_SET_TSS_ADDR, 0xfffbd000UL);

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
	build_tables(nr_vcpus);

	memset(vcpus, 0, sizeof(vcpus));
	for (i = 0; i < nr_vcpus; i++) {
		vcpus[i].id = i;
		setup_vcpu(&vcpus[i]);
	}
	for (i = 0; i < nr_vcpus; i++)
		if (pthread_create(&vcpus[i].thread, NULL, vcpu_thread, &vcpus[i]))
			die("pthread_create");

	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	stop = 1;
	for (i = 0; i < nr_vcpus; i++) {
		pthread_join(vcpus[i].thread, NULL);
		failed |= vcpus[i].failed;
		fprintf(stderr, "lab-vmm: vcpu %d (tid %d): %lu runs, %lu hlt exits\n",
			i, vcpus[i].tid, vcpus[i].runs, vcpus[i].hlts);
	}
	write_truth(out, vcpus, nr_vcpus);
	return failed;
}
