// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Diagnostics and error strings.  The library never prints: it hands
 * messages to the callback set with vmctx_set_log(), if any.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

static vmctx_log_fn log_fn;
static void *log_ctx;

void vmctx_set_log(vmctx_log_fn fn, void *ctx)
{
	log_fn = fn;
	log_ctx = ctx;
}

void util_log(enum vmctx_log_level level, const char *fmt, ...)
{
	vmctx_log_fn fn = log_fn;
	int saved = errno;
	char msg[1024], safe[sizeof(msg) * 4];
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Messages quote bundles, which come from guests: the callback may print them. */
	vmctx_escape(safe, sizeof(safe), msg);
	fn(level, safe, log_ctx);
	/* Logging must not disturb the errno a caller is about to report. */
	errno = saved;
}

static const char *const vmctx_errors[VMCTX_E_MAX - VMCTX_E_BASE] = {
	[VMCTX_E_MAGIC - VMCTX_E_BASE] = "Not a vmctx bundle",
	[VMCTX_E_VERSION - VMCTX_E_BASE] = "Unsupported bundle version",
	[VMCTX_E_CHECKSUM - VMCTX_E_BASE] = "Bundle checksum or length mismatch",
	[VMCTX_E_TRUNCATED - VMCTX_E_BASE] = "Bundle data ends early",
	[VMCTX_E_CORRUPT - VMCTX_E_BASE] = "Compressed bundle stream is damaged",
	[VMCTX_E_SYNTAX - VMCTX_E_BASE] = "Malformed bundle record",
	[VMCTX_E_LIMIT - VMCTX_E_BASE] = "Count, string or size beyond a limit",
	[VMCTX_E_RANGE - VMCTX_E_BASE] = "Unsorted or overlapping ranges",
	[VMCTX_E_REF - VMCTX_E_BASE] = "Reference to a missing record",
	[VMCTX_E_SEALED - VMCTX_E_BASE] = "Bundle is sealed: it takes no more records",
	[VMCTX_E_UNSEALED - VMCTX_E_BASE] = "Bundle is not sealed yet",
	[VMCTX_E_GAP - VMCTX_E_BASE] = "The guest's switch log lost that time",
};

const char *vmctx_strerror(int err)
{
	static __thread char buf[64];
	long e = err < 0 ? -(long)err : err;

	if (e >= VMCTX_E_BASE && e < VMCTX_E_MAX)
		return vmctx_errors[e - VMCTX_E_BASE];
	if (e > INT_MAX) {
		snprintf(buf, sizeof(buf), "Unknown error %d", err);
		return buf;
	}
	/* GNU strerror_r: thread-safe, returns buf or an immutable string. */
	return strerror_r((int)e, buf, sizeof(buf));
}
