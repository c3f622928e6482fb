// SPDX-License-Identifier: GPL-2.0
/*
 * hot: a guest workload with a known function mix, like the paper's
 * libquantum.  Each round calls hot_alpha 6 times, hot_beta 3 times and
 * hot_gamma once; every call does the same fixed amount of work, so their
 * shares of user time are 60%, 30% and 10% (the checker compares against
 * that mix).  Runs for -t SECONDS (default 5), then prints its pid and the
 * rounds it did, and exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define WORK 20000

static volatile unsigned long sink;

/* Identical bodies; noinline keeps each a separate symbol. */
#define HOT_FN(name)							\
	__attribute__((noinline)) void name(void)			\
	{								\
		unsigned long x = sink;					\
		int i;							\
									\
		for (i = 0; i < WORK; i++)				\
			x = x * 6364136223846793005UL + 1442695040888963407UL; \
		sink = x;						\
	}

HOT_FN(hot_alpha)
HOT_FN(hot_beta)
HOT_FN(hot_gamma)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 5.0, end = now() + secs;
	unsigned long rounds = 0;
	int i;

	if (argc == 2 || (argc > 1 && (argv[1][0] != '-' || argv[1][1] != 't'))) {
		fprintf(stderr, "usage: hot [-t SECONDS]\n");
		return 2;
	}
	while (now() < end) {
		for (i = 0; i < 6; i++)
			hot_alpha();
		for (i = 0; i < 3; i++)
			hot_beta();
		hot_gamma();
		rounds++;
	}
	/* the work done: what this instance's share of the samples should be */
	printf("hot: pid %d: %lu rounds\n", (int)getpid(), rounds);
	return 0;
}
