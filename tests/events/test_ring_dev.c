// SPDX-License-Identifier: MIT
/*
 * Rings whose records live in GPU memory (lib/maps/ring_dev.c), without a
 * GPU: host memory plays the GPU memory, behind a copier that reads it the
 * way a copy engine may (here backwards, the worst order for a consumer
 * that trusted one copy), and host threads play the GPU's producers. The
 * consumer's windows, wraparound into the tail pad, records published
 * while a copy runs, drops, the switch from the CPU back end's records,
 * copy failures, and rings of many shards: each shard's order, wraparound
 * and drops, busy shards not holding others back, a pass draining all.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "api/ringbuf_batch.h"
#include "maps/ring.h"
#include "maps/ring_pool.h"
#include "maps/span_layout.h"
#include "egpu/bpf_maps.h" /* after egpu.h: EGPU_F_RING_DEVICE only */
#include "ring_model.h"
#include "test_util.h"

/* Copies in and fills a channel holds before it runs them. */
#define QUEUE_MAX 8

/* GPU memory played by host memory: an address is a host pointer. */
struct sim {
	struct event_ring *r;
	struct dev_ring view; /* the map's data: producer positions */
	uint8_t *store;
	uint8_t *mirror; /* page-locked on a GPU, like lines: */
	uint64_t *lines;
	size_t mirror_len, lines_len;
	uint64_t reads, read_bytes;
	bool fail, fail_writes; /* copies out; copies in and fills */
	/*
	 * Called once, when a copy (of @midway_src if set) has read down to
	 * byte @midway_at of it (up to it, if the copy reads @forwards).
	 */
	void (*midway)(struct sim *s);
	size_t midway_at;
	uint64_t midway_src;
	bool forwards; /* copies read from their start (else backwards) */
	/*
	 * If set, copies out read their words in a random order and call it
	 * before each word (the weak-visibility producers below).
	 */
	void (*between)(struct sim *s);
	struct weak *weak;
	/*
	 * Copies one at a time (simpler than channels at once). Copies in
	 * and fills wait in their channel's queue until its next copy out
	 * or sync, as on a stream (dev_map_copy.c): the consumer must not
	 * count on them sooner, nor change what they copy meanwhile.
	 */
	pthread_mutex_t lock;
	struct queued {
		uint64_t addr;
		void *dst;           /* a copy out (read_async) */
		const uint64_t *src; /* NULL (and no dst): a fill with zeros */
		uint64_t value;      /* *src when queued */
		size_t n;
	} queue[RING_READERS_MAX][QUEUE_MAX];
	uint32_t queued[RING_READERS_MAX];
	/* Mirrors the ring asked for, for consumer threads beyond the first. */
	uint8_t *extra[RING_READERS_MAX];
	uint32_t nextra;
	int fail_shard; /* copies out of this shard's records fail (>= 0) */
};

static void *ptr(uint64_t addr)
{
	return (void *)(uintptr_t)addr;
}

