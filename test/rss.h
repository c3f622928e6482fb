/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * Peak RSS for the tests and benchmarks that bound or print memory: Linux's
 * VmHWM, which writing 5 to /proc/self/clear_refs resets (Linux 4.0).
 */
#ifndef VMCTX_TEST_RSS_H
#define VMCTX_TEST_RSS_H

#include <stdbool.h>
#include <stdio.h>

/* Peak RSS in KiB since reset_peak_rss(), or -1 where /proc cannot tell. */
static inline long peak_rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

static inline bool reset_peak_rss(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	bool ok = f && fputs("5", f) >= 0;

	return f && !fclose(f) && ok;
}

#endif /* VMCTX_TEST_RSS_H */
