// SPDX-License-Identifier: GPL-2.0
/*
 * A synthetic fleet recording for test/bench/fleet-scale.sh: what 'perf
 * record --vmcs-ctx -e cpu-clock -a' (1 kHz) would write on a KVM host of
 * PCPUS CPUs running NVMS QEMU guests of 4 vCPUs each, and each guest's
 * bundle as 'vmctx-agent record' would write it, all derived from SEED.
 *
 *   gen-fleet [-v NVMS] [-c PCPUS] [-n SAMPLES] [-p PROCS] [-s SCALE] [-S SEED] DIR
 *
 * defaults 32 VMs, 16 pCPUs, 10 M samples, 20,000 guest processes, scale
 * 1; SCALE multiplies the recording's length, and with it the samples and
 * the processes.  DIR gets:
 *
 *   perf.data    a perf.data file: cpu-clock samples with the GUEST_CTX
 *                block and sample identifiers, COMM and MMAP side-band,
 *                CPU-wide context switches, PERF_RECORD_TIME_CONV (host
 *                TSC = perf ns) and FINISHED_ROUND every 100 ms as perf
 *                record's rounds, HEADER_GUEST_CTX and HEADER_GUEST_VMS
 *                (each VM's name fleet-vmNN and its vCPUs' TSC offset)
 *   vmNN.vmctx   VM NN's bundle: its processes' page-table roots over
 *                their lifetimes, their maps, the objects' symbols, the
 *                guest kernel's symbols and modules, TSC/ns pairs
 *   kallsyms     the host kernel's symbols, for perf --kallsyms
 *   guest-maps   the --guest-maps argument: fleet-vm01=DIR/vm01.vmctx,...
 *   expect       what was generated: sample counts by kind, then one line
 *                per guest process, "VM QEMU-PID PID COMM SAMPLES"
 *
 * Each vCPU lives on one home pCPU (vCPU j of VM v on (4v + j) % PCPUS),
 * where it alternates busy and halted periods; a pCPU round-robins its
 * runnable vCPUs and host tasks in 3 ms slices, so a busy vCPU waits
 * (steal) behind the others.  A halt is a sample of KVM's HLT exit and a
 * switch-out without preemption (idle); preemption is a switch-out with
 * it.  In guest mode a vCPU runs one of its guest's live processes at a
 * time, in user mode (functions of its program and libraries) or in the
 * guest kernel.  Processes start all through the recording, each guest
 * a share of PROCS besides six daemons that live throughout, and a
 * root freed at exit goes to the next process that starts, as a guest's
 * page allocator hands back a just-freed page.  Lifetimes begin and end
 * half a tick between samples, so that no sample falls on the instant a
 * root changes owner.  The guest clock: guest TSC = host TSC + KVM's
 * offset (the VM's boot), guest ns = guest TSC plus a drift of its own of
 * up to 40 ppm, which the bundle's TSC/ns pairs give.
 *
 * Not generated: kvm:kvm_vcpu_wakeup and kvm:kvm_exit records (a halt is
 * told by its HLT sample alone), call chains, lost samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <getopt.h>
#include <vmctx.h>

#define TICK		1000000ULL		/* 1 kHz cpu-clock */
#define T0		1000000000000ULL	/* host time of the first tick: 1,000 s uptime */
#define ROUND_TICKS	100			/* a FINISHED_ROUND per 100 ms */
#define VCPUS		4
#define DAEMONS		6
#define SLICE		3			/* ticks */
#define KTEXT		0xffffffff81000000ULL	/* host kernel _text */

/* perf's record types, sample flags and cpumodes, as perf_event.h has them */
enum {
	REC_MMAP = 1, REC_COMM = 3, REC_SAMPLE = 9, REC_MMAP2 = 10,
	REC_SWITCH_CPU_WIDE = 15, REC_FINISHED_ROUND = 68, REC_TIME_CONV = 79,
};
#define S_IP		(1ULL << 0)
#define S_TID		(1ULL << 1)
#define S_TIME		(1ULL << 2)
#define S_CPU		(1ULL << 7)
#define S_PERIOD	(1ULL << 8)
#define S_IDENTIFIER	(1ULL << 16)
#define S_GUEST_CTX	(1ULL << 25)
#define SAMPLE_TYPE	(S_IDENTIFIER | S_IP | S_TID | S_TIME | S_CPU | S_PERIOD | S_GUEST_CTX)
#define M_KERNEL	1
#define M_USER		2
#define M_GUEST_KERNEL	4
#define M_GUEST_USER	5
#define M_SWITCH_OUT	0x2000
#define M_PREEMPT	0x4000
/* struct perf_guest_ctx flags, and VMX exit reasons */
#define G_VALID		0x1
#define G_VMX		0x2
#define G_GUEST		0x8
#define G_CPL3		(3 << 4)
#define G_HOST_VCPU	0x40
#define X_EXTINT	1
#define X_HLT		12
#define X_IO		30
#define X_MSR_WRITE	32
#define X_EPT_VIOLATION	48
#define GUEST_CTX_MAGIC	0x4755455354435458ULL	/* "GUESTCTX" */
#define ID_BASE		1000			/* sample id of pCPU c: ID_BASE + c */

static struct {
	int nvms, npcpus, scale;
	uint64_t nsamples, nprocs, seed;
} opt = { 32, 16, 1, 10000000, 20000, 1 };

