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
 * A streamed trace is written in parts (collect_stream.c), each with its
 * calls' operations: the flows still open at a part's end (their
 * operation runs after the next part's first calls) keep their ids into
 * the next part. A call that began before the part's @from (it had not
 * returned when the earlier part was cut) gets no arrow.
 *
 * A graph launch's fan of arrows uses legacy bind ids, a namespace of
 * their own, numbered from 1 over the whole trace (graph launches are
 * few).
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

/* The open flows as a heap by close time. */
static void heap_push(struct pf_flows *f, struct pf_open o)
{
	size_t i = f->open_n++;

	for (; i && f->open[(i - 1) / 2].close > o.close; i = (i - 1) / 2)
		f->open[i] = f->open[(i - 1) / 2];
	f->open[i] = o;
}

static struct pf_open heap_pop(struct pf_flows *f)
{
	struct pf_open top = f->open[0], last = f->open[--f->open_n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < f->open_n) {
		if (c + 1 < f->open_n && f->open[c + 1].close < f->open[c].close)
			c++;
		if (last.close <= f->open[c].close)
			break;
		f->open[i] = f->open[c];
		i = c;
	}
	f->open[i] = last;
	return top;
}

/* An id for a flow opening at @t and closing at @close; 0 on ENOMEM. */
static uint64_t flow_open(struct pf_flows *f, uint64_t t, uint64_t close)
{
	uint64_t id;

	while (f->open_n && f->open[0].close < t) {
		if (!ARRAY_GROW(f->free_ids, f->free_cap, f->free_n, 64))
			return 0;
		f->free_ids[f->free_n++] = heap_pop(f).id;
	}
	if (!ARRAY_GROW(f->open, f->open_cap, f->open_n, 64))
		return 0;
	id = f->free_n ? f->free_ids[--f->free_n] : ++f->next;
	heap_push(f, (struct pf_open){ close, id });
	return id;
}

uint64_t *pf_flow_ids(struct pf_flows *f, const struct trace_data *td,
		      uint64_t from)
{
	uint64_t *close = flow_close(td);
	uint64_t *id = calloc(td->api_cnt + 1, sizeof(*id));
	struct at *open = malloc((td->api_cnt + 1) * sizeof(*open));
	size_t n = 0;
	bool ok = close && id && open;

	for (size_t i = 0; ok && i < td->api_cnt; i++) {
		if (!close[i] || td->apis[i].start < from)
			continue;
		if (trace_api_graph(td->apis[i].name))
			id[i] = ++f->graph_next;
		else
			open[n++] = (struct at){ td->apis[i].start, i };
	}
	if (ok)
		qsort(open, n, sizeof(*open), at_cmp);
	for (size_t i = 0; ok && i < n; i++)
		ok = (id[open[i].idx] = flow_open(f, open[i].t,
						  close[open[i].idx] - 1));
	if (!ok) {
		free(id);
		id = NULL;
	}
	free(close);
	free(open);
	return id;
}

void pf_flows_free(struct pf_flows *f)
{
	free(f->open);
	free(f->free_ids);
	*f = (struct pf_flows){ 0 };
}
