// SPDX-License-Identifier: MIT
/*
 * Event rings without a GPU: the consumer against the CPU producer and
 * against host threads playing the GPU's protocol (lib/device/ring.cuh) on
 * the ring's own memory: order, wraparound, discards, warps' batches,
 * exact drop counts, records never torn, impossible headers refused.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "maps/ring.h"
#include "egpu/bpf_maps.h" /* after egpu.h: EGPU_F_RING_LOSSLESS only */
#include "ring_model.h"
#include "test_util.h"

static struct event_ring *ring_of(uint64_t cap)
{
	struct event_ring *r = NULL;

	ck_assert_int_eq(ring_new("test", EGPU_MAP_RINGBUF, cap, &r), 0);
	return r;
}

static long put(struct event_ring *r, uint32_t len, uint64_t seq)
{
	uint8_t buf[1024];

	fill(buf, len, seq);
	return ring_cpu_output(r, buf, len, 0);
}

START_TEST(capacity_rules)
{
	struct map_spec s = { .name = "m", .type = EGPU_MAP_RINGBUF };
	struct event_ring *r = NULL;
	uint64_t cap = 0;

	s.max_entries = 4096;
	ck_assert_int_eq(ring_map_capacity(&s, &cap), 0);
	ck_assert_uint_eq(cap, 4096);
	s.max_entries = 4000;
	ck_assert_int_eq(ring_map_capacity(&s, &cap), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "'m'"));
	s.max_entries = 32;
	ck_assert_int_eq(ring_map_capacity(&s, &cap), EGPU_EINVAL);
	s.max_entries = 1u << 31;
	ck_assert_int_eq(ring_map_capacity(&s, &cap), EGPU_EINVAL);
	s.type = EGPU_MAP_PERF_EVENT_ARRAY;
	s.max_entries = 0;
	ck_assert_int_eq(ring_map_capacity(&s, &cap), 0);
	ck_assert_uint_eq(cap, RING_DEFAULT_BYTES);
	s.type = EGPU_MAP_GPU_RINGBUF;
	s.max_entries = 16;
	s.value_size = 56;
	ck_assert_int_eq(ring_map_capacity(&s, &cap), 0);
	ck_assert_uint_eq(cap, RING_DEFAULT_BYTES);
	s.max_entries = 1u << 20; /* 64 MiB of 64-byte records */
	ck_assert_int_eq(ring_map_capacity(&s, &cap), 0);
	ck_assert_uint_eq(cap, 64u << 20);
	s.value_size = RING_RECORD_MAX;
	ck_assert_int_eq(ring_map_capacity(&s, &cap), EGPU_EINVAL);
	s.type = EGPU_MAP_ARRAY;
	ck_assert_int_eq(ring_map_capacity(&s, &cap), EGPU_EINVAL);
	ck_assert_int_eq(ring_new("x", 0, 100, &r), EGPU_EINVAL);
	ck_assert_ptr_null(r);
	ck_assert(map_type_is_ring(EGPU_MAP_RINGBUF));
	ck_assert(!map_type_is_ring(EGPU_MAP_HASH));
}
END_TEST

/*
 * Many laps of records of varying sizes, some running past the end of the
 * ring (into the tail pad): all arrive in order and intact.
 */
START_TEST(order_and_wraparound)
{
	struct event_ring *r = ring_of(1024);
	struct sink s = { 0 };
	uint64_t seq = 0, bytes = 0, full = 0;

	ck_assert_uint_eq(ring_max_payload(r), 1024 - RING_HDR_SIZE);
	while (seq < 20000) {
		uint32_t len = 8 + (uint32_t)(seq * 37 % 300);

		if (put(r, len, seq) == 0) {
			seq++;
			continue;
		}
		full++; /* refused while full: consume, then send it again */
		ck_assert_int_gt(ring_consume(r, take, &s, &bytes), 0);
	}
	while (ring_consume(r, take, &s, &bytes) > 0)
		;
	ck_assert_uint_eq(s.count, 20000);
	ck_assert_uint_gt(bytes, 1000 * 1024); /* a thousand laps */
	ck_assert_uint_eq(ring_drops(r), full);
	ring_free(r);
}
END_TEST

