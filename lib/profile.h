/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * Profiles (profile.c builds them and writes folded stacks,
 * profile-pprof.c writes pprof): the body of struct vmctx_profile, which
 * the two share.  Strings, frames and samples are numbered from 0 in the
 * order they came; the writers put them in text order.
 */
#ifndef VMCTX_PROFILE_H
#define VMCTX_PROFILE_H

#include <stdint.h>
#include <stddef.h>

#include "util.h"

/* A string id that names nothing: an unnamed frame's function, a number's string. */
#define PROFILE_NONE		UINT32_MAX
/* Ids stay below PROFILE_NONE, and an index's slot holds id + 1 in 32 bits. */
#define PROFILE_MAX_IDS		(UINT32_MAX - 1)

struct profile_frame {
	uint64_t address;
	uint32_t function;	/* a string id; PROFILE_NONE: unnamed */
	uint32_t module;	/* a string id; 0 (""): none */
};

/* No padding: samples compare their labels with memcmp(). */
struct profile_label {
	uint32_t key;		/* a string id */
	uint32_t str;		/* a string id; PROFILE_NONE: the number @num */
	int64_t num;
};

struct profile_sample {
	size_t stack;		/* its first frame id in stacks[] */
	size_t label;		/* its first label in labels[] */
	uint32_t nframes, nlabels;
	int64_t value[2];
};

struct vmctx_profile {
	char **strs;			/* by id, escaped, each once; strs[0] is "" */
	size_t nstrs, strs_cap;
	struct util_hash_index str_index;
	char *scratch;			/* the escaped text being looked up */
	size_t scratch_cap;

	struct profile_frame *frames;	/* by id, each once */
	size_t nframes, frames_cap;
	struct util_hash_index frame_index;

	struct profile_sample *samples;	/* by id, each stack and labels once */
	size_t nsamples, samples_cap;
	struct util_hash_index sample_index;
	uint32_t *stacks;		/* the samples' frame ids, each stack leaf first */
	size_t nstacks, stacks_cap;
	struct profile_label *labels;	/* the samples' labels, in the caller's order */
	size_t nlabels, labels_cap;
	uint64_t key[2];		/* the indices' SipHash key, secret */

	/* The options, their strings as ids. */
	size_t nvalues;
	uint32_t value_type[2], value_unit[2];
	uint64_t time_ns, duration_ns;
	int64_t period;
	uint32_t *comments;
	size_t ncomments;
};

/* profile-pprof.c: @p as an uncompressed profile.proto message. */
__hidden int profile_pprof(const struct vmctx_profile *p, struct util_buf *out);

#endif /* VMCTX_PROFILE_H */
