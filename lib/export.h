/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * Exports (export.c): a session's rows, made into two profiles
 * (profile.h), which write the formats.
 */
#ifndef VMCTX_EXPORT_H
#define VMCTX_EXPORT_H

#include "util.h"

/*
 * The same rows, twice.  Folded stacks have no labels, so the VM and the
 * guest process are root frames there: "name (VMk);process;function".
 * pprof has them as labels, and the leaf frame alone as the stack, so
 * that -tagroot=vm,guest_comm grows the same tree.
 */
struct vmctx_export {
	struct vmctx_profile *pprof;
	struct vmctx_profile *folded;
};

#endif /* VMCTX_EXPORT_H */
