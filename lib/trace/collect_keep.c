/* SPDX-License-Identifier: MIT */
/*
 * The flight recorder (collect_opts.keep_ns): the trace keeps only its
 * last keep_ns. While it runs, each activity buffer CUPTI hands back lets
 * go of what ended before the window and a margin: operations, and the
 * chunks of calls (with their stacks) that their threads have left and
 * whose calls have all returned, so memory stays that of the window
 * whatever the run's length. The margin keeps the calls of operations
 * that run late (a queue the GPU has not reached yet). At stop the window
 * is cut exactly: the operations that end in it, and the calls that end
 * in it or caused one of them.
 */
#include <stdlib.h>

#include "collect_impl.h"

/* How far before the window calls and operations are still kept while
 * the trace runs. */
#define TRIM_MARGIN_NS 2000000000ull

/* Whether chunk @k (c->lock held) is left and its calls returned before
 * @cut; a chunk its thread still appends to is not read. */
static bool chunk_done_before(const struct call_chunk *k, uint64_t cut)
{
	if (!k->sealed)
		return false;
	for (uint32_t i = 0; i < k->call_n; i++) {
		const struct raw_call *call = &k->calls[i];
		uint64_t end = __atomic_load_n(&call->end, __ATOMIC_ACQUIRE);

		if (call->kind != CALL_ALIAS && (!end || end >= cut))
			return false;
	}
	return true;
}

static void trim_ops(struct collect *c, uint64_t cut)
{
	size_t n = 0;

	for (size_t i = 0; i < c->op_n; i++)
		if (c->ops[i].end >= cut)
			c->ops[n++] = c->ops[i];
	c->dropped += c->op_n - n;
	c->op_n = n;
}

void collect_trim(struct collect *c)
{
	uint64_t keep = c->opts.keep_ns + TRIM_MARGIN_NS, cut;
	struct call_chunk **p, *k;

	if (c->newest_end <= keep)
		return;
	cut = c->newest_end - keep;
	trim_ops(c, cut);
	pthread_mutex_lock(&c->lock);
	for (p = &c->chunks; (k = *p);) {
		if (!chunk_done_before(k, cut)) {
			p = &k->next;
			continue;
		}
		*p = k->next;
		c->dropped += k->call_n;
		chunk_free(k);
	}
	pthread_mutex_unlock(&c->lock);
}

static uint64_t newest_call_end(const struct collect *c)
{
	uint64_t t = 0;

	for (const struct call_chunk *k = c->chunks; k; k = k->next)
		for (uint32_t i = 0; i < k->call_n; i++)
			if (k->calls[i].end > t)
				t = k->calls[i].end;
	return t;
}

int collect_keep_ops(struct collect *c, struct keep *k)
{
	uint64_t last = newest_call_end(c);

	*k = (struct keep){ 0 };
	if (!c->opts.keep_ns)
		return 0;
	if (c->newest_end > last)
		last = c->newest_end;
	if (last <= c->opts.keep_ns)
		return 0;
	k->cut = last - c->opts.keep_ns;
	trim_ops(c, k->cut);
	for (size_t i = 0; i < c->op_n; i++)
		if (ptrmap_put(&k->corrs, (uintptr_t)c->ops[i].corr + 1,
			       (void *)1))
			return err_set(EGPU_ENOMEM, "egpu_trace_stop: out of "
				       "memory");
	return 0;
}

bool collect_keep_call(const struct keep *k, const struct raw_call *call)
{
	if (!k->cut || call->end >= k->cut ||
	    ptrmap_get(&k->corrs, (uintptr_t)call->corr + 1))
		return true;
	return false;
}
