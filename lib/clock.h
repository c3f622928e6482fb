/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * A guest's clock on the host's time axis (clock.c; its fit from samples
 * is clock-fit.c).
 */
#ifndef VMCTX_CLOCK_H
#define VMCTX_CLOCK_H

#include <stdint.h>

#include "vmctx.h"

struct vmctx_clock {
	enum vmctx_clock_kind kind;
	/* VMCTX_CLOCK_LINEAR: guest = host + offset + (host - host_ref) * rate_ppb / 1e9 */
	uint64_t host_ref;
	int64_t offset;
	int64_t rate_ppb;
	/* VMCTX_CLOCK_TSC */
	struct vmctx_clock_tsc tsc;
	const struct vmctx_bundle *b;	/* borrowed, sealed: its clock pairs */
};

/* vmctx_clock_guest_ns() for a valid @c: -ENODATA for an unknown clock. */
__hidden int clock_guest_ns(const struct vmctx_clock *c, uint64_t host_ns, uint64_t *guest_ns);

#endif /* VMCTX_CLOCK_H */
