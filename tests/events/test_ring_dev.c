// SPDX-License-Identifier: MIT
/*
 * Rings whose records live in GPU memory (lib/maps/ring_dev.c), without a
 * GPU: host memory plays the GPU memory, behind a copier that reads it the
 * way a copy engine may (here backwards, the worst order for a consumer
 * that trusted one copy), and host threads play the GPU's producers. The
 * consumer's windows, wraparound into the tail pad, records published
 * while a copy runs, drops, the switch from the CPU back end's records,
 * and copy failures.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "maps/ring.h"
#include "egpu/bpf_maps.h" /* after egpu.h: EGPU_F_RING_DEVICE only */
#include "ring_model.h"
#include "test_util.h"

/* GPU memory played by host memory: an address is a host pointer. */
struct sim {
	struct event_ring *r;
	struct dev_ring view; /* the map's data: producer positions */
	uint8_t *store;
	uint8_t *mirror;
	uint64_t reads, read_bytes;
	bool fail, fail_writes; /* copies out; copies in and fills */
	/* Called once, when a copy has read down to byte @midway_at of it. */
	void (*midway)(struct sim *s);
	size_t midway_at;
};

static void *ptr(uint64_t addr)
{
	return (void *)(uintptr_t)addr;
}

/* Backwards, a word at a time: a record's header is read last. */
static int sim_read(void *io, void *dst, uint64_t addr, size_t n)
{
	struct sim *s = io;
	const uint8_t *src = ptr(addr);
	size_t i = n;

	if (s->fail)
		return err_set(EGPU_ECUDA, "sim: copy failed");
	s->reads++;
	s->read_bytes += n;
	while (i) {
		size_t k = i % 8 ? i % 8 : 8;

		i -= k;
		memcpy((uint8_t *)dst + i, src + i, k);
		if (s->midway && i == s->midway_at) {
			s->midway(s);
			s->midway = NULL;
		}
	}
	return 0;
}

static int sim_write(void *io, uint64_t addr, const void *src, size_t n)
{
	struct sim *s = io;

	if (s->fail_writes)
		return err_set(EGPU_ECUDA, "sim: copy failed");
	memcpy(ptr(addr), src, n);
	return 0;
}

static int sim_zero(void *io, uint64_t addr, size_t n)
{
	struct sim *s = io;

	if (s->fail_writes)
		return err_set(EGPU_ECUDA, "sim: fill failed");
	memset(ptr(addr), 0, n);
	return 0;
}

/* A RINGBUF map of @cap bytes with EGPU_F_RING_DEVICE, a @mirror_len mirror. */
static void sim_new(struct sim *s, uint64_t cap, size_t mirror_len)
{
	struct bpf_map_spec spec = { .name = "dev", .type = EGPU_MAP_RINGBUF,
				     .max_entries = (uint32_t)cap,
				     .flags = EGPU_F_RING_DEVICE };
	struct ring_copier c = { .read = sim_read, .write = sim_write,
				 .zero = sim_zero, .io = s };

	*s = (struct sim){ 0 };
	ck_assert_int_eq(ring_new_for_map(&spec, &s->r), 0);
	ck_assert(ring_in_device_memory(s->r));
	s->store = calloc(1, RING_DATA_OFFSET + cap + ring_max_payload(s->r) + 8);
	s->mirror = malloc(mirror_len);
	ck_assert_ptr_nonnull(s->store);
	ck_assert_ptr_nonnull(s->mirror);
	ck_assert_int_eq(ring_dev_start(s->r, (uintptr_t)s->store, s->mirror,
					mirror_len, &s->view), 0);
	ck_assert_uint_eq(s->view.flags, RING_IN_DEVICE_MEMORY);
	ck_assert_ptr_eq(ptr(s->view.data), s->store + RING_DATA_OFFSET);
	ring_bind_copier(s->r, &c, (uintptr_t)&s->view);
}

static void sim_free(struct sim *s)
{
	ring_free(s->r);
	free(s->store);
	free(s->mirror);
}

