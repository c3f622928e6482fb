// SPDX-License-Identifier: GPL-2.0
/*
 * hot: a guest workload with a known function mix, like the paper's
 * libquantum.  Each round calls hot_alpha 6 times, hot_beta 3 times and
 * hot_gamma once, in an order shuffled each round; every call does the
 * same fixed amount of work, so their shares of hot's own functions' time
 * are 60%, 30% and 10% (the checker compares against that mix).  Each
 * round also runs the C library's memfrob(3) over 32 KiB: built
 * dynamically, as the lab's hot is, that is time in libc.so.6, whose
 * functions the profile must name with their library.  Runs for -t
 * SECONDS (default 5) and at least -r ROUNDS (default 0), then prints its
 * pid and the rounds it did, and where the C library's code lay in its
 * address space (when it has a shared one), and exits.  A floor of rounds
 * is a floor of samples whatever the emulator's speed: a slower one takes
 * longer over a round, and the host samples it more often.
 *
 * With -p (the lab's short "churn" processes), each round calls hot_alpha
 * 10 times if the pid is even and hot_beta 10 times if it is odd, never
 * hot_gamma: a sample of one churn process's code named with the next
 * process (the pids of processes started one after another alternate) is
 * then in a function its named process never runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

#define LIB_BYTES 32768

/* The C library's share of each round: memfrob(3), a plain loop in libc. */
__attribute__((noinline)) void lib_round(void)
{
	static char buf[LIB_BYTES];

	memfrob(buf, sizeof(buf));
	sink += buf[0];
}

/* "hot: pid N: libc text LO-HI" for each executable mapping of libc.so.6 */
static void print_libc_text(void)
{
	char line[512], path[256];
	unsigned long lo, hi;
	char perms[8];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perms, path) == 4 &&
		    perms[2] == 'x' && strstr(path, "/libc.so.6"))
			printf("hot: pid %d: libc text 0x%lx-0x%lx\n", (int)getpid(), lo, hi);
	}
	fclose(f);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	/* a round: hot_alpha 6 times, hot_beta 3 times, hot_gamma and lib_round once */
	static void (*const fn[])(void) = { hot_alpha, hot_beta, hot_gamma, lib_round };
	static const int mix[] = { 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 3 };
	enum { NCALLS = sizeof(mix) / sizeof(mix[0]) };
	unsigned long rounds = 0, min_rounds = 0, rng = (unsigned long)getpid();
	int calls[NCALLS], order[NCALLS];
	double secs = 5.0, end;
	int i, opt, parity = 0;

	while ((opt = getopt(argc, argv, "t:r:p")) != -1) {
		if (opt == 't') {
			secs = atof(optarg);
		} else if (opt == 'r') {
			min_rounds = strtoul(optarg, NULL, 10);
		} else if (opt == 'p') {
			parity = 1;
		} else {
			fprintf(stderr, "usage: hot [-t SECONDS] [-r ROUNDS] [-p]\n");
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "usage: hot [-t SECONDS] [-r ROUNDS] [-p]\n");
		return 2;
	}
	for (i = 0; i < NCALLS; i++)
		calls[i] = !parity ? mix[i] : i == NCALLS - 1 ? 3 : getpid() % 2;
	end = now() + secs;
	while (now() < end || rounds < min_rounds) {
		/*
		 * The round's calls in a new order each time (Fisher-Yates
		 * over an LCG): a fixed order of about one sampling period
		 * would let the host's timer lock onto one phase of it and
		 * skew the mix.
		 */
		for (i = 0; i < NCALLS; i++)
			order[i] = calls[i];
		for (i = NCALLS - 1; i > 0; i--) {
			int j, t;

			rng = rng * 6364136223846793005UL + 1442695040888963407UL;
			j = (int)((rng >> 33) % (unsigned long)(i + 1));
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (i = 0; i < NCALLS; i++)
			fn[order[i]]();
		rounds++;
	}
	/* the work done: what this instance's share of the samples should be */
	printf("hot: pid %d: %lu rounds\n", (int)getpid(), rounds);
	print_libc_text();
	return 0;
}
