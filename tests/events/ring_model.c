// SPDX-License-Identifier: MIT
/* The ring tests' producers and checks (ring_model.h). */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "ring_model.h"
#include "test_util.h"

void fill(uint8_t *p, uint32_t len, uint64_t seq)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seq * 31 + i);
	if (len >= 8)
		memcpy(p, &seq, 8);
}

bool intact(const uint8_t *p, uint32_t len, uint64_t *seq)
{
	memcpy(seq, p, 8);
	for (uint32_t i = 8; i < len; i++)
		if (p[i] != (uint8_t)(*seq * 31 + i))
			return false;
	return true;
}

int take(void *user, const void *data, size_t size)
{
	struct sink *s = user;
	uint64_t seq;

	ck_assert_uint_ge(size, 8);
	ck_assert_msg(intact(data, (uint32_t)size, &seq), "record %llu torn",
		      (unsigned long long)s->next);
	ck_assert_uint_eq(seq, s->next);
	s->next++;
	s->count++;
	return (int)s->count == s->stop_at ? -42 : 0;
}

/* Where a producer's records go: lib/device/ring.cuh's ring_shard. */
struct model_shard {
	struct ring_counters *ctr;
	uint64_t *cons;
	uint64_t *drops;
	uint8_t *data;
	uint64_t mask;
	uint64_t *stall;
	uint64_t wait_ns; /* lossless rings: the longest wait, else 0 */
	uint64_t *done;   /* published-bytes word, NULL in host memory */
};

static void *ptr(uint64_t addr)
{
	return (void *)(uintptr_t)addr;
}

/* ring_shard_of() for a thread on SM @sm. */
static struct model_shard model_shard_of(struct dev_ring *v, uint32_t sm)
{
	struct ring_ctl *ctl = ptr(v->ctl);
	uint32_t i = ring_shard_index(v, sm);
	uint64_t wait = v->flags & RING_LOSSLESS ? v->wait_ns : 0;

