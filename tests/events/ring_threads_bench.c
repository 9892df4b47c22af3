// SPDX-License-Identifier: MIT
/*
 * How fast the host drains a ring in GPU memory with 1 to N consumer
 * threads, without a GPU: host memory plays GPU memory behind a copier
 * that is memcpy on the consuming thread (each thread's own stream), shards
 * filled by the GPU's protocol played on the host beforehand (records one
 * by one, or warps' batches of 32 as the GPU makes when every lane
 * outputs), then timed draining only, into a callback per record or into
 * batch delivery (egpu_ringbuf_opts.batch_fn: the library's gatherer,
 * taking each warp's batch whole, or, for comparison, each of its records
 * gathered on its own as before). The last column, for one thread, leaves
 * out the time spent copying and zeroing (a GPU's copy engine does that
 * part): what the consumer's own work sustains. Not a test:
 * `ring_threads_bench [MAX_THREADS]` prints a Markdown table
 * (docs/events.md, "Consumer threads").
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/ringbuf_batch.h"
#include "core/core.h"
#include "egpu/bpf_maps.h"
#include "maps/ring.h"
#include "maps/ring_pool.h"
#include "ring_model.h"

#define SHARDS 32
#define RING_BYTES (SHARDS * (1u << 20))
#define ROUNDS 8
#define WARP 32

enum consumer { PER_RECORD, GATHERED, WHOLE_BATCHES };

/* One row: records of @len bytes, made one by one or in warps' batches. */
struct config {
	uint32_t len;
	bool batches;
	enum consumer how;
};

static const struct config configs[] = {
	{ 16, false, PER_RECORD }, { 64, false, PER_RECORD },
	{ 256, false, PER_RECORD },
	{ 16, true, PER_RECORD }, { 16, true, GATHERED },
	{ 16, true, WHOLE_BATCHES },
	{ 64, true, GATHERED }, { 64, true, WHOLE_BATCHES },
	{ 256, true, GATHERED }, { 256, true, WHOLE_BATCHES },
};

/*
 * Time spent copying and zeroing: a copy engine's work on a GPU. Each
 * consumer thread copies on its own channel, so copies run at once, and
 * queued ones are done at once (the host's copies are never late).
 */
static uint64_t copy_ns;

static int copy_read(void *io, uint32_t chan, void *dst, uint64_t addr,
		     size_t n)
{
	uint64_t t0 = now_ns();

	(void)io, (void)chan;
	memcpy(dst, (void *)(uintptr_t)addr, n);
	__atomic_fetch_add(&copy_ns, now_ns() - t0, __ATOMIC_RELAXED);
	return 0;
}

static int copy_write(void *io, uint32_t chan, uint64_t addr, const void *src,
		      size_t n)
{
	return copy_read(io, chan, (void *)(uintptr_t)addr,
			 (uint64_t)(uintptr_t)src, n);
}

static int copy_zero(void *io, uint32_t chan, uint64_t addr, size_t n)
{
	uint64_t t0 = now_ns();

	(void)io, (void)chan;
	memset((void *)(uintptr_t)addr, 0, n);
	__atomic_fetch_add(&copy_ns, now_ns() - t0, __ATOMIC_RELAXED);
	return 0;
}

static int copy_sync(void *io, uint32_t chan)
{
	(void)io, (void)chan;
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

/* A batch callback's work: read every record's every byte (a checksum). */
static int sum_batch(void *user, const struct egpu_record *recs, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		sum_record(&s, recs[i].data, recs[i].size);
	__atomic_fetch_add((uint64_t *)user, s, __ATOMIC_RELAXED);
	return 0;
}

/* Fill every shard with records as @cf says. */
static void fill_shards(struct dev_ring *view, const struct config *cf)
{
	static uint8_t payloads[WARP * 256];

	for (uint32_t sm = 0; sm < SHARDS; sm++)
		while (cf->batches ?
		       model_produce_batch(view, sm, payloads, WARP, cf->len) :
		       model_produce(view, sm, payloads, cf->len))
			;
}

/*
 * Seconds to drain @records from full shards as @cf says, @threads
 * threads; *@copy_secs of them spent in the copier.
 */
static double drain(const struct config *cf, uint32_t threads,
		    uint64_t *records, double *copy_secs)
{
	struct map_spec spec = { .name = "bench", .type = EGPU_MAP_RINGBUF,
				     .max_entries = RING_BYTES,
				     .flags = EGPU_F_RING_DEVICE };
	struct ring_copier c = { .read = copy_read, .write = copy_write,
				 .zero = copy_zero, .sync = copy_sync,
				 .alloc = copy_alloc,
				 .free = copy_free };
	uint64_t sums[RING_READERS_MAX] = { 0 };
	EGPU_OPTS(egpu_ringbuf_opts, o, .batch_fn = sum_batch);
	struct ring_part parts[RING_READERS_MAX];
	struct ring_pool *pool = NULL;
	struct rb_batch *batch = NULL;
	struct event_ring *r;
	struct dev_ring view;
	uint8_t *store, *mirror;
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
	    (threads > 1 && ring_pool_new(threads, &pool)) ||
	    (cf->how != PER_RECORD && rb_batch_new(&o, &sums[0], threads, &batch)))
		return -1;
	ring_bind_copier(r, &c, (uintptr_t)&view);
	for (uint32_t k = 0; k < threads; k++) {
		parts[k] = batch ? rb_batch_part(batch, k) :
			(struct ring_part){ .fn = sum_record, .user = &sums[k] };
		if (cf->how == GATHERED)
			parts[k].take_batch = NULL; /* each record on its own */
	}
	*records = 0;
	copy_ns = 0;
	for (int round = 0; round < ROUNDS; round++) {
		uint64_t t0;

		fill_shards(&view, cf);
		t0 = now_ns();
		for (int n; (n = ring_consume_parts(r, parts, threads, pool)) > 0;)
			*records += (uint64_t)n;
		secs += (double)(now_ns() - t0) / 1e9;
	}
	*copy_secs = (double)copy_ns / 1e9;
	rb_batch_free(batch);
	ring_pool_free(pool);
	ring_free(r);
	free(store);
	free(mirror);
	free(lines);
	return secs;
}

/* Records/s of the rest, 1 thread: what the CPU does besides copying. */
static void print_rest(uint64_t records, double secs, double copy_secs,
		       uint32_t threads)
{
	if (threads == 1)
		printf(" %.1f M |\n", (double)records / (secs - copy_secs) / 1e6);
	else
		printf(" - |\n");
}

int main(int argc, char **argv)
{
	static const char *const how[] = { "callback per record",
					   "batches, each record gathered",
					   "batches, warp batches whole" };
	uint32_t max = argc > 1 ? (uint32_t)atoi(argv[1]) : 2;

	printf("| record | made | delivery | threads | records/s | payload GB/s | records/s, copies excluded |\n"
	       "|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
		for (uint32_t t = 1; t <= max && t <= RING_READERS_MAX; t++) {
			const struct config *cf = &configs[i];
			uint64_t records;
			double copy_secs, secs = drain(cf, t, &records, &copy_secs);

			if (secs <= 0) {
				fprintf(stderr, "bench failed: %s\n", egpu_errmsg());
				return 1;
			}
			printf("| %u B | %s | %s | %u | %.1f M | %.2f |", cf->len,
			       cf->batches ? "warp batches of 32" : "one by one",
			       how[cf->how], t, (double)records / secs / 1e6,
			       (double)records * cf->len / secs / 1e9);
			print_rest(records, secs, copy_secs, t);
		}
	return 0;
}
