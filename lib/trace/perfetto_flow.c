/* SPDX-License-Identifier: MIT */
/*
 * The flow ids of the Perfetto trace (perfetto.h). A call's arrow to its
 * operation (flow_ids_old, closed by the operation's
 * terminating_flow_ids_old) needs an id unique only while the flow is
 * open, so ids are reused once a flow has ended: they stay as small as
 * the launches in flight at once (one varint byte under 128) rather than
 * growing with the run. A flow is open from its call's begin to the begin
 * of its last operation; an id is free again only strictly after that, so
 * that a reader ordering packets by time never sees two flows share it.
 *
 * A graph launch's fan of arrows uses legacy bind ids, a namespace of
 * their own: they stay the call's index + 1.
 */
#include <stdlib.h>

#include "perfetto.h"

struct at {
	uint64_t t;
	size_t idx;
};

static int at_cmp(const void *x, const void *y)
{
	const struct at *a = x, *b = y;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* By call: the begin of its last operation (0: none joined). */
static uint64_t *flow_close(const struct trace_data *td)
{
	uint64_t *close = calloc(td->api_cnt + 1, sizeof(*close));

	for (size_t i = 0; close && i < td->op_cnt; i++) {
		const struct trace_op *op = &td->ops[i];
		uint64_t t;

		if (op->api >= td->api_cnt)
			continue;
		t = op->start > td->apis[op->api].start ?
			op->start : td->apis[op->api].start;
		if (t + 1 > close[op->api])
			close[op->api] = t + 1;   /* + 1: 0 means none */
	}
	return close;
}

/* Ids for the one-arrow flows of @open[0..n) (sorted by begin) and
 * @end[0..n) (sorted by close), reusing ids whose flow has ended. */
static void assign(uint64_t *id, const struct at *open, const struct at *end,
		   size_t n, uint64_t *free_ids)
{
	size_t k = 0, nfree = 0;
	uint64_t next = 0;

	for (size_t i = 0; i < n; i++) {
		for (; k < n && end[k].t < open[i].t; k++)
			free_ids[nfree++] = id[end[k].idx];
		id[open[i].idx] = nfree ? free_ids[--nfree] : ++next;
	}
}

uint64_t *pf_flow_ids(const struct trace_data *td)
{
	uint64_t *close = flow_close(td);
	uint64_t *id = calloc(td->api_cnt + 1, sizeof(*id));
	struct at *open = malloc((td->api_cnt + 1) * sizeof(*open));
	struct at *end = malloc((td->api_cnt + 1) * sizeof(*end));
	size_t n = 0;

	if (!close || !id || !open || !end) {
		free(id);
		id = NULL;
		goto out;
	}
	for (size_t i = 0; i < td->api_cnt; i++) {
		if (!close[i])
			continue;
		if (trace_api_graph(td->apis[i].name)) {
			id[i] = i + 1;
			continue;
		}
		open[n] = (struct at){ td->apis[i].start, i };
		end[n++] = (struct at){ close[i] - 1, i };
	}
	qsort(open, n, sizeof(*open), at_cmp);
	qsort(end, n, sizeof(*end), at_cmp);
	/* @close is no longer needed: its room holds the free ids */
	assign(id, open, end, n, close);
out:
	free(close);
	free(open);
	free(end);
	return id;
}
