/* SPDX-License-Identifier: MIT */
/*
 * egpu_ringbuf: the host's consumer of ring maps (RINGBUF, PERF_EVENT_ARRAY,
 * GPU_RINGBUF). A ring's records lie in host memory that the GPU writes
 * over the bus (lib/maps/ring.h), so consuming is reading memory: no CUDA
 * call, nothing that waits for a kernel. Waiting is sleep-polling, as a GPU
 * cannot wake a host thread. A ring in GPU memory may be drained by
 * several threads at once, by shards (opts->threads: a pool of threads the
 * egpu_ringbuf keeps, lib/maps/ring_pool.c).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "api/internal.h"
#include "api/ringbuf_batch.h"
#include "maps/ring_pool.h"

/* Period of the timerfd egpu_ringbuf_fd() returns. */
#define FD_PERIOD_NS 1000000L

struct rb_entry {
	struct egpu_map *map;
	uint32_t threads;
	struct ring_part *parts; /* one per thread: its callback, its bytes */
	struct rb_batch *batch;  /* batch or file delivery, or NULL */
};

struct egpu_ringbuf {
	struct rb_entry *v;
	size_t n;
	int timer_fd; /* -1 until egpu_ringbuf_fd() */
	struct ring_pool *pool; /* consumer threads, when a ring wants them */
};

/* Consumer threads enough for @threads (the caller counting as one). */
static int rb_pool_fit(egpu_ringbuf *rb, uint32_t threads)
{
	struct ring_pool *pool;
	int err;

	if (threads < 2 || (rb->pool && ring_pool_threads(rb->pool) >= threads))
		return 0;
	if ((err = ring_pool_new(threads, &pool)))
		return err;
	ring_pool_free(rb->pool); /* idle between calls */
	rb->pool = pool;
	return 0;
}

/* Entry @e's parts: the batch's lanes, or @chunk(@user), or @fn(@user). */
static int rb_entry_parts(struct rb_entry *e, egpu_sample_fn fn,
			  egpu_chunk_fn chunk, void *user)
{
	e->parts = calloc(e->threads, sizeof(*e->parts));
	if (!e->parts)
		return err_set(EGPU_ENOMEM, "egpu_ringbuf_add: out of memory");
	for (uint32_t k = 0; k < e->threads; k++)
		e->parts[k] = e->batch ? rb_batch_part(e->batch, k) :
			chunk ? (struct ring_part){ .chunk = chunk, .user = user } :
			(struct ring_part){ .fn = fn, .user = user };
	return 0;
}

static void rb_entry_free(struct rb_entry *e)
{
	free(e->parts);
	rb_batch_free(e->batch);
}

int egpu_ringbuf_add_opts(egpu_ringbuf *rb, egpu_map *map, egpu_sample_fn fn,
			  void *user, const struct egpu_ringbuf_opts *opts)
{
	bool gathers = OPTS_GET(opts, batch_fn, NULL) || OPTS_GET(opts, path, NULL);
	egpu_chunk_fn chunk = OPTS_GET(opts, chunk_fn, NULL);
	uint32_t threads = OPTS_GET(opts, threads, 0);
	struct rb_entry e = { .map = map, .threads = threads ? threads : 1 };
	struct rb_entry *v;
	int err;

	err = OPTS_VALID(opts, egpu_ringbuf_opts, "egpu_ringbuf_add_opts");
	if (err)
		return err;
	if (!rb || !map || (!fn && !gathers && !chunk))
		return err_set(EGPU_EINVAL,
			       "egpu_ringbuf_add: NULL argument (a ring buffer, a map and a callback, batch callback, chunk callback or path are needed)");
	if (chunk && OPTS_GET(opts, batch_fn, NULL))
		return err_set(EGPU_EINVAL,
			       "egpu_ringbuf_add: map '%s' given both a batch and a chunk callback (one of them)",
			       map->spec->name);
	if (!map->ring)
		return err_set(EGPU_EINVAL,
			       "map '%s' (type %u) is not a ring buffer (RINGBUF, PERF_EVENT_ARRAY or GPU_RINGBUF)",
			       map->spec->name, map->spec->type);
	if (e.threads > RING_READERS_MAX)
		return err_set(EGPU_EINVAL,
			       "egpu_ringbuf_add: %u consumer threads for map '%s' (at most %u)",
			       threads, map->spec->name, RING_READERS_MAX);
	v = realloc(rb->v, (rb->n + 1) * sizeof(*v));
	if (!v)
		return err_set(EGPU_ENOMEM, "egpu_ringbuf_add: out of memory");
	rb->v = v;
	err = rb_pool_fit(rb, e.threads);
	if (!err && gathers)
		err = rb_batch_new(opts, user, e.threads, &e.batch);
	if (!err)
		err = rb_entry_parts(&e, fn, chunk, user);
	if (!err && !(err = ring_claim(map->ring)) &&
	    (err = ring_make_readers(map->ring, e.threads)))
		ring_release(map->ring);
	if (err) {
		rb_entry_free(&e);
		return err;
	}
	v[rb->n++] = e;
	return 0;
}

int egpu_ringbuf_add(egpu_ringbuf *rb, egpu_map *map, egpu_sample_fn fn,
		     void *user)
{
	return egpu_ringbuf_add_opts(rb, map, fn, user, NULL);
}

egpu_ringbuf *egpu_ringbuf_new_opts(egpu_map *map, egpu_sample_fn fn,
				    void *user,
				    const struct egpu_ringbuf_opts *opts)
{
	egpu_ringbuf *rb = calloc(1, sizeof(*rb));

	if (!rb) {
		err_set(EGPU_ENOMEM, "egpu_ringbuf_new: out of memory");
		return NULL;
	}
	rb->timer_fd = -1;
	if (egpu_ringbuf_add_opts(rb, map, fn, user, opts)) {
		egpu_ringbuf_free(rb);
		return NULL;
	}
	return rb;
}

