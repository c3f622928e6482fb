// SPDX-License-Identifier: GPL-2.0
/*
 * lab-record: a minimal recorder on libperf.  It samples cpu-clock on all
 * CPUs with PERF_SAMPLE_GUEST_CTX while a command runs, and writes one text
 * line per sample for lab-check.
 *
 * usage: lab-record [-o samples.txt] [-c period_ns] [-N] [-g [-T] [-G bytes [-X]]] [-C cpus] [-q] -- command [args]
 *        lab-record -p     probe only: exit 0 if the kernel has the sample
 *                          type, 3 (with a message) if it does not
 *        lab-record -P [-- command]
 *                          the bit's open rules: EOPNOTSUPP with exclude_guest,
 *                          EACCES for an unprivileged user at
 *                          perf_event_paranoid 2, success for root; exit 0
 *                          if all three hold.  Then runs the command, if
 *                          any, as that user (its status is not used)
 *        lab-record -U -- command [args]
 *                          run the command as that user (uid and gid
 *                          65534, no supplementary groups)
 *   -N  stock mode: leave PERF_SAMPLE_GUEST_CTX out (for unpatched kernels)
 *   -g  guest call chains: sample with PERF_SAMPLE_CALLCHAIN and
 *       attr.defer_callchain too.  A sample that interrupted a guest then
 *       asks KVM for the guest's call chain: its own chain is just
 *       PERF_CONTEXT_GUEST_DEFERRED and a cookie, and KVM walks the guest's
 *       stack in the vCPU thread right after the exit, before handling
 *       it, and writes the chain to the same ring buffer as a
 *       PERF_RECORD_CALLCHAIN_DEFERRED record with that cookie.  Also
 *       records the kvm:kvm_guest_callchain tracepoint on all CPUs
 *       (tracefs mounted), a debugging aid that says why each walk ended
 *       and how long it held the vCPU
 *   -T  with -g: leave kvm:kvm_guest_callchain off (no C lines), as a
 *       user's perf record --vmcs-ctx -g does (the overhead benchmark)
 *   -G  with -g: user stacks too (PERF_SAMPLE_REGS_USER with BP, SP and IP,
 *       PERF_SAMPLE_STACK_USER of this many bytes): a sample that
 *       interrupted a guest in user mode gets, besides its chain, a
 *       PERF_RECORD_GUEST_USER_STACK record of the guest's registers and
 *       stack, which KVM copies where it walks the chain
 *   -X  with -G: exclude_callchain_user, as perf record --call-graph dwarf
 *       asks: a guest user sample's chain record holds its IP alone
 *   -C  sample only these CPUs (a perf CPU list such as 0 or 0-1), not all
 *   -q  count the samples and their bytes, but write no line per sample:
 *       the overhead benchmark times the block against -N with the least
 *       work in the reader (test/bench/lab-overhead.sh)
 *
 * The block is a u64 size, then struct perf_guest_ctx, or size 0 when no
 * vCPU was loaded; a missing block is written as zeros.
 * Output lines (test/lab/samples.h reads them):
 *   S cpu pid tid time ip misc cr3 asid exit_reason vcpu_id flags
 *   S cpu pid tid time ip misc cr3 asid exit_reason vcpu_id flags cookie  (-g)
 *   L lost_count
 *   D cpu pid tid time cookie misc nr ip...                      (-g)
 *   U cpu pid tid time cookie abi bp sp ip size dyn_size word... (-G)
 *   C cpu pid tid time vcpu_id cookie cpl end walk_ns nr ip...   (-g)
 * S: a cpu-clock sample; misc is its cpumode (PERF_RECORD_MISC_*), cr3
 * to flags the guest context block's fields (hex where a field is an
 * address or flags), cookie (-g only, decimal) the cookie of the sample's
 * deferred guest call chain: the entry after PERF_CONTEXT_GUEST_DEFERRED
 * in its chain, 0 where the chain has none (not a guest sample, or KVM
 * walks nothing for it: its rate limit, an unreadable guest).
 * D: a PERF_RECORD_CALLCHAIN_DEFERRED record: cpu pid tid time from its
 * sample_id (the vCPU thread, when KVM wrote it), its cookie, misc its
 * cpumode (PERF_RECORD_MISC_GUEST_USER or _KERNEL), and its nr ips whole,
 * in hex, context markers included: PERF_CONTEXT_GUEST_USER or _KERNEL,
 * the sampled guest IP, the guest's return addresses, then
 * PERF_CONTEXT_KERNEL and the host kernel's frames, PERF_CONTEXT_USER and
 * the host user's.
 * C: a kvm:kvm_guest_callchain record: cpu pid tid time of the record,
 * then its fields: vcpu_id, cookie (that of the walk's D records), cpl,
 * end (KVM_GUEST_CHAIN_END_* of arch/x86/kvm/trace.h: 0 last, 1 depth,
 * 2 fault, 3 order, 4 range, 5 align, 6 kernel, 7 pages, 8 changed,
 * 9 mode, 10 nomem, 11 nokernel, 12 dropped), walk_ns, nr and the guest
 * frames (the sampled IP first, no context marker), in hex.
 * U: a PERF_RECORD_GUEST_USER_STACK record: cpu pid tid time from its
 * sample_id, its cookie (that of the chain record that follows it), the
 * registers' ABI (2: 64-bit), the guest's BP, SP and IP, the stack's size
 * and how many bytes KVM read (dyn_size), then those bytes as 64-bit
 * words from SP up, in hex.
 * The lines of the two events are written as they are read, not in time
 * order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <linux/perf_event.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/event.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/mmap.h>
#include <perf/threadmap.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sysctl-int.h"

#define EXIT_NO_SUPPORT	3

static const uint64_t base_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				  PERF_SAMPLE_CPU;
static unsigned long nr_samples, nr_lost;
/* sample record bytes, [0] without and [1] with a guest context */
static unsigned long long sample_bytes[2], sample_count[2];
static int exclude_guest;
static int quiet;		/* -q: no line per sample */
static unsigned long nr_chains, nr_deferred, nr_cookies, nr_stacks;
static unsigned long long stack_record_bytes;