static uint64_t rnd(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

static uint64_t *weak_rng(struct sim *s);

/*
 * A copy engine at its worst: 8-byte pieces in a random order, the
 * producers going on between any two of them (s->between).
 */
static int shuffled_read(struct sim *s, uint8_t *dst, const uint8_t *src,
			 size_t n)
{
	size_t pieces = (n + 7) / 8, *order = malloc(pieces * sizeof(*order));

	ck_assert_ptr_nonnull(order);
	for (size_t i = 0; i < pieces; i++)
		order[i] = i;
	for (size_t i = pieces; i > 1; i--) {
		size_t j = rnd(weak_rng(s)) % i, t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < pieces; i++) {
		size_t at = order[i] * 8, k = n - at < 8 ? n - at : 8;

		s->between(s);
		memcpy(dst + at, src + at, k);
	}
	free(order);
	return 0;
}

/* Whether [p, p + n) lies in [buf, buf + len). */
static bool inside(const void *p, size_t n, const void *buf, size_t len)
{
	uintptr_t a = (uintptr_t)p, b = (uintptr_t)buf;

	return a >= b && n <= len && a - b <= len - n;
}

/*
 * Backwards, a word at a time: a record's header is read last. Copies of
 * more than a word (a header, a position: the map stages those) land in
 * the mirror or the lines' copy, the page-locked memory the ring got: a
 * copy into pageable memory may wait for the application's kernel.
 */
/* Whether a copy of @n bytes may land at @dst: memory the ring was given. */
static bool page_locked(const struct sim *s, const void *dst, size_t n)
{
	for (uint32_t k = 0; k < s->nextra; k++)
		if (inside(dst, n, s->extra[k], s->mirror_len))
			return true;
	return n <= 8 || inside(dst, n, s->mirror, s->mirror_len) ||
	       inside(dst, n, s->lines, s->lines_len);
}

/* Whether @addr lies in the records of shard s->fail_shard. */
static bool in_failing_shard(const struct sim *s, uint64_t addr)
{
	uint64_t at;

	if (s->fail_shard < 0)
		return false;
	at = ring_shard_data(&s->view, (uint32_t)s->fail_shard);
	return addr >= at && addr < at + s->view.stride;
}

/* The midway hook, if it waits for byte @at of a copy of @addr. */
static void sim_midway(struct sim *s, uint64_t addr, size_t at)
{
	void (*fn)(struct sim *) = s->midway;

	if (!fn || at != s->midway_at || (s->midway_src && s->midway_src != addr))
		return;
	s->midway = NULL; /* it may set another */
	fn(s);
}

static int sim_read_locked(struct sim *s, void *dst, uint64_t addr, size_t n)
{
	const uint8_t *src = ptr(addr);
	size_t i = n;

	if (s->fail || in_failing_shard(s, addr))
		return err_set(EGPU_ECUDA, "sim: copy failed");
	ck_assert_msg(page_locked(s, dst, n),
		      "a copy of %zu bytes into memory the ring was not given", n);
	s->reads++;
	s->read_bytes += n;
	if (s->between)
		return shuffled_read(s, dst, src, n);
	if (s->forwards) {
		for (i = 0; i < n; i += 8) {
			memcpy((uint8_t *)dst + i, src + i, n - i < 8 ? n - i : 8);
			sim_midway(s, addr, i + 8);
		}
		return 0;
	}
	while (i) {
		size_t k = i % 8 ? i % 8 : 8;

		i -= k;
		memcpy((uint8_t *)dst + i, src + i, k);
		sim_midway(s, addr, i);
	}
	return 0;
}

/* Run what channel @chan queued, in order (s->lock held). */
static void sim_run_queue(struct sim *s, uint32_t chan)
{
	for (uint32_t k = 0; k < s->queued[chan]; k++) {
		const struct queued *q = &s->queue[chan][k];

		if (s->between) /* producers go on between two of them */
			s->between(s);
		if (q->dst) { /* checked when queued: cannot fail now */
			ck_assert_int_eq(sim_read_locked(s, q->dst, q->addr, q->n), 0);
			continue;
		}
		if (!q->src) {
			memset(ptr(q->addr), 0, q->n);
			continue;
		}
		ck_assert_msg(*q->src == q->value,
			      "the source of a queued copy changed before it ran");
		memcpy(ptr(q->addr), q->src, q->n);
	}
	s->queued[chan] = 0;
}

static int sim_read(void *io, uint32_t chan, void *dst, uint64_t addr,
		    size_t n)
{
	struct sim *s = io;
	int err;

	ck_assert_uint_lt(chan, RING_READERS_MAX);
	pthread_mutex_lock(&s->lock);
	sim_run_queue(s, chan);
	err = sim_read_locked(s, dst, addr, n);
	pthread_mutex_unlock(&s->lock);
	return err;
}

/*
 * Queue @q on @chan; a full queue runs first (a stream may run early).
 * Copies in fail while s->fail_writes, copies out never here.
 */
static int sim_queue(struct sim *s, uint32_t chan, struct queued q)
{
	int err = 0;

	ck_assert_uint_lt(chan, RING_READERS_MAX);
	pthread_mutex_lock(&s->lock);
	if (s->fail_writes && !q.dst) {
		err = err_set(EGPU_ECUDA, "sim: copy failed");
	} else {
		if (s->queued[chan] == QUEUE_MAX)
			sim_run_queue(s, chan);
		s->queue[chan][s->queued[chan]++] = q;
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* Copies in come from page-locked memory: a position in the lines' copy. */
static int sim_write(void *io, uint32_t chan, uint64_t addr, const void *src,
		     size_t n)
{
	struct sim *s = io;

	ck_assert_uint_eq(n, 8);
	ck_assert(inside(src, n, s->lines, s->lines_len));
	return sim_queue(s, chan, (struct queued){ .addr = addr, .src = src,
						   .value = *(const uint64_t *)src,
						   .n = n });
}

/*
 * A copy out queued: it runs, pieces in any order, when the channel next
 * runs its queue (a sync, or a read), after what was queued before it.
 */
static int sim_read_async(void *io, uint32_t chan, void *dst, uint64_t addr,
			  size_t n)
{
	struct sim *s = io;

	if (s->fail || in_failing_shard(s, addr))
		return err_set(EGPU_ECUDA, "sim: copy failed");
	ck_assert(page_locked(s, dst, n));
	return sim_queue(s, chan, (struct queued){ .addr = addr, .dst = dst,
						   .n = n });
}

static int sim_zero(void *io, uint32_t chan, uint64_t addr, size_t n)
{
	return sim_queue(io, chan, (struct queued){ .addr = addr, .n = n });
}

static int sim_sync(void *io, uint32_t chan)
{
	struct sim *s = io;

	ck_assert_uint_lt(chan, RING_READERS_MAX);
	pthread_mutex_lock(&s->lock);
	sim_run_queue(s, chan);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* A mirror for another consumer thread (made on the consuming thread). */
static void *sim_alloc(void *io, size_t n)
{
	struct sim *s = io;
	void *p = malloc(n);

	pthread_mutex_lock(&s->lock);
	ck_assert_uint_lt(s->nextra, RING_READERS_MAX);
	ck_assert_uint_eq(n, s->mirror_len);
	s->extra[s->nextra++] = p;
	pthread_mutex_unlock(&s->lock);
	return p;
}

static void sim_release(void *io, void *p)
{
	struct sim *s = io;

	for (uint32_t k = 0; k < s->nextra; k++)
		if (s->extra[k] == p)
			s->extra[k] = s->extra[--s->nextra];
	free(p);
}

/* Map flags of the rings sims make besides EGPU_F_RING_DEVICE. */
static uint32_t sim_flags;

/*
 * A lossless sim's wait. The default (1 s) is a GPU's bound on a host
 * that drains; a test sharing two cores with others may leave its
 * consumer off the CPU longer (CI dropped 143,316 records so).
 */
#define SIM_LOSSLESS_WAIT_NS (120 * 1000000000ull)

/* A RINGBUF map of @cap bytes with EGPU_F_RING_DEVICE, unstarted. */
static struct event_ring *dev_ring_map(uint64_t cap)
{
	struct map_spec spec = { .name = "dev", .type = EGPU_MAP_RINGBUF,
				     .max_entries = (uint32_t)cap,
				     .flags = EGPU_F_RING_DEVICE | sim_flags };
	struct event_ring *r;

	ck_assert_int_eq(ring_new_for_map(&spec, &r), 0);
	ck_assert(ring_in_device_memory(r));
	if (sim_flags & EGPU_F_RING_LOSSLESS)
		ck_assert_int_eq(ring_set_wait(r, SIM_LOSSLESS_WAIT_NS), 0);
	return r;
}

/* Start s->r in GPU memory played by new host memory, @mirror_len mirror. */
static void sim_start(struct sim *s, size_t mirror_len)
{
	s->store = calloc(1, ring_dev_store_len(s->r));
	s->mirror_len = mirror_len;
	s->mirror = malloc(mirror_len);
	s->lines_len = ring_dev_lines_len(s->r);
	s->lines = malloc(s->lines_len);
	ck_assert_ptr_nonnull(s->store);
	ck_assert_ptr_nonnull(s->mirror);
	ck_assert_ptr_nonnull(s->lines);
	ck_assert_int_eq(ring_dev_start(s->r, (uintptr_t)s->store, s->mirror,
					mirror_len, s->lines, &s->view), 0);
}

/*
 * Such a ring started with a @mirror_len mirror, its shards fitted to a
 * GPU of @sms SMs (0: as many as ring_shards_for() says).
 */
static void sim_new_sms(struct sim *s, uint64_t cap, size_t mirror_len,
			uint32_t sms)
{
	struct ring_copier c = { .read = sim_read, .write = sim_write,
				 .zero = sim_zero, .sync = sim_sync, .io = s,
				 .read_async = sim_read_async,
				 .alloc = sim_alloc,
				 .free = sim_release };
	uint32_t shards;

	*s = (struct sim){ .r = dev_ring_map(cap), .fail_shard = -1 };
	pthread_mutex_init(&s->lock, NULL);
	if (sms)
		ring_dev_fit_shards(s->r, sms);
	shards = ring_dev_shards(s->r);
	sim_start(s, mirror_len);
	ck_assert_uint_eq(s->view.flags & ~RING_LOSSLESS, RING_IN_DEVICE_MEMORY);
	ck_assert_uint_eq(s->view.shards, shards);
	if (!sms)
		ck_assert_uint_eq(s->view.mask + 1, cap / shards);
	ck_assert_ptr_eq(ptr(s->view.data),
			 s->store + ring_shard_lines_len(shards));
	/* The last shard's tail pad ends the store. */
	ck_assert_uint_eq(ring_shard_data(&s->view, shards - 1) + s->view.stride,
			  (uintptr_t)s->store + ring_dev_store_len(s->r));
	ring_bind_copier(s->r, &c, (uintptr_t)&s->view);
}

static void sim_new(struct sim *s, uint64_t cap, size_t mirror_len)
{
	sim_new_sms(s, cap, mirror_len, 0);
}

static void sim_free(struct sim *s)
{
	ring_free(s->r);
	ck_assert_uint_eq(s->nextra, 0); /* the ring freed its mirrors */
	pthread_mutex_destroy(&s->lock);
	free(s->store);
	free(s->mirror);
	free(s->lines);
}

/* A record of @len bytes saying @seq from a thread on SM @sm. */
static bool put_on(struct sim *s, uint32_t sm, uint32_t len, uint64_t seq)
{
	uint8_t buf[1024];

	fill(buf, len, seq);
	return model_produce(&s->view, sm, buf, len);
}

static bool put(struct sim *s, uint32_t len, uint64_t seq)
{
	return put_on(s, 0, len, seq);
}

static struct ring_counters *counters(const struct sim *s, uint32_t shard)
{
	return ptr(ring_shard_counters(&s->view, shard));
}

/*
 * Many laps of records of varying sizes, some running into the tail pad,
 * through a mirror of @mirror_len bytes: all arrive in order and intact,
 * the refused ones counted as drops.
 */
static void laps(uint64_t cap, size_t mirror_len)
{
	struct sim s;
	struct sink k = { 0 };
	uint64_t seq = 0, bytes = 0, full = 0;

	sim_new(&s, cap, mirror_len);
	while (seq < 20000) {
		uint32_t len = 8 + (uint32_t)(seq * 37 % 300);

		if (put(&s, len, seq)) {
			seq++;
			continue;
		}
		full++; /* refused while full: consume, then send it again */
		ck_assert_int_gt(ring_consume(s.r, take, &k, &bytes), 0);
	}
	while (ring_consume(s.r, take, &k, &bytes) > 0)
		;
	ck_assert_uint_eq(k.count, 20000);
	ck_assert_uint_gt(bytes, 5 * cap); /* laps */
	ck_assert_uint_eq(ring_drops(s.r), full);
	model_assert_settled(&s.view);
	sim_free(&s);
}

START_TEST(order_and_wraparound_whole_ring_mirror)
{
	laps(1024, 2048);
}
END_TEST

/* A 64 KiB mirror for a 256 KiB ring: several windows per lap. */
START_TEST(order_and_wraparound_window_by_window)
{
	laps(256 * 1024, 64 * 1024);
}
END_TEST

/* Shard @i's first @upto bytes of records are zeroed, producers told so. */
static void assert_shard_given_back(const struct sim *s, uint32_t i,
				    uint64_t upto)
{
	const uint8_t *data = ptr(ring_shard_data(&s->view, i));

	ck_assert_uint_eq(*(const uint64_t *)ptr(ring_shard_cons(&s->view, i)),
			  upto);
	for (size_t k = 0; k < upto; k++)
		ck_assert_uint_eq(data[k], 0);
}

static void assert_given_back(const struct sim *s, uint64_t upto)
{
	assert_shard_given_back(s, 0, upto);
}

/*
 * Records published (and counted) before the pass are copied once,
 * after two copies of the shards' counter lines (one line here: the
 * published-bytes word, then the producer position); producers see the
 * space again.
 */
START_TEST(consumed_space_is_zeroed_and_given_back)
{
	struct sim s;
	struct sink k = { 0 };

	sim_new(&s, 4096, 8192);
	for (uint64_t i = 0; i < 10; i++)
		ck_assert(put(&s, 56, i));
	ck_assert(ring_ready(s.r));
	s.read_bytes = 0;
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), 10);
	/* the counter line twice, then the records once */
	ck_assert_uint_eq(s.read_bytes, 2 * RING_LINE + 10 * 64);
	assert_given_back(&s, 640);
	ck_assert(!ring_ready(s.r));
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), 0);
	sim_free(&s);
}
END_TEST

/* The second record, at position 208, reserved and not yet written. */
#define SECOND 208

static void publish_second(struct sim *s)
{
	uint8_t *rec = (uint8_t *)ptr(s->view.data) + SECOND;

	fill(rec + RING_HDR_SIZE, 200, 1);
	model_publish(rec, 200, RING_COMMIT);
}

