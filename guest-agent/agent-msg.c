// SPDX-License-Identifier: GPL-2.0
/*
 * Messages: errors and warnings always go to stderr, notes only with -v.
 */
#include "agent.h"

#include <stdarg.h>
#include <stdio.h>

static void vmsg(const struct agent *a, const char *what, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static void vmsg(const struct agent *a, const char *what, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", a->prog, what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void agent_err(const struct agent *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(a, "", fmt, ap);
	va_end(ap);
}

void agent_warn(const struct agent *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(a, "warning: ", fmt, ap);
	va_end(ap);
}

void agent_note(const struct agent *a, const char *fmt, ...)
{
	va_list ap;

	if (!a->verbose)
		return;
	va_start(ap, fmt);
	vmsg(a, "", fmt, ap);
	va_end(ap);
}
