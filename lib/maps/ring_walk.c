/* SPDX-License-Identifier: MIT */
/*
 * The record walk: published records of a window handed to a consumer's
 * callback where they lie, a warp's batch record by record (or whole, to
 * a part that takes batches), headers checked. Below the consumer of host
 * records (ring_consume.c) and that of rings in GPU memory (ring_dev.c).
 */
#include <string.h>

#include "core/core.h"
#include "maps/ring_impl.h"
#include "maps/span_layout.h"

/* Bytes the header walk asks for ahead of where it is (docs/events.md). */
#define WALK_AHEAD 1024

struct ring_hdr ring_hdr_load(const uint8_t *rec)
{
	uint64_t word = __atomic_load_n((const uint64_t *)rec, __ATOMIC_ACQUIRE);

	/* Little-endian: len is the low half, flags the high half. */
	return (struct ring_hdr){ .len = (uint32_t)word,
				  .flags = (uint32_t)(word >> 32) };
}

/* @n records of @bytes payload handed over, the callback having said @ret. */
static bool delivered(struct delivery *d, uint32_t n, uint64_t bytes, int ret)
{
	if (d->bytes)
		*d->bytes += bytes;
	d->n += (int)n;
	if (d->ret >= 0) /* a stop is kept: chunks taken go on after it */
		d->ret = ret;
	if (ret < 0 && d->stop)
		__atomic_store_n(d->stop, 1, __ATOMIC_RELAXED);
	return ret >= 0 && d->n < INT32_MAX;
}

static bool deliver(struct delivery *d, const void *data, uint32_t len)
{
	return delivered(d, 1, len, d->fn(d->user, data, len));
}

bool ring_pass_stopped(const struct delivery *d)
{
	return d->stop && __atomic_load_n(d->stop, __ATOMIC_RELAXED);
}

/* Whether a published header's length can be what a producer wrote. */
static int ring_check_len(const struct event_ring *r, uint64_t pos,
			  struct ring_hdr h)
{
	if (h.len <= r->max_record - RING_HDR_SIZE)
		return 0;
	return err_set(EGPU_EFORMAT,
		       "ring '%s': record at position %llu claims %u bytes (at most %u): a producer wrote outside its record",
		       r->name, (unsigned long long)pos, h.len,
		       r->max_record - RING_HDR_SIZE);
}

/* Whether a batch's own header agrees with its record's. */
static int ring_check_batch(const struct event_ring *r, uint64_t pos,
			    struct ring_hdr h, const uint8_t *payload)
{
	struct ring_batch b = { 0 };

	if (h.len >= sizeof(b))
		memcpy(&b, payload, sizeof(b));
	if (h.len < sizeof(b) || !b.count || b.count > RING_BATCH_MAX ||
	    ring_batch_size(b.count, b.len) != RING_HDR_SIZE + h.len)
		return err_set(EGPU_EFORMAT,
			       "ring '%s': batch at position %llu of %u bytes claims %u records of %u bytes",
			       r->name, (unsigned long long)pos, h.len, b.count,
			       b.len);
	return 0;
}

/*
 * Hand the records of the batch at @payload to @d from *@sub on, each
 * made contiguous (or all at once, as they lie, to a part that takes
 * batches). Whether all were: otherwise *@sub says how many were, and the
 * next pass goes on from there.
 */
static bool deliver_batch(const uint8_t *payload, struct delivery *d,
			  uint32_t *sub)
{
	struct ring_batch b;
	const uint64_t *words = (const uint64_t *)(payload + sizeof(b));
	uint32_t nwords;

	memcpy(&b, payload, sizeof(b));
	/* The rest of the batch at once, where the part takes batches. */
	if (d->take_batch && b.count - *sub <= (uint32_t)(INT32_MAX - d->n)) {
		uint32_t from = *sub;

		*sub = b.count;
		delivered(d, b.count - from, (uint64_t)(b.count - from) * b.len,
			  d->take_batch(d->user, words, b.count, b.len, from));
		return true;
	}
	nwords = (b.len + 7) / 8;
	while (*sub < b.count) {
		uint64_t *out = (uint64_t *)d->rd->unpacked;

		for (uint32_t k = 0; k < nwords; k++)
			out[k] = words[(size_t)k * b.count + *sub];
		(*sub)++;
		if (!deliver(d, out, b.len))
			return *sub == b.count;
	}
	return true;
}

/* Whether the record was handed over whole (a batch may stop inside). */
static bool deliver_record(struct ring_hdr h, const uint8_t *payload,
			   struct delivery *d, uint32_t *sub)
{
	if (h.flags & RING_BATCH)
		return deliver_batch(payload, d, sub);
	if (!(h.flags & RING_DISCARD))
		deliver(d, payload, h.len);
	return true;
}