/*
 * A copy that reads a payload before its producer wrote it and the header
 * after it published it must not deliver a torn record: the consumer hands
 * over only records it saw published in an earlier, completed copy.
 */
START_TEST(record_published_during_a_copy_is_whole)
{
	struct sim s;
	struct sink k = { 0 };

	sim_new(&s, 4096, 8192);
	ck_assert(put(&s, 200, 0));
	ck_assert_uint_eq(counters(&s, 0)->prod, SECOND);
	/* Reserve the second, not yet written. */
	ck_assert_uint_eq(model_reserve_pos(&s.view, 0, 208, 1), SECOND);
	/* Published after the copy read its payload, before its header. */
	s.midway = publish_second;
	s.midway_at = SECOND + RING_HDR_SIZE;
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), 2);
	ck_assert_uint_eq(k.next, 2);
	sim_free(&s);
}
END_TEST

/* The first record, reserved before the pass, published now (uncounted). */
static void publish_first(struct sim *s)
{
	uint8_t *rec = ptr(s->view.data);

	fill(rec + RING_HDR_SIZE, 56, 0);
	model_publish(rec, 56, RING_COMMIT);
}

/*
 * Between the producer position and the published-bytes word of a
 * forwards copy of the counter line: a record after the first, of its
 * size, claimed and published (counted); then the first is published
 * during the copy of the records, after its body was read.
 */
static void publish_second_counted(struct sim *s)
{
	uint8_t buf[56];

	fill(buf, 56, 1);
	ck_assert(model_produce(&s->view, 0, buf, 56));
	s->forwards = false;
	s->midway = publish_first;
	s->midway_at = RING_HDR_SIZE;
	s->midway_src = s->view.data;
}

/*
 * The published-bytes word counts only records published before the
 * producer position is read if it is read in an earlier copy: read in
 * the same copy, after the position, it may count a record claimed since
 * and so match the position while a record below it is unpublished, which
 * its producer may publish while the records are copied (a single copy
 * would hand it over torn).
 */
START_TEST(published_bytes_read_before_the_position)
{
	struct sim s;
	struct sink k = { 0 };

	sim_new(&s, 4096, 8192);
	ck_assert_uint_eq(model_reserve_pos(&s.view, 0, 64, 1), 0);
	s.forwards = true;
	s.midway = publish_second_counted;
	s.midway_at = 2 * sizeof(uint64_t); /* reserved and prod read */
	s.midway_src = ring_shard_counters(&s.view, 0);
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), 2);
	ck_assert_uint_eq(k.next, 2);
	sim_free(&s);
}
END_TEST

/* A span of 4 slots saying @seq claimed on SM 0, as span_claim leaves it:
 * its header's length stored, unpublished. */
static uint8_t *claim_span(struct sim *s, uint64_t seq)
{
	const uint32_t len = 4 * SPAN_SLOT - RING_HDR_SIZE;
	uint8_t *rec = model_reserve_on(&s->view, 0, 4 * SPAN_SLOT, 1);

	ck_assert_ptr_nonnull(rec);
	fill(rec + RING_HDR_SIZE, len, seq);
	model_publish(rec, len, RING_SPAN | RING_RESERVED_LOCAL);
	return rec;
}

/* span_publish of the span at @rec: counted, as in GPU memory. */
static void publish_span(struct sim *s, uint8_t *rec)
{
	model_publish_on(&s->view, 0, rec, 4 * SPAN_SLOT - RING_HDR_SIZE,
			 RING_COMMIT | RING_SPAN);
}

/*
 * A pass over one shard that hands over @records records and copies
 * @copied bytes of records out (once or twice), besides the counter line
 * twice; ring_copied counts the same.
 */
static void pass_copies(struct sim *s, struct sink *k, int records,
			uint64_t copied)
{
	uint64_t before = ring_copied(s->r);

	s->read_bytes = 0;
	ck_assert_int_eq(ring_consume(s->r, take, k, NULL), records);
	ck_assert_uint_eq(s->read_bytes, 2 * RING_LINE + copied);
	ck_assert_uint_eq(ring_copied(s->r) - before, copied);
}

/*
 * Spans count as bpf_ringbuf_output's records do (span_publish): a shard
 * of published spans is copied once. One span claimed and not published
 * keeps its shard unsettled: the spans before it are copied twice (and
 * it at each pass). Reclaimed (its producer ended), it is taken
 * uncounted, so the pass after that one is settled again.
 */
START_TEST(spans_counted_are_copied_once)
{
	struct sim s;
	struct sink k = { 0 };

	sim_new(&s, 4096, 8192);
	publish_span(&s, claim_span(&s, 0));
	publish_span(&s, claim_span(&s, 1));
	ck_assert_uint_eq(*(uint64_t *)ptr(ring_shard_done(&s.view, 0)), 128);
	pass_copies(&s, &k, 2, 128);
	/* the third published, the fourth open: the third copied twice,
	 * the fourth once more by the round that looks past the third */
	publish_span(&s, claim_span(&s, 2));
	claim_span(&s, 3);
	pass_copies(&s, &k, 1, 128 + 64 + 64);
	pass_copies(&s, &k, 0, 64);
	/* reclaimed: not counted by its producer, so the consumer counts it */
	ring_set_reclaim(s.r, true);
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), 1);
	ring_set_reclaim(s.r, false);
	ck_assert_uint_eq(*(uint64_t *)ptr(ring_shard_done(&s.view, 0)), 192);
	publish_span(&s, claim_span(&s, 4));
	pass_copies(&s, &k, 1, 64);
	ck_assert_uint_eq(k.next, 5);
	sim_free(&s);
}
END_TEST

/* 256 bytes hold four 64-byte records: the rest are dropped and counted. */
START_TEST(drops_are_counted_exactly)
{
	struct sim s;
	struct sink k = { 0 };
	int sent = 0;

	sim_new(&s, 256, 512);
	for (uint64_t i = 0; i < 10; i++)
		sent += put(&s, 56, (uint64_t)sent);
	ck_assert_int_eq(sent, 4);
	ck_assert_uint_eq(ring_drops(s.r), 6);
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), 4);
	for (uint64_t i = 0; i < 4; i++)
		ck_assert(put(&s, 56, k.next + i));
	ck_assert(!put(&s, 56, 99));
	ck_assert_uint_eq(ring_drops(s.r), 7);
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), 4);
	sim_free(&s);
}
END_TEST

/* A callback stopping inside a batch: the next pass copies it again. */
START_TEST(callback_can_stop_inside_a_batch)
{
	struct sim s;
	struct sink k = { .stop_at = 2 };
	uint8_t buf[8 * 24];

	sim_new(&s, 4096, 8192);
	for (uint32_t i = 0; i < 8; i++)
		fill(buf + i * 24, 24, i);
	ck_assert(model_produce_batch(&s.view, 0, buf, 5, 24));
	ck_assert(model_produce_batch(&s.view, 0, buf + 5 * 24, 3, 24));
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), -42);
	ck_assert_uint_eq(k.next, 2);
	ck_assert(ring_ready(s.r));
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), 6);
	ck_assert_uint_eq(k.next, 8);
	ck_assert(!ring_ready(s.r));
	sim_free(&s);
}
END_TEST

/*
 * Records the CPU back end wrote before the ring moved to GPU memory come
 * first, then the GPU's, whose shards start at position 0; CPU producers
 * are refused from the move on.
 */
START_TEST(cpu_records_then_gpu_records)
{
	struct map_spec spec = { .name = "dev", .type = EGPU_MAP_RINGBUF,
				     .max_entries = 4096,
				     .flags = EGPU_F_RING_DEVICE };
	struct ring_copier c = { .read = sim_read, .write = sim_write,
				 .zero = sim_zero, .sync = sim_sync };
	struct sim s = { .fail_shard = -1 };
	struct sink k = { 0 };
	uint8_t buf[40];

	pthread_mutex_init(&s.lock, NULL);
	ck_assert_int_eq(ring_new_for_map(&spec, &s.r), 0);
	for (uint64_t i = 0; i < 3; i++) {
		fill(buf, 40, i);
		ck_assert_int_eq(ring_cpu_output(s.r, buf, 40, 0), 0);
	}
	/* All three, before any GPU. */
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), 3);
	fill(buf, 40, 3);
	ck_assert_int_eq(ring_cpu_output(s.r, buf, 40, 0), 0);
	c.io = &s;
	sim_start(&s, 8192);
	ck_assert_uint_eq(counters(&s, 0)->prod, 0);
	ck_assert_int_eq(ring_cpu_output(s.r, buf, 40, 0), -EBUSY);
	ring_bind_copier(s.r, &c, (uintptr_t)&s.view);
	ck_assert(put(&s, 40, 4));
	ck_assert(put(&s, 40, 5));
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), 3);
	ck_assert_uint_eq(k.next, 6);
	ck_assert_uint_eq(ring_drops(s.r), 0);
	sim_free(&s);
}
END_TEST

