// SPDX-License-Identifier: GPL-2.0
/*
 * The lab's sample reader: lab-record's text lines into struct lab_sample
 * (see samples.h for the format).
 */
#include <inttypes.h>
#include <stdio.h>

#include "samples.h"

static int parse_sample(const char *line, struct lab_sample *s)
{
	int n = 0;

	/* %x takes the 0x that lab-record prints */
	if (sscanf(line, "S %u %u %u %" SCNu64 " %" SCNx64 " %u %" SCNx64 " %" SCNu32
		   " %" SCNx32 " %" SCNu32 " %" SCNx32 "%n", &s->cpu, &s->pid, &s->tid, &s->time,
		   &s->ip, &s->misc, &s->cr3, &s->asid, &s->exit_reason, &s->vcpu_id,
		   &s->flags, &n) != 11 || !n)
		return 0;
	/* lab-record -g's cookie, where the line has one */
	if (sscanf(line + n, " %" SCNu64, &s->cookie) != 1)
		s->cookie = 0;
	return 1;
}

/* @nr addresses after @line; 0 if fewer */
static int parse_ips(const char *line, uint64_t *ips, unsigned int nr)
{
	int n;

	for (unsigned int i = 0; i < nr; i++) {
		if (sscanf(line, " %" SCNx64 "%n", &ips[i], &n) != 1)
			return 0;
		line += n;
	}
	return 1;
}

/* A C line: its fields, then nr addresses; a short line is no chain. */
static int parse_chain(const char *line, struct lab_chain *c)
{
	int n;

	if (sscanf(line, "C %u %u %u %" SCNu64 " %u %" SCNu64 " %u %u %u %u%n", &c->cpu,
		   &c->pid, &c->tid, &c->time, &c->vcpu_id, &c->cookie, &c->cpl, &c->end,
		   &c->walk_ns, &c->nr, &n) != 10 || !c->nr || c->nr > LAB_CHAIN_MAX)
		return 0;
	return parse_ips(line + n, c->ips, c->nr);
}

/* A D line: its fields, then nr addresses, context markers among them. */
static int parse_deferred(const char *line, struct lab_deferred *d)
{
	int n;

	if (sscanf(line, "D %u %u %u %" SCNu64 " %" SCNu64 " %u %u%n", &d->cpu, &d->pid,
		   &d->tid, &d->time, &d->cookie, &d->misc, &d->nr, &n) != 7 ||
	    !d->nr || d->nr > LAB_DEFERRED_MAX)
		return 0;
	return parse_ips(line + n, d->ips, d->nr);
}

/* A U line: its fields, then dyn_size / 8 words; more than we keep is none. */
static int parse_stack(const char *line, struct lab_stack *u)
{
	int n;

	if (sscanf(line, "U %u %u %u %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNx64 " %" SCNx64
		   " %" SCNx64 " %" SCNu64 " %" SCNu64 "%n", &u->cpu, &u->pid, &u->tid, &u->time,
		   &u->cookie, &u->abi, &u->bp, &u->sp, &u->ip, &u->size, &u->dyn_size, &n) != 11 ||
	    u->dyn_size > u->size || u->dyn_size / 8 > LAB_STACK_MAX_WORDS)
		return 0;
	u->nr_words = u->dyn_size / 8;
	return parse_ips(line + n, u->words, u->nr_words);
}

enum lab_record lab_samples_next_chain(FILE *f, struct lab_sample *sample, uint64_t *lost,
				       struct lab_chain *chain, struct lab_deferred *deferred)
{
	return lab_samples_next_stack(f, sample, lost, chain, deferred, NULL);
}

enum lab_record lab_samples_next_stack(FILE *f, struct lab_sample *sample, uint64_t *lost,
				       struct lab_chain *chain, struct lab_deferred *deferred,
				       struct lab_stack *stack)
{
	/* a U line of LAB_STACK_MAX_WORDS words is some 20 KB */
	static char line[32768];

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "L %" SCNu64, lost) == 1)
			return LAB_RECORD_LOST;
		if (parse_sample(line, sample))
			return LAB_RECORD_SAMPLE;
		if (chain && parse_chain(line, chain))
			return LAB_RECORD_CHAIN;
		if (deferred && parse_deferred(line, deferred))
			return LAB_RECORD_DEFERRED;
		if (stack && parse_stack(line, stack))
			return LAB_RECORD_STACK;
	}
	return LAB_RECORD_END;
}

enum lab_record lab_samples_next(FILE *f, struct lab_sample *sample, uint64_t *lost)
{
	return lab_samples_next_chain(f, sample, lost, NULL, NULL);
}