/* ---- random numbers: splitmix64, one stream per purpose ------------------ */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static struct rng rng_of(uint64_t a, uint64_t b)
{
	struct rng r = { opt.seed * 0x100000001b3ULL ^ a << 32 ^ b };

	rnd(&r);
	return r;
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static double unit(struct rng *r)
{
	return (rnd(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* At least 1, mean about @mean. */
static uint64_t geom(struct rng *r, double mean)
{
	double u = unit(r);
	uint64_t n = 1;

	if (mean > 1)
		n += (uint64_t)(-(mean - 1) * log(1 - u));
	return n;
}

/* An index below @n, skewed to the low ones: a few hot functions. */
static uint32_t skewed(struct rng *r, uint32_t n)
{
	double u = unit(r);

	return (uint32_t)(n * u * u * u) % n;
}

/* ---- the guests' objects: programs, libraries, kernels -------------------- */

struct object {
	const char *path, *prefix;
	int nsyms;
	uint64_t *start;		/* ELF addresses of its functions */
	uint32_t *size;
	uint64_t text_end;
	char build_id[41];
};

enum { LIBC, LD, LIBM, LIBSSL, NLIBS };

static struct object libs[NLIBS] = {
	{ "/usr/lib/x86_64-linux-gnu/libc.so.6", "libc", 2800 },
	{ "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "rtld", 200 },
	{ "/usr/lib/x86_64-linux-gnu/libm.so.6", "libm", 600 },
	{ "/usr/lib/x86_64-linux-gnu/libssl.so.3", "ssl", 1500 },
};

/* The guests' programs; the comm is the path's last part, as the kernel cuts it. */
static struct program {
	struct object o;
	int weight, extra;		/* how often it starts; its library besides libc and ld */
} programs[] = {
	{ { "/usr/bin/python3.11", "py", 3000 }, 14, LIBM },
	{ { "/usr/sbin/nginx", "ngx", 1200 }, 6, LIBSSL },
	{ { "/usr/lib/postgresql/15/bin/postgres", "pg", 4000 }, 8, LIBSSL },
	{ { "/usr/bin/bash", "bash", 1500 }, 20, LIBM },
	{ { "/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "cc1", 8000 }, 12, LIBM },
	{ { "/usr/bin/make", "make", 400 }, 6, LIBM },
	{ { "/usr/sbin/sshd", "sshd", 800 }, 4, LIBSSL },
	{ { "/usr/bin/node", "node", 6000 }, 8, LIBSSL },
	{ { "/usr/bin/redis-server", "redis", 1500 }, 6, LIBSSL },
	{ { "/usr/bin/gzip", "gzip", 150 }, 8, LIBM },
	{ { "/usr/bin/grep", "grep", 300 }, 8, LIBM },
	{ { "/usr/lib/systemd/systemd", "sd", 1500 }, 0, LIBSSL },
};
#define NPROGRAMS (sizeof(programs) / sizeof(programs[0]))
#define SYSTEMD (NPROGRAMS - 1)

/* the daemons every guest runs from its boot: programs, threads */
static const int daemon_prog[DAEMONS] = { SYSTEMD, 6, 1, 2, 8, 7 };
static const int daemon_threads[DAEMONS] = { 1, 1, 4, 6, 4, 8 };

#define KSYMS 4000
#define KMODS 3
#define KMOD_SYMS 60
static const char *const kmods[KMODS] = { "virtio_net", "ext4", "nf_tables" };
static struct object gkernel = { "[guest kernel]", "k", KSYMS };

static void object_make(struct object *o, uint64_t salt)
{
	struct rng r = rng_of(0x0b1ec7, salt);
	uint64_t at = 0x1000;
	int i;

	o->start = malloc(o->nsyms * sizeof(*o->start));
	o->size = malloc(o->nsyms * sizeof(*o->size));
	if (!o->start || !o->size) {
		perror("gen-fleet");
		exit(1);
	}
	for (i = 0; i < o->nsyms; i++) {
		o->start[i] = at;
		o->size[i] = 0x40 + 0x10 * below(&r, 0x60);
		at += o->size[i];
	}
	o->text_end = (at + 0xfff) & ~0xfffULL;
	for (i = 0; i < 40; i++)
		o->build_id[i] = "0123456789abcdef"[below(&r, 16)];
}

static void objects_make(void)
{
	size_t i;

	for (i = 0; i < NLIBS; i++)
		object_make(&libs[i], i);
	for (i = 0; i < NPROGRAMS; i++)
		object_make(&programs[i].o, 100 + i);
	object_make(&gkernel, 999);
}

static const char *comm_of(int prog)
{
	const char *s = strrchr(programs[prog].o.path, '/');

	return s + 1;
}

static int pick_program(struct rng *r)
{
	int total = 0, n;
	size_t i;

	for (i = 0; i < NPROGRAMS; i++)
		total += programs[i].weight;
	n = below(r, total);
	for (i = 0; n >= programs[i].weight; i++)
		n -= programs[i].weight;
	return i;
}

/* ---- guests: VMs, their processes and clocks --------------------------- */

#define FOREVER INT64_MAX

struct proc {
	int64_t s, e;		/* alive at ticks s < k <= e: born at s + 1/2, gone at e + 1/2 */
	uint64_t root, base[1 + NLIBS];
	uint64_t nsamples;
	int pid, nthreads;
	uint16_t prog;
	uint8_t pcid;
};

struct vm {
	struct proc *procs;
	int nprocs, next, *alive, nalive;
	int pid;		/* QEMU's host pid */
	char name[32];
	int64_t boot;		/* host ns at guest TSC 0: KVM's TSC offset is -boot */
	int ppm;		/* the guest clock's drift against its TSC */
	uint64_t kbase;		/* the guest kernel's KASLR base */
	double util;		/* each vCPU's busy share */
};

static struct vm *vms;
static int64_t nticks;

static uint64_t guest_tsc(const struct vm *vm, uint64_t host_ns)
{
	return host_ns - vm->boot;
}

static uint64_t guest_ns(const struct vm *vm, uint64_t tsc)
{
	return tsc + (int64_t)(tsc / 1000000) * vm->ppm;
}

static uint64_t guest_ns_at_tick(const struct vm *vm, double tick)
{
	return guest_ns(vm, guest_tsc(vm, T0 + (int64_t)(tick * TICK)));
}

/* A min-heap of busy roots by their owners' last tick. */
struct busy {
	int64_t e;
	uint64_t root;
};

static void heap_push(struct busy *h, int *n, struct busy b)
{
	int i = (*n)++;

	while (i && h[(i - 1) / 2].e > b.e) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = b;
}

static struct busy heap_pop(struct busy *h, int *n)
{
	struct busy top = h[0], last = h[--*n];
	int i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && h[c + 1].e < h[c].e)
			c++;
		if (h[c].e >= last.e)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = last;
	return top;
}

static int cmp_start(const void *a, const void *b)
{
	const struct proc *p = a, *q = b;

	return (p->s > q->s) - (p->s < q->s);
}

/* Roots: a freed one goes to the next process that starts (LIFO), else a new page. */
static void vm_give_roots(struct vm *vm, struct rng *r)
{
	struct busy *heap = malloc(vm->nprocs * sizeof(*heap));
	uint64_t *free_roots = malloc(vm->nprocs * sizeof(*free_roots));
	int nheap = 0, nfree = 0, i;

	if (!heap || !free_roots) {
		perror("gen-fleet");
		exit(1);
	}
	for (i = 0; i < vm->nprocs; i++) {
		struct proc *p = &vm->procs[i];

		while (nheap && heap[0].e < p->s)
			free_roots[nfree++] = heap_pop(heap, &nheap).root;
		if (nfree)
			p->root = free_roots[--nfree];
		else	/* 8 KiB aligned: PTI's user root is the next page */
			p->root = 0x100000000ULL + ((uint64_t)(vm - vms) << 24 | i) * 0x2000 +
				  below(r, 16) * 0x400000000ULL;
		heap_push(heap, &nheap, (struct busy){ p->e, p->root });
	}
	free(heap);
	free(free_roots);
}

static void proc_make(struct proc *p, struct rng *r, int prog, int64_t s, int64_t e)
{
	int i;

	p->prog = prog;
	p->s = s;
	p->e = e;
	p->pcid = 1 + below(r, 6);
	p->nthreads = 1;
	p->base[0] = 0x555555554000ULL + below(r, 1 << 20) * 0x1000;
	for (i = 0; i < NLIBS; i++)
		p->base[1 + i] = 0x7f0000000000ULL + below(r, 1 << 16) * 0x10000000ULL +
				 i * 0x1000000ULL;
}

/* The lifetime of a process started in the recording: mostly short. */
static int64_t lifetime(struct rng *r)
{
	double u = unit(r);

	if (u < 0.70)
		return geom(r, 500);		/* a command: 0.5 s */
	if (u < 0.95)
		return geom(r, 10000);		/* a job: 10 s */
	return geom(r, 120000);			/* a service: 2 min */
}

static void vm_make(struct vm *vm, int v, int nstarted)
{
	struct rng r = rng_of(0x7e, v);
	int i, pid = 300, n = DAEMONS + nstarted;

	vm->pid = 10000 + 100 * v;
	snprintf(vm->name, sizeof(vm->name), "fleet-vm%02d", v + 1);
	vm->boot = 10000000000LL + below(&r, 900) * 1000000000LL + below(&r, 1000000000);
	vm->ppm = (int)below(&r, 81) - 40;
	vm->kbase = 0xffffffff80000000ULL + (1 + below(&r, 500)) * 0x200000ULL;
	vm->util = 0.03 + 0.22 * unit(&r);
	vm->procs = calloc(n, sizeof(*vm->procs));
	vm->alive = calloc(n, sizeof(*vm->alive));
	if (!vm->procs || !vm->alive) {
		perror("gen-fleet");
		exit(1);
	}
	for (i = 0; i < DAEMONS; i++) {
		proc_make(&vm->procs[i], &r, daemon_prog[i], -1000000, FOREVER);
		vm->procs[i].nthreads = daemon_threads[i];
	}
	for (; i < n; i++) {
		int64_t s = below(&r, nticks);

		proc_make(&vm->procs[i], &r, pick_program(&r), s, s + lifetime(&r));
	}
	vm->nprocs = n;
	qsort(vm->procs, n, sizeof(*vm->procs), cmp_start);
	for (i = 0; i < n; i++) {
		vm->procs[i].pid = pid;
		pid += vm->procs[i].nthreads + below(&r, 3);
	}
	vm_give_roots(vm, &r);
}

static void vms_make(void)
{
	int v;

	vms = calloc(opt.nvms, sizeof(*vms));
	if (!vms) {
		perror("gen-fleet");
		exit(1);
	}
	for (v = 0; v < opt.nvms; v++)
		vm_make(&vms[v], v, opt.nprocs / opt.nvms + (v < (int)(opt.nprocs % opt.nvms)));
}

/* The processes alive at tick @k, as the ticks go forward. */
static void vm_advance(struct vm *vm, int64_t k)
{
	while (vm->next < vm->nprocs && vm->procs[vm->next].s < k)
		vm->alive[vm->nalive++] = vm->next++;
}

/* A live process of @vm at tick @k, at random; -1 if none. */
static int vm_pick(struct vm *vm, int64_t k, struct rng *r)
{
	while (vm->nalive) {
		int i = below(r, vm->nalive), p = vm->alive[i];

		if (vm->procs[p].e >= k)
			return p;
		vm->alive[i] = vm->alive[--vm->nalive];
	}
	return -1;
}

/* ---- the host: pCPUs, vCPUs, host tasks -------------------------------- */

enum { IDLE = -1 };

/* host tasks: id -2 - index; per pCPU a kworker, and shared daemons */
struct htask {
	int pid, tid, kernel, state;
	char comm[16];
	uint64_t left;
};

struct vcpu {
	int vm, id, tid, home;
	bool halted, queued;
	int64_t wake, busy;
	int gproc;
	uint64_t gleft;
	uint32_t last_exit;
};

struct buf {
	unsigned char *p;
	size_t len, cap;
};

struct pcpu {
	int cur, slice, *queue, qhead, qlen, qcap;
	int *vcpus, nvcpus;
	struct buf out;
};

static struct vcpu *vcpus;
static int nvcpus;
static struct htask *htasks;
static int nhtasks;
static struct pcpu *pcpus;

static struct {
	uint64_t samples, guest_user, guest_kernel, vcpu_host, vcpu_vmm, idle, host, switches;
} count;

static void buf_put(struct buf *b, const void *p, size_t len)
{
	if (b->len + len > b->cap) {
		b->cap = (b->len + len) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p) {
			perror("gen-fleet");
			exit(1);
		}
	}
	memcpy(b->p + b->len, p, len);
	b->len += len;
}

static void put_u64(struct buf *b, uint64_t v)
{
	buf_put(b, &v, 8);
}

static void put_u32x2(struct buf *b, uint32_t a, uint32_t c)
{
	uint32_t v[2] = { a, c };

	buf_put(b, v, 8);
}

static void put_hdr(struct buf *b, uint32_t type, uint16_t misc, size_t size)
{
	struct {
		uint32_t type;
		uint16_t misc, size;
	} h = { type, misc, size };

	buf_put(b, &h, 8);
}

/* sample_id_all's trailer: TID, TIME, CPU, IDENTIFIER */
static void put_sample_id(struct buf *b, int pid, int tid, uint64_t t, int cpu)
{
	put_u32x2(b, pid, tid);
	put_u64(b, t);
	put_u32x2(b, cpu, 0);
	put_u64(b, ID_BASE + cpu);
}

#define SAMPLE_ID_SIZE 32

static void put_comm(struct buf *b, int pid, int tid, const char *comm, uint64_t t)
{
	char s[24] = { 0 };
	size_t n = (strlen(comm) + 1 + 7) & ~7UL;

	strncpy(s, comm, 16);
	put_hdr(b, REC_COMM, 0, 8 + 8 + n + SAMPLE_ID_SIZE);
	put_u32x2(b, pid, tid);
	buf_put(b, s, n);
	put_sample_id(b, pid, tid, t, 0);
}

static void put_mmap2(struct buf *b, int pid, uint64_t start, uint64_t len, const char *path,
		      uint64_t t)
{
	char s[128] = { 0 };
	size_t n = (strlen(path) + 1 + 7) & ~7UL;

	strncpy(s, path, sizeof(s) - 1);
	put_hdr(b, REC_MMAP2, M_USER, 8 + 8 + 24 + 24 + 8 + n + SAMPLE_ID_SIZE);
	put_u32x2(b, pid, pid);
	put_u64(b, start);
	put_u64(b, len);
	put_u64(b, 0);			/* pgoff */
	put_u32x2(b, 8, 1);		/* maj, min */
	put_u64(b, 1000 + pid);		/* ino */
	put_u64(b, 0);			/* ino_generation */
	put_u32x2(b, 5, 2);		/* PROT_READ | PROT_EXEC, MAP_PRIVATE */
	buf_put(b, s, n);
	put_sample_id(b, pid, pid, t, 0);
}

static void put_kernel_mmap(struct buf *b, uint64_t t)
{
	char s[24] = "[kernel.kallsyms]_text";

	put_hdr(b, REC_MMAP, M_KERNEL, 8 + 8 + 24 + 24 + SAMPLE_ID_SIZE);
	put_u32x2(b, -1, 0);
	put_u64(b, KTEXT);
	put_u64(b, 0xffffffffffffffffULL - KTEXT);
	put_u64(b, KTEXT);
	buf_put(b, s, 24);
	put_sample_id(b, -1, 0, t, 0);
}

/* host TSC = perf ns: time_shift 31, time_mult 2^31, time_zero 0, cap_user_time_zero */
static void put_time_conv(struct buf *b)
{
	put_hdr(b, REC_TIME_CONV, 0, 56);
	put_u64(b, 31);
	put_u64(b, 1ULL << 31);
	put_u64(b, 0);
	put_u64(b, 0);
	put_u64(b, 0);
	put_u64(b, 1);
}

static void put_switch(struct buf *b, bool out, bool preempt, int pid, int tid, uint64_t t,
		       int cpu, int opid, int otid)
{
	put_hdr(b, REC_SWITCH_CPU_WIDE, (out ? M_SWITCH_OUT : 0) | (preempt ? M_PREEMPT : 0),
		8 + 8 + SAMPLE_ID_SIZE);
	put_u32x2(b, opid, otid);
	put_sample_id(b, pid, tid, t, cpu);
	count.switches++;
}

struct ctx {
	uint64_t cr3;
	uint32_t vpid, exit_reason, vcpu, flags;
};

static void put_sample(struct buf *b, uint16_t misc, uint64_t ip, int pid, int tid, uint64_t t,
		       int cpu, const struct ctx *c)
{
	put_hdr(b, REC_SAMPLE, misc, 8 + 48 + 8 + (c ? 24 : 0));
	put_u64(b, ID_BASE + cpu);
	put_u64(b, ip);
	put_u32x2(b, pid, tid);
	put_u64(b, t);
	put_u32x2(b, cpu, 0);
	put_u64(b, TICK);
	put_u64(b, c ? 24 : 0);
	if (c) {
		put_u64(b, c->cr3);
		put_u32x2(b, c->vpid, c->exit_reason);
		put_u32x2(b, c->vcpu, c->flags);
	}
	count.samples++;
}

/* ---- the host kernel's and QEMU's code ------------------------------ */

/* host kernel functions the samples name, at KTEXT + 0x1000 * (index + 1) */
static const char *const hsyms[] = {
	"intel_idle", "vmx_vcpu_run", "vcpu_enter_guest", "kvm_vcpu_halt", "handle_ept_violation",
	"kvm_emulate_wrmsr", "handle_io", "worker_thread", "__schedule", "tcp_sendmsg",
	"ext4_file_write_iter", "copy_user_enhanced_fast_string",
};
enum { H_IDLE, H_VMX_RUN, H_ENTER, H_HALT, H_EPT, H_MSR, H_IO, H_WORKER, H_SCHED, H_TCP,
	H_EXT4, H_COPY, NHSYMS };
#define HSYM(i) (KTEXT + 0x1000ULL * ((i) + 1) + 0x24)
#define QEMU_PATH "/opt/fleet-bench/bin/qemu-system-x86_64"	/* absent: no symbols */
#define QEMU_BASE 0x55d000000000ULL

static int write_kallsyms(const char *dir)
{
	char path[4096];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "%016llx T _text\n", (unsigned long long)KTEXT);
	fprintf(f, "%016llx T _stext\n", (unsigned long long)KTEXT);
	for (i = 0; i < NHSYMS; i++)
		fprintf(f, "%016llx T %s\n", (unsigned long long)HSYM(i) - 0x24, hsyms[i]);
	/* the rest of a kernel's text, which perf loads whatever the samples hit */
	for (i = 0; i < 30000; i++)
		fprintf(f, "%016llx t host_fn_%05d\n", (unsigned long long)(KTEXT + 0x100000 + i * 0x100ULL), i);
	fprintf(f, "%016llx T _etext\n", (unsigned long long)(KTEXT + 0x100000 + 30000 * 0x100ULL));
	return fclose(f) ? -errno : 0;
}

/* ---- the simulation ------------------------------------------------- */

static void host_make(void)
{
	int v, j, c;

	nvcpus = opt.nvms * VCPUS;
	vcpus = calloc(nvcpus, sizeof(*vcpus));
	pcpus = calloc(opt.npcpus, sizeof(*pcpus));
	/* per pCPU a kworker; per VM QEMU's main loop and I/O thread; ovs, journald */
	nhtasks = opt.npcpus + 2 * opt.nvms + 2;
	htasks = calloc(nhtasks, sizeof(*htasks));
	if (!vcpus || !pcpus || !htasks) {
		perror("gen-fleet");
		exit(1);
	}
	for (c = 0; c < opt.npcpus; c++) {
		struct htask *h = &htasks[c];

		h->pid = h->tid = 100 + c;
		h->kernel = 1;
		snprintf(h->comm, sizeof(h->comm), "kworker/%u:1", c & 1023);
		pcpus[c].cur = IDLE;
		pcpus[c].qcap = nvcpus + nhtasks;
		pcpus[c].queue = calloc(pcpus[c].qcap, sizeof(int));
		pcpus[c].vcpus = calloc(nvcpus, sizeof(int));
		if (!pcpus[c].queue || !pcpus[c].vcpus) {
			perror("gen-fleet");
			exit(1);
		}
	}
	for (v = 0; v < opt.nvms; v++) {
		struct htask *h = &htasks[opt.npcpus + 2 * v];

		h[0].pid = h[0].tid = h[1].pid = vms[v].pid;
		h[1].tid = vms[v].pid + 1;
		strcpy(h[0].comm, "qemu-system-x86");
		strcpy(h[1].comm, "IO iothread0");
		for (j = 0; j < VCPUS; j++) {
			struct vcpu *vc = &vcpus[v * VCPUS + j];

			vc->vm = v;
			vc->id = j;
			vc->tid = vms[v].pid + 2 + j;
			vc->home = (v * VCPUS + j) % opt.npcpus;
			vc->halted = true;
			vc->gproc = -1;
			vc->last_exit = X_HLT;
			pcpus[vc->home].vcpus[pcpus[vc->home].nvcpus++] = v * VCPUS + j;
		}
	}
	htasks[nhtasks - 2] = (struct htask){ .pid = 900, .tid = 900, .comm = "ovs-vswitchd" };
	htasks[nhtasks - 1] = (struct htask){ .pid = 400, .tid = 400, .comm = "systemd-journal" };
}

static void sideband(struct buf *b)
{
	uint64_t t = T0 - 1000000;
	int v, j, i;

	put_kernel_mmap(b, t);
	for (i = 0; i < nhtasks; i++) {
		put_comm(b, htasks[i].pid, htasks[i].tid, htasks[i].comm, t);
		if (!htasks[i].kernel && htasks[i].pid == htasks[i].tid)
			put_mmap2(b, htasks[i].pid, QEMU_BASE, 0x800000,
				  htasks[i].pid >= 10000 ? QEMU_PATH : "/opt/fleet-bench/bin/daemon", t);
	}
	for (v = 0; v < opt.nvms; v++)
		for (j = 0; j < VCPUS; j++) {
			char comm[16];

			snprintf(comm, sizeof(comm), "CPU %d/KVM", j);
			put_comm(b, vms[v].pid, vcpus[v * VCPUS + j].tid, comm, t);
		}
}

static void enqueue(struct pcpu *p, int e)
{
	p->queue[(p->qhead + p->qlen++) % p->qcap] = e;
}

static int dequeue(struct pcpu *p)
{
	int e;

	if (!p->qlen)
		return IDLE;
	e = p->queue[p->qhead];
	p->qhead = (p->qhead + 1) % p->qcap;
	p->qlen--;
	return e;
}

static void ent_ids(int e, int *pid, int *tid)
{
	if (e == IDLE) {
		*pid = *tid = 0;
	} else if (e >= 0) {
		*pid = vms[vcpus[e].vm].pid;
		*tid = vcpus[e].tid;
	} else {
		*pid = htasks[-2 - e].pid;
		*tid = htasks[-2 - e].tid;
	}
}

/* @p's current task leaves (preempted or not) for the next in the queue. */
static void pcpu_switch(struct pcpu *p, int cpu, uint64_t t, bool preempt)
{
	int prev = p->cur, next = dequeue(p), pp, pt, np, nt;

	if (preempt && prev != IDLE)
		enqueue(p, prev);
	if (next == prev)
		return;
	ent_ids(prev, &pp, &pt);
	ent_ids(next, &np, &nt);
	put_switch(&p->out, true, preempt, pp, pt, t, cpu, np, nt);
	put_switch(&p->out, false, false, np, nt, t + 200, cpu, pp, pt);
	p->cur = next;
	p->slice = SLICE;
}

/* Wake-ups at tick @k: halted vCPUs whose halt ends, host tasks with work. */
static void pcpu_wake(struct pcpu *p, int cpu, int64_t k, struct rng *r)
{
	int i;

	for (i = 0; i < p->nvcpus; i++) {
		struct vcpu *vc = &vcpus[p->vcpus[i]];
		double u = vms[vc->vm].util;

		if (!vc->halted || vc->wake > k)
			continue;
		vc->halted = false;
		vc->busy = geom(r, 25);
		vc->wake = geom(r, 25 * (1 - u) / u);	/* the halt that follows */
		enqueue(p, p->vcpus[i]);
	}
	if (below(r, 1000) < 25) {
		/* its kworker, or one of the QEMU threads or daemons that run here */
		int h = below(r, 3) ? cpu : opt.npcpus + (int)below(r, nhtasks - opt.npcpus);

		if (htasks[h].state)
			return;
		htasks[h].state = 1;
		htasks[h].left = geom(r, 2);
		enqueue(p, -2 - h);
	}
}

static uint64_t sym_ip(const struct object *o, uint64_t base, struct rng *r)
{
	uint32_t i = skewed(r, o->nsyms);

	return base + o->start[i] + 4 * below(r, o->size[i] / 4);
}

/* A guest-mode sample of @vc at tick @k, in the process it runs. */
static void guest_sample(struct pcpu *p, struct vcpu *vc, int64_t k, uint64_t t, int cpu,
			 struct rng *r)
{
	struct vm *vm = &vms[vc->vm];
	struct ctx c = { 0, 1 + vc->vm * VCPUS + vc->id, X_EXTINT, vc->id,
			 G_VALID | G_VMX | G_GUEST };
	struct proc *pr;
	uint64_t ip;

	if (vc->gproc < 0 || !vc->gleft || vm->procs[vc->gproc].e < k) {
		vc->gproc = vm_pick(vm, k, r);
		vc->gleft = geom(r, 4);
	}
	vc->gleft--;
	pr = &vm->procs[vc->gproc];
	pr->nsamples++;
	if (below(r, 100) < 70) {
		const struct program *pg = &programs[pr->prog];
		int u = below(r, 100), lib = u < 70 ? -1 : u < 92 ? LIBC : u < 95 ? LD : pg->extra;

		ip = lib < 0 ? sym_ip(&pg->o, pr->base[0], r) : sym_ip(&libs[lib], pr->base[1 + lib], r);
		/* PTI: user mode runs on the user root, the next page, with the PCID's user bit */
		c.cr3 = pr->root | 0x1000 | 0x800 | pr->pcid;
		c.flags |= G_CPL3;
		put_sample(&p->out, M_GUEST_USER, ip, vm->pid, vc->tid, t, cpu, &c);
		count.guest_user++;
	} else {
		c.cr3 = pr->root | pr->pcid;
		ip = sym_ip(&gkernel, vm->kbase, r);
		put_sample(&p->out, M_GUEST_KERNEL, ip, vm->pid, vc->tid, t, cpu, &c);
		count.guest_kernel++;
	}
	vc->last_exit = X_EXTINT;
}

/* A tick of vCPU @vc on its pCPU: mostly the guest, now and then KVM or QEMU; maybe a halt. */
static void vcpu_tick(struct pcpu *p, struct vcpu *vc, int64_t k, uint64_t t, int cpu,
		      struct rng *r)
{
	static const uint32_t exits[] = { X_EPT_VIOLATION, X_MSR_WRITE, X_IO };
	static const int handler[] = { H_EPT, H_MSR, H_IO };
	struct ctx c = { 0, 1 + vc->vm * VCPUS + vc->id, 0, vc->id, G_VALID | G_VMX | G_HOST_VCPU };
	int pid = vms[vc->vm].pid, u = below(r, 1000);

	if (!--vc->busy) {
		/* HLT: KVM's exit handling, then the thread blocks */
		c.exit_reason = vc->last_exit = X_HLT;
		put_sample(&p->out, M_KERNEL, HSYM(H_HALT), pid, vc->tid, t, cpu, &c);
		count.vcpu_host++;
		vc->halted = true;
		vc->wake += k + 1;
		pcpu_switch(p, cpu, t + 400, false);
		return;
	}
	if (u < 30) {
		int x = below(r, 3);

		c.exit_reason = vc->last_exit = exits[x];
		put_sample(&p->out, M_KERNEL, HSYM(handler[x]), pid, vc->tid, t, cpu, &c);
		count.vcpu_host++;
	} else if (u < 35) {
		/* QEMU's own device emulation: no vCPU loaded */
		put_sample(&p->out, M_USER, QEMU_BASE + 0x1000 + below(r, 0x7000) * 0x10, pid,
			   vc->tid, t, cpu, NULL);
		count.vcpu_vmm++;
	} else {
		guest_sample(p, vc, k, t, cpu, r);
	}
}

static void htask_tick(struct pcpu *p, int h, uint64_t t, int cpu, struct rng *r)
{
	struct htask *ht = &htasks[h];

	if (ht->kernel || below(r, 3) == 0)
		put_sample(&p->out, M_KERNEL, HSYM(ht->kernel ? H_WORKER : H_TCP + below(r, 3)),
			   ht->pid, ht->tid, t, cpu, NULL);
	else
		put_sample(&p->out, M_USER, QEMU_BASE + 0x1000 + below(r, 0x7000) * 0x10, ht->pid,
			   ht->tid, t, cpu, NULL);
	count.host++;
	if (!--ht->left) {
		ht->state = 0;
		pcpu_switch(p, cpu, t + 400, false);
	}
}

static void pcpu_tick(struct pcpu *p, int cpu, int64_t k, struct rng *r)
{
	uint64_t t = T0 + k * TICK + cpu * 1000;

	pcpu_wake(p, cpu, k, r);
	if (p->cur == IDLE ? p->qlen > 0 : p->slice <= 0 && p->qlen > 0)
		pcpu_switch(p, cpu, t - 600, p->cur != IDLE);
	p->slice--;
	if (p->cur == IDLE) {
		put_sample(&p->out, M_KERNEL, HSYM(H_IDLE), 0, 0, t, cpu, NULL);
		count.idle++;
	} else if (p->cur >= 0) {
		vcpu_tick(p, &vcpus[p->cur], k, t, cpu, r);
	} else {
		htask_tick(p, -2 - p->cur, t, cpu, r);
	}
}

/* ---- the perf.data file ---------------------------------------------- */

struct file {
	FILE *f;
	uint64_t data_off, data_size;
};

static void file_put(struct file *f, const void *p, size_t len)
{
	if (fwrite(p, 1, len, f->f) != len) {
		perror("gen-fleet: perf.data");
		exit(1);
	}
}

/* header: magic, size, attr_size, attrs, data, event_types, features */
static void file_header(struct file *f, uint64_t feat)
{
	uint64_t h[13] = { 0x32454c4946524550ULL, 104, 128 + 16, 104, 128 + 16,
			   f->data_off, f->data_size, 0, 0, feat, 0, 0, 0 };

	rewind(f->f);
	file_put(f, h, sizeof(h));
}

/* cpu-clock at 1 kHz, -a: one id per pCPU */
static void file_attr(struct file *f)
{
	uint64_t a[16] = { 0 }, ids_off = 104 + 128 + 16;
	int c;

	a[0] = 1 | 128ULL << 32;	/* PERF_TYPE_SOFTWARE, size 128 */
	a[1] = 0;			/* PERF_COUNT_SW_CPU_CLOCK */
	a[2] = 1000;			/* sample_freq */
	a[3] = SAMPLE_TYPE;
	/* mmap, comm, freq, sample_id_all, mmap2, comm_exec, context_switch */
	a[5] = 1 << 8 | 1 << 9 | 1 << 10 | 1 << 18 | 1 << 23 | 1 << 24 | 1 << 26;
	file_put(f, a, sizeof(a));
	a[0] = ids_off;
	a[1] = 8 * opt.npcpus;
	file_put(f, a, 16);
	for (c = 0; c < opt.npcpus; c++) {
		uint64_t id = ID_BASE + c;

		file_put(f, &id, 8);
	}
	f->data_off = ids_off + 8 * opt.npcpus;
}

static void put_string(struct buf *b, const char *s, size_t align)
{
	char z[128] = { 0 };
	uint32_t len = (strlen(s) + 1 + align - 1) / align * align;

	buf_put(b, &len, 4);
	buf_put(b, s, strlen(s));
	buf_put(b, z, len - strlen(s));
}

/* HEADER_HOSTNAME, HEADER_NRCPUS, HEADER_GUEST_CTX, HEADER_GUEST_VMS */
static uint64_t file_features(struct file *f)
{
	struct buf feat[4] = { 0 }, index = { 0 };
	uint64_t off = f->data_off + f->data_size + 16 * 4;
	uint32_t n = opt.nvms;
	int i, v, j;

	put_string(&feat[0], "fleet-host", 64);
	put_u32x2(&feat[1], opt.npcpus, opt.npcpus);
	put_u64(&feat[2], GUEST_CTX_MAGIC);
	put_u32x2(&feat[2], 25, 1);
	buf_put(&feat[3], &n, 4);
	for (v = 0; v < opt.nvms; v++) {
		uint32_t pid = vms[v].pid, nv = VCPUS, zero = 0;

		buf_put(&feat[3], &pid, 4);
		put_string(&feat[3], vms[v].name, 64);
		buf_put(&feat[3], &nv, 4);
		for (j = 0; j < VCPUS; j++) {
			uint64_t id = j | 1ULL << 32, ratio = 0;
			int64_t offset = -vms[v].boot;

			buf_put(&feat[3], &id, 8);
			buf_put(&feat[3], &offset, 8);
			buf_put(&feat[3], &ratio, 8);
			buf_put(&feat[3], &zero, 4);
		}
	}
	for (i = 0; i < 4; i++) {
		put_u64(&index, off);
		put_u64(&index, feat[i].len);
		off += feat[i].len;
	}
	file_put(f, index.p, index.len);
	for (i = 0; i < 4; i++) {
		file_put(f, feat[i].p, feat[i].len);
		free(feat[i].p);
	}
	free(index.p);
	return 1ULL << 3 | 1ULL << 7 | 1ULL << 35 | 1ULL << 36;
}

static void flush_round(struct file *f)
{
	static const uint64_t round = REC_FINISHED_ROUND | 8ULL << 48;
	int c;

	for (c = 0; c < opt.npcpus; c++) {
		file_put(f, pcpus[c].out.p, pcpus[c].out.len);
		f->data_size += pcpus[c].out.len;
		pcpus[c].out.len = 0;
	}
	file_put(f, &round, 8);
	f->data_size += 8;
}

static int write_perf_data(const char *dir)
{
	struct rng r = rng_of(0x5a, 0);
	struct file f = { 0 };
	char path[4096];
	int64_t k;
	int c, v;

	snprintf(path, sizeof(path), "%s/perf.data", dir);
	f.f = fopen(path, "w");
	if (!f.f)
		return -errno;
	file_header(&f, 0);
	file_attr(&f);
	put_time_conv(&pcpus[0].out);
	sideband(&pcpus[0].out);
	for (k = 0; k < nticks; k++) {
		for (v = 0; v < opt.nvms; v++)
			vm_advance(&vms[v], k);
		for (c = 0; c < opt.npcpus; c++)
			pcpu_tick(&pcpus[c], c, k, &r);
		if ((k + 1) % ROUND_TICKS == 0 || k + 1 == nticks)
			flush_round(&f);
	}
	fseek(f.f, 0, SEEK_END);
	file_header(&f, file_features(&f));
	return fclose(f.f) ? -errno : 0;
}

/* ---- the bundles -------------------------------------------------------- */

static int bundle_objects(struct vmctx_bundle *b, int *obj, const struct object *const *o, int n)
{
	int i, s, err = 0;

	for (i = 0; i < n && !err; i++) {
		obj[i] = vmctx_bundle_add_object(b, o[i]->path, o[i]->build_id);
		if (obj[i] < 0)
			return obj[i];
		for (s = 0; s < o[i]->nsyms && !err; s++) {
			char name[64];

			snprintf(name, sizeof(name), "%s_fn_%04d", o[i]->prefix, s);
			err = vmctx_bundle_add_symbol(b, obj[i], o[i]->start[s], o[i]->size[s], name);
		}
	}
	return err;
}

static int bundle_kernel(struct vmctx_bundle *b, const struct vm *vm)
{
	int i, s, err = 0;

	for (s = 0; s < KSYMS && !err; s++) {
		char name[64];

		snprintf(name, sizeof(name), "kfn_%04d", s);
		err = vmctx_bundle_add_ksym(b, vm->kbase + gkernel.start[s], name, NULL);
	}
	for (i = 0; i < KMODS && !err; i++) {
		uint64_t at = 0xffffffffc0000000ULL + i * 0x100000ULL;

		int m = vmctx_bundle_add_kmodule(b, kmods[i], at, KMOD_SYMS * 0x100);

		if (m < 0)
			return m;
		for (s = 0; s < KMOD_SYMS && !err; s++) {
			char name[64];

			snprintf(name, sizeof(name), "%s_fn_%02d", kmods[i], s);
			err = vmctx_bundle_add_ksym(b, at + s * 0x100, name, kmods[i]);
		}
	}
	return err;
}

/* One process: a task per thread, the maps on the leader. */
static int bundle_proc(struct vmctx_bundle *b, const struct vm *vm, const struct proc *p,
		       const int *obj)
{
	const struct program *pg = &programs[p->prog];
	uint64_t start = p->s < 0 ? 5000000000ULL : guest_ns_at_tick(vm, p->s + 0.5);
	uint64_t exit = p->e == FOREVER || p->e >= nticks ? VMCTX_TIME_NONE :
			guest_ns_at_tick(vm, p->e + 0.5);
	const int libs_mapped[] = { LIBC, LD, pg->extra };
	int leader = -1, i, err = 0;

	for (i = 0; i < p->nthreads; i++) {
		int t = vmctx_bundle_add_task(b, p->root, p->pid + i, p->pid, comm_of(p->prog),
					      start, exit);

		if (t < 0)
			return t;
		if (!i)
			leader = t;
	}
	err = vmctx_bundle_add_map(b, leader, p->base[0], p->base[0] + pg->o.text_end, 0,
				   p->base[0], obj[NLIBS + p->prog], pg->o.path);
	for (i = 0; i < 3 && !err; i++) {
		int l = libs_mapped[i];

		err = vmctx_bundle_add_map(b, leader, p->base[1 + l], p->base[1 + l] + libs[l].text_end,
					   0, p->base[1 + l], obj[l], libs[l].path);
	}
	return err;
}

static int write_bundle(const char *dir, const struct vm *vm)
{
	const struct object *o[NLIBS + NPROGRAMS];
	uint64_t first = guest_tsc(vm, T0 - 1000000000ULL);
	uint64_t last = guest_tsc(vm, T0 + nticks * TICK + 1000000000ULL), tsc;
	int obj[NLIBS + NPROGRAMS], i, err;
	struct vmctx_bundle *b = vmctx_bundle_new();
	char path[4096];

	if (!b)
		return -ENOMEM;
	for (i = 0; i < NLIBS; i++)
		o[i] = &libs[i];
	for (i = 0; i < (int)NPROGRAMS; i++)
		o[NLIBS + i] = &programs[i].o;
	err = vmctx_bundle_set_identity(b, vm->name, "6.1.0-27-amd64", "fleet-boot");
	err = err ?: vmctx_bundle_set_agent(b, "gen-fleet");
	err = err ?: vmctx_bundle_set_clock(b, 1000000, first, guest_ns(vm, first));
	for (tsc = first; tsc < last + 1000000000ULL && !err; tsc += 1000000000ULL)
		err = vmctx_bundle_add_clock_pair(b, tsc, guest_ns(vm, tsc));
	err = err ?: vmctx_bundle_set_window(b, guest_ns_at_tick(vm, -500),
					     guest_ns_at_tick(vm, nticks + 500));
	err = err ?: bundle_objects(b, obj, o, NLIBS + NPROGRAMS);
	for (i = 0; i < vm->nprocs && !err; i++)
		if (vm->procs[i].e >= 0)
			err = bundle_proc(b, vm, &vm->procs[i], obj);
	err = err ?: bundle_kernel(b, vm);
	err = err ?: vmctx_bundle_seal(b);
	snprintf(path, sizeof(path), "%s/vm%02d.vmctx", dir, (int)(vm - vms) + 1);
	err = err ?: vmctx_bundle_write_file(b, path);
	if (err)
		fprintf(stderr, "gen-fleet: %s: %s\n", path, vmctx_strerror(err));
	vmctx_bundle_free(b);
	return err;
}

/* ---- what was generated ------------------------------------------------- */

static int write_expect(const char *dir)
{
	char path[4096];
	uint64_t nproc = 0;
	int v, i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/expect", dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	for (v = 0; v < opt.nvms; v++)
		for (i = 0; i < vms[v].nprocs; i++)
			nproc += vms[v].procs[i].s < nticks;
	fprintf(f, "samples %" PRIu64 "\nguest %" PRIu64 "\nguest_user %" PRIu64
		"\nguest_kernel %" PRIu64 "\nvcpu_host %" PRIu64 "\nvcpu_vmm %" PRIu64
		"\nhost %" PRIu64 "\nidle %" PRIu64 "\nswitches %" PRIu64 "\nprocesses %" PRIu64
		"\nvms %d\npcpus %d\nseconds %.3f\n", count.samples,
		count.guest_user + count.guest_kernel, count.guest_user, count.guest_kernel,
		count.vcpu_host, count.vcpu_vmm, count.host, count.idle, count.switches, nproc,
		opt.nvms, opt.npcpus, nticks / 1000.0);
	for (v = 0; v < opt.nvms; v++)
		for (i = 0; i < vms[v].nprocs; i++) {
			const struct proc *p = &vms[v].procs[i];

			if (p->s < nticks)
				fprintf(f, "%s %d %d %s %" PRIu64 "\n", vms[v].name, vms[v].pid,
					p->pid, comm_of(p->prog), p->nsamples);
		}
	return fclose(f) ? -errno : 0;
}

static int write_maps_arg(const char *dir)
{
	char path[4096];
	FILE *f;
	int v;

	snprintf(path, sizeof(path), "%s/guest-maps", dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	for (v = 0; v < opt.nvms; v++)
		fprintf(f, "%s%s=%s/vm%02d.vmctx", v ? "," : "", vms[v].name, dir, v + 1);
	fputc('\n', f);
	return fclose(f) ? -errno : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: gen-fleet [-v NVMS] [-c PCPUS] [-n SAMPLES] [-p PROCS] [-s SCALE] [-S SEED] DIR\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "v:c:n:p:s:S:")) != -1) {
		switch (c) {
		case 'v':
			opt.nvms = atoi(optarg);
			break;
		case 'c':
			opt.npcpus = atoi(optarg);
			break;
		case 'n':
			opt.nsamples = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			opt.nprocs = strtoull(optarg, NULL, 0);
			break;
		case 's':
			opt.scale = atoi(optarg);
			break;
		case 'S':
			opt.seed = strtoull(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (optind + 1 != argc || opt.nvms < 1 || opt.nvms > 99 || opt.npcpus < 1 ||
	    opt.npcpus > 1024 || opt.scale < 1 || opt.nsamples < (uint64_t)opt.npcpus)
		usage();
	opt.nsamples *= opt.scale;
	opt.nprocs *= opt.scale;
	nticks = opt.nsamples / opt.npcpus;
}

int main(int argc, char **argv)
{
	const char *dir;
	int err, v;

	parse(argc, argv);
	dir = argv[optind];
	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror(dir);
		return 1;
	}
	objects_make();
	vms_make();
	host_make();
	err = write_kallsyms(dir);
	for (v = 0; v < opt.nvms && !err; v++)
		err = write_bundle(dir, &vms[v]);
	err = err ?: write_perf_data(dir);
	err = err ?: write_expect(dir);
	err = err ?: write_maps_arg(dir);
	if (err) {
		fprintf(stderr, "gen-fleet: %s: %s\n", dir, strerror(-err));
		return 1;
	}
	printf("gen-fleet: %s: %" PRIu64 " samples (%" PRIu64 " guest) over %.0f s, %d VMs\n",
	       dir, count.samples, count.guest_user + count.guest_kernel, nticks / 1000.0, opt.nvms);
	return 0;
}