static int count_only(void *user, const void *data, size_t size)
{
	const uint64_t *v = data;

	ck_assert_uint_eq(size, 16);
	ck_assert_uint_eq(v[1], ~v[0]);
	((uint64_t *)user)[((uint64_t *)user)[0]++ + 1] = v[0];
	return 0;
}

START_TEST(discarded_records_are_skipped)
{
	struct event_ring *r = ring_of(4096);
	uint64_t got[8] = { 0 };

	for (uint64_t i = 0; i < 5; i++) {
		uint64_t *v = ring_cpu_reserve(r, 16, 0);

		ck_assert_ptr_nonnull(v);
		v[0] = i;
		v[1] = ~i;
		ring_cpu_commit(v, i % 2);
	}
	ck_assert_int_eq(ring_consume(r, count_only, got, NULL), 3);
	ck_assert_uint_eq(got[0], 3);
	ck_assert_uint_eq(got[1], 0);
	ck_assert_uint_eq(got[2], 2);
	ck_assert_uint_eq(got[3], 4);
	ck_assert_uint_eq(ring_drops(r), 0);
	ring_free(r);
}
END_TEST

/* 256 bytes hold four 64-byte records: the rest are dropped and counted. */
START_TEST(drops_are_counted_exactly)
{
	struct event_ring *r = ring_of(256);
	struct sink s = { 0 };
	int sent = 0;

	for (uint64_t i = 0; i < 10; i++)
		sent += put(r, 56, sent) == 0;
	ck_assert_int_eq(sent, 4);
	ck_assert_uint_eq(ring_drops(r), 6);
	ck_assert_int_eq(ring_consume(r, take, &s, NULL), 4);
	for (uint64_t i = 0; i < 4; i++)
		ck_assert_int_eq(put(r, 56, s.next + i), 0);
	ck_assert_int_eq(put(r, 56, 99), -EAGAIN);
	ck_assert_uint_eq(ring_drops(r), 7);
	ck_assert_int_eq(ring_consume(r, take, &s, NULL), 4);
	ring_free(r);
}
END_TEST

START_TEST(bad_requests_are_refused)
{
	struct event_ring *r = ring_of(256);
	uint8_t buf[512] = { 0 };

	ck_assert_int_eq(ring_cpu_output(r, buf, 249, 0), -E2BIG);
	ck_assert_int_eq(ring_cpu_output(r, buf, 248, 0), 0);
	ck_assert_int_eq(ring_cpu_output(r, buf, 8, 4), -EINVAL);
	ck_assert_int_eq(ring_cpu_output(r, buf, 8, 3), -EAGAIN); /* full */
	ck_assert_ptr_null(ring_cpu_reserve(r, 8, 1));
	ck_assert_ptr_null(ring_cpu_reserve(r, 300, 0));
	ck_assert_uint_eq(ring_drops(r), 1); /* only the full one */
	ring_free(r);
}
END_TEST

/* A reserved record not yet submitted holds back the ones after it. */
START_TEST(unpublished_record_blocks_later_ones)
{
	struct event_ring *r = ring_of(4096);
	struct sink s = { 0 };
	uint8_t *first = ring_cpu_reserve(r, 40, 0);

	ck_assert_ptr_nonnull(first);
	ck_assert_int_eq(put(r, 40, 1), 0);
	ck_assert(!ring_ready(r));
	ck_assert_int_eq(ring_consume(r, take, &s, NULL), 0);
	fill(first, 40, 0);
	ring_cpu_commit(first, false);
	ck_assert(ring_ready(r));
	ck_assert_int_eq(ring_consume(r, take, &s, NULL), 2);
	ring_free(r);
}
END_TEST

/* A header no producer could write (a stray write): an error, not a crash. */
START_TEST(impossible_header_is_an_error)
{
	struct event_ring *r = ring_of(4096);
	struct dev_ring v;
	struct sink s = { 0 };
	uint64_t bad = (uint64_t)RING_COMMIT << 32 | 5000;

	ring_host_view(r, &v);
	memcpy((void *)(uintptr_t)v.data, &bad, sizeof(bad));
	ck_assert_int_eq(ring_consume(r, take, &s, NULL), EGPU_EFORMAT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "5000"));
	ring_free(r);
}
END_TEST

