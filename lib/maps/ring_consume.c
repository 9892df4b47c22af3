/* SPDX-License-Identifier: MIT */
/*
 * The consumer of an event ring: walks published records from its
 * position, hands each to a callback where it lies (no copy; a record of a
 * warp's batch is first gathered from its interleaved words), then zeroes
 * the consumed bytes and publishes the new position. The walk (ring_walk)
 * also serves rings in GPU memory, over the copy ring_dev.c made of them.
 *
 * Zeroing is what makes a header trustworthy: every header position reads
 * zero until a producer publishes a record there, so stale bytes of an
 * older lap (whatever a payload held) are never taken for a header. The
 * zeroes are stored before the position is released (x86 keeps stores in
 * order; the release store orders them elsewhere), and producers write a
 * region only after reading a consumer position past it.
 */
#include <string.h>

#include "core/core.h"
#include "maps/ring_impl.h"

/* Give the bytes in [from, to) back to producers. */
static void ring_release_span(struct event_ring *r, uint64_t from, uint64_t to)
{
	uint64_t off = from & (r->cap - 1), n = to - from;

	if (off + n <= r->cap) {
		memset(r->data + off, 0, n);
	} else {
		memset(r->data + off, 0, r->cap - off);
		memset(r->data, 0, n - (r->cap - off));
	}
	__atomic_store_n(&r->ctl->cons, to, __ATOMIC_RELEASE);
}

static struct ring_hdr ring_hdr_load(const uint8_t *rec)
{
	uint64_t word = __atomic_load_n((const uint64_t *)rec, __ATOMIC_ACQUIRE);

	/* Little-endian: len is the low half, flags the high half. */
	return (struct ring_hdr){ .len = (uint32_t)word,
				  .flags = (uint32_t)(word >> 32) };
}

bool ring_ready(const struct event_ring *r)
{
	if (ring_dev_reading(r))
		return ring_dev_ready(r);
	return ring_hdr_load(r->data + (r->cons & (r->cap - 1))).flags & RING_COMMIT;
}

static bool deliver(struct delivery *d, const void *data, uint32_t len)
{
	if (d->bytes)
		*d->bytes += len;
	d->n++;
	d->ret = d->fn(d->user, data, len);
	return d->ret >= 0 && d->n < INT32_MAX;
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
 * Hand the records of the batch at @payload to @d from r->cons_sub on,
 * each made contiguous. Whether all were: otherwise r->cons_sub says how
 * many were, and the next pass goes on from there.
 */
static bool deliver_batch(struct event_ring *r, const uint8_t *payload,
			  struct delivery *d)
{
	struct ring_batch b;
	const uint64_t *words = (const uint64_t *)(payload + sizeof(b));
	uint32_t nwords;

	memcpy(&b, payload, sizeof(b));
	nwords = (b.len + 7) / 8;
	while (r->cons_sub < b.count) {
		uint64_t *out = (uint64_t *)r->unpacked;

		for (uint32_t k = 0; k < nwords; k++)
			out[k] = words[(size_t)k * b.count + r->cons_sub];
		r->cons_sub++;
		if (!deliver(d, out, b.len))
			return r->cons_sub == b.count;
	}
	return true;
}

/* Whether the record was handed over whole (a batch may stop inside). */
static bool deliver_record(struct event_ring *r, struct ring_hdr h,
			   const uint8_t *payload, struct delivery *d)
{
	if (h.flags & RING_BATCH)
		return deliver_batch(r, payload, d);
	if (!(h.flags & RING_DISCARD))
		deliver(d, payload, h.len);
	return true;
}

int ring_walk(struct event_ring *r, const struct ring_window *w,
	      struct delivery *d, uint64_t *pos)
{
	while (*pos < w->starts_end) {
		const uint8_t *rec = w->base + (*pos - w->from);
		struct ring_hdr h;
		int err;

		if (w->bytes_end - *pos < RING_HDR_SIZE)
			return WALK_SHORT;
		h = ring_hdr_load(rec);
		if (!(h.flags & RING_COMMIT))
			return WALK_WAIT;
		if ((err = ring_check_len(r, *pos, h)))
			return err;
		if (w->bytes_end - *pos < ring_record_size(h.len))
			return WALK_SHORT;
		/*
		 * Without @d only headers are looked at: in a first copy of a
		 * ring in GPU memory a published header may come with a body
		 * read before it landed (ring_dev.c), a batch's count included.
		 */
		if (!d) {
			*pos += ring_record_size(h.len);
			continue;
		}
		if ((h.flags & RING_BATCH) &&
		    (err = ring_check_batch(r, *pos, h, rec + RING_HDR_SIZE)))
			return err;
		if (!deliver_record(r, h, rec + RING_HDR_SIZE, d))
			return WALK_STOP;
		r->cons_sub = 0;
		*pos += ring_record_size(h.len);
		if (d->ret < 0 || d->n == INT32_MAX)
			return WALK_STOP;
	}
	return WALK_END;
}

/*
 * The records in host memory, a window at a time: up to the end of the
 * records (the next lap starts at the beginning), at most a quarter ring,
 * so that producers get space back during a long pass.
 */
static int host_consume(struct event_ring *r, struct delivery *d)
{
	const uint64_t quarter = r->cap / 4;

	for (;;) {
		uint64_t from = r->cons, off = from & (r->cap - 1);
		uint64_t span = r->cap - off < quarter ? r->cap - off : quarter;
		struct ring_window w = { .base = r->data + off, .from = from,
					 .starts_end = from + span,
					 .bytes_end = UINT64_MAX };
		int end = ring_walk(r, &w, d, &r->cons);

		if (r->cons != from)
			ring_release_span(r, from, r->cons);
		if (end != WALK_END)
			return end < 0 ? end : 0;
	}
}

int ring_consume(struct event_ring *r, egpu_sample_fn fn, void *user,
		 uint64_t *bytes)
{
	struct delivery d = { .fn = fn, .user = user, .bytes = bytes };
	int err = 0;

	/* Records the CPU back end left in host memory come first. */
	if (!ring_dev_reading(r))
		err = host_consume(r, &d);
	if (!err && d.ret >= 0 && d.n < INT32_MAX && ring_dev_reading(r))
		err = ring_dev_consume(r, &d);
	return err ? err : d.ret < 0 ? d.ret : d.n;
}
