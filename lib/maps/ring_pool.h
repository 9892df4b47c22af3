/* SPDX-License-Identifier: MIT */
/*
 * Threads that run the parts of a consumer pass at once (ring_pool.c):
 * part 0 on the thread that asks, parts 1 to n - 1 on threads started
 * once and kept, waiting, between passes.
 */
#ifndef EGPU_MAPS_RING_POOL_H
#define EGPU_MAPS_RING_POOL_H

#include <stdint.h>

struct ring_pool;

/* @threads (2 to RING_READERS_MAX) counting the caller: @threads - 1 start. */
int ring_pool_new(uint32_t threads, struct ring_pool **out);
/* Threads counting the caller. */
uint32_t ring_pool_threads(const struct ring_pool *p);
/*
 * @job(@arg, k) for every k < @n (at most ring_pool_threads()), k = 0 on
 * this thread; returns when all returned. One run at a time.
 */
void ring_pool_run(struct ring_pool *p, uint32_t n,
		   void (*job)(void *arg, uint32_t k), void *arg);
/* Stops and joins the threads (NULL-safe); no run may be going on. */
void ring_pool_free(struct ring_pool *p);

#endif
