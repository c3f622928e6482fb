// SPDX-License-Identifier: GPL-2.0
/*
 * lab-cmpxchg-flags: check that CMPXCHG8B and CMPXCHG16B change ZF and
 * nothing else in RFLAGS, for the lab's check of its L1 emulator
 * (test/lab/README, "The L1 emulator").
 *
 * usage: lab-cmpxchg-flags [-n ROUNDS]
 *
 * QEMU 7.2's TCG calls the helpers of both instructions without writing
 * its pending lazy condition-code state back first, so that they build
 * RFLAGS from the operation before the previous translation block and the
 * operands of the latest one (test/lab/qemu/cmpxchg-cc-op.patch).  Here a
 * POPF ends a block with that state "flags as they are" (CC_OP_EFLAGS),
 * then in the next one an ADD leaves its source operand where such a
 * state keeps the flags, and the CMPXCHG that follows turns that operand
 * into RFLAGS, which PUSHF reads.  The operand has RFLAGS' reserved bits
 * 3, 5 and 15 set, which no x86 CPU sets, and nothing that would change
 * how the program runs.
 *
 * What RFLAGS must be is measured, not assumed: the same ADD followed by
 * PUSHF gives the flags the ADD leaves, and a CMPXCHG changes ZF alone,
 * set when it stored and clear when it did not.  Each round tries both
 * instructions, each once storing and once not.
 *
 * Prints one line and exits 0 when every round held; prints the first
 * round that did not and exits 1; 2 on a usage error.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ZF 0x40ULL
/* bits 3, 5 and 15 of RFLAGS are reserved: 0 on every x86 CPU */
#define RESERVED_BITS 0x8028ULL

struct pair16 {
	uint64_t lo, hi;
} __attribute__((aligned(16)));

/* the flags that "add src, dst" leaves, as PUSHF reads them */
static uint64_t add_flags(uint64_t dst, uint64_t src)
{
	uint64_t flags;

	asm volatile("add %[src], %[dst]\n\t"
		     "pushfq\n\t"
		     "popq %[flags]"
		     : [dst] "+r"(dst), [flags] "=r"(flags)
		     : [src] "r"(src)
		     : "cc", "memory");
	return flags;
}

/*
 * NAME(start, rax, src, rdx, mem): POPF of 'start' (ends QEMU's block,
 * state "flags as they are"), then "add src, rax" and INSN on 'mem' with
 * RDX:RAX (EDX:EAX) as compared and RCX:RBX (ECX:EBX) as stored; RFLAGS
 * right after, as PUSHF reads it.  'rax' is the value before the ADD, so
 * the ADD's sum is what is compared.
 */
#define CMPXCHG_FLAGS(name, insn, mem_type)						\
static uint64_t name(uint64_t start, uint64_t rax, uint64_t src, uint64_t rdx,	\
		     mem_type *mem)							\
{											\
	uint64_t flags, rbx = 0x1111, rcx = 0x2222;					\
											\
	asm volatile("pushq %[start]\n\t"						\
		     "popfq\n\t"							\
		     "add %[src], %%rax\n\t"						\
		     "lock " insn " %[mem]\n\t"					\
		     "pushfq\n\t"							\
		     "popq %[flags]"							\
		     : "+a"(rax), "+d"(rdx), [mem] "+m"(*mem), [flags] "=&r"(flags)	\
		     : [start] "r"(start), [src] "r"(src), "b"(rbx), "c"(rcx)		\
		     : "cc");								\
	return flags;									\
}

CMPXCHG_FLAGS(cmpxchg16b_flags, "cmpxchg16b", struct pair16)
CMPXCHG_FLAGS(cmpxchg8b_flags, "cmpxchg8b", uint64_t)

/* Say that @insn in round @r left RFLAGS @got where @want was due; 1. */
static int missed(unsigned long r, const char *insn, int storing, uint64_t got,
		  uint64_t want, uint64_t want_add)
{
	printf("lab-cmpxchg-flags: round %lu: %s (%s) left RFLAGS %#" PRIx64 ", want %#" PRIx64
	       " (the ADD's %#" PRIx64 " with ZF %s)%s\n", r + 1, insn,
	       storing ? "storing" : "not storing", got, want, want_add, storing ? "set" : "clear",
	       got & RESERVED_BITS ? "; reserved bits set: the emulator's" : "");
	return 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: lab-cmpxchg-flags [-n ROUNDS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long rounds = 1000, r;
	int c;

	while ((c = getopt(argc, argv, "n:")) != -1) {
		char *end;

		switch (c) {
		case 'n':
			rounds = strtoul(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || rounds == 0)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	for (r = 0; r < rounds; r++) {
		/* the ADD: a base that varies, and the operand with the bits */
		uint64_t base = 0x100000000ULL * (r + 1) + 0x40, src = RESERVED_BITS;
		uint64_t sum = base + src, want_add = add_flags(base, src);
		/* POPF's value: bit 1 and IF, as user mode holds them */
		uint64_t start = 0x202;
		int storing;

		for (storing = 0; storing <= 1; storing++) {
			struct pair16 m16 = { storing ? sum : ~sum, 7 };
			uint64_t m8 = storing ? (uint32_t)sum | 7ULL << 32 : ~(uint64_t)(uint32_t)sum;
			uint64_t want = (want_add & ~ZF) | (storing ? ZF : 0);
			uint64_t got;

			got = cmpxchg16b_flags(start, base, src, 7, &m16);
			if (got != want)
				return missed(r, "CMPXCHG16B", storing, got, want, want_add);
			got = cmpxchg8b_flags(start, base, src, 7, &m8);
			if (got != want)
				return missed(r, "CMPXCHG8B", storing, got, want, want_add);
		}
	}
	printf("lab-cmpxchg-flags: CMPXCHG8B and CMPXCHG16B changed ZF alone in %lu rounds\n", rounds);
	return 0;
}