/* A failed copy is an error with a message, and nothing is lost. */
START_TEST(copy_failure_is_an_error)
{
	struct sim s;
	struct sink k = { 0 };

	sim_new(&s, 4096, 8192);
	ck_assert(put(&s, 24, 0));
	s.fail = true;
	ck_assert(!ring_ready(s.r));
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), EGPU_ECUDA);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "ring 'dev': copying 128 bytes"));
	s.fail = false;
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), 1);
	sim_free(&s);
}
END_TEST

/*
 * Records handed over whose space could not be given back: the error is
 * returned, and the next pass zeroes that space and writes the position
 * before anything else (nothing delivered twice).
 */
START_TEST(failed_release_is_retried)
{
	struct sim s;
	struct sink k = { 0 };

	sim_new(&s, 4096, 8192);
	for (uint64_t i = 0; i < 3; i++)
		ck_assert(put(&s, 56, i));
	s.fail_writes = true;
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), EGPU_ECUDA);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "giving 192 bytes of shard 0 back"));
	ck_assert_uint_eq(k.next, 3);
	assert_given_back(&s, 0);
	s.fail_writes = false;
	ck_assert(put(&s, 56, 3));
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), 1);
	ck_assert_uint_eq(k.next, 4);
	assert_given_back(&s, 256);
	sim_free(&s);
}
END_TEST

/* A header no producer could write: an error, not a crash. */
START_TEST(impossible_header_is_an_error)
{
	struct sim s;
	struct sink k = { 0 };
	uint64_t bad = (uint64_t)RING_COMMIT << 32 | 5000;

	sim_new(&s, 4096, 8192);
	ck_assert(put(&s, 24, 0));
	memcpy(ptr(s.view.data), &bad, sizeof(bad));
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), EGPU_EFORMAT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "5000"));
	sim_free(&s);
}
END_TEST

/*
 * Host threads play the GPU's producers, records and batches, into 16 KiB
 * while the consumer copies backwards: every record arrives intact, in
 * per-producer order, or is counted as dropped.
 */
START_TEST(concurrent_producers_backwards_copies)
{
	struct sim s;

	sim_new(&s, 16384, 4096 + 16384);
	producers_against_consumer(s.r, &s.view);
	sim_free(&s);
}
END_TEST

/* ---- rings of many shards ---- */

static int count_record(void *user, const void *data, size_t size)
{
	uint64_t *n = user, seq;

	ck_assert_msg(intact(data, (uint32_t)size, &seq), "record torn");
	++*n;
	return 0;
}

/* Producers by SM: in 16 shards, SMs 0, 16 and 128 share shard 0. */
static const uint32_t sm_of[] = { 0, 1, 5, 16, 17, 128 };
#define SMS (sizeof(sm_of) / sizeof(sm_of[0]))

/* Checks that each producer's records arrive in order, exactly once. */
struct per_sm {
	uint64_t next[SMS];
	uint64_t count;
	uint64_t stop_at; /* return -42 for this record (1-based), 0: never */
};

static int take_per_sm(void *user, const void *data, size_t size)
{
	struct per_sm *p = user;
	uint64_t tag, k, seq;

	ck_assert_uint_ge(size, 8);
	ck_assert_msg(intact(data, (uint32_t)size, &tag), "record torn");
	k = tag >> 48;
	seq = tag & 0xffffffffffffull;
	ck_assert_uint_lt(k, SMS);
	ck_assert_uint_eq(seq, p->next[k]);
	p->next[k]++;
	return ++p->count == p->stop_at ? -42 : 0;
}

/* Producer @k's record @seq of @len bytes, on its SM. */
static bool put_tagged(struct sim *s, uint32_t k, uint32_t len, uint64_t seq)
{
	return put_on(s, sm_of[k], len, (uint64_t)k << 48 | seq);
}

START_TEST(shards_follow_the_ring_size)
{
	ck_assert_uint_eq(ring_shards_for(4096), 1);
	ck_assert_uint_eq(ring_shards_for(64 * 1024), 1);
	ck_assert_uint_eq(ring_shards_for(128 * 1024), 2);
	ck_assert_uint_eq(ring_shards_for(1 << 20), 16);
	ck_assert_uint_eq(ring_shards_for(8 << 20), RING_SHARDS_MAX);
	ck_assert_uint_eq(ring_shards_for(RING_MAX_BYTES), RING_SHARDS_MAX);
}
END_TEST

/*
 * Many laps of every shard used, records of varying sizes from producers
 * sharing shards, through a mirror of @mirror_len bytes: each producer's
 * arrive in order, intact; the refused ones are counted as drops.
 */
static void shard_laps(size_t mirror_len, uint32_t sms, uint32_t shards)
{
	struct sim s;
	struct per_sm p = { 0 };
	uint64_t n = 0, bytes = 0, full = 0, sent[SMS] = { 0 };

	sim_new_sms(&s, 1 << 20, mirror_len, sms);
	ck_assert_uint_eq(ring_dev_shards(s.r), shards);
	ck_assert_uint_eq(ring_max_payload(s.r), RING_RECORD_MAX - RING_HDR_SIZE);
	while (n < 60000) {
		uint32_t k = (uint32_t)(n % SMS), len = 8 + (uint32_t)(n * 37 % 300);

		if (put_tagged(&s, k, len, sent[k])) {
			sent[k]++;
			n++;
			continue;
		}
		full++; /* refused while its shard is full: consume, send again */
		ck_assert_int_gt(ring_consume(s.r, take_per_sm, &p, &bytes), 0);
	}
	while (ring_consume(s.r, take_per_sm, &p, &bytes) > 0)
		;
	ck_assert_uint_eq(p.count, n);
	for (uint32_t k = 0; k < SMS; k++)
		ck_assert_uint_eq(p.next[k], sent[k]);
	ck_assert_uint_gt(full, 0);
	ck_assert_uint_eq(ring_drops(s.r), full);
	ck_assert_uint_gt(counters(&s, 0)->prod, 20 * (s.view.mask + 1)); /* laps */
	model_assert_settled(&s.view);
	sim_free(&s);
}

/* A mirror of a record at most (a shard here): windows end inside laps. */
START_TEST(shards_wrap_window_by_window)
{
	shard_laps(RING_RECORD_MAX, 0, 16);
}
END_TEST

START_TEST(shards_wrap_whole_shard_mirror)
{
	shard_laps(64 * 1024 + RING_RECORD_MAX, 0, 16);
}
END_TEST

/*
 * A GPU of 20 SMs: 20 shards of 64 KiB (1/16 of the ring: the power of two
 * nearest 20), %smid modulo 20 picking a thread's.
 */
START_TEST(a_shard_per_sm_not_a_power_of_two)
{
	shard_laps(RING_RECORD_MAX, 20, 20);
}
END_TEST

/* Shard size of a ring of @cap bytes fitted to @sms SMs: 0 if not @shards. */
static uint64_t fitted(uint64_t cap, uint32_t sms, uint32_t shards)
{
	struct event_ring *r = dev_ring_map(cap);
	uint64_t lines = ring_shard_lines_len(shards), size = 0;

	ring_dev_fit_shards(r, sms);
	if (ring_dev_shards(r) == shards)
		size = (ring_dev_store_len(r) - lines) / shards -
		       (ring_max_payload(r) + RING_HDR_SIZE);
	ring_free(r);
	return size;
}

START_TEST(shards_fit_the_gpu)
{
	const uint64_t cap = 16 << 20;

	ck_assert_uint_eq(fitted(cap, 132, 132), cap / 128); /* H100 */
	ck_assert_uint_eq(fitted(cap, 108, 108), cap / 128); /* 0.84 cap */
	ck_assert_uint_eq(fitted(cap, 46, 46), cap / 64);
	ck_assert_uint_eq(fitted(cap, 45, 45), cap / 32);    /* 1.41 cap */
	ck_assert_uint_eq(fitted(cap, 300, 128), cap / 128); /* shared */
	ck_assert_uint_eq(fitted(cap, 0, 1), cap);
	ck_assert_uint_eq(fitted(1 << 20, 132, 16), 64 * 1024);
	ck_assert_uint_eq(fitted(1 << 20, 20, 20), 64 * 1024);
	ck_assert_uint_eq(fitted(4096, 132, 1), 4096);
}
END_TEST

/*
 * A full shard drops and counts, while the others still take records;
 * the drop count is the sum of the shards'. (4 shards of 64 KiB.)
 */