egpu_ringbuf *egpu_ringbuf_new(egpu_map *map, egpu_sample_fn fn, void *user)
{
	return egpu_ringbuf_new_opts(map, fn, user, NULL);
}

void egpu_ringbuf_free(egpu_ringbuf *rb)
{
	if (!rb)
		return;
	for (size_t i = 0; i < rb->n; i++) {
		ring_release(rb->v[i].map->ring);
		rb_entry_free(&rb->v[i]);
	}
	ring_pool_free(rb->pool);
	if (rb->timer_fd >= 0)
		close(rb->timer_fd);
	free(rb->v);
	free(rb);
}

/* Print lines of the rings' contexts come out with the records. */
static int drain_prints(egpu_ringbuf *rb)
{
	for (size_t i = 0; i < rb->n; i++) {
		struct egpu_ctx *ctx = rb->v[i].map->obj->ctx;
		bool seen = false;
		int err;

		for (size_t j = 0; j < i && !seen; j++)
			seen = rb->v[j].map->obj->ctx == ctx;
		if (!seen && (err = print_drain(ctx)) < 0)
			return err;
	}
	return 0;
}

int egpu_ringbuf_consume(egpu_ringbuf *rb)
{
	uint64_t ticks;
	int total = 0, err;

	if (!rb)
		return err_set(EGPU_EINVAL, "egpu_ringbuf_consume: NULL ring buffer");
	/* An event loop woke on the timerfd: reset it (level-triggered). */
	if (rb->timer_fd >= 0 && read(rb->timer_fd, &ticks, sizeof(ticks)) < 0)
		ticks = 0;
	for (size_t i = 0; i < rb->n; i++) {
		struct rb_entry *e = &rb->v[i];
		/* Batches hold whole records only: each part flushes its own. */
		int n = ring_consume_parts(e->map->ring, e->parts, e->threads,
					   rb->pool);

		if (n < 0)
			return n;
		total = total > INT32_MAX - n ? INT32_MAX : total + n;
	}
	err = drain_prints(rb);
	return err < 0 ? err : total;
}

int egpu_ringbuf_reclaim(egpu_ringbuf *rb)
{
	int n;

	if (!rb)
		return err_set(EGPU_EINVAL, "egpu_ringbuf_reclaim: NULL ring buffer");
	for (size_t i = 0; i < rb->n; i++)
		ring_set_reclaim(rb->v[i].map->ring, true);
	n = egpu_ringbuf_consume(rb);
	for (size_t i = 0; i < rb->n; i++)
		ring_set_reclaim(rb->v[i].map->ring, false);
	return n;
}

static bool any_ready(void *arg)
{
	const egpu_ringbuf *rb = arg;

	for (size_t i = 0; i < rb->n; i++)
		if (ring_ready(rb->v[i].map->ring))
			return true;
	return false;
}

int egpu_ringbuf_poll(egpu_ringbuf *rb, int timeout_ms)
{
	int n = egpu_ringbuf_consume(rb);

	if (n || !timeout_ms)
		return n;
	return poll_wait(any_ready, rb, timeout_ms) ? egpu_ringbuf_consume(rb) : 0;
}

uint64_t egpu_ringbuf_drops(const egpu_ringbuf *rb)
{
	uint64_t drops = 0;

	for (size_t i = 0; rb && i < rb->n; i++)
		drops += ring_drops(rb->v[i].map->ring);
	return drops;
}

int egpu_ringbuf_stats(const egpu_ringbuf *rb, struct egpu_ringbuf_stats *stats)
{
	EGPU_OPTS(egpu_ringbuf_stats, st);
	size_t sz;

	if (!rb || !stats || stats->sz < sizeof(size_t))
		return err_set(EGPU_EINVAL, "egpu_ringbuf_stats: NULL argument or sz not set");
	for (size_t i = 0; i < rb->n; i++) {
		for (uint32_t k = 0; k < rb->v[i].threads; k++) {
			st.records += rb->v[i].parts[k].records;
			st.bytes += rb->v[i].parts[k].bytes;
		}
		st.drops += ring_drops(rb->v[i].map->ring);
		st.copied += ring_copied(rb->v[i].map->ring);
	}
	st.rings = (uint32_t)rb->n;
	/* The caller's struct may be older (smaller) than ours. */
	sz = stats->sz < sizeof(st) ? stats->sz : sizeof(st);
	memcpy(stats, &st, sz);
	stats->sz = sz;
	return 0;
}

int egpu_ringbuf_fd(egpu_ringbuf *rb)
{
	struct itimerspec period = {
		.it_interval = { .tv_nsec = FD_PERIOD_NS },
		.it_value = { .tv_nsec = FD_PERIOD_NS },
	};

	if (!rb)
		return err_set(EGPU_EINVAL, "egpu_ringbuf_fd: NULL ring buffer");
	if (rb->timer_fd >= 0)
		return rb->timer_fd;
	rb->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (rb->timer_fd < 0)
		return err_set(EGPU_EIO, "egpu_ringbuf_fd: timerfd_create failed");
	if (timerfd_settime(rb->timer_fd, 0, &period, NULL)) {
		close(rb->timer_fd);
		rb->timer_fd = -1;
		return err_set(EGPU_EIO, "egpu_ringbuf_fd: timerfd_settime failed");
	}
	return rb->timer_fd;
}
