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
	/* %x takes the 0x that lab-record prints */
	return sscanf(line, "S %u %u %u %" SCNu64 " %" SCNx64 " %u %" SCNx64 " %" SCNu32
		      " %" SCNx32 " %" SCNu32 " %" SCNx32, &s->cpu, &s->pid, &s->tid, &s->time,
		      &s->ip, &s->misc, &s->cr3, &s->asid, &s->exit_reason, &s->vcpu_id,
		      &s->flags) == 11;
}

/* A C line: its fields, then nr addresses; a short or long line is no chain. */
static int parse_chain(const char *line, struct lab_chain *c)
{
	int n;

	if (sscanf(line, "C %u %u %u %" SCNu64 " %u %u %u %u %u%n", &c->cpu, &c->pid, &c->tid,
		   &c->time, &c->vcpu_id, &c->cpl, &c->end, &c->walk_ns, &c->nr, &n) != 9 ||
	    !c->nr || c->nr > LAB_CHAIN_MAX)
		return 0;
	line += n;
	for (unsigned int i = 0; i < c->nr; i++) {
		if (sscanf(line, " %" SCNx64 "%n", &c->ips[i], &n) != 1)
			return 0;
		line += n;
	}
	return 1;
}

enum lab_record lab_samples_next_chain(FILE *f, struct lab_sample *sample, uint64_t *lost,
				       struct lab_chain *chain)
{
	char line[4096];

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "L %" SCNu64, lost) == 1)
			return LAB_RECORD_LOST;
		if (parse_sample(line, sample))
			return LAB_RECORD_SAMPLE;
		if (chain && parse_chain(line, chain))
			return LAB_RECORD_CHAIN;
	}
	return LAB_RECORD_END;
}

enum lab_record lab_samples_next(FILE *f, struct lab_sample *sample, uint64_t *lost)
{
	return lab_samples_next_chain(f, sample, lost, NULL);
}
