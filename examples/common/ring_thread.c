/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "ring_thread.h"

static void *consume(void *arg)
{
	struct ring_thread *rt = arg;

	while (!__atomic_load_n(&rt->stop, __ATOMIC_ACQUIRE)) {
		uint64_t mark = __atomic_load_n(&rt->mark, __ATOMIC_ACQUIRE);
		int n = egpu_ringbuf_poll(rt->rb, mark > rt->empty ? 0 : 1);

		EGPU_CHECK(n >= 0);
		if (!n) /* that pass began after @mark was made */
			__atomic_store_n(&rt->empty, mark, __ATOMIC_RELEASE);
	}
	return NULL;
}

uint64_t ring_thread_mark(struct ring_thread *rt)
{
	return __atomic_add_fetch(&rt->mark, 1, __ATOMIC_ACQ_REL);
}

bool ring_thread_drained(struct ring_thread *rt, uint64_t mark)
{
	return __atomic_load_n(&rt->empty, __ATOMIC_ACQUIRE) >= mark;
}

void ring_thread_start(struct ring_thread *rt, egpu_map *map, egpu_sample_fn fn,
		       void *user)
{
	ring_thread_start_opts(rt, map, fn, user, NULL);
}

void ring_thread_start_opts(struct ring_thread *rt, egpu_map *map,
			    egpu_sample_fn fn, void *user,
			    const struct egpu_ringbuf_opts *opts)
{
	EGPU_CHECK(map);
	rt->rb = egpu_ringbuf_new_opts(map, fn, user, opts);
	EGPU_CHECK(rt->rb);
	rt->stop = false;
	rt->mark = rt->empty = 0;
	if (pthread_create(&rt->thread, NULL, consume, rt)) {
		fprintf(stderr, "ring_thread: pthread_create failed\n");
		exit(1);
	}
}

uint64_t ring_thread_stop(struct ring_thread *rt)
{
	uint64_t drops;
	int n;

	__atomic_store_n(&rt->stop, true, __ATOMIC_RELEASE);
	pthread_join(rt->thread, NULL);
	/* Published records are all there once the kernels are done. */
	while ((n = egpu_ringbuf_consume(rt->rb)) > 0)
		;
	EGPU_CHECK(n == 0);
	drops = egpu_ringbuf_drops(rt->rb);
	egpu_ringbuf_free(rt->rb);
	rt->rb = NULL;
	return drops;
}
