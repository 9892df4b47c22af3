/* SPDX-License-Identifier: MIT */
/* The totals of a streamed trace (collect_fold.c). */
#ifndef EGPU_TRACE_COLLECT_FOLD_H
#define EGPU_TRACE_COLLECT_FOLD_H

#include "core/core.h"
#include "writers.h"

struct fold_slots {
	uint32_t *slot;   /* index + 1, 0: empty */
	size_t cap;
};

/* Calls by (API, stack), operations by (kind, name, device, stream,
 * call); a folded call's corr is its index + 1, and its operations'
 * corr is that, so trace_join() joins them again. */
struct fold {
	struct trace_api *apis;
	size_t api_n, api_cap;
	struct trace_op *ops;
	size_t op_n, op_cap;
	struct fold_slots api_slots, op_slots;
	uint64_t from, to;    /* the runs' first start and last end */
};

/* Add the joined calls and operations of @td; 0 or EGPU_ENOMEM. */
int fold_add(struct fold *f, const struct trace_data *td);
void fold_free(struct fold *f);

#endif
