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
 * With -n N, N processes (forked at once) do that side by side, and none
 * stops until all have had their time and their rounds (the parent that
 * forked them prints only where its libc code lay): the host's
 * samples are in proportion to the rounds only while the processes share
 * the CPU, since the emulator's speed, and with it the samples a round
 * gets, changes over a run.  Two instances started apart, each with its
 * own floor, once ran alone at each end, and the one with 44% of the
 * rounds got 57% of the samples.
 *
 * With -p (the lab's short "churn" processes), each round calls hot_alpha
 * 10 times if the pid is even and hot_beta 10 times if it is odd, never
 * hot_gamma: a sample of one churn process's code named with the next
 * process (the pids of processes started one after another alternate) is
 * then in a function its named process never runs.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
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

#define MAX_PROCS 8

/* the rounds of each of the -n processes, in memory they all share */
static unsigned long *done;
static int nprocs = 1;
static unsigned long min_rounds;

static int floor_met(void)
{
	int i;

	for (i = 0; i < nprocs; i++)
		if (__atomic_load_n(&done[i], __ATOMIC_RELAXED) < min_rounds)
			return 0;
	return 1;
}

static int run(int self, double secs, int parity)
{
	/* a round: hot_alpha 6 times, hot_beta 3 times, hot_gamma and lib_round once */
	static void (*const fn[])(void) = { hot_alpha, hot_beta, hot_gamma, lib_round };
	static const int mix[] = { 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 3 };
	enum { NCALLS = sizeof(mix) / sizeof(mix[0]) };
	unsigned long rounds = 0, rng = (unsigned long)getpid();
	int calls[NCALLS], order[NCALLS];
	double end;
	int i;

	for (i = 0; i < NCALLS; i++)
		calls[i] = !parity ? mix[i] : i == NCALLS - 1 ? 3 : getpid() % 2;
	end = now() + secs;
	while (now() < end || !floor_met()) {
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
		__atomic_store_n(&done[self], rounds, __ATOMIC_RELAXED);
	}
	/* the work done: what this instance's share of the samples should be */
	printf("hot: pid %d: %lu rounds\n", (int)getpid(), rounds);
	print_libc_text();
	return fflush(stdout) ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: hot [-t SECONDS] [-r ROUNDS] [-n PROCESSES] [-p]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	pid_t pid[MAX_PROCS];
	double secs = 5.0;
	int i, opt, parity = 0, status, left, ret = 0;

	while ((opt = getopt(argc, argv, "t:r:n:p")) != -1) {
		if (opt == 't')
			secs = atof(optarg);
		else if (opt == 'r')
			min_rounds = strtoul(optarg, NULL, 10);
		else if (opt == 'n')
			nprocs = atoi(optarg);
		else if (opt == 'p')
			parity = 1;
		else
			usage();
	}
	if (optind != argc || nprocs < 1 || nprocs > MAX_PROCS)
		usage();
	done = mmap(NULL, MAX_PROCS * sizeof(*done), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (done == MAP_FAILED) {
		perror("hot: mmap");
		return 1;
	}
	if (nprocs == 1)
		return run(0, secs, parity);
	fflush(NULL);
	for (i = 0; i < nprocs; i++) {
		pid[i] = fork();
		if (pid[i] < 0) {
			perror("hot: fork");
			/* the others would wait for its rounds forever */
			while (i--)
				kill(pid[i], SIGKILL);
			return 1;
		}
		if (pid[i] == 0)
			_exit(run(i, secs, parity));
	}
	for (left = nprocs; left > 0; left--) {
		pid_t p = wait(&status);

		if (p < 0) {
			perror("hot: wait");
			return 1;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "hot: process %d failed\n", (int)p);
			/* the others would wait for its rounds forever */
			for (i = 0; i < nprocs; i++)
				if (pid[i] != p)
					kill(pid[i], SIGKILL);
			ret = 1;
		}
	}
	/*
	 * This process ran libc's start-up and fork() in the same text as
	 * the others: samples there are its own, and named so.
	 */
	print_libc_text();
	return fflush(stdout) ? 1 : ret;
}
