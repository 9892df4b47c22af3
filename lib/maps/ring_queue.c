/* SPDX-License-Identifier: MIT */
/*
 * A consumer round's copies of one direction, queued with one copier
 * call (ring_copier.batch; ring_dev.c's rounds): a pass over many shards
 * makes a few driver calls per round instead of a few per shard, which
 * consumer threads would otherwise queue on the driver's locks for.
 */
#include <stdlib.h>

#include "core/core.h"
#include "maps/ring_impl.h"

int ring_queue_add(struct ring_queue *q, uint64_t addr, void *host, size_t n)
{
	if (!ARRAY_GROW(q->v, q->cap, q->n, 16))
		return err_set(EGPU_ENOMEM, "ring copies: out of memory");
	q->v[q->n++] = (struct mem_copy){ addr, host, n };
	return 0;
}

int ring_queue_flush(const struct ring_copier *c, uint32_t chan,
		     enum mem_copy_dir dir, struct ring_queue *q)
{
	int err = 0;

	if (c->batch && q->n)
		err = c->batch(c->io, chan, dir, q->v, q->n);
	for (size_t i = 0; !c->batch && i < q->n && !err; i++) {
		const struct mem_copy *x = &q->v[i];

		err = dir == MEM_COPY_OUT ? c->read_async(c->io, chan, x->host, x->addr, x->n) :
		      dir == MEM_COPY_IN ? c->write(c->io, chan, x->addr, x->host, x->n) :
		      c->zero(c->io, chan, x->addr, x->n);
	}
	q->n = 0;
	return err;
}

void ring_queue_free(struct ring_queue *q)
{
	free(q->v);
	*q = (struct ring_queue){ 0 };
}