	if (!(v->flags & RING_IN_DEVICE_MEMORY))
		return (struct model_shard){ (struct ring_counters *)v, &ctl->cons,
					     &ctl->drops, ptr(v->data), v->mask,
					     &v->stall, wait, NULL };
	return (struct model_shard){ ptr(ring_shard_counters(v, i)),
				     ptr(ring_shard_cons(v, i)),
				     ptr(ring_shard_drops(v, i)),
				     ptr(ring_shard_data(v, i)), v->mask,
				     ptr(ring_shard_stall(v, i)), wait,
				     ptr(ring_shard_done(v, i)) };
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/*
 * ring_wait_room (lib/device/ring.cuh): a lossless ring's bounded wait,
 * the bound counted from the consumer position's last move.
 */
static uint64_t model_wait_room(const struct model_shard *s, uint64_t before,
				uint64_t need, uint64_t cons)
{
	uint64_t cap = s->mask + 1, t0 = now_ns(), seen = cons;

	for (;;) {
		uint64_t stall = __atomic_load_n(s->stall, __ATOMIC_RELAXED);

		if (before + need <= cons + cap || !ring_may_wait(stall, cons))
			return cons;
		if (cons != seen) {
			seen = cons;
			t0 = now_ns();
		}
		if (now_ns() - t0 > s->wait_ns) {
			__atomic_store_n(s->stall, cons + 1, __ATOMIC_RELAXED);
			return cons;
		}
		sched_yield();
		cons = __atomic_load_n(s->cons, __ATOMIC_ACQUIRE);
	}
}

uint64_t model_cons_seen(const struct ring_counters *c)
{
	return __atomic_load_n(&c->cons_seen, __ATOMIC_ACQUIRE);
}

uint64_t model_hand_out(struct ring_counters *c, uint64_t need)
{
	return __atomic_fetch_add(&c->prod, need, __ATOMIC_ACQ_REL);
}

/*
 * The position of @need bytes reserved from @before (reserved's value
 * before them; ring_room's check, the cached consumer position @cons
 * loaded before the reservation or after it), or UINT64_MAX when dropped
 * (@records drops counted).
 */
static uint64_t model_place(const struct model_shard *s, uint64_t before,
			    uint64_t need, uint32_t records, uint64_t cons)
{
	struct ring_counters *c = s->ctr;
	uint64_t cap = s->mask + 1, seen;

	if (before + need - cons > cap) {
		cons = __atomic_load_n(s->cons, __ATOMIC_ACQUIRE);
		if (s->wait_ns)
			cons = model_wait_room(s, before, need, cons);
		seen = __atomic_load_n(&c->cons_seen, __ATOMIC_RELAXED);
		while (seen < cons &&
		       !__atomic_compare_exchange_n(&c->cons_seen, &seen, cons, true,
						    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
	}
	if (before + need > cons + cap) {
		__atomic_fetch_sub(&c->reserved, need, __ATOMIC_RELAXED);
		__atomic_fetch_add(s->drops, records, __ATOMIC_RELAXED);
		return UINT64_MAX;
	}
	return model_hand_out(c, need);
}

/* The position reserved, or UINT64_MAX when dropped (@records drops counted). */
static uint64_t model_reserve(const struct model_shard *s, uint64_t need,
			      uint32_t records)
{
	struct ring_counters *c = s->ctr;
	uint64_t cons = model_cons_seen(c);
	uint64_t before = __atomic_fetch_add(&c->reserved, need, __ATOMIC_RELAXED);

	return model_place(s, before, need, records, cons);
}

void model_publish(uint8_t *rec, uint32_t len, uint32_t flags)
{
	__atomic_store_n((uint64_t *)rec, (uint64_t)flags << 32 | len,
			 __ATOMIC_RELEASE);
}

/*
 * Publish the record at @rec of shard @s as ring_publish_counted does: in
 * a ring in GPU memory, its bytes added to the shard's published-bytes
 * word after its payload (release: the GPU's fence) and before its
 * header, marked RING_COUNTED.
 */
static void model_publish_in(const struct model_shard *s, uint8_t *rec,
			     uint32_t len, uint32_t flags)
{
	if (!s->done) {
		model_publish(rec, len, flags);
		return;
	}
	__atomic_fetch_add(s->done, ring_record_size(len), __ATOMIC_RELEASE);
	model_publish(rec, len, flags | RING_COUNTED);
}

void model_publish_on(struct dev_ring *v, uint32_t sm, uint8_t *rec,
		      uint32_t len, uint32_t flags)
{
	struct model_shard s = model_shard_of(v, sm);

	model_publish_in(&s, rec, len, flags);
}

uint64_t model_reserve_pos(struct dev_ring *v, uint32_t sm, uint64_t need,
			   uint32_t records)
{
	struct model_shard s = model_shard_of(v, sm);

	return model_reserve(&s, need, records);
}

uint64_t model_reserve_held(struct dev_ring *v, uint32_t sm, uint64_t before,
			    uint64_t need, uint32_t records)
{
	struct model_shard s = model_shard_of(v, sm);

	return model_place(&s, before, need, records, model_cons_seen(s.ctr));
}

uint8_t *model_reserve_on(struct dev_ring *v, uint32_t sm, uint64_t need,
			  uint32_t records)
{
	struct model_shard s = model_shard_of(v, sm);
	uint64_t pos = model_reserve(&s, need, records);

	return pos == UINT64_MAX ? NULL : s.data + (pos & s.mask);
}

void model_batch_body(uint8_t *rec, const uint8_t *payloads, uint32_t count,
		      uint32_t len)
{
	uint32_t words = (len + 7) / 8;
	struct ring_batch b = { .count = count, .len = len };

	memcpy(rec + RING_HDR_SIZE, &b, sizeof(b));
	for (uint32_t i = 0; i < count; i++) {
		uint64_t w[256 / 8];

		/* Past a record's end in its last word: whatever the lane had. */
		memset(w, 0xa5, sizeof(w));
		memcpy(w, payloads + (size_t)i * len, len);
		for (uint32_t k = 0; k < words; k++)
			memcpy(rec + RING_HDR_SIZE + sizeof(b) +
			       8 * ((size_t)k * count + i), &w[k], 8);
	}
}

bool model_produce(struct dev_ring *v, uint32_t sm, const uint8_t *payload,
		   uint32_t len)
{
	struct model_shard s = model_shard_of(v, sm);
	uint64_t pos = model_reserve(&s, ring_record_size(len), 1);
	uint8_t *rec;

	if (pos == UINT64_MAX)
		return false;
	rec = s.data + (pos & s.mask);
	memcpy(rec + RING_HDR_SIZE, payload, len);
	model_publish_in(&s, rec, len, RING_COMMIT);
	return true;
}

bool model_produce_batch(struct dev_ring *v, uint32_t sm,
			 const uint8_t *payloads, uint32_t count, uint32_t len)
{
	struct model_shard s = model_shard_of(v, sm);
	uint64_t size = ring_batch_size(count, len);
	uint64_t pos = model_reserve(&s, size, count);
	uint8_t *rec;

	if (pos == UINT64_MAX)
		return false;
	rec = s.data + (pos & s.mask);
	model_batch_body(rec, payloads, count, len);
	model_publish_in(&s, rec, (uint32_t)(size - RING_HDR_SIZE),
			 RING_COMMIT | RING_BATCH);
	return true;
}

int chunk_each_record(const void *data, size_t size, egpu_sample_fn fn,
		      void *user)
{
	struct egpu_chunk_iter it = { data, (const uint8_t *)data + size };
	struct egpu_chunk_rec rec;
	uint64_t one[RING_RECORD_MAX / 8];
	int more;

	while ((more = egpu_chunk_next(&it, &rec)) == 1) {
		const struct ring_batch *b = rec.data;

		ck_assert(rec.flags & RING_COMMIT);
		if (!(rec.flags & RING_BATCH)) {
			fn(user, rec.data, rec.size);
			continue;
		}
		for (uint32_t i = 0; i < b->count; i++) {
			for (uint32_t k = 0; k < (b->len + 7) / 8; k++)
				one[k] = b->words[(size_t)k * b->count + i];
			fn(user, one, b->len);
		}
	}
	ck_assert_int_eq(more, 0);
	return 0;
}

void model_assert_settled(struct dev_ring *v)
{
	for (uint32_t i = 0; i < v->shards; i++) {
		struct model_shard s = model_shard_of(v, i);

		ck_assert_uint_eq(s.ctr->reserved, s.ctr->prod);
	}
}

#define PRODUCERS 4
#define PER_PRODUCER TU_ROUNDS(100000)

/*
 * A producer thread (produce()): PER_PRODUCER records tagged with its id,
 * odd ids as warps outputting batches of 1 to 8 records. Producer i plays
 * a thread on SM producer_sm(i): in a ring of a power of two shards, 0 and
 * 2 share a shard (as SMs 0 and 128 do), and so do 1 and 3.
 */
struct producer {
	struct dev_ring *view;
	uint32_t id;
	uint64_t sent;
	bool finished;
};

/* Checks what producers sent: intact, never backwards per producer. */
struct checker {
	uint64_t next[PRODUCERS]; /* lowest seq still possible per producer */
	uint64_t got;
	bool bad;
	uint32_t part;
	int *owner; /* per producer: the part its records reach, or -1 */
};

static uint32_t producer_sm(uint32_t id)
{
	return (id % 2) * 5 + (id / 2) * RING_SHARDS_MAX;
}

static void *produce(void *arg)
{
	struct producer *p = arg;
	uint8_t buf[8 * 216];
	uint64_t seq = 0;

	while (seq < PER_PRODUCER) {
		uint32_t len = 16 + (uint32_t)((seq * 7 + p->id) % 200);
		uint32_t count = p->id % 2 ? 1 + (uint32_t)(seq % 8) : 1;

		if (count > PER_PRODUCER - seq)
			count = (uint32_t)(PER_PRODUCER - seq);
		for (uint32_t i = 0; i < count; i++)
			fill(buf + (size_t)i * len, len,
			     (uint64_t)p->id << 48 | (seq + i));
		if (p->id % 2)
			p->sent += model_produce_batch(p->view, producer_sm(p->id),
						       buf, count, len) * count;
		else
			p->sent += model_produce(p->view, producer_sm(p->id),
						 buf, len);
		/* Let the consumer in now and then, even on one core. */
		if (seq % 64 < count)
			sched_yield();
		seq += count;
	}
	__atomic_store_n(&p->finished, true, __ATOMIC_RELEASE);
	return NULL;
}

static int check_record(void *user, const void *data, size_t size)
{
	struct checker *c = user;
	uint64_t tag, seq;
	uint32_t id;
	int none = -1;

	if (!intact(data, (uint32_t)size, &tag))
		c->bad = true;
	id = (uint32_t)(tag >> 48);
	seq = tag & 0xffffffffffffull;
	/* Drops leave gaps, but a producer's records never go backwards. */
	if (id >= PRODUCERS || seq < c->next[id])
		c->bad = true;
	else
		c->next[id] = seq + 1;
	/* ... and all reach the same part (one shard, one thread). */
	if (id < PRODUCERS &&
	    !__atomic_compare_exchange_n(&c->owner[id], &none, (int)c->part,
					 false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED) &&
	    none != (int)c->part)
		c->bad = true;
	c->got++;
	return 0;
}

/* A chunk's records, each checked as check_record does. */
static int check_chunk(void *user, const void *data, size_t size)
{
	return chunk_each_record(data, size, check_record, user);
}

void producers_against_consumers(struct event_ring *r, struct dev_ring *view,
				 struct ring_pool *pool, uint32_t parts)
{
	producers_against_chunks(r, view, pool, parts, false);
}

void producers_against_chunks(struct event_ring *r, struct dev_ring *view,
			      struct ring_pool *pool, uint32_t parts, bool chunks)
{
	struct producer p[PRODUCERS];
	pthread_t t[PRODUCERS];
	struct checker c[RING_READERS_MAX];
	struct ring_part part[RING_READERS_MAX];
	int owner[PRODUCERS] = { -1, -1, -1, -1 };
	uint64_t sent = 0, got = 0;
	int done = 0;

	ck_assert_int_eq(ring_make_readers(r, parts), 0);
	for (uint32_t k = 0; k < parts; k++) {
		c[k] = (struct checker){ .part = k, .owner = owner };
		part[k] = chunks ?
			(struct ring_part){ .chunk = check_chunk, .user = &c[k] } :
			(struct ring_part){ .fn = check_record, .user = &c[k] };
	}
	for (uint32_t i = 0; i < PRODUCERS; i++) {
		p[i] = (struct producer){ .view = view, .id = i };
		ck_assert_int_eq(pthread_create(&t[i], NULL, produce, &p[i]), 0);
	}
	/* Consume while they produce, then what is left. */
	while (done < PRODUCERS) {
		done = 0;
		for (uint32_t i = 0; i < PRODUCERS; i++)
			done += __atomic_load_n(&p[i].finished, __ATOMIC_ACQUIRE);
		ck_assert_int_ge(ring_consume_parts(r, part, parts, pool), 0);
	}
	for (uint32_t i = 0; i < PRODUCERS; i++) {
		pthread_join(t[i], NULL);
		sent += p[i].sent;
	}
	ck_assert_int_ge(ring_consume_parts(r, part, parts, pool), 0);
	for (uint32_t k = 0; k < parts; k++) {
		ck_assert(!c[k].bad);
		ck_assert_uint_eq(part[k].records, c[k].got);
		got += c[k].got;
	}
	ck_assert_uint_eq(got, sent);
	ck_assert_uint_eq(got + ring_drops(r), PRODUCERS * PER_PRODUCER);
	ck_assert_uint_gt(got, 1000);
	model_assert_settled(view);
}

void producers_against_consumer(struct event_ring *r, struct dev_ring *view)
{
	producers_against_consumers(r, view, NULL, 1);
}
