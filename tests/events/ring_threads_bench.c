// SPDX-License-Identifier: MIT
/*
 * How fast the host drains a ring in GPU memory with 1 to N consumer
 * threads, without a GPU: host memory plays GPU memory behind a copier
 * that is memcpy under one lock (the map's stream and io_lock), shards
 * filled by the GPU's protocol played on the host beforehand, then timed
 * draining only. Not a test: `ring_threads_bench [MAX_THREADS]` prints a
 * Markdown table (docs/events.md, "Consumer threads").
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "egpu/bpf_maps.h"
#include "maps/ring.h"
#include "maps/ring_pool.h"
#include "ring_model.h"

#define SHARDS 32
#define RING_BYTES (SHARDS * (1u << 20))
#define ROUNDS 8

static pthread_mutex_t copy_lock = PTHREAD_MUTEX_INITIALIZER;

static int copy_read(void *io, void *dst, uint64_t addr, size_t n)
{
	(void)io;
	pthread_mutex_lock(&copy_lock);
	memcpy(dst, (void *)(uintptr_t)addr, n);
	pthread_mutex_unlock(&copy_lock);
	return 0;
}

static int copy_write(void *io, uint64_t addr, const void *src, size_t n)
{
	return copy_read(io, (void *)(uintptr_t)addr, (uint64_t)(uintptr_t)src, n);
}

static int copy_zero(void *io, uint64_t addr, size_t n)
{
	(void)io;
	pthread_mutex_lock(&copy_lock);
	memset((void *)(uintptr_t)addr, 0, n);
	pthread_mutex_unlock(&copy_lock);
	return 0;
}

static void *copy_alloc(void *io, size_t n)
{
	(void)io;
	return malloc(n);
}

static void copy_free(void *io, void *p)
{
	(void)io;
	free(p);
}

/* A consumer's work per record: read every byte (a checksum). */
static int sum_record(void *user, const void *data, size_t size)
{
	uint64_t *sum = user, s = 0;

	for (size_t i = 0; i < size; i += 8)
		s += *(const uint64_t *)((const uint8_t *)data + i);
	*sum += s;
	return 0;
}

/* Seconds to drain @records of @len bytes from full shards, @threads threads. */
static double drain(uint32_t len, uint32_t threads, uint64_t *records)
{
	struct map_spec spec = { .name = "bench", .type = EGPU_MAP_RINGBUF,
				     .max_entries = RING_BYTES,
				     .flags = EGPU_F_RING_DEVICE };
	struct ring_copier c = { .read = copy_read, .write = copy_write,
				 .zero = copy_zero, .alloc = copy_alloc,
				 .free = copy_free };
	uint64_t sums[RING_READERS_MAX] = { 0 };
	struct ring_part parts[RING_READERS_MAX];
	struct ring_pool *pool = NULL;
	struct event_ring *r;
	struct dev_ring view;
	uint8_t payload[4096] = { 0 }, *store, *mirror;
	uint64_t *lines;
	double secs = 0;

	if (ring_new_for_map(&spec, &r) || (ring_dev_fit_shards(r, SHARDS), 0))
		return -1;
	store = calloc(1, ring_dev_store_len(r));
	mirror = malloc(1u << 20);
	lines = malloc(ring_dev_lines_len(r));
	if (!store || !mirror || !lines ||
	    ring_dev_start(r, (uintptr_t)store, mirror, 1u << 20, lines, &view) ||
	    ring_make_readers(r, threads) ||
	    (threads > 1 && ring_pool_new(threads, &pool)))
		return -1;
	ring_bind_copier(r, &c, (uintptr_t)&view);
	for (uint32_t k = 0; k < threads; k++)
		parts[k] = (struct ring_part){ .fn = sum_record, .user = &sums[k] };
	*records = 0;
	for (int round = 0; round < ROUNDS; round++) {
		uint64_t t0;

		for (uint32_t sm = 0; sm < SHARDS; sm++)
			while (model_produce(&view, sm, payload, len))
				;
		t0 = now_ns();
		for (int n; (n = ring_consume_parts(r, parts, threads, pool)) > 0;)
			*records += (uint64_t)n;
		secs += (double)(now_ns() - t0) / 1e9;
	}
	ring_pool_free(pool);
	ring_free(r);
	free(store);
	free(mirror);
	free(lines);
	return secs;
}

int main(int argc, char **argv)
{
	uint32_t max = argc > 1 ? (uint32_t)atoi(argv[1]) : 2;
	static const uint32_t sizes[] = { 16, 64, 256 };

	printf("| record | threads | records/s | payload GB/s |\n|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (uint32_t t = 1; t <= max && t <= RING_READERS_MAX; t++) {
			uint64_t records;
			double secs = drain(sizes[i], t, &records);

			if (secs <= 0) {
				fprintf(stderr, "bench failed: %s\n", egpu_errmsg());
				return 1;
			}
			printf("| %u B | %u | %.1f M | %.2f |\n", sizes[i], t,
			       (double)records / secs / 1e6,
			       (double)records * sizes[i] / secs / 1e9);
		}
	return 0;
}
