/* SPDX-License-Identifier: MIT */
/*
 * What the ring tests share (test_ring.c, test_ring_dev.c): payloads that
 * say what they are, a consumer that checks them, and host threads playing
 * the GPU's producer protocol (lib/device/ring.cuh) on a ring's memory.
 */
#ifndef EGPU_TEST_RING_MODEL_H
#define EGPU_TEST_RING_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "maps/ring.h"

/* A payload that says what it is: seq, then bytes derived from it. */
void fill(uint8_t *p, uint32_t len, uint64_t seq);
/* Whether @p is what fill() wrote; its seq in *@seq. */
bool intact(const uint8_t *p, uint32_t len, uint64_t *seq);

/* Checks records arrive in sequence with intact payloads. */
struct sink {
	uint64_t next;
	uint64_t count;
	int stop_at; /* return -42 for this record (1-based), 0: never */
};

/* An egpu_sample_fn with a struct sink as @user. */
int take(void *user, const void *data, size_t size);

/*
 * The GPU's protocol played by host threads on the memory @v describes
 * (ring_host_view, ring_dev_start): reserved += need with a capacity check
 * and undo, prod += need for the position, payload, then a release store
 * of the header, in the ring or, in a ring in GPU memory, in the shard of
 * SM @sm (ring_shard_of in lib/device/ring.cuh). A host thread plays one
 * lane, or a whole warp outputting a batch (ring_output_batch), all of
 * whose records fit or none (the GPU may also keep a prefix: the consumer
 * cannot tell). Whether it was kept (else counted as dropped).
 */
bool model_produce(struct dev_ring *v, uint32_t sm, const uint8_t *payload,
		   uint32_t len);
/* @count records of @len bytes, record i at @payloads + i * @len. */
bool model_produce_batch(struct dev_ring *v, uint32_t sm,
			 const uint8_t *payloads, uint32_t count, uint32_t len);
/*
 * The two steps of model_produce*() before publishing: reserve @need bytes
 * for @records records on SM @sm (the record's address, or NULL: dropped
 * and counted), and write a batch's body (all but its header) at @rec.
 */
uint8_t *model_reserve_on(struct dev_ring *v, uint32_t sm, uint64_t need,
			  uint32_t records);
/* The same, the position reserved (UINT64_MAX: dropped). */
uint64_t model_reserve_pos(struct dev_ring *v, uint32_t sm, uint64_t need,
			   uint32_t records);
/*
 * The same for @need bytes already added to reserved, which held @before
 * until then (ring_claim_held: a reservation handed on), waiting where a
 * lossless ring waits.
 */
uint64_t model_reserve_held(struct dev_ring *v, uint32_t sm, uint64_t before,
			    uint64_t need, uint32_t records);
/*
 * The cached consumer position (ring.cuh's ring_cons_seen). On the GPU the
 * writes into the space wait for this load by their dependency on it; C11
 * orders nothing by dependency, so the model acquires the position, and
 * the cache passes the host's release on (what a TSan build checks).
 */
uint64_t model_cons_seen(const struct ring_counters *c);
/*
 * The position of @need bytes whose check passed: prod's addition. Its
 * room may have been checked by a later reservation placed first (below
 * it), against a consumer position this producer never read; on the GPU
 * the zeroes of that room were copied, whole, before the host published
 * that position, so this producer's stores, after its prod atomic and
 * hence after that reservation's check in time, come after them. C11
 * needs the order said: acq_rel on prod passes the check's acquire on
 * (docs/events.md: "Warps on threads against the consumer").
 */
uint64_t model_hand_out(struct ring_counters *c, uint64_t need);
void model_batch_body(uint8_t *rec, const uint8_t *payloads, uint32_t count,
		      uint32_t len);
/*
 * Each record of a chunk (published, a warp's batch one by one, made
 * contiguous) to @fn(@user, ...); 0, as a chunk callback returns.
 */
int chunk_each_record(const void *data, size_t size, egpu_sample_fn fn,
		      void *user);
/* Every shard's reservations undone or handed out (reserved == prod). */
void model_assert_settled(struct dev_ring *v);
/* Store a record's header (release): publishes it. */
void model_publish(uint8_t *rec, uint32_t len, uint32_t flags);
/*
 * Publish the record at @rec of SM @sm's shard as ring_publish_counted
 * and span_publish do: counted in a ring in GPU memory.
 */
void model_publish_on(struct dev_ring *v, uint32_t sm, uint8_t *rec,
		      uint32_t len, uint32_t flags);

/*
 * Four host threads play the GPU's producers into @r (@view: its GPU
 * side), two to a shard if it has shards, while this thread consumes:
 * every record arrives intact and in per-producer order, or is counted as
 * dropped; every undo is undone.
 */
void producers_against_consumer(struct event_ring *r, struct dev_ring *view);
struct ring_pool;
/*
 * The same with the pass split in @parts parts (ring_consume_parts) on
 * the threads of @pool (NULL: one after the other): each producer's
 * records also always reach the same part.
 */
void producers_against_consumers(struct event_ring *r, struct dev_ring *view,
				 struct ring_pool *pool, uint32_t parts);
/* The same, delivered as chunks if @chunks. */
void producers_against_chunks(struct event_ring *r, struct dev_ring *view,
			      struct ring_pool *pool, uint32_t parts, bool chunks);

#endif
