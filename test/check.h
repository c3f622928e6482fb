/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * The unit tests' CHECK() (not TAP: automake's plain harness reads the
 * exit status): CHECK() records a failure with the property it
 * states and goes on, so one run reports every broken property.
 */
#ifndef VMCTX_TEST_CHECK_H
#define VMCTX_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>

static int check_failures;

#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			check_failures++;						\
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);	\
			fprintf(stderr, __VA_ARGS__);				\
			fputc('\n', stderr);					\
		}								\
	} while (0)

#define CHECK_EQ(got, want, what)						\
	CHECK((uint64_t)(got) == (uint64_t)(want), "%s: got %" PRIu64 ", want %" PRIu64, \
	      what, (uint64_t)(got), (uint64_t)(want))

/* A small deterministic generator (xorshift64), so that a failure reproduces. */
static inline uint64_t check_rnd(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static inline int check_result(const char *name)
{
	if (check_failures)
		fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
	return check_failures ? 1 : 0;
}

#endif