START_TEST(full_shard_drops_alone)
{
	struct sim s;
	struct per_sm p = { 0 };
	uint64_t seq = 0;

	sim_new(&s, 256 * 1024, RING_RECORD_MAX);
	ck_assert_uint_eq(ring_dev_shards(s.r), 4);
	while (put_tagged(&s, 0, 56, seq))
		seq++;
	ck_assert_uint_eq(seq, 64 * 1024 / 64);
	ck_assert(!put_tagged(&s, 0, 56, seq));
	ck_assert(!put_tagged(&s, 3, 56, 0)); /* SM 16: shard 0 too */
	for (uint64_t i = 0; i < 10; i++)
		ck_assert(put_tagged(&s, 1, 56, i));
	ck_assert_uint_eq(*(uint64_t *)ptr(ring_shard_drops(&s.view, 0)), 3);
	ck_assert_uint_eq(*(uint64_t *)ptr(ring_shard_drops(&s.view, 1)), 0);
	ck_assert_uint_eq(ring_drops(s.r), 3);
	ck_assert_int_eq(ring_consume(s.r, take_per_sm, &p, NULL), 1024 + 10);
	assert_shard_given_back(&s, 0, 64 * 1024);
	ck_assert(put_tagged(&s, 0, 56, seq));
	ck_assert_int_eq(ring_consume(s.r, take_per_sm, &p, NULL), 1);
	ck_assert_uint_eq(ring_drops(s.r), 3);
	sim_free(&s);
}
END_TEST

/*
 * One pass drains every shard: one copy of the counter lines, then two
 * copies of each shard's records; every shard is given back.
 */
START_TEST(one_pass_drains_every_shard)
{
	struct sim s;
	uint64_t got = 0;
	uint8_t buf[56];

	sim_new(&s, 1 << 20, RING_RECORD_MAX);
	for (uint32_t sm = 0; sm < 16; sm++)
		for (uint64_t i = 0; i < 5; i++) {
			fill(buf, 56, sm * 100 + i);
			ck_assert(model_produce(&s.view, sm, buf, 56));
		}
	ck_assert(ring_ready(s.r));
	s.reads = 0;
	s.read_bytes = 0;
	ck_assert_int_eq(ring_consume(s.r, count_record, &got, NULL), 80);
	ck_assert_uint_eq(got, 80);
	/* Published before the pass: the lines twice, each shard once. */
	ck_assert_uint_eq(s.reads, 2 + 16);
	ck_assert_uint_eq(s.read_bytes, 2 * 16 * RING_LINE + 80 * 64);
	for (uint32_t i = 0; i < 16; i++)
		assert_shard_given_back(&s, i, 5 * 64);
	ck_assert(!ring_ready(s.r));
	sim_free(&s);
}
END_TEST

/*
 * A shard whose next record is reserved, not yet submitted, holds back
 * its own later records only: the other shards are drained.
 */
START_TEST(busy_shard_holds_back_only_itself)
{
	struct sim s;
	struct per_sm p = { 0 };
	struct ring_hdr *busy;
	uint8_t buf[56];

	sim_new(&s, 1 << 20, RING_RECORD_MAX);
	ck_assert(put_tagged(&s, 1, 56, 0));
	/* Reserved in GPU memory: the header's mark only, no RING_COMMIT. */
	fill(buf, 56, (uint64_t)1 << 48 | 1);
	ck_assert(model_produce(&s.view, sm_of[1], buf, 56));
	busy = ptr(ring_shard_data(&s.view, 1) + 64);
	busy->flags = RING_RESERVED_LOCAL;
	ck_assert(put_tagged(&s, 1, 56, 2));
	for (uint64_t i = 0; i < 3; i++) {
		ck_assert(put_tagged(&s, 0, 56, i));
		ck_assert(put_tagged(&s, 2, 56, i)); /* SM 5: shard 5 of 16 */
	}
	ck_assert_int_eq(ring_consume(s.r, take_per_sm, &p, NULL), 1 + 3 + 3);
	ck_assert_uint_eq(p.next[1], 1);
	ck_assert(!ring_ready(s.r));
	ck_assert_int_eq(ring_consume(s.r, take_per_sm, &p, NULL), 0);
	model_publish((uint8_t *)busy, 56, RING_COMMIT); /* submit */
	ck_assert(ring_ready(s.r));
	ck_assert_int_eq(ring_consume(s.r, take_per_sm, &p, NULL), 2);
	ck_assert_uint_eq(p.next[1], 3);
	sim_free(&s);
}
END_TEST

/*
 * A callback stopping inside a batch of one shard: the next pass starts
 * with that shard, inside that batch; nothing is lost or handed over twice.
 */
START_TEST(stop_inside_a_batch_of_one_shard)
{
	struct sim s;
	struct per_sm p = { .stop_at = 7 };
	uint8_t buf[5 * 24];

	sim_new(&s, 1 << 20, RING_RECORD_MAX);
	for (uint32_t k = 0; k < 3; k++) {
		for (uint32_t i = 0; i < 5; i++)
			fill(buf + i * 24, 24, (uint64_t)k << 48 | i);
		ck_assert(model_produce_batch(&s.view, sm_of[k], buf, 5, 24));
	}
	ck_assert_int_eq(ring_consume(s.r, take_per_sm, &p, NULL), -42);
	ck_assert_uint_eq(p.next[1], 2); /* inside shard 1's batch */
	ck_assert(put_tagged(&s, 0, 24, 5));
	ck_assert_int_eq(ring_consume(s.r, take_per_sm, &p, NULL), 9);
	for (uint32_t k = 0; k < 3; k++)
		ck_assert_uint_eq(p.next[k], k ? 5 : 6);
	sim_free(&s);
}
END_TEST

/* Producers on four threads, two to a shard, consumed meanwhile. */
/* EGPU_F_RING_ONE_SHARD: one shard of the whole capacity, on any GPU. */
START_TEST(one_shard_when_asked)
{
	struct map_spec spec = { .name = "one", .type = EGPU_MAP_RINGBUF,
				     .max_entries = 1 << 20,
				     .flags = EGPU_F_RING_DEVICE | EGPU_F_RING_ONE_SHARD };
	struct event_ring *r;

	ck_assert_int_eq(ring_new_for_map(&spec, &r), 0);
	ring_dev_fit_shards(r, 132);
	ck_assert_uint_eq(ring_dev_shards(r), 1);
	ck_assert_uint_eq(ring_dev_store_len(r),
			  ring_shard_lines_len(1) + (1 << 20) + RING_RECORD_MAX);
	ring_free(r);
}
END_TEST

START_TEST(concurrent_producers_in_shards)
{
	struct sim s;

	sim_new(&s, 1 << 20, RING_RECORD_MAX);
	producers_against_consumer(s.r, &s.view);
	sim_free(&s);
}
END_TEST

/* ---- producers whose stores the copier sees in any order ---- */

/*
 * What the PTX memory model allows a copy engine to see of the producers'
 * stores, played against the real consumer: every store of a producer is
 * pending until the adversary lets it land, in any order, except that a
 * store after a fence never lands before a store of the same producer
 * before it (the release fence before each header). Positions are taken
 * at once (the counters a consumer copies first may run ahead of every
 * record), and stores land between any two 8-byte pieces of any copy.
 */
#define WEAK_PRODUCERS 6
#define WEAK_PENDING 16384

struct pending {
	uint64_t *at;
	uint64_t word;
	uint32_t producer;
	uint32_t epoch; /* fences the producer had issued before it */
	bool add;       /* word is added (a published-bytes count), not stored */
};

#define WEAK_EPOCHS 32 /* fences a producer may have outstanding */

struct weak {
	uint64_t rng;
	struct pending p[WEAK_PENDING];
	uint32_t n;
	uint32_t epoch[WEAK_PRODUCERS]; /* fences issued */
	uint32_t low[WEAK_PRODUCERS];   /* the oldest epoch with stores pending */
	uint32_t count[WEAK_PRODUCERS][WEAK_EPOCHS]; /* pending, by epoch */
	uint64_t sent[WEAK_PRODUCERS], kept[WEAK_PRODUCERS];
	uint64_t to_send; /* records each producer sends */
};

static uint64_t *weak_rng(struct sim *s)
{
	return &s->weak->rng;
}

static uint32_t weak_sm(uint32_t k)
{
	return sm_of[k % SMS];
}

/* Whether pending store @i may land: no earlier fence of its producer open. */
static bool may_land(const struct weak *w, uint32_t i)
{
	return w->p[i].epoch == w->low[w->p[i].producer];
}

static void land_one(struct weak *w)
{
	uint32_t i = (uint32_t)(rnd(&w->rng) % w->n), k;

	while (!may_land(w, i))
		i = (i + 1) % w->n;
	k = w->p[i].producer;
	if (w->p[i].add)
		__atomic_fetch_add(w->p[i].at, w->p[i].word, __ATOMIC_RELAXED);
	else
		__atomic_store_n(w->p[i].at, w->p[i].word, __ATOMIC_RELAXED);
	w->count[k][w->p[i].epoch % WEAK_EPOCHS]--;
	while (w->low[k] < w->epoch[k] && !w->count[k][w->low[k] % WEAK_EPOCHS])
		w->low[k]++;
	w->p[i] = w->p[--w->n];
}

static void queue_store(struct weak *w, uint32_t k, uint8_t *at,
			const uint8_t *word)
{
	uint32_t e = w->epoch[k];

	ck_assert_uint_lt(w->n, WEAK_PENDING);
	w->p[w->n] = (struct pending){ .at = (uint64_t *)at, .producer = k,
				       .epoch = e };
	memcpy(&w->p[w->n].word, word, 8);
	w->n++;
	w->count[k][e % WEAK_EPOCHS]++;
}

