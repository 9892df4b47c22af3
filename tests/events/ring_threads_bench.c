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
 * part): what the consumer's own work sustains. Spans (bpf_egpu_trace_span's
 * records, a lossless ring's of 32 bytes and full 4 KiB ones) are taken
 * by a callback per span, decoded per span (egpu_span_next), as chunks
 * (egpu_ringbuf_opts.chunk_fn) or into a file from chunks. Not a test:
 * `ring_threads_bench [MAX_THREADS [LATENCY_US [BATCHED]]]` prints a
 * Markdown table (docs/events.md, "Consumer threads"); LATENCY_US, spun
 * per wait for copies, stands for what a GPU copy costs besides its
 * bytes; BATCHED 0 makes every copy wait on its own (no read_async, as
 * before rounds), else a round's copies wait once.
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
#include "maps/span_layout.h"
#include "ring_model.h"

#define SHARDS 32
#define RING_BYTES (SHARDS * (1u << 20))
#define ROUNDS 8
#define WARP 32

enum consumer { PER_RECORD, GATHERED, WHOLE_BATCHES, SPAN_DECODED, CHUNKS,
		FILE_CHUNKS };

/*
 * One row: records of @len bytes, made one by one or in warps' batches,
 * or (@span) spans of @len bytes of affine records of a full warp, as
 * bpf_egpu_trace_span makes them (24: a lossless ring's, one record).
 */
struct config {
	uint32_t len;
	bool batches;
	enum consumer how;
	bool span;
};

static const struct config configs[] = {
	{ 24, false, PER_RECORD, true }, { 24, false, SPAN_DECODED, true },
	{ 24, false, CHUNKS, true }, { 24, false, FILE_CHUNKS, true },
	{ 4088, false, SPAN_DECODED, true }, { 4088, false, CHUNKS, true },
	{ 16, false, PER_RECORD, false }, { 64, false, PER_RECORD, false },
	{ 256, false, PER_RECORD, false },
	{ 16, true, PER_RECORD, false }, { 16, true, GATHERED, false },
	{ 16, true, WHOLE_BATCHES, false },
	{ 64, true, GATHERED, false }, { 64, true, WHOLE_BATCHES, false },
	{ 256, true, GATHERED, false }, { 256, true, WHOLE_BATCHES, false },
};

/*
 * Time spent copying and zeroing: a copy engine's work on a GPU. Each
 * consumer thread copies on its own channel, so copies run at once, and
 * queued ones are done at once (the host's copies are never late).
 */
static uint64_t copy_ns;
/*
 * What a copy that is waited for costs besides its bytes (a driver call
 * and the wait on the stream: microseconds on a GPU), spun on the
 * calling thread: `ring_threads_bench MAX LATENCY_US`.
 */
static uint64_t latency_ns;
/* Whether copies are queued and waited for once a round (as on a GPU). */
static bool batched = true;
/* A mirror as ring_dev_alloc makes one for these shards: 16 MiB. */
#define MIRROR_BYTES (16u << 20)

static void spin_ns(uint64_t ns)
{
	uint64_t t0 = now_ns();

	while (now_ns() - t0 < ns)
		;
}

static int copy_read(void *io, uint32_t chan, void *dst, uint64_t addr,
		     size_t n)
{
	uint64_t t0 = now_ns();

	(void)io, (void)chan;
	memcpy(dst, (void *)(uintptr_t)addr, n);
	spin_ns(latency_ns);
	__atomic_fetch_add(&copy_ns, now_ns() - t0, __ATOMIC_RELAXED);
	return 0;
}

/* Queued on a GPU: its latency is not waited for. */
static int copy_write(void *io, uint32_t chan, uint64_t addr, const void *src,
		      size_t n)
{
	uint64_t t0 = now_ns();

	(void)io, (void)chan;
	memcpy((void *)(uintptr_t)addr, src, n);
	__atomic_fetch_add(&copy_ns, now_ns() - t0, __ATOMIC_RELAXED);
	return 0;
}

static int copy_zero(void *io, uint32_t chan, uint64_t addr, size_t n)
{
	uint64_t t0 = now_ns();

	(void)io, (void)chan;
	memset((void *)(uintptr_t)addr, 0, n);
	__atomic_fetch_add(&copy_ns, now_ns() - t0, __ATOMIC_RELAXED);
	return 0;
}

/* Queued: its latency is paid once, at the next sync (batched copies). */
static int copy_read_async(void *io, uint32_t chan, void *dst, uint64_t addr,
			   size_t n)
{
	return copy_write(io, chan, (uint64_t)(uintptr_t)dst,
			  (const void *)(uintptr_t)addr, n);
}

