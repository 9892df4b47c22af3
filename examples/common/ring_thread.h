/* SPDX-License-Identifier: MIT */
/*
 * A host thread consuming a ring buffer while kernels run, so that the GPU
 * finds room instead of dropping records.
 */
#ifndef EGPU_EXAMPLE_RING_THREAD_H
#define EGPU_EXAMPLE_RING_THREAD_H

#include <pthread.h>
#include <stdbool.h>

#include "egpu.h"

struct ring_thread {
	egpu_ringbuf *rb;
	pthread_t thread;
	bool stop;
};

/* Start consuming @map's records with @fn(@user, ...); aborts on failure. */
void ring_thread_start(struct ring_thread *rt, egpu_map *map, egpu_sample_fn fn,
		       void *user);
/* The same, delivering as @opts says (chunks, batches, consumer threads). */
void ring_thread_start_opts(struct ring_thread *rt, egpu_map *map,
			    egpu_sample_fn fn, void *user,
			    const struct egpu_ringbuf_opts *opts);
/*
 * After the kernels are done (synchronised): consume what is left, stop the
 * thread, free the consumer. Returns the records the GPU dropped.
 */
uint64_t ring_thread_stop(struct ring_thread *rt);

#endif