/*
 * Producer @k's next record (one record, or a batch of up to 4 for odd
 * producers): positions taken now, its stores queued: the body, a fence,
 * then the header; for two producers in three, marked RING_COUNTED, a
 * fence, then its bytes added to the shard's published-bytes word
 * (ring_publish_counted), the others counted by the consumer.
 */
static void weak_produce(struct sim *s, uint32_t k)
{
	struct weak *w = s->weak;
	uint64_t seq = w->sent[k];
	/* Counted records of one size: sums of them coincide often, which
	 * is what a consumer reading the counts out of order would need. */
	uint32_t len = k % 3 ? 56 : 8 + (uint32_t)(rnd(&w->rng) % 200);
	uint32_t count = k % 2 ? 1 + (uint32_t)(rnd(&w->rng) % 4) : 1;
	uint8_t payloads[4 * 208], image[RING_HDR_SIZE + 8 + 4 * 208];
	uint64_t size;
	uint32_t flags;
	uint8_t *rec;

	if (count > w->to_send - seq)
		count = 1;
	size = count > 1 ? ring_batch_size(count, len) : ring_record_size(len);
	flags = count > 1 ? RING_COMMIT | RING_BATCH : RING_COMMIT;
	flags |= k % 3 ? RING_COUNTED : 0;
	for (uint32_t i = 0; i < count; i++)
		fill(payloads + (size_t)i * len, len, (uint64_t)k << 48 | (seq + i));
	w->sent[k] += count;
	rec = model_reserve_on(&s->view, weak_sm(k), size, count);
	if (!rec)
		return;
	w->kept[k] += count;
	memset(image, 0, sizeof(image));
	if (count > 1)
		model_batch_body(image, payloads, count, len);
	else
		memcpy(image + RING_HDR_SIZE, payloads, len);
	model_publish(image, count > 1 ? (uint32_t)(size - RING_HDR_SIZE) : len,
		      flags);
	for (uint64_t at = RING_HDR_SIZE; at < size; at += 8)
		queue_store(w, k, rec + at, image + at);
	w->epoch[k]++; /* the release fence */
	queue_store(w, k, rec, image);
	if (flags & RING_COUNTED) {
		uint32_t i = ring_shard_index(&s->view, weak_sm(k));

		w->epoch[k]++; /* the count's release */
		queue_store(w, k, ptr(ring_shard_done(&s->view, i)),
			    (const uint8_t *)&size);
		w->p[w->n - 1].add = true;
	}
}

static bool weak_done(const struct weak *w)
{
	for (uint32_t k = 0; k < WEAK_PRODUCERS; k++)
		if (w->sent[k] < w->to_send)
			return false;
	return true;
}

/* One move of the adversary: a store lands, or a producer goes on. */
static void weak_step(struct sim *s)
{
	struct weak *w = s->weak;
	uint32_t k = (uint32_t)(rnd(&w->rng) % WEAK_PRODUCERS);

	if (w->n && (rnd(&w->rng) % 3 || w->sent[k] >= w->to_send ||
		     w->n > WEAK_PENDING - 512 ||
		     w->epoch[k] - w->low[k] >= WEAK_EPOCHS - 2))
		land_one(w);
	else if (w->sent[k] < w->to_send)
		weak_produce(s, k);
}

/* Between two pieces of a copy: mostly nothing, sometimes a few moves. */
static void weak_between(struct sim *s)
{
	uint64_t r = rnd(&s->weak->rng);

	for (uint64_t i = r % 16 < 2 ? 1 + r / 16 % 4 : 0; i > 0; i--)
		weak_step(s);
}

static int take_weak(void *user, const void *data, size_t size)
{
	uint64_t *next = user, tag, k, seq;

	ck_assert_uint_ge(size, 8);
	ck_assert_msg(intact(data, (uint32_t)size, &tag), "record torn");
	k = tag >> 48;
	seq = tag & 0xffffffffffffull;
	ck_assert_uint_lt(k, WEAK_PRODUCERS);
	/* Drops leave gaps; a producer's records never repeat or go back. */
	ck_assert_uint_ge(seq, next[k]);
	next[k] = seq + 1;
	next[WEAK_PRODUCERS + k]++;
	return 0;
}

/* A chunk (ring_part.chunk): each record, a batch's one by one, checked. */
static int take_weak_chunk(void *user, const void *data, size_t size)
{
	return chunk_each_record(data, size, take_weak, user);
}

/*
 * Seeds of the adversary, each a different interleaving: every record
 * kept arrives once, whole, in its producer's order; per shard, records
 * received plus drops counted equal records sent. With @threads > 1 the
 * passes take turns at @threads, @threads - 1, ... parts, so a shard moves
 * between channels from one pass to the next.
 */
static void weak_run_threads(uint64_t seed, uint64_t cap, size_t mirror_len,
			     uint32_t sms, uint32_t threads, bool chunks)
{
	static struct weak w;
	struct sim s;
	uint64_t next[2 * WEAK_PRODUCERS] = { 0 }, drops = 0;
	struct ring_part parts[RING_READERS_MAX];
	struct ring_pool *pool = NULL;
	uint64_t counted = 0, got_all = 0; /* what passes said, what came */
	int n_last;

	sim_new_sms(&s, cap, mirror_len, sms);
	/* A producer's records reach one thread: no two touch one next[]. */
	for (uint32_t k = 0; k < threads; k++)
		parts[k] = chunks ?
			(struct ring_part){ .chunk = take_weak_chunk, .user = next } :
			(struct ring_part){ .fn = take_weak, .user = next };
	ck_assert_int_eq(ring_make_readers(s.r, threads), 0);
	if (threads > 1)
		ck_assert_int_eq(ring_pool_new(threads, &pool), 0);
	w = (struct weak){ .rng = seed, .to_send = 3000 };
	s.weak = &w;
	s.between = weak_between;
	for (uint32_t pass = 0; !weak_done(&w); pass++) {
		int n;

		for (int i = 0; i < 64; i++)
			weak_step(&s);
		n = ring_consume_parts(s.r, parts, threads - pass % threads, pool);
		ck_assert_msg(n >= 0, "%s", egpu_errmsg());
		counted += (uint64_t)n;
	}
	while (w.n)
		land_one(&w);
	s.between = NULL;
	n_last = ring_consume_parts(s.r, parts, threads, pool);
	ck_assert_int_ge(n_last, 0);
	counted += (uint64_t)n_last;
	ring_pool_free(pool);
	for (uint32_t i = 0; i < ring_dev_shards(s.r); i++) {
		uint64_t sent = 0, got = 0, d = *(uint64_t *)ptr(ring_shard_drops(&s.view, i));

		for (uint32_t k = 0; k < WEAK_PRODUCERS; k++)
			if (ring_shard_index(&s.view, weak_sm(k)) == i) {
				sent += w.sent[k];
				got += next[WEAK_PRODUCERS + k];
			}
		ck_assert_uint_eq(got + d, sent);
		drops += d;
	}
	for (uint32_t k = 0; k < WEAK_PRODUCERS; k++) {
		ck_assert_uint_eq(next[WEAK_PRODUCERS + k], w.kept[k]);
		got_all += w.kept[k];
	}
	ck_assert_uint_eq(counted, got_all); /* a batch's records each count */
	ck_assert_uint_eq(ring_drops(s.r), drops);
	model_assert_settled(&s.view);
	sim_free(&s);
}

static void weak_run(uint64_t seed, uint64_t cap, size_t mirror_len,
		     uint32_t sms)
{
	weak_run_threads(seed, cap, mirror_len, sms, 1, false);
}

/* Small shards that fill up and wrap many times, windows inside laps. */
START_TEST(weak_visibility_many_seeds_small_shards)
{
	for (uint64_t seed = 1; seed <= TU_ROUNDS(10); seed++)
		weak_run(seed * 0x9e3779b97f4a7c15ull, 4 * 64 * 1024,
			 RING_RECORD_MAX, 4);
}
END_TEST

/* One shard per SM of a GPU of 6 SMs, a mirror of a whole shard. */
START_TEST(weak_visibility_shard_per_sm)
{
	for (uint64_t seed = 100; seed < 100 + TU_ROUNDS(3); seed++)
		weak_run(seed, 1 << 20, (1 << 20) / 4 + RING_RECORD_MAX, 6);
}
END_TEST

/* ---- several consumer threads (ring_consume_parts) ---- */

/*
 * The adversary against 2 and 3 consumer threads, each draining its
 * shards on its own channel while the others do, producers going on
 * between a channel's queued fills and position writes: every record
 * once, whole, in its producer's order, drops exact.
 */
START_TEST(weak_visibility_consumer_threads)
{
	for (uint64_t seed = 200; seed < 200 + TU_ROUNDS(4); seed++) {
		weak_run_threads(seed, 4 * 64 * 1024, RING_RECORD_MAX, 4,
				 2 + seed % 2, false);
		weak_run_threads(seed, 1 << 20, (1 << 20) / 4 + RING_RECORD_MAX,
				 6, 3, false);
	}
}
END_TEST

