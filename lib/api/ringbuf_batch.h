/* SPDX-License-Identifier: MIT */
/*
 * Batch and file delivery of an egpu_ringbuf's records (ringbuf_batch.c):
 * an egpu_sample_fn that gathers records into a buffer, handed over whole
 * to a batch callback and/or written to a file. One buffer (a lane) per
 * consumer thread; lanes share the callback and the file.
 */
#ifndef EGPU_API_RINGBUF_BATCH_H
#define EGPU_API_RINGBUF_BATCH_H

#include <stdint.h>

#include "egpu.h"

struct rb_batch;

/*
 * A gatherer for @o (batch_fn and/or path set) with @lanes lanes, @user
 * for batch_fn.
 */
int rb_batch_new(const struct egpu_ringbuf_opts *o, void *user,
		 uint32_t lanes, struct rb_batch **out);
/* Lane @k, the @user of rb_batch_take() and rb_batch_flush(). */
void *rb_batch_lane(struct rb_batch *b, uint32_t k);
/* The egpu_sample_fn to consume with, @lane from rb_batch_lane(). */
int rb_batch_take(void *lane, const void *data, size_t size);
/*
 * Hand over what @lane gathered: 0, batch_fn's value < 0, or EGPU_EIO.
 * Lanes may flush at once: the file gets each flush in one piece.
 */
int rb_batch_flush(void *lane);
/* NULL-safe; what was gathered and not flushed is lost: flush first. */
void rb_batch_free(struct rb_batch *b);

#endif