static bool put(struct sim *s, uint32_t len, uint64_t seq)
{
	uint8_t buf[1024];

	fill(buf, len, seq);
	return model_produce(&s->view, buf, len);
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
	ck_assert_uint_eq(s.view.reserved, s.view.prod);
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

/* The first @upto bytes of records are zeroed, and producers told so. */
static void assert_given_back(const struct sim *s, uint64_t upto)
{
	const struct ring_ctl *ctl = ptr(s->view.ctl);

	ck_assert_uint_eq(ctl->cons, upto);
	for (size_t i = 0; i < upto; i++)
		ck_assert_uint_eq(s->store[RING_DATA_OFFSET + i], 0);
}

/* Each consumed byte is copied twice; producers see the space again. */
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
	/* prod, then the records twice */
	ck_assert_uint_eq(s.read_bytes, 8 + 2 * 10 * 64);
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
	uint8_t *rec = s->store + RING_DATA_OFFSET + SECOND;

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
	uint8_t buf[200];

	sim_new(&s, 4096, 8192);
	ck_assert(put(&s, 200, 0));
	ck_assert_uint_eq(s.view.prod, SECOND);
	/* Reserve the second: produce it, then take its bytes back. */
	fill(buf, 200, 99);
	ck_assert(model_produce(&s.view, buf, 200));
	memset(s.store + RING_DATA_OFFSET + SECOND, 0, 208);
	/* Published after the copy read its payload, before its header. */
	s.midway = publish_second;
	s.midway_at = SECOND + RING_HDR_SIZE;
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), 2);
	ck_assert_uint_eq(k.next, 2);
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
	ck_assert(model_produce_batch(&s.view, buf, 5, 24));
	ck_assert(model_produce_batch(&s.view, buf + 5 * 24, 3, 24));
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
 * first, then the GPU's, which go on from the CPU's position; CPU
 * producers are refused from the move on.
 */
START_TEST(cpu_records_then_gpu_records)
{
	struct bpf_map_spec spec = { .name = "dev", .type = EGPU_MAP_RINGBUF,
				     .max_entries = 4096,
				     .flags = EGPU_F_RING_DEVICE };
	struct ring_copier c = { .read = sim_read, .write = sim_write,
				 .zero = sim_zero };
	struct sim s = { 0 };
	struct sink k = { 0 };
	uint8_t buf[40];
	size_t len = RING_DATA_OFFSET + 2 * 4096;

	ck_assert_int_eq(ring_new_for_map(&spec, &s.r), 0);
	for (uint64_t i = 0; i < 3; i++) {
		fill(buf, 40, i);
		ck_assert_int_eq(ring_cpu_output(s.r, buf, 40, 0), 0);
	}
	/* All three, before any GPU. */
	ck_assert_int_eq(ring_consume(s.r, take, &k, NULL), 3);
	fill(buf, 40, 3);
	ck_assert_int_eq(ring_cpu_output(s.r, buf, 40, 0), 0);
	s.store = calloc(1, len);
	s.mirror = malloc(8192);
	c.io = &s;
	ck_assert_int_eq(ring_dev_start(s.r, (uintptr_t)s.store, s.mirror, 8192,
					&s.view), 0);
	ck_assert_uint_eq(s.view.prod, 4 * 48);
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
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "ring 'dev': copying 8 bytes"));
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
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "giving 192 bytes back"));
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
	memcpy(s.store + RING_DATA_OFFSET, &bad, sizeof(bad));
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

int main(void)
{
	Suite *s = suite_create("ring_dev");
	TCase *tc = tcase_create("ring_dev");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, order_and_wraparound_whole_ring_mirror);
	tcase_add_test(tc, order_and_wraparound_window_by_window);
	tcase_add_test(tc, consumed_space_is_zeroed_and_given_back);
	tcase_add_test(tc, record_published_during_a_copy_is_whole);
	tcase_add_test(tc, drops_are_counted_exactly);
	tcase_add_test(tc, callback_can_stop_inside_a_batch);
	tcase_add_test(tc, cpu_records_then_gpu_records);
	tcase_add_test(tc, copy_failure_is_an_error);
	tcase_add_test(tc, failed_release_is_retried);
	tcase_add_test(tc, impossible_header_is_an_error);
	tcase_add_test(tc, concurrent_producers_backwards_copies);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
