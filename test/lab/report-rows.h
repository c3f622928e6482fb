/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the lab's experiment checkers read of perf report's own output:
 *
 *   perf report --stdio -t ';' -F sample,period,KEY...
 *
 * rows, "SAMPLES;PERIOD;KEY1;...", each under the "# Samples: N of event
 * 'NAME'" line of its event, and the view header lines that
 * --guest-view prints above them:
 *
 *   # VM pid P: T ms  OS:USER:steal:idle = a%:b%:c%:d%
 *   #   vcpuN: T ms  OS:USER:steal:idle = a%:b%:c%:d%
 *   # Total: T ms of CPU time  OS:USER:idle:VM = a%:b%:c%:d%
 *
 * Fields are trimmed; a sym field loses perf's "[k] " level.  Include
 * exp-verdict.h first (for die()).
 */
#ifndef LAB_REPORT_ROWS_H
#define LAB_REPORT_ROWS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RR_MAX_ROWS	4096
#define RR_MAX_KEYS	6
#define RR_MAX_VMS	8
#define RR_MAX_VCPUS	16

struct rr_row {
	char event[64];
	double samples, period;
	char key[RR_MAX_KEYS][128];
};

/* A header line's time (ms) and its four shares, with their labels. */
struct rr_share {
	double ms;
	char labels[32];
	double pct[4];
};

struct rr_vm {
	int pid;
	struct rr_share all;
	struct rr_share vcpu[RR_MAX_VCPUS];
	int has_vcpu[RR_MAX_VCPUS];
};

struct rr_report {
	struct rr_row rows[RR_MAX_ROWS];
	int nrows, nkeys;
	struct rr_vm vms[RR_MAX_VMS];
	int nvms;
	struct rr_share total;		/* "# Total:" of the host views */
	int has_total;
};

static void rr_trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n && strchr(" \t\r\n", s[n - 1]))
		s[--n] = '\0';
	while (s[i] == ' ')
		i++;
	memmove(s, s + i, n - i + 1);
}

/* "T ms  LABELS = a%:b%:c%:d%" at @p into @sh; 0 if it is not one. */
static int rr_share(const char *p, struct rr_share *sh)
{
	return sscanf(p, "%lf ms %31s = %lf%%:%lf%%:%lf%%:%lf%%", &sh->ms, sh->labels, &sh->pct[0],
		      &sh->pct[1], &sh->pct[2], &sh->pct[3]) == 6;
}

static void rr_header(struct rr_report *r, const char *path, const char *line)
{
	struct rr_vm *vm = r->nvms ? &r->vms[r->nvms - 1] : NULL;
	struct rr_share sh;
	int pid, id, n = 0;

	if (sscanf(line, "# VM pid %d: %n", &pid, &n) == 1 && n && rr_share(line + n, &sh)) {
		if (r->nvms == RR_MAX_VMS)
			die("%s: too many VMs", path);
		vm = &r->vms[r->nvms++];
		memset(vm, 0, sizeof(*vm));
		vm->pid = pid;
		vm->all = sh;
	} else if (sscanf(line, "#   vcpu%d: %n", &id, &n) == 1 && n && rr_share(line + n, &sh)) {
		if (!vm || id < 0 || id >= RR_MAX_VCPUS)
			die("%s: a vCPU line out of place: %s", path, line);
		vm->vcpu[id] = sh;
		vm->has_vcpu[id] = 1;
	} else if (sscanf(line, "# Total: %lf ms of CPU time %31s = %lf%%:%lf%%:%lf%%:%lf%%",
			  &r->total.ms, r->total.labels, &r->total.pct[0], &r->total.pct[1],
			  &r->total.pct[2], &r->total.pct[3]) == 6) {
		r->has_total = 1;
	}
}

/*
 * Read one perf report output into @r (rows are added to those of earlier
 * files, a VM's header replaces nothing: read each view once); echo its
 * lines to stdout after @echo (NULL: do not echo).
 */
static void rr_read(struct rr_report *r, const char *path, const char *echo)
{
	FILE *f = fopen(path, "r");
	char line[2048], event[64] = "";

	if (!f)
		die("cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		char *p, *field;
		struct rr_row *w;
		int k = 0;

		if (echo)
			printf("%s%s", echo, line);
		line[strcspn(line, "\r\n")] = '\0';
		if (sscanf(line, "# Samples: %*s of event '%63[^']'", event) == 1)
			continue;
		if (line[0] == '#') {
			rr_header(r, path, line);
			continue;
		}
		if (!strchr(line, ';') || !event[0])
			continue;
		if (r->nrows == RR_MAX_ROWS)
			die("%s: more than %d rows", path, RR_MAX_ROWS);
		w = &r->rows[r->nrows];
		memset(w, 0, sizeof(*w));
		snprintf(w->event, sizeof(w->event), "%s", event);
		p = line;
		field = strsep(&p, ";");
		w->samples = atof(field);
		field = strsep(&p, ";");
		if (!field)
			die("%s: a row without a period: %s", path, line);
		w->period = atof(field);
		while ((field = strsep(&p, ";")) && k < RR_MAX_KEYS) {
			rr_trim(field);
			/* perf's level of a symbol, "[k] ", is not its name */
			if (field[0] == '[' && field[1] && field[2] == ']' && field[3] == ' ')
				field += 4;
			snprintf(w->key[k++], sizeof(w->key[0]), "%s", field);
		}
		if (r->nrows && k != r->nkeys)
			die("%s: %d keys in a row, %d before: %s", path, k, r->nkeys, line);
		r->nkeys = k;
		r->nrows++;
	}
	fclose(f);
}

/* "PID:COMM", perf's pid key: the pid, and the comm in @comm. */
static inline int rr_pid(const char *field, const char **comm)
{
	const char *c = strchr(field, ':');

	if (comm)
		*comm = c ? c + 1 : "";
	return atoi(field);
}

#endif
