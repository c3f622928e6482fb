// SPDX-License-Identifier: GPL-2.0
/*
 * switch-storm [SECS [CPU]]: two threads on one CPU hand a byte back and
 * forth through two pipes for SECS seconds (default 5), two context
 * switches a round trip; prints the round trips and the seconds taken.
 * guest-agent/bench-switches.sh runs it with and without the switch log.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static volatile int stop;

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

static void *echo(void *arg)
{
	char c;

	pin(*(int *)arg);
	while (read(ab[0], &c, 1) == 1 && write(ba[1], &c, 1) == 1)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	int cpu = argc > 2 ? atoi(argv[2]) : 0;
	struct timespec t0, t;
	unsigned long n = 0;
	pthread_t th;
	char c = 'x';

	if (pipe(ab) || pipe(ba))
		return 1;
	pin(cpu);
	pthread_create(&th, NULL, echo, &cpu);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++) {
			if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
				return 1;
		}
		n += 1000;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("%lu %.3f\n", n, (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
