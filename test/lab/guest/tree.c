// SPDX-License-Identifier: GPL-2.0
/*
 * tree: a guest program with a known call tree, for the guest call-chain
 * check.  Built with frame pointers and no sibling calls, as are its
 * library libtree.so (tree-lib.c), so that every frame keeps its caller.
 * Each round, caller_a and caller_b each call tree_mix() of libtree.so,
 * which calls leaf() back: caller_a's call does TREE_RATIO times the work
 * of caller_b's, so TREE_RATIO / (TREE_RATIO + 1) of leaf's time (75%) is
 * under caller_a.  run() is entered through tree_start, which sets the
 * frame pointer to 0, as _start does, so that a walk of the frame
 * pointers ends there: a sample in leaf has the chain leaf, tree_mix
 * (libtree.so), caller_a or caller_b, run, tree_start.
 * Runs for -t SECONDS (default 5) and at least -n ROUNDS (default 0),
 * then prints its pid and rounds.  The rounds are the work a check needs
 * samples of: an emulated host that gives the guest less of its time runs
 * fewer rounds in the same seconds, and has fewer samples of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define TREE_RATIO	3
#define TREE_WORK	20000

void tree_mix(void (*fn)(unsigned long), unsigned long n);

volatile unsigned long tree_sink;

__attribute__((noinline)) void tree_note(unsigned long x)
{
	tree_sink = x;
}

/*
 * leaf's loop is where tree spends its time.  It ends with a call so that
 * it has a frame: GCC 12 gives a function that needs no stack none, even
 * with -fno-omit-frame-pointer, and a sample there would lose its caller
 * (tree_mix), as it does in any frame-pointer unwinder.
 */
__attribute__((noinline)) void leaf(unsigned long n)
{
	unsigned long x = tree_sink;

	while (n--)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	tree_note(x);
}

__attribute__((noinline)) void caller_a(void)
{
	tree_mix(leaf, TREE_RATIO * TREE_WORK);
	tree_sink++;
}

__attribute__((noinline)) void caller_b(void)
{
	tree_mix(leaf, TREE_WORK);
	tree_sink++;
}

static double secs_limit = 5;
static unsigned long rounds, rounds_least;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline, used)) void run(void)
{
	double end = now() + secs_limit;

	do {
		caller_a();
		caller_b();
		rounds++;
	} while (now() < end || rounds < rounds_least);
}

/* The outermost frame: run() with a frame pointer of 0 (stack aligned). */
__asm__(".text\n"
	".globl tree_start\n"
	".type tree_start, @function\n"
	"tree_start:\n"
	"	push %rbp\n"
	"	xor %ebp, %ebp\n"
	"	call run\n"
	"	pop %rbp\n"
	"	ret\n"
	".size tree_start, . - tree_start\n");
void tree_start(void);

int main(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "t:n:")) != -1) {
		if (c == 't') {
			secs_limit = atof(optarg);
		} else if (c == 'n') {
			rounds_least = strtoul(optarg, NULL, 10);
		} else {
			fprintf(stderr, "usage: %s [-t seconds] [-n rounds]\n", argv[0]);
			return 2;
		}
	}
	tree_start();
	printf("tree: pid %d: %lu rounds, caller_a %d times caller_b's work\n", getpid(), rounds,
	       TREE_RATIO);
	return 0;
}