#ifndef PERF_RECORD_GUEST_USER_STACK
#define PERF_RECORD_GUEST_USER_STACK	23
#endif
/* -G: BP, SP, IP (arch/x86/include/uapi/asm/perf_regs.h) */
#define STACK_REGS	((1ull << 6) | (1ull << 7) | (1ull << 8))

/* Where kvm_guest_callchain's fields lie in its raw data (its format file). */
static struct {
	int vcpu_id, cookie, cpl, end, walk_ns, nr, ips;
} tp;
static const char *const tp_dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

static int libperf_print(enum libperf_print_level level, const char *fmt, va_list ap)
{
	if (level > LIBPERF_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void init_attr(struct perf_event_attr *attr, uint64_t sample_type, uint64_t period)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_period = period;
	attr->sample_type = sample_type;
	attr->disabled = 1;
	attr->exclude_guest = exclude_guest;
}

static int try_open(uint64_t sample_type)
{
	struct perf_event_attr attr;
	int fd;

	init_attr(&attr, sample_type, 1000000);
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * An unpatched kernel rejects the unknown sample_type bit with EINVAL.  Tell
 * that apart from a kernel that refuses cpu-clock for another reason.
 */
static int probe(void)
{
	int err = try_open(base_type | PERF_SAMPLE_GUEST_CTX);

	if (!err)
		return 0;
	if (err == -EINVAL && !try_open(base_type)) {
		fprintf(stderr, "lab-record: this kernel does not support PERF_SAMPLE_GUEST_CTX: perf_event_open() fails with EINVAL for sample_type bit 25 and succeeds without it; boot a kernel with vmctx's kernel-patches\n");
		return EXIT_NO_SUPPORT;
	}
	fprintf(stderr, "lab-record: perf_event_open(cpu-clock) failed: %s\n", strerror(-err));
	return 1;
}

/*
 * kvm:kvm_guest_callchain's id, and its fields' offsets into tp; -1 if
 * the kernel has no such tracepoint or no tracefs is mounted.
 */
static int tp_open_format(void)
{
	char path[256], line[512], name[64];
	int id = -1, off, size;
	FILE *f = NULL;

	for (size_t i = 0; i < sizeof(tp_dirs) / sizeof(tp_dirs[0]) && !f; i++) {
		snprintf(path, sizeof(path), "%s/events/kvm/kvm_guest_callchain/format",
			 tp_dirs[i]);
		f = fopen(path, "r");
	}
	if (!f)
		return -1;
	memset(&tp, 0xff, sizeof(tp));
	while (fgets(line, sizeof(line), f)) {
		char *field = strstr(line, "field:");
		char *at;

		if (sscanf(line, "ID: %d", &id) == 1 || !field)
			continue;
		at = strstr(field, ";\toffset:");
		if (!at || sscanf(at, ";\toffset:%d;\tsize:%d;", &off, &size) != 2)
			continue;
		*at = '\0';
		/* the name is the last word before the ';', after any '*' */
		if (sscanf(strrchr(field, ' ') ? strrchr(field, ' ') + 1 : field + 6,
			   "%63s", name) != 1)
			continue;
		if (!strcmp(name, "vcpu_id"))
			tp.vcpu_id = off;
		else if (!strcmp(name, "cookie") && size == 8)
			tp.cookie = off;
		else if (!strcmp(name, "cpl"))
			tp.cpl = off;
		else if (!strcmp(name, "end"))
			tp.end = off;
		else if (!strcmp(name, "walk_ns"))
			tp.walk_ns = off;
		else if (!strcmp(name, "nr"))
			tp.nr = off;
		else if (!strcmp(name, "ips"))
			tp.ips = off;
	}
	fclose(f);
	if (tp.vcpu_id < 0 || tp.cookie < 0 || tp.cpl < 0 || tp.end < 0 || tp.walk_ns < 0 ||
	    tp.nr < 0 || tp.ips < 0)
		return -1;
	return id;
}

static uint32_t raw_u32(const unsigned char *raw, int off)
{
	uint32_t v;

	memcpy(&v, raw + off, sizeof(v));
	return v;
}

static uint64_t raw_u64(const unsigned char *raw, int off)
{
	uint64_t v;

	memcpy(&v, raw + off, sizeof(v));
	return v;
}

/* A kvm_guest_callchain sample: TID, TIME, CPU, RAW. */
static void parse_chain(FILE *out, union perf_event *event)
{
	const __u64 *p = event->sample.array;
	const unsigned char *raw, *end = (const unsigned char *)event + event->header.size;
	uint32_t pid, tid, cpu, raw_size, loc, nr;
	uint64_t time;

	pid = (uint32_t)*p;
	tid = (uint32_t)(*p++ >> 32);
	time = *p++;
	cpu = (uint32_t)*p++;
	raw_size = *(const uint32_t *)p;
	raw = (const unsigned char *)p + sizeof(uint32_t);
	if (raw + raw_size > end || (uint32_t)tp.ips + 4 > raw_size ||
	    (uint32_t)tp.cookie + 8 > raw_size)
		return;
	loc = raw_u32(raw, tp.ips);
	nr = raw_u32(raw, tp.nr);
	if ((loc & 0xffff) + (loc >> 16) > raw_size || (loc >> 16) != nr * 8)
		return;
	nr_chains++;
	if (quiet)
		return;
	fprintf(out, "C %u %u %u %llu %u %llu %u %u %u %u", cpu, pid, tid,
		(unsigned long long)time, raw_u32(raw, tp.vcpu_id),
		(unsigned long long)raw_u64(raw, tp.cookie), raw[tp.cpl], raw[tp.end],
		raw_u32(raw, tp.walk_ns), nr);
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t ip;

		memcpy(&ip, raw + (loc & 0xffff) + 8 * i, sizeof(ip));
		fprintf(out, " 0x%llx", (unsigned long long)ip);
	}
	fputc('\n', out);
}

static void parse_sample(FILE *out, union perf_event *event, uint64_t sample_type)
{
	const __u64 *p = event->sample.array;
	uint64_t ip, time, size = 0, ctx[3] = { 0 }, cookie = 0;
	uint32_t pid, tid, cpu;

	ip = *p++;
	pid = (uint32_t)*p;
	tid = (uint32_t)(*p++ >> 32);
	time = *p++;
	cpu = (uint32_t)*p++;
	/*
	 * The sample's own chain: the host's; for a guest sample whose chain
	 * KVM walks later, PERF_CONTEXT_GUEST_DEFERRED and the cookie of the
	 * PERF_RECORD_CALLCHAIN_DEFERRED record that will carry it.
	 */
	if (sample_type & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = *p++;

		for (uint64_t i = 0; i + 1 < nr; i++)
			if (p[i] == PERF_CONTEXT_GUEST_DEFERRED)
				cookie = p[i + 1];
		if (!cookie && (event->header.misc & PERF_RECORD_MISC_CPUMODE_MASK) >= 4)
			fprintf(stderr, "lab-record: a guest-mode sample without a deferred chain: nr %llu, %llx %llx %llx\n",
				(unsigned long long)nr, (unsigned long long)(nr > 0 ? p[0] : 0),
				(unsigned long long)(nr > 1 ? p[1] : 0), (unsigned long long)(nr > 2 ? p[2] : 0));
		p += nr;
		nr_cookies += !!cookie;
	}
	/* -G: the host's registers and stack, of no use here */
	if (sample_type & PERF_SAMPLE_REGS_USER)
		p += *p ? 1 + __builtin_popcountll(STACK_REGS) : 1;
	if (sample_type & PERF_SAMPLE_STACK_USER) {
		uint64_t size = *p++;

		if (size)
			p += size / 8 + 1;
	}
	if (sample_type & PERF_SAMPLE_GUEST_CTX) {
		size = *p++;
		if (size >= sizeof(ctx))
			memcpy(ctx, p, sizeof(ctx));
	}
	sample_bytes[!!size] += event->header.size;
	sample_count[!!size]++;
	nr_samples++;
	if (quiet)
		return;
	/* struct perf_guest_ctx: cr3; asid, exit_reason; vcpu_id, flags */
	fprintf(out, "S %u %u %u %llu 0x%llx %u 0x%llx %u 0x%x %u 0x%x", cpu, pid, tid,
		(unsigned long long)time, (unsigned long long)ip,
		event->header.misc & PERF_RECORD_MISC_CPUMODE_MASK,
		(unsigned long long)ctx[0], (uint32_t)ctx[1], (uint32_t)(ctx[1] >> 32),
		(uint32_t)ctx[2], (uint32_t)(ctx[2] >> 32));
	if (sample_type & PERF_SAMPLE_CALLCHAIN)
		fprintf(out, " %llu", (unsigned long long)cookie);
	fputc('\n', out);
}

/*
 * A PERF_RECORD_CALLCHAIN_DEFERRED record: cookie, nr, ips[nr], then the
 * sample_id of an event with sample_id_all: TID, TIME, CPU here.
 */
static void parse_deferred(FILE *out, union perf_event *event)
{
	const __u64 *p = (const __u64 *)((const char *)event + sizeof(event->header));
	const __u64 *end = (const __u64 *)((const char *)event + event->header.size);
	uint64_t cookie, nr, time;
	uint32_t pid, tid, cpu;

	/* cookie, nr, then the ips and sample_id's three words, to the end */
	if (end - p < 5)
		return;
	cookie = *p++;
	nr = *p++;
	if (nr != (uint64_t)(end - p) - 3)
		return;
	pid = (uint32_t)end[-3];
	tid = (uint32_t)(end[-3] >> 32);
	time = end[-2];
	cpu = (uint32_t)end[-1];
	nr_deferred++;
	if (quiet)
		return;
	fprintf(out, "D %u %u %u %llu %llu %u %llu", cpu, pid, tid, (unsigned long long)time,
		(unsigned long long)cookie, event->header.misc & PERF_RECORD_MISC_CPUMODE_MASK,
		(unsigned long long)nr);
	for (uint64_t i = 0; i < nr; i++)
		fprintf(out, " 0x%llx", (unsigned long long)p[i]);
	fputc('\n', out);
}

/*
 * A PERF_RECORD_GUEST_USER_STACK record: cookie, abi, regs (BP, SP, IP if
 * abi), size, data[size] and dyn_size if size, then sample_id's three words.
 */
static void parse_stack(FILE *out, union perf_event *event)
{
	const __u64 *p = (const __u64 *)((const char *)event + sizeof(event->header));
	const __u64 *end = (const __u64 *)((const char *)event + event->header.size);
	uint64_t cookie, abi, regs[3] = { 0 }, size, dyn_size = 0;
	const __u64 *data;

	if (end - p < 3 + 3)
		return;
	cookie = *p++;
	abi = *p++;
	if (abi) {
		if (end - p < 3 + 1 + 3)
			return;
		memcpy(regs, p, sizeof(regs));
		p += 3;
	}
	size = *p++;
	data = p;
	if (size) {
		if (size % 8 || (uint64_t)(end - p) != size / 8 + 1 + 3)
			return;
		p += size / 8;
		dyn_size = *p++;
		if (dyn_size > size)
			return;
	} else if (end - p != 3) {
		return;
	}
	nr_stacks++;
	stack_record_bytes += event->header.size;
	if (quiet)
		return;
	fprintf(out, "U %u %u %u %llu %llu %llu 0x%llx 0x%llx 0x%llx %llu %llu",
		(uint32_t)end[-1], (uint32_t)end[-3], (uint32_t)(end[-3] >> 32),
		(unsigned long long)end[-2], (unsigned long long)cookie,
		(unsigned long long)abi, (unsigned long long)regs[0],
		(unsigned long long)regs[1], (unsigned long long)regs[2],
		(unsigned long long)size, (unsigned long long)dyn_size);
	for (uint64_t i = 0; i < dyn_size / 8; i++)
		fprintf(out, " 0x%llx", (unsigned long long)data[i]);
	fputc('\n', out);
}

/* In a child: become the unprivileged user the rules are checked for. */
#define NOBODY	65534

static void become_nobody(void)
{
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		_exit(126);
}

static int run_as_nobody(char **cmd)
{
	if (!*cmd) {
		fprintf(stderr, "lab-record: -U needs a command\n");
		return 2;
	}
	become_nobody();
	execvp(cmd[0], cmd);
	fprintf(stderr, "lab-record: %s: %s\n", cmd[0], strerror(errno));
	return 127;
}

/* Open the bit as root, or as nobody, and say whether errno was @want. */
static int open_as(int nobody, int excl, int want, const char *what)
{
	int status, err;
	pid_t child;

	child = fork();
	if (child < 0)
		return -1;
	if (!child) {
		if (nobody)
			become_nobody();
		exclude_guest = excl;
		err = try_open(base_type | PERF_SAMPLE_GUEST_CTX);
		_exit(-err);
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return -1;
	err = WEXITSTATUS(status);
	printf("lab-record: %s: %s (want %s)\n", what, err ? strerror(err) : "opened",
	       want ? strerror(want) : "opened");
	return err == want ? 0 : -1;
}

/* The bit is hypervisor state: gated like PERF_SAMPLE_PHYS_ADDR. */
static int privilege_probe(char **cmd)
{
	int fails = 0, status;
	pid_t child;

	fails += !!open_as(0, 1, EOPNOTSUPP, "root, exclude_guest=1");
	fails += !!open_as(0, 0, 0, "root");
	if (write_int("/proc/sys/kernel/perf_event_paranoid", 2))
		return 1;
	fails += !!open_as(1, 0, EACCES, "uid 65534, perf_event_paranoid=2");
	fflush(stdout);
	if (!*cmd)
		return fails ? 1 : 0;

	child = fork();
	if (!child) {
		become_nobody();
		execvp(cmd[0], cmd);
		_exit(127);
	}
	if (child < 0 || waitpid(child, &status, 0) != child)
		return 1;
	return fails ? 1 : 0;
}

/*
 * Read what each ring buffer holds.  No perf_mmap__read_done(): for a ring
 * the kernel does not overwrite, it moves the read position to the head as
 * it is then, past any record the kernel published after the last
 * perf_mmap__read_event() saw the head, and that record is never read (so
 * a guest sample went missing once in some 20,000, its call chain left
 * without one).  perf_mmap__read_event() keeps the read position itself,
 * and perf_mmap__consume() hands the space back.
 */
static void drain(struct perf_evlist *evlist, FILE *out, uint64_t sample_type, int chain)
{
	union perf_event *event;
	struct perf_mmap *map;

	perf_evlist__for_each_mmap(evlist, map, false) {
		if (perf_mmap__read_init(map) < 0)
			continue;
		while ((event = perf_mmap__read_event(map)) != NULL) {
			if (event->header.type == PERF_RECORD_SAMPLE && chain) {
				parse_chain(out, event);
			} else if (event->header.type == PERF_RECORD_SAMPLE) {
				parse_sample(out, event, sample_type);
			} else if (event->header.type == PERF_RECORD_CALLCHAIN_DEFERRED) {
				parse_deferred(out, event);
			} else if (event->header.type == PERF_RECORD_GUEST_USER_STACK) {
				parse_stack(out, event);
			} else if (event->header.type == PERF_RECORD_LOST) {
				nr_lost += event->lost.lost;
				if (!quiet)
					fprintf(out, "L %llu\n", (unsigned long long)event->lost.lost);
			}
			perf_mmap__consume(map);
		}
	}
}

int main(int argc, char **argv)
{
	uint64_t period = 100000, sample_type = base_type | PERF_SAMPLE_GUEST_CTX;
	const char *path = "samples.txt", *cpu_list = NULL;
	struct perf_thread_map *threads;
	struct perf_evlist *evlist, *tp_evlist = NULL;
	int chains = 0, no_tp = 0, no_user_chain = 0;
	unsigned long stack_bytes = 0;
	struct perf_cpu_map *cpus;
	struct perf_event_attr attr;
	struct perf_evsel *evsel;
	int c, err, status = 0;
	pid_t child;
	FILE *out;

	while ((c = getopt(argc, argv, "+o:c:NgTG:XC:qpPU")) != -1) {
		switch (c) {
		case 'o': path = optarg; break;
		case 'c': period = strtoull(optarg, NULL, 0); break;
		case 'N': sample_type = base_type; break;
		case 'g': chains = 1; break;
		case 'T': no_tp = 1; break;
		case 'G': stack_bytes = strtoul(optarg, NULL, 0); break;
		case 'X': no_user_chain = 1; break;
		case 'C': cpu_list = optarg; break;
		case 'q': quiet = 1; break;
		case 'p': return probe();
		case 'P': return privilege_probe(argv + optind + (optind < argc &&
							 !strcmp(argv[optind], "--")));
		case 'U': return run_as_nobody(argv + optind + (optind < argc &&
							 !strcmp(argv[optind], "--")));
		default:
			fprintf(stderr, "usage: %s [-o file] [-c period_ns] [-N] [-g [-T] [-G bytes [-X]]] [-C cpus] [-q] -- command... | -p | -P | -U -- command...\n", argv[0]);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "lab-record: no command given\n");
		return 2;
	}
	if ((stack_bytes && !chains) || (no_user_chain && !stack_bytes) ||
	    stack_bytes % 8 || stack_bytes > 65528) {
		fprintf(stderr, "lab-record: -G takes a multiple of 8 up to 65528, with -g; -X takes -G\n");
		return 2;
	}
	if (sample_type & PERF_SAMPLE_GUEST_CTX) {
		err = probe();
		if (err)
			return err;
	}

	out = fopen(path, "w");
	if (!out) {
		perror(path);
		return 1;
	}
	fprintf(out, "# lab-record cpu-clock period %llu ns sample_type 0x%llx\n",
		(unsigned long long)period, (unsigned long long)sample_type);

	/*
	 * A guest sample asks KVM for the guest's call chain, which comes
	 * later as a deferred record, with the sample_id that names its
	 * vCPU thread
	 */
	if (chains)
		sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (stack_bytes)
		sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	/* sets libperf's page size, which perf_evlist__mmap() needs */
	libperf_init(libperf_print);
	init_attr(&attr, sample_type, period);
	if (chains) {
		attr.defer_callchain = 1;
		attr.sample_id_all = 1;
	}
	if (stack_bytes) {
		attr.sample_regs_user = STACK_REGS;
		attr.sample_stack_user = stack_bytes;
		attr.exclude_callchain_user = no_user_chain;
	}
	cpus = perf_cpu_map__new(cpu_list);
	threads = perf_thread_map__new_dummy();
	evlist = perf_evlist__new();
	evsel = perf_evsel__new(&attr);
	if (!cpus || !threads || !evlist || !evsel) {
		fprintf(stderr, "lab-record: out of memory\n");
		return 1;
	}
	perf_evlist__add(evlist, evsel);
	perf_evlist__set_maps(evlist, cpus, threads);
	err = perf_evlist__open(evlist);
	if (err) {
		err = errno;
		fprintf(stderr, "lab-record: opening cpu-clock on all CPUs failed: %s\n",
			strerror(err));
		if (chains && err == EINVAL)
			fprintf(stderr, "lab-record: -g: does the kernel have the series' deferred guest call chains (attr.defer_callchain)?\n");
		return 1;
	}
	err = perf_evlist__mmap(evlist, 256);
	if (err) {
		fprintf(stderr, "lab-record: mmap of the ring buffers failed: %s\n", strerror(errno));
		return 1;
	}

	if (chains && !no_tp) {
		struct perf_event_attr tp_attr;
		struct perf_evsel *tp_evsel;
		int id = tp_open_format();

		if (id < 0) {
			fprintf(stderr, "lab-record: -g: no kvm:kvm_guest_callchain tracepoint with a cookie field (is tracefs mounted, and does the kernel have the series' deferred guest call chains?)\n");
			return EXIT_NO_SUPPORT;
		}
		memset(&tp_attr, 0, sizeof(tp_attr));
		tp_attr.size = sizeof(tp_attr);
		tp_attr.type = PERF_TYPE_TRACEPOINT;
		tp_attr.config = id;
		tp_attr.sample_period = 1;
		tp_attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
				      PERF_SAMPLE_RAW;
		tp_attr.disabled = 1;
		tp_evlist = perf_evlist__new();
		tp_evsel = perf_evsel__new(&tp_attr);
		if (!tp_evlist || !tp_evsel) {
			fprintf(stderr, "lab-record: out of memory\n");
			return 1;
		}
		perf_evlist__add(tp_evlist, tp_evsel);
		perf_evlist__set_maps(tp_evlist, cpus, threads);
		if (perf_evlist__open(tp_evlist) || perf_evlist__mmap(tp_evlist, 256)) {
			fprintf(stderr, "lab-record: -g: opening the events failed: %s\n",
				strerror(errno));
			return 1;
		}
		fprintf(out, "# lab-record -g: sample_type 0x%llx, defer_callchain, kvm:kvm_guest_callchain id %d\n",
			(unsigned long long)sample_type, id);
		perf_evlist__enable(tp_evlist);
	}
	perf_evlist__enable(evlist);
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (!child) {
		execvp(argv[optind], argv + optind);
		perror(argv[optind]);
		_exit(127);
	}
	for (;;) {
		pid_t done = waitpid(child, &status, WNOHANG);

		drain(evlist, out, sample_type, 0);
		if (tp_evlist)
			drain(tp_evlist, out, 0, 1);
		if (done == child)
			break;
		perf_evlist__poll(evlist, 100);
	}
	perf_evlist__disable(evlist);
	drain(evlist, out, sample_type, 0);
	if (tp_evlist) {
		perf_evlist__disable(tp_evlist);
		drain(tp_evlist, out, 0, 1);
		perf_evlist__delete(tp_evlist);
	}

	perf_evlist__delete(evlist);
	perf_thread_map__put(threads);
	perf_cpu_map__put(cpus);
	if (fclose(out)) {
		perror(path);
		return 1;
	}
	fprintf(stderr, "lab-record: %lu samples, %lu lost, command exit status %d\n",
		nr_samples, nr_lost, WIFEXITED(status) ? WEXITSTATUS(status) : 128);
	if (tp_evlist)
		fprintf(stderr, "lab-record: %lu samples with a deferred guest call chain, %lu deferred records, %lu walks (kvm:kvm_guest_callchain)\n",
			nr_cookies, nr_deferred, nr_chains);
	if (stack_bytes)
		fprintf(stderr, "lab-record: %lu guest user stacks (PERF_RECORD_GUEST_USER_STACK), %llu bytes each\n",
			nr_stacks, nr_stacks ? stack_record_bytes / nr_stacks : 0);
	for (int i = 0; i < 2; i++)
		if (sample_count[i])
			fprintf(stderr, "lab-record: %s samples: %llu, %llu bytes each\n",
				i ? "guest-context" : "host-only", sample_count[i],
				sample_bytes[i] / sample_count[i]);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return 0;
}