static int copy_sync(void *io, uint32_t chan)
{
	uint64_t t0 = now_ns();

	(void)io, (void)chan;
	spin_ns(latency_ns);
	__atomic_fetch_add(&copy_ns, now_ns() - t0, __ATOMIC_RELAXED);
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

/*
 * A span's work, as mem_trace's consumer does it: every record decoded
 * (egpu_span_next: each lane's address), the addresses summed.
 */
static int decode_span(void *user, const void *data, size_t size)
{
	struct egpu_span_iter it;
	struct egpu_warp_rec rec;
	uint64_t s = 0;
	int got = egpu_span_begin(&it, data, size, NULL);

	while (got >= 0 && (got = egpu_span_next(&it, &rec)) == 1) {
		for (uint32_t m = rec.mask; m; m &= m - 1)
			s += rec.addr[__builtin_ctz(m)];
	}
	*(uint64_t *)user += s;
	return got < 0 ? got : 0;
}

/* A chunk's work: read every byte once (a checksum), no call per record. */
static int sum_chunk(void *user, const void *data, size_t size)
{
	return sum_record(user, data, size);
}

/* A span of @len payload bytes: its owner, then affine full-warp records. */
static void span_payload(uint8_t *p, uint32_t len)
{
	struct span_info si = { .block = 7, .warp = 3, .smid = 1 };

	memset(p, 0, len);
	memcpy(p, &si, sizeof(si));
	for (uint32_t off = sizeof(si), k = 0; off + SPAN_SLOT <= len;
	     off += SPAN_SLOT, k++) {
		uint64_t w[2] = { span_word0(SPAN_AFFINE, 0, 1, 4, 9, ~0u),
				  span_affine_w1(0x7f0000000000ull + 128 * k, 4) };

		memcpy(p + off, w, sizeof(w));
	}
}

/* A span's record: published as one (RING_SPAN). */
static bool produce_span(struct dev_ring *view, uint32_t sm,
			 const uint8_t *payload, uint32_t len)
{
	uint8_t *rec = model_reserve_on(view, sm, ring_record_size(len), 1);

	if (!rec)
		return false;
	memcpy(rec + RING_HDR_SIZE, payload, len);
	model_publish(rec, len, RING_COMMIT | RING_SPAN);
	return true;
}

/* Fill every shard with records as @cf says. */
static void fill_shards(struct dev_ring *view, const struct config *cf)
{
	static uint8_t payloads[WARP * 256 > 4096 ? WARP * 256 : 4096];

	if (cf->span)
		span_payload(payloads, cf->len);
	for (uint32_t sm = 0; sm < SHARDS; sm++)
		while (cf->span ? produce_span(view, sm, payloads, cf->len) :
		       cf->batches ?
		       model_produce_batch(view, sm, payloads, WARP, cf->len) :
		       model_produce(view, sm, payloads, cf->len))
			;
}

/* Consumer thread @k's part for @cf; @batch the gatherer if one is made. */
static struct ring_part part_for(const struct config *cf, struct rb_batch *batch,
				 uint32_t k, uint64_t *sum)
{
	struct ring_part p = batch ? rb_batch_part(batch, k) :
		(struct ring_part){ .fn = sum_record, .user = sum };

	if (cf->how == GATHERED)
		p.take_batch = NULL; /* each record on its own */
	if (cf->how == SPAN_DECODED)
		p.fn = decode_span;
	if (cf->how == CHUNKS)
		p = (struct ring_part){ .chunk = sum_chunk, .user = sum };
	return p;
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
				 .read_async = batched ? copy_read_async : NULL,
				 .alloc = copy_alloc,
				 .free = copy_free };
	uint64_t sums[RING_READERS_MAX] = { 0 };
	EGPU_OPTS(egpu_ringbuf_opts, o, .batch_fn = sum_batch);
	bool gathers = cf->how == GATHERED || cf->how == WHOLE_BATCHES ||
		       cf->how == FILE_CHUNKS;
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
	mirror = malloc(MIRROR_BYTES);
	lines = malloc(ring_dev_lines_len(r));
	if (!store || !mirror || !lines ||
	    ring_dev_start(r, (uintptr_t)store, mirror, MIRROR_BYTES, lines, &view) ||
	    ring_make_readers(r, threads) ||
	    (threads > 1 && ring_pool_new(threads, &pool)) ||
	    (cf->how == FILE_CHUNKS &&
	     (o.batch_fn = NULL, o.path = "/dev/null", 0)) ||
	    (gathers && rb_batch_new(&o, &sums[0], threads, &batch)))
		return -1;
	ring_bind_copier(r, &c, (uintptr_t)&view);
	for (uint32_t k = 0; k < threads; k++)
		parts[k] = part_for(cf, batch, k, &sums[k]);
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
					   "batches, warp batches whole",
					   "callback per span, decoded",
					   "chunks (chunk_fn)",
					   "file from chunks (/dev/null)" };
	uint32_t max = argc > 1 ? (uint32_t)atoi(argv[1]) : 2;

	latency_ns = argc > 2 ? (uint64_t)(atof(argv[2]) * 1000) : 0;
	batched = argc <= 3 || atoi(argv[3]);

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
			       cf->span ? "spans" :
			       cf->batches ? "warp batches of 32" : "one by one",
			       how[cf->how], t, (double)records / secs / 1e6,
			       (double)records * cf->len / secs / 1e9);
			print_rest(records, secs, copy_secs, t);
		}
	return 0;
}
