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
	uint64_t mark;  /* the last ring_thread_mark() */
	uint64_t empty; /* the mark read before the last pass that found nothing */
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
/*
 * Once the producers are done (their kernels ended): a mark for
 * ring_thread_drained(), which says whether a pass that began after it
 * found nothing, so that every record they made has been delivered.
 * While a mark is pending the thread consumes without sleeping.
 */
uint64_t ring_thread_mark(struct ring_thread *rt);
bool ring_thread_drained(struct ring_thread *rt, uint64_t mark);

#endif
