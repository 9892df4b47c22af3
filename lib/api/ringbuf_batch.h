/* SPDX-License-Identifier: MIT */
/*
 * Batch and file delivery of an egpu_ringbuf's records (ringbuf_batch.c):
 * an egpu_sample_fn that gathers records into a buffer, handed over whole
 * to a batch callback and/or written to a file.
 */
#ifndef EGPU_API_RINGBUF_BATCH_H
#define EGPU_API_RINGBUF_BATCH_H

#include "egpu.h"

struct rb_batch;

/* A gatherer for @o (batch_fn and/or path set), @user for batch_fn. */
int rb_batch_new(const struct egpu_ringbuf_opts *o, void *user,
		 struct rb_batch **out);
/* The egpu_sample_fn to consume with, @user being the struct rb_batch. */
int rb_batch_take(void *user, const void *data, size_t size);
/* Hand over what was gathered: 0, batch_fn's value < 0, or EGPU_EIO. */
int rb_batch_flush(struct rb_batch *b);
/* NULL-safe; what was gathered and not flushed is lost: flush first. */
void rb_batch_free(struct rb_batch *b);

#endif