START_TEST(callback_can_stop)
{
	struct event_ring *r = ring_of(4096);
	struct sink s = { .stop_at = 2 };

	for (uint64_t i = 0; i < 4; i++)
		ck_assert_int_eq(put(r, 24, i), 0);
	ck_assert_int_eq(ring_consume(r, take, &s, NULL), -42);
	ck_assert_uint_eq(s.count, 2);
	ck_assert_int_eq(ring_consume(r, take, &s, NULL), 2);
	ck_assert_uint_eq(s.next, 4);
	ring_free(r);
}
END_TEST

START_TEST(one_consumer_at_a_time)
{
	struct event_ring *r = ring_of(4096);

	ck_assert_int_eq(ring_claim(r), 0);
	ck_assert_int_eq(ring_claim(r), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "already consumed"));
	ring_release(r);
	ck_assert_int_eq(ring_claim(r), 0);
	ring_free(r);
}
END_TEST

/* Batches of 1 to 32 records of 8 to 200 bytes, in order, intact. */
START_TEST(batches_arrive_as_records)
{
	struct event_ring *r = ring_of(64 * 1024);
	uint8_t buf[32 * 200];
	struct dev_ring v;
	struct sink s = { 0 };
	uint64_t seq = 0, bytes = 0, want_bytes = 0, dropped = 0;

	ring_host_view(r, &v);
	for (uint32_t round = 0; round < 2000; round++) {
		uint32_t count = 1 + round % 32, len = 8 + round * 13 % 193;

		for (uint32_t i = 0; i < count; i++)
			fill(buf + (size_t)i * len, len, seq + i);
		if (!model_produce_batch(&v, 0, buf, count, len)) {
			dropped += count; /* refused whole: consume, send again */
			ck_assert_int_gt(ring_consume(r, take, &s, &bytes), 0);
			ck_assert(model_produce_batch(&v, 0, buf, count, len));
		}
		seq += count;
		want_bytes += (uint64_t)count * len;
	}
	while (ring_consume(r, take, &s, &bytes) > 0)
		;
	ck_assert_uint_eq(s.next, seq);
	ck_assert_uint_eq(bytes, want_bytes);
	ck_assert_uint_eq(ring_drops(r), dropped);
	ck_assert_uint_gt(dropped, 0); /* the ring wrapped while full */
	ring_free(r);
}
END_TEST

/* A callback stopping inside a batch: the next pass goes on after it. */
START_TEST(callback_can_stop_inside_a_batch)
{
	struct event_ring *r = ring_of(4096);
	uint8_t buf[8 * 24];
	struct sink s = { .stop_at = 2 };
	struct dev_ring v;

	ring_host_view(r, &v);
	for (uint32_t i = 0; i < 8; i++)
		fill(buf + i * 24, 24, i);
	ck_assert(model_produce_batch(&v, 0, buf, 5, 24));
	ck_assert(model_produce_batch(&v, 0, buf + 5 * 24, 3, 24));
	ck_assert_int_eq(ring_consume(r, take, &s, NULL), -42);
	ck_assert_uint_eq(s.next, 2);
	ck_assert(ring_ready(r));
	ck_assert_int_eq(ring_consume(r, take, &s, NULL), 6);
	ck_assert_uint_eq(s.next, 8);
	ck_assert(!ring_ready(r));
	ring_free(r);
}
END_TEST

/* A batch whose size disagrees with its header: an error. */
START_TEST(impossible_batch_is_an_error)
{
	struct event_ring *r = ring_of(4096);
	struct dev_ring v;
	struct sink s = { 0 };
	uint8_t *rec;
	struct ring_batch b = { .count = 40, .len = 8 };

	ring_host_view(r, &v);
	rec = (uint8_t *)(uintptr_t)v.data;
	memcpy(rec + RING_HDR_SIZE, &b, sizeof(b));
	model_publish(rec, 8 + 40 * 8, RING_COMMIT | RING_BATCH);
	ck_assert_int_eq(ring_consume(r, take, &s, NULL), EGPU_EFORMAT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "40 records"));
	ring_free(r);
}
END_TEST

