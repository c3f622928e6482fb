/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * Labels (labels.c): the names of an aggregation key's row, as the
 * tables, the stream and the exports spell them.
 */
#ifndef VMCTX_LABELS_H
#define VMCTX_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#include "aggregate.h"
#include "session.h"

/*
 * labels.c: the Function and Module texts of an aggregation key (@unified:
 * as the unified view names host rows); a text that has to be composed is
 * written to @buf.
 */
__hidden void labels_of(const struct vmctx_session *s, const struct agg_key *k, bool unified,
			const char **function, const char **module, char *buf, size_t len);
/* What ran instead of a steal row's vCPU: "(on vcpuN)", "(VMk)", "(outside)", ... */
__hidden const char *labels_steal_by(const struct vmctx_session *s, const struct agg_key *k);
/* The function and module of the host's idle time, as perf names them. */
__hidden void labels_host_idle(const struct agg_key *k, const char **function,
			       const char **module);

#endif /* VMCTX_LABELS_H */