/*
 * The adversary against chunk delivery (whole windows handed over as
 * the second copy holds them, no walk of their own), on 1 and 3 threads.
 */
START_TEST(weak_visibility_chunks)
{
	for (uint64_t seed = 300; seed < 300 + TU_ROUNDS(4); seed++) {
		weak_run_threads(seed, 4 * 64 * 1024, RING_RECORD_MAX, 4, 1,
				 true);
		weak_run_threads(seed, 1 << 20, (1 << 20) / 4 + RING_RECORD_MAX,
				 6, 3, true);
	}
}
END_TEST

/*
 * Four producer threads into 16 shards (and more threads than shards
 * that have records), drained by 1 to 4 consumer threads while they run.
 */
START_TEST(consumer_threads_against_producers)
{
	for (uint32_t threads = 2; threads <= 4; threads++) {
		struct ring_pool *pool;
		struct sim s;

		sim_new(&s, 1 << 20, RING_RECORD_MAX);
		ck_assert_int_eq(ring_pool_new(threads, &pool), 0);
		producers_against_consumers(s.r, &s.view, pool, threads);
		ck_assert_uint_eq(s.nextra, threads - 1);
		ring_pool_free(pool);
		sim_free(&s);
	}
}
END_TEST

START_TEST(lossless_chunks_never_drop)
{
	for (uint32_t threads = 2; threads <= 3; threads++) {
		struct ring_pool *pool;
		struct sim s;

		sim_flags = EGPU_F_RING_LOSSLESS;
		sim_new(&s, 1 << 20, RING_RECORD_MAX);
		sim_flags = 0;
		ck_assert_int_eq(ring_pool_new(threads, &pool), 0);
		producers_against_chunks(s.r, &s.view, pool, threads, true);
		ck_assert_uint_eq(ring_drops(s.r), 0);
		ring_pool_free(pool);
		sim_free(&s);
	}
}
END_TEST

/* Per-part sinks of take_per_sm, and their thread. */
struct part_sink {
	struct per_sm p;
	pthread_t self;
	bool seen;
	int flushes;          /* count_flush's */
	pthread_t flushed_on;
};

static int take_on_thread(void *user, const void *data, size_t size)
{
	struct part_sink *ps = user;

	if (!ps->seen)
		ps->self = pthread_self();
	ck_assert(pthread_equal(ps->self, pthread_self()));
	ps->seen = true;
	return take_per_sm(&ps->p, data, size);
}

/* Records from every SM of sm_of[], @n each, numbered on from p->next. */
static void put_round(struct sim *s, uint64_t *sent, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < SMS; k++) {
			ck_assert(put_tagged(s, k, 40, sent[k]));
			sent[k]++;
		}
}

/*
 * A ring fitted to a GPU of 6 SMs (6 shards) drained in 3 parts on a
 * pool of 3 threads, part k taking records into @ps[k] on its thread
 * (take_on_thread).
 */
static struct ring_pool *three_parts(struct sim *s, struct part_sink *ps,
				     struct ring_part *parts)
{
	struct ring_pool *pool;

	sim_new_sms(s, 1 << 20, RING_RECORD_MAX, 6);
	ck_assert_int_eq(ring_make_readers(s->r, 3), 0);
	ck_assert_int_eq(ring_pool_new(3, &pool), 0);
	for (uint32_t k = 0; k < 3; k++)
		parts[k] = (struct ring_part){ .fn = take_on_thread,
					       .user = &ps[k] };
	return pool;
}

/*
 * A callback stopping on one thread stops the pass, the others at a
 * record; a copy failing on a worker thread is this thread's error, with
 * its message; the next passes deliver the rest, each record once, each
 * shard's on the same thread.
 */
START_TEST(consumer_threads_stop_and_fail)
{
	struct part_sink ps[3] = { 0 };
	struct ring_part parts[3];
	struct ring_pool *pool;
	uint64_t sent[SMS] = { 0 }, got = 0;
	struct sim s;
	int n;

	pool = three_parts(&s, ps, parts);
	put_round(&s, sent, 50);
	/* Shards 1 and 4 (SMs 1 and 16) go to thread 1: it stops at its 7th. */
	ps[1].p.stop_at = 7;
	ck_assert_int_eq(ring_consume_parts(s.r, parts, 3, pool), -42);
	ck_assert_uint_eq(parts[1].records, 7);
	put_round(&s, sent, 50);
	/* Thread 2's shards (2 and 5: SMs 5, 17, 128) cannot be copied. */
	s.fail_shard = 5;
	n = ring_consume_parts(s.r, parts, 3, pool);
	ck_assert_int_eq(n, EGPU_ECUDA);
	ck_assert_msg(strstr(egpu_errmsg(), "ring 'dev': copying") &&
		      strstr(egpu_errmsg(), "sim: copy failed"), "%s",
		      egpu_errmsg());
	s.fail_shard = -1;
	ck_assert_int_eq(ring_consume_parts(s.r, parts, 3, pool) > 0, 1);
	ck_assert_int_eq(ring_consume_parts(s.r, parts, 3, pool), 0);
	for (uint32_t k = 0; k < 3; k++)
		got += ps[k].p.count;
	ck_assert_uint_eq(got, 100 * SMS);
	for (uint32_t k = 0; k < SMS; k++) {
		uint64_t next = 0;

		for (uint32_t j = 0; j < 3; j++)
			next += ps[j].p.next[k];
		ck_assert_uint_eq(next, sent[k]); /* one thread had them all */
	}
	ck_assert(pthread_equal(ps[0].self, pthread_self()));
	ck_assert(!pthread_equal(ps[1].self, pthread_self()));
	ring_pool_free(pool);
	sim_free(&s);
}
END_TEST

/* A part's flush: counted, with the thread it ran on. */
static int count_flush(void *user)
{
	struct part_sink *ps = user;

	ps->flushes++;
	ps->flushed_on = pthread_self();
	return 0;
}

/*
 * A pass with records wakes the pool's threads; one that finds every
 * shard empty and nothing to give back only flushes each part, on the
 * calling thread.
 */
START_TEST(idle_pass_wakes_no_thread)
{
	struct part_sink ps[3] = { 0 };
	struct ring_part parts[3];
	struct ring_pool *pool;
	uint64_t sent[SMS] = { 0 };
	struct sim s;

	pool = three_parts(&s, ps, parts);
	put_round(&s, sent, 20);
	ck_assert_int_eq(ring_consume_parts(s.r, parts, 3, pool), 20 * SMS);
	ck_assert(!pthread_equal(ps[1].self, pthread_self()));
	for (uint32_t k = 0; k < 3; k++)
		parts[k].flush = count_flush;
	ck_assert_int_eq(ring_consume_parts(s.r, parts, 3, pool), 0);
	for (uint32_t k = 0; k < 3; k++) {
		ck_assert_int_eq(ps[k].flushes, 1);
		ck_assert(pthread_equal(ps[k].flushed_on, pthread_self()));
	}
	ring_pool_free(pool);
	sim_free(&s);
}
END_TEST

static uint64_t batched; /* records the batch callbacks got, all threads */

static int count_batch(void *user, const struct egpu_record *recs, size_t n)
{
	uint64_t tag;

	(void)user;
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq((uintptr_t)recs[i].data % 8, 0);
		ck_assert(intact(recs[i].data, (uint32_t)recs[i].size, &tag));
	}
	__atomic_fetch_add(&batched, n, __ATOMIC_RELAXED);
	return 0;
}

/*
 * Producer @k's records @seq to @seq + @count - 1 of @len bytes (at least
 * 8: each says its seq) as a warp's batch, on its SM.
 */
static bool put_tagged_batch(struct sim *s, uint32_t k, uint32_t count,
			     uint32_t len, uint64_t seq)
{
	uint8_t buf[RING_BATCH_MAX * 256];

	for (uint32_t i = 0; i < count; i++)
		fill(buf + (size_t)i * len, len, (uint64_t)k << 48 | (seq + i));
	return model_produce_batch(&s->view, sm_of[k], buf, count, len);
}

/*
 * The file a trace streams to, from 3 threads: byte for byte the records
 * kept, each as {size, 0}, payload, zero padding; each producer's in
 * order; drops (a full shard) counted exactly.
 */
