/* SPDX-License-Identifier: MIT */
/*
 * Batch, chunk and file delivery of an egpu_ringbuf's records
 * (ringbuf_batch.c): an egpu_sample_fn that gathers records into a
 * buffer, handed over whole to a batch callback and/or written to a file,
 * or a chunk taker writing whole chunks raw. One buffer (a lane) per
 * consumer thread; lanes share the callback and the file.
 */
#ifndef EGPU_API_RINGBUF_BATCH_H
#define EGPU_API_RINGBUF_BATCH_H

#include <stdint.h>

#include "egpu.h"
#include "maps/ring.h"

struct rb_batch;

/*
 * A gatherer for @o (batch_fn, path or chunk_fn set; chunks unless
 * batch_fn) with @lanes lanes, @user for batch_fn or chunk_fn.
 */
int rb_batch_new(const struct egpu_ringbuf_opts *o, void *user,
		 uint32_t lanes, struct rb_batch **out);
/* Consumer thread @k's part of a pass: lane @k's take and flush. */
struct ring_part rb_batch_part(struct rb_batch *b, uint32_t k);
/* The egpu_sample_fn to consume with, @lane a part's user (rb_batch_part). */
int rb_batch_take(void *lane, const void *data, size_t size);
/* The part's take_batch (ring_take_batch_fn): a warp's batch at once. */
int rb_batch_take_batch(void *lane, const uint64_t *words, uint32_t count,
			uint32_t len, uint32_t from);
/*
 * The part's chunk (egpu_chunk_fn) when no batch callback gathers: the
 * chunk appended to the file's buffer raw, then handed to the chunk
 * callback if any.
 */
int rb_batch_take_chunk(void *lane, const void *data, size_t size);
/*
 * Hand over what @lane gathered: 0, batch_fn's value < 0, or EGPU_EIO.
 * Lanes may flush at once: the file gets each flush in one piece.
 */
int rb_batch_flush(void *lane);
/* NULL-safe; what was gathered and not flushed is lost: flush first. */
void rb_batch_free(struct rb_batch *b);

#endif