void ring_set_reclaim(struct event_ring *r, bool on)
{
	r->reclaim = on;
}

/*
 * Whether an unpublished header is a span to take anyway: its producers
 * ended (egpu_ringbuf_reclaim), and its length was stored at the claim.
 */
static bool ring_reclaims(const struct event_ring *r, struct ring_hdr h)
{
	return r->reclaim && (h.flags & RING_SPAN) && h.len;
}

/*
 * Whether the record at @pos of @w can be taken, its header into *@h: 0,
 * or WALK_WAIT (not published), WALK_SHORT (not all in the window) or an
 * EGPU_E* code (an impossible header).
 */
static int take_header(const struct event_ring *r, const struct ring_window *w,
		       uint64_t pos, struct ring_hdr *h)
{
	int err;

	if (w->bytes_end - pos < RING_HDR_SIZE)
		return WALK_SHORT;
	*h = ring_hdr_load(w->base + (pos - w->from));
	if (!(h->flags & RING_COMMIT) && !ring_reclaims(r, *h))
		return WALK_WAIT;
	if ((err = ring_check_len(r, pos, *h)))
		return err;
	return w->bytes_end - pos < ring_record_size(h->len) ? WALK_SHORT : 0;
}

int ring_walk_headers(const struct event_ring *r, const struct ring_window *w,
		      uint64_t *pos, struct ring_count *c, bool bodies)
{
	int end = WALK_END;
	struct ring_hdr h;

	while (*pos < w->starts_end && !(end = take_header(r, w, *pos, &h))) {
		const uint8_t *payload = w->base + (*pos - w->from) + RING_HDR_SIZE;
		struct ring_batch b = { .count = 1, .len = h.len };

		/* Each header's place depends on the last one's length, so the
		 * walk would wait for memory at every one: ask for later ones
		 * ahead (a prefetch never faults). */
		__builtin_prefetch(payload + WALK_AHEAD);
		if (c && (h.flags & RING_BATCH) && bodies) {
			if ((end = ring_check_batch(r, *pos, h, payload)))
				return end;
			memcpy(&b, payload, sizeof(b));
		}
		if (c && !(h.flags & RING_DISCARD)) {
			c->batches += !!(h.flags & RING_BATCH);
			c->records += b.count;
			c->bytes += (uint64_t)b.count * b.len;
		}
		if (c && !(h.flags & RING_COUNTED))
			c->uncounted += ring_record_size(h.len);
		*pos += ring_record_size(h.len);
		if (c && c->records >= INT32_MAX / 2)
			return WALK_STOP; /* a pass's count is an int */
	}
	return end;
}

bool ring_hand_chunk(struct delivery *d, const uint8_t *data, uint64_t size,
		     const struct ring_count *c)
{
	if (!size)
		return true;
	if ((uint64_t)d->n + c->records >= INT32_MAX)
		d->n = INT32_MAX - (int)c->records; /* saturates */
	return delivered(d, (uint32_t)c->records, c->bytes,
			 d->chunk(d->user, data, size));
}

/* Chunk delivery of a window read in place (host records). */
static int walk_chunk(const struct event_ring *r, const struct ring_window *w,
		      struct delivery *d, uint64_t *pos)
{
	struct ring_count c = { 0 };
	uint64_t start = *pos;
	int end = ring_walk_headers(r, w, pos, &c, true);

	if (!ring_hand_chunk(d, w->base + (start - w->from), *pos - start, &c) &&
	    end >= 0)
		return WALK_STOP;
	return end;
}

int ring_walk(const struct event_ring *r, const struct ring_window *w,
	      struct delivery *d, uint64_t *pos, uint32_t *sub)
{
	if (d->chunk)
		return ring_pass_stopped(d) ? WALK_STOP : walk_chunk(r, w, d, pos);
	while (*pos < w->starts_end) {
		const uint8_t *rec = w->base + (*pos - w->from);
		struct ring_hdr h;
		int err;

		if ((err = take_header(r, w, *pos, &h)))
			return err;
		if (ring_pass_stopped(d))
			return WALK_STOP;
		if ((h.flags & RING_BATCH) &&
		    (err = ring_check_batch(r, *pos, h, rec + RING_HDR_SIZE)))
			return err;
		if (!deliver_record(h, rec + RING_HDR_SIZE, d, sub))
			return WALK_STOP;
		*sub = 0;
		*pos += ring_record_size(h.len);
		if (d->ret < 0 || d->n == INT32_MAX)
			return WALK_STOP;
	}
	return WALK_END;
}
