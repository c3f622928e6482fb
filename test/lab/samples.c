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

enum lab_record lab_samples_next(FILE *f, struct lab_sample *sample, uint64_t *lost)
{
	char line[512];

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "L %" SCNu64, lost) == 1)
			return LAB_RECORD_LOST;
		if (parse_sample(line, sample))
			return LAB_RECORD_SAMPLE;
	}
	return LAB_RECORD_END;
}
