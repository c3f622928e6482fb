/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the lab's checkers (lab-exp-check, lab-exits-check, lab-chain-check)
 * say: one "lab-exp:   ok|MISS ..." line per figure (VERDICT_PREFIX, if
 * defined, instead of "lab-exp:   "), and a one-line error that ends the
 * program with status 2.  Define CHECKER as the program's name before
 * including this; failed says whether a figure missed.
 */
#ifndef LAB_EXP_VERDICT_H
#define LAB_EXP_VERDICT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef VERDICT_PREFIX
#define VERDICT_PREFIX	"lab-exp:   "
#endif

static int failed;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", CHECKER);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void figure(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void figure(int ok, const char *fmt, ...)
{
	va_list ap;

	printf(VERDICT_PREFIX "%-4s ", ok ? "ok" : "MISS");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!ok)
		failed = 1;
}

#endif
