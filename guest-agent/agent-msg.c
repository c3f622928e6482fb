// SPDX-License-Identifier: GPL-2.0
/*
 * What the agent tells the user, and what the user tells it.  Errors and
 * warnings always go to stderr, notes only with -v; each is one line, with
 * the control bytes of guest strings (comm, paths, module names) escaped.
 * Bad lines of the guest's files are counted and reported once per file.
 * SIGINT and SIGTERM are counted here, for every loop to see.
 */
#include "agent.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How much of a bad line a -v note shows. */
#define BAD_LINE_SHOWN	120

volatile sig_atomic_t agent_signals;
volatile sig_atomic_t agent_last_signal;

static bool said_error;

void agent_on_signal(int sig)
{
	agent_last_signal = sig;
	if (agent_signals < 1000)
		agent_signals++;
}

bool agent_interrupted(const struct agent *a)
{
	return agent_signals > a->signals_ok;
}

bool agent_said_error(void)
{
	return said_error;
}

/*
 * A guest's comm or path may hold an escape sequence, a newline or a bidi
 * control: shown as libvmctx's tables show them (vmctx_escape(3)).
 */
static void put_escaped(const char *s, FILE *f)
{
	int n = vmctx_escape(NULL, 0, s);
	char *buf = n < 0 ? NULL : malloc((size_t)n + 1);

	if (buf && vmctx_escape(buf, (size_t)n + 1, s) >= 0)
		fputs(buf, f);
	else
		fputs("?", f);
	free(buf);
}

static void vmsg(const char *prog, const char *what, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static void vmsg(const char *prog, const char *what, const char *fmt, va_list ap)
{
	char *text;

	if (vasprintf(&text, fmt, ap) < 0) {
		fprintf(stderr, "%s: %s%s\n", prog, what, fmt);
		return;
	}
	fprintf(stderr, "%s: %s", prog, what);
	put_escaped(text, stderr);
	fputc('\n', stderr);
	free(text);
}

void agent_err(const struct agent *a, const char *fmt, ...)
{
	va_list ap;

	said_error = true;
	va_start(ap, fmt);
	vmsg(a->prog, "", fmt, ap);
	va_end(ap);
}

void agent_warn(const struct agent *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(a->prog, "warning: ", fmt, ap);
	va_end(ap);
}

void agent_note(const struct agent *a, const char *fmt, ...)
{
	va_list ap;

	if (!a->verbose)
		return;
	va_start(ap, fmt);
	vmsg(a->prog, "", fmt, ap);
	va_end(ap);
}

void agent_bad_line(const struct agent *a, struct agent_bad *bad, size_t lineno,
		    const char *why, const char *line)
{
	if (!bad->n++) {
		bad->first = lineno;
		bad->why = why;
	}
	agent_note(a, "%s:%zu: bad line skipped (%s): \"%.*s%s\"", bad->file, lineno, why,
		   BAD_LINE_SHOWN, line, strlen(line) > BAD_LINE_SHOWN ? "..." : "");
}

void agent_bad_report(const struct agent *a, struct agent_bad *bad)
{
	if (bad->n == 1)
		agent_warn(a, "%s:%zu: bad line skipped (%s)", bad->file, bad->first, bad->why);
	else if (bad->n)
		agent_warn(a, "%s:%zu: bad line skipped (%s); %zu bad lines skipped in this file, -v lists them",
			   bad->file, bad->first, bad->why, bad->n);
	bad->n = 0;
}
