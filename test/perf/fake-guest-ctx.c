// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for checking 'perf record --vmcs-ctx' option plumbing on a
 * kernel without the vmctx patches: perf_event_open() calls have
 * PERF_SAMPLE_GUEST_CTX (bit 25) stripped before they reach the kernel, so
 * the opens succeed.  The samples then lack the block: only the attrs of the
 * resulting perf.data (perf evlist -v) are meaningful.
 *
 * VMCTX_SHIM_ERRNO=N makes every open with the bit fail with errno N
 * instead, as a kernel that refuses it would: 95 (EOPNOTSUPP) is what a
 * Linux 7.0 host answers while a VM uses the mediated vPMU.  With
 * VMCTX_SHIM_PROBE_OK=1, perf's probe for the bit (a dummy event whose
 * sample_type is the bit alone) is let through all the same: a kernel
 * that knows the bit and refuses the events for another reason.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;
	int i;

	if (!real)
		real = dlsym(RTLD_NEXT, "syscall");
	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_perf_event_open) {
		const char *fail = getenv("VMCTX_SHIM_ERRNO");
		struct perf_event_attr attr;
		int probe;

		memcpy(&attr, (void *)a[0], sizeof(attr));
		probe = attr.type == PERF_TYPE_SOFTWARE &&
			attr.config == PERF_COUNT_SW_DUMMY &&
			attr.sample_type == (1ULL << 25);

		if (fail && (attr.sample_type & (1ULL << 25)) &&
		    !(probe && getenv("VMCTX_SHIM_PROBE_OK"))) {
			errno = atoi(fail);
			return -1;
		}
		attr.sample_type &= ~(1ULL << 25);
		return real(nr, &attr, a[1], a[2], a[3], a[4]);
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
