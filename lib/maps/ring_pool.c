/* SPDX-License-Identifier: MIT */
/*
 * Consumer threads (ring_pool.h). A run bumps a generation number and
 * wakes every thread; each runs its part (or none, beyond @n), counts
 * itself done, and the last one wakes the caller, which ran part 0
 * meanwhile. A thread waits on a condition variable between runs, so an
 * idle pool costs nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "maps/ring.h"
#include "maps/ring_pool.h"

struct pool_thread {
	struct ring_pool *pool;
	uint32_t k;
	pthread_t tid;
};

struct ring_pool {
	pthread_mutex_t lock;
	pthread_cond_t go;     /* a run started, or the pool stops */
	pthread_cond_t done;   /* the last thread finished its part */
	uint64_t gen;          /* runs started */
	uint32_t n;            /* parts of the current run */
	uint32_t pending;      /* threads not done with the current run */
	void (*job)(void *arg, uint32_t k);
	void *arg;
	bool quit;
	uint32_t threads;      /* counting the caller */
	uint32_t started;      /* threads[0, started) run */
	struct pool_thread t[]; /* t[0] unused: the caller */
};

static void *pool_main(void *arg)
{
	struct pool_thread *t = arg;
	struct ring_pool *p = t->pool;
	uint64_t seen = 0;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->gen == seen && !p->quit)
			pthread_cond_wait(&p->go, &p->lock);
		if (p->quit)
			break;
		seen = p->gen;
		if (t->k < p->n) {
			pthread_mutex_unlock(&p->lock);
			p->job(p->arg, t->k);
			pthread_mutex_lock(&p->lock);
		}
		if (--p->pending == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int ring_pool_new(uint32_t threads, struct ring_pool **out)
{
	struct ring_pool *p;

	if (threads < 2 || threads > RING_READERS_MAX)
		return err_set(EGPU_EINVAL,
			       "consumer threads: %u is not in [2, %u]", threads,
			       RING_READERS_MAX);
	p = calloc(1, sizeof(*p) + threads * sizeof(p->t[0]));
	if (!p)
		return err_set(EGPU_ENOMEM, "consumer threads: out of memory");
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	p->threads = threads;
	for (p->started = 1; p->started < threads; p->started++) {
		struct pool_thread *t = &p->t[p->started];
		int e;

		*t = (struct pool_thread){ .pool = p, .k = p->started };
		if ((e = pthread_create(&t->tid, NULL, pool_main, t))) {
			uint32_t k = t->k;

			ring_pool_free(p);
			return err_set(EGPU_ENOMEM,
				       "consumer threads: cannot start thread %u of %u: %s",
				       k + 1, threads, strerror(e));
		}
	}
	*out = p;
	return 0;
}

uint32_t ring_pool_threads(const struct ring_pool *p)
{
	return p->threads;
}

void ring_pool_run(struct ring_pool *p, uint32_t n,
		   void (*job)(void *arg, uint32_t k), void *arg)
{
	pthread_mutex_lock(&p->lock);
	p->job = job;
	p->arg = arg;
	p->n = n;
	p->pending = p->started - 1;
	p->gen++;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->lock);
	job(arg, 0);
	pthread_mutex_lock(&p->lock);
	while (p->pending)
		pthread_cond_wait(&p->done, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

void ring_pool_free(struct ring_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->quit = true;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->lock);
	for (uint32_t k = 1; k < p->started; k++)
		pthread_join(p->t[k].tid, NULL);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->go);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