static void assert_trace_file(int fd, const uint64_t *kept, uint64_t bytes)
{
	uint64_t next[SMS] = { 0 };
	size_t at = sizeof(struct egpu_record_file_header);
	uint8_t *file = malloc(at + bytes + 1);

	bytes += at;
	ck_assert_int_eq(pread(fd, file, bytes + 1, 0), (ssize_t)bytes);
	ck_assert(!memcmp(file, EGPU_RECORD_FILE_MAGIC, 8));
	while (at < bytes) {
		uint64_t hdr, tag, k;
		uint32_t len;

		memcpy(&hdr, file + at, 8);
		len = (uint32_t)hdr;
		ck_assert_uint_eq(hdr >> 32, 0);
		ck_assert(intact(file + at + 8, len, &tag));
		for (uint32_t i = len; i < ring_record_size(len) - 8; i++)
			ck_assert_uint_eq(file[at + 8 + i], 0);
		k = tag >> 48;
		ck_assert_uint_lt(k, SMS);
		ck_assert_uint_eq(tag & 0xffffffffffffull, next[k]++);
		at += ring_record_size(len);
	}
	for (uint32_t k = 0; k < SMS; k++)
		ck_assert_uint_eq(next[k], kept[k]);
	free(file);
}

START_TEST(consumer_threads_stream_a_file)
{
	char path[] = "/tmp/egpu_ring_threads_XXXXXX";
	int fd = mkstemp(path);
	EGPU_OPTS(egpu_ringbuf_opts, o, .batch_fn = count_batch, .path = path,
		  .batch_bytes = 64 * 1024);
	struct ring_part parts[3];
	struct ring_pool *pool;
	struct rb_batch *b;
	uint64_t kept[SMS] = { 0 }, tries = 0, refused = 0, bytes = 0;
	struct sim s;

	ck_assert_int_ge(fd, 0);
	sim_new_sms(&s, 4 * 64 * 1024, RING_RECORD_MAX, 6); /* 6 x 64 KiB */
	ck_assert_int_eq(ring_make_readers(s.r, 3), 0);
	ck_assert_int_eq(ring_pool_new(3, &pool), 0);
	ck_assert_int_eq(rb_batch_new(&o, NULL, 3, &b), 0);
	for (uint32_t k = 0; k < 3; k++)
		parts[k] = rb_batch_part(b, k);
	batched = 0;
	for (uint32_t round = 0; round < 20; round++) {
		/*
		 * More than a shard holds between passes: some are refused.
		 * Every fifth try a warp's batch of 1 to 32 (taken whole by
		 * the gatherer), sizes not all multiples of 8.
		 */
		for (uint32_t i = 0; i < 2000; i++) {
			uint32_t k = (uint32_t)(tries * 7 % SMS);
			uint32_t len = 8 + (uint32_t)(tries * 13 % 240);
			uint32_t n = i % 5 ? 1 : 1 + (uint32_t)(tries % RING_BATCH_MAX);
			bool kept_them = n == 1 ? put_tagged(&s, k, len, kept[k]) :
				put_tagged_batch(&s, k, n, len, kept[k]);

			tries += n;
			if (kept_them) {
				kept[k] += n;
				bytes += n * ring_record_size(len);
			} else {
				refused += n;
			}
		}
		ck_assert_int_ge(ring_consume_parts(s.r, parts, 3, pool), 0);
	}
	ck_assert_int_eq(ring_consume_parts(s.r, parts, 3, pool), 0);
	ck_assert_uint_gt(refused, 0);
	ck_assert_uint_eq(ring_drops(s.r), refused);
	ck_assert_uint_eq(batched, tries - refused);
	assert_trace_file(fd, kept, bytes);
	rb_batch_free(b);
	ring_pool_free(pool);
	sim_free(&s);
	close(fd);
	unlink(path);
}
END_TEST

static uint64_t stop_batch_next; /* producer 0's seq the batch callback expects */

/* A batch callback that checks order and says stop at its first call. */
static int stop_first_batch(void *user, const struct egpu_record *recs,
			    size_t n)
{
	uint64_t tag;

	(void)user;
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(recs[i].size, 16);
		ck_assert(intact(recs[i].data, 16, &tag));
		ck_assert_uint_eq(tag, stop_batch_next++);
	}
	return stop_batch_next == n ? -7 : 0;
}

/*
 * Warps' batches taken whole by the gatherer, its buffer filling in the
 * middle of a pass and the batch callback saying stop there: the pass
 * stops after the batch being taken (kept, not lost), the next goes on.
 */
START_TEST(batch_callback_stops_between_whole_warp_batches)
{
	EGPU_OPTS(egpu_ringbuf_opts, o, .batch_fn = stop_first_batch,
		  .batch_bytes = 1); /* the least: fills within the pass */
	struct ring_part part;
	struct rb_batch *b;
	uint64_t first; /* records the first pass took */
	struct sim s;

	sim_new(&s, 1 << 20, RING_RECORD_MAX); /* shards of 64 KiB */
	ck_assert_int_eq(ring_make_readers(s.r, 1), 0);
	ck_assert_int_eq(rb_batch_new(&o, NULL, 1, &b), 0);
	part = rb_batch_part(b, 0);
	for (uint32_t i = 0; i < 100; i++) /* 3200 records, 52.8 KB */
		ck_assert(put_tagged_batch(&s, 0, RING_BATCH_MAX, 16,
					   i * RING_BATCH_MAX));
	stop_batch_next = 0;
	ck_assert_int_eq(ring_consume_parts(s.r, &part, 1, NULL), -7);
	/* Flushed at the pass's end all the same: nothing kept back. */
	ck_assert_uint_eq(part.records, stop_batch_next);
	ck_assert_uint_lt(part.records, 100 * RING_BATCH_MAX);
	ck_assert_uint_eq(part.records % RING_BATCH_MAX, 0);
	first = part.records;
	ck_assert_int_eq(ring_consume_parts(s.r, &part, 1, NULL),
			 100 * RING_BATCH_MAX - (int)first);
	ck_assert_uint_eq(stop_batch_next, 100 * RING_BATCH_MAX);
	ck_assert_uint_eq(part.records, 100 * RING_BATCH_MAX);
	ck_assert_int_eq(ring_consume_parts(s.r, &part, 1, NULL), 0);
	rb_batch_free(b);
	sim_free(&s);
}
END_TEST

START_TEST(consumer_threads_bad_counts)
{
	struct ring_pool *pool = NULL;
	struct ring_part part = { .fn = count_record };
	struct sim s;

	ck_assert_int_eq(ring_pool_new(1, &pool), EGPU_EINVAL);
	ck_assert_int_eq(ring_pool_new(RING_READERS_MAX + 1, &pool), EGPU_EINVAL);
	sim_new(&s, 1 << 20, RING_RECORD_MAX);
	ck_assert_int_eq(ring_make_readers(s.r, 0), EGPU_EINVAL);
	ck_assert_int_eq(ring_make_readers(s.r, RING_READERS_MAX + 1),
			 EGPU_EINVAL);
	/* More parts than readers made: refused, with a message. */
	ck_assert_int_eq(ring_consume_parts(s.r, &part, 2, NULL), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "in 2 parts"));
	sim_free(&s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ring_dev");
	TCase *tc = tcase_create("ring_dev");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, order_and_wraparound_whole_ring_mirror);
	tcase_add_test(tc, order_and_wraparound_window_by_window);
	tcase_add_test(tc, consumed_space_is_zeroed_and_given_back);
	tcase_add_test(tc, record_published_during_a_copy_is_whole);
	tcase_add_test(tc, published_bytes_read_before_the_position);
	tcase_add_test(tc, drops_are_counted_exactly);
	tcase_add_test(tc, spans_counted_are_copied_once);
	tcase_add_test(tc, callback_can_stop_inside_a_batch);
	tcase_add_test(tc, cpu_records_then_gpu_records);
	tcase_add_test(tc, copy_failure_is_an_error);
	tcase_add_test(tc, failed_release_is_retried);
	tcase_add_test(tc, impossible_header_is_an_error);
	tcase_add_test(tc, concurrent_producers_backwards_copies);
	tcase_add_test(tc, shards_follow_the_ring_size);
	tcase_add_test(tc, shards_wrap_window_by_window);
	tcase_add_test(tc, shards_wrap_whole_shard_mirror);
	tcase_add_test(tc, a_shard_per_sm_not_a_power_of_two);
	tcase_add_test(tc, shards_fit_the_gpu);
	tcase_add_test(tc, full_shard_drops_alone);
	tcase_add_test(tc, one_pass_drains_every_shard);
	tcase_add_test(tc, busy_shard_holds_back_only_itself);
	tcase_add_test(tc, stop_inside_a_batch_of_one_shard);
	tcase_add_test(tc, concurrent_producers_in_shards);
	tcase_add_test(tc, one_shard_when_asked);
	tcase_add_test(tc, weak_visibility_many_seeds_small_shards);
	tcase_add_test(tc, weak_visibility_shard_per_sm);
	tcase_add_test(tc, weak_visibility_consumer_threads);
	tcase_add_test(tc, weak_visibility_chunks);
	tcase_add_test(tc, consumer_threads_against_producers);
	tcase_add_test(tc, lossless_chunks_never_drop);
	tcase_add_test(tc, consumer_threads_stop_and_fail);
	tcase_add_test(tc, idle_pass_wakes_no_thread);
	tcase_add_test(tc, consumer_threads_stream_a_file);
	tcase_add_test(tc, consumer_threads_bad_counts);
	tcase_add_test(tc, batch_callback_stops_between_whole_warp_batches);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
