/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One integer in a /proc/sys (or other one-value) file, for the lab's
 * programs that change a sysctl and put it back (lab-record -P, lab-leak).
 */
#ifndef VMCTX_LAB_SYSCTL_INT_H
#define VMCTX_LAB_SYSCTL_INT_H

#include <stdio.h>

static inline int read_int(const char *path, int *val)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%d", val) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static inline int write_int(const char *path, int val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%d\n", val) < 0;
	return fclose(f) || ret ? -1 : 0;
}

#endif