START_TEST(concurrent_producers_gpu_protocol)
{
	struct event_ring *r = ring_of(4096);
	struct dev_ring view;

	ring_host_view(r, &view);
	producers_against_consumer(r, &view);
	ring_free(r);
}
END_TEST

/* A lossless ring's producer wanting one big record (lossless test). */
struct big_producer {
	struct dev_ring *view;
	bool kept;
	bool done;
};

static void *produce_big(void *arg)
{
	struct big_producer *p = arg;
	uint8_t big[1000];

	fill(big, sizeof(big), 170); /* after the 170 that fill the ring */
	p->kept = model_produce(p->view, 0, big, sizeof(big));
	__atomic_store_n(&p->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Takes one record a pass: the sink's checks, then stop. */
static int take_one(void *user, const void *data, size_t size)
{
	take(user, data, size);
	return -1;
}

/*
 * A lossless ring's bound is on a consumer that stopped, not on one
 * wait: a producer whose record needs many passes of a consumer that
 * moves every 10 ms (a record a pass) waits past the 200 ms bound and
 * keeps it, as long as each pass moved the consumer position. Before,
 * the bound counted from the start of the wait, and a record behind a
 * slow but live consumer was dropped.
 */
START_TEST(lossless_wait_bound_restarts_when_the_consumer_moves)
{
	struct map_spec spec = { .name = "ll", .type = EGPU_MAP_RINGBUF,
				 .max_entries = 4096,
				 .flags = EGPU_F_RING_LOSSLESS };
	struct timespec nap = { .tv_nsec = 10 * 1000 * 1000 };
	struct event_ring *r = NULL;
	struct big_producer p = { 0 };
	struct sink s = { 0 };
	struct dev_ring v;
	uint64_t sent = 0;
	pthread_t t;
	uint8_t buf[16];

	ck_assert_int_eq(ring_new_for_map(&spec, &r), 0);
	ck_assert_int_eq(ring_set_wait(r, 200 * 1000 * 1000ull), 0);
	ring_host_view(r, &v);
	p.view = &v;
	/* Full: 170 records of 24 bytes, 16 bytes left. */
	for (; sent < 170; sent++) {
		fill(buf, sizeof(buf), sent);
		ck_assert(model_produce(&v, 0, buf, sizeof(buf)));
	}
	ck_assert_int_eq(pthread_create(&t, NULL, produce_big, &p), 0);
	/* 1008 bytes need 42 records consumed: 42 passes, 10 ms apart. */
	while (!__atomic_load_n(&p.done, __ATOMIC_ACQUIRE) && s.count < sent) {
		ck_assert_int_eq(ring_consume(r, take_one, &s, NULL), -1);
		nanosleep(&nap, NULL);
	}
	pthread_join(t, NULL);
	ck_assert_uint_eq(ring_drops(r), 0);
	ck_assert(p.kept);
	ck_assert_uint_lt(s.count, 60); /* it waited for the consumer */
	ck_assert_int_ge(ring_consume(r, take, &s, NULL), 0);
	ck_assert_uint_eq(s.count, sent + 1);
	ring_free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ring");
	TCase *tc = tcase_create("ring");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, capacity_rules);
	tcase_add_test(tc, order_and_wraparound);
	tcase_add_test(tc, discarded_records_are_skipped);
	tcase_add_test(tc, drops_are_counted_exactly);
	tcase_add_test(tc, bad_requests_are_refused);
	tcase_add_test(tc, unpublished_record_blocks_later_ones);
	tcase_add_test(tc, impossible_header_is_an_error);
	tcase_add_test(tc, callback_can_stop);
	tcase_add_test(tc, one_consumer_at_a_time);
	tcase_add_test(tc, concurrent_producers_gpu_protocol);
	tcase_add_test(tc, batches_arrive_as_records);
	tcase_add_test(tc, callback_can_stop_inside_a_batch);
	tcase_add_test(tc, impossible_batch_is_an_error);
	tcase_add_test(tc, lossless_wait_bound_restarts_when_the_consumer_moves);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
