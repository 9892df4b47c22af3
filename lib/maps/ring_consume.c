/* SPDX-License-Identifier: MIT */
/*
 * The consumer of an event ring: walks published records from its
 * position, hands each to a callback where it lies (no copy; a record of a
 * warp's batch is first gathered from its interleaved words), then zeroes
 * the consumed bytes and publishes the new position.
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

static struct ring_hdr ring_hdr_at(const struct event_ring *r, uint64_t pos)
{
	const uint64_t *p = (const uint64_t *)(r->data + (pos & (r->cap - 1)));
	uint64_t word = __atomic_load_n(p, __ATOMIC_ACQUIRE);

	/* Little-endian: len is the low half, flags the high half. */
	return (struct ring_hdr){ .len = (uint32_t)word,
				  .flags = (uint32_t)(word >> 32) };
}

bool ring_ready(const struct event_ring *r)
{
	return ring_hdr_at(r, r->cons).flags & RING_COMMIT;
}

/* What a consumer pass delivers to, and how far it got. */
struct delivery {
	egpu_sample_fn fn;
	void *user;
	uint64_t *bytes;
	int n;   /* records handed to fn */
	int ret; /* fn's last result */
};

static bool deliver(struct delivery *d, const void *data, uint32_t len)
{
	if (d->bytes)
		*d->bytes += len;
	d->n++;
	d->ret = d->fn(d->user, data, len);
	return d->ret >= 0 && d->n < INT32_MAX;
}

/* Whether a published header can be what a producer wrote. */
static int ring_check(const struct event_ring *r, uint64_t pos,
		      struct ring_hdr h, const uint8_t *payload)
{
	struct ring_batch b = { 0 };

	if (h.len > r->max_record - RING_HDR_SIZE)
		return err_set(EGPU_EFORMAT,
			       "ring '%s': record at position %llu claims %u bytes (at most %u): a producer wrote outside its record",
			       r->name, (unsigned long long)pos, h.len,
			       r->max_record - RING_HDR_SIZE);
	if (!(h.flags & RING_BATCH))
		return 0;
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

int ring_consume(struct event_ring *r, egpu_sample_fn fn, void *user,
		 uint64_t *bytes)
{
	/* Give space back every quarter ring, so producers need not wait
	 * for the end of a long batch. */
	const uint64_t batch = r->cap / 4;
	struct delivery d = { .fn = fn, .user = user, .bytes = bytes };
	uint64_t start = r->cons, pos = r->cons;
	int err = 0;

	for (;;) {
		struct ring_hdr h = ring_hdr_at(r, pos);
		const uint8_t *payload = r->data + (pos & (r->cap - 1)) +
					 RING_HDR_SIZE;

		if (!(h.flags & RING_COMMIT))
			break;
		if ((err = ring_check(r, pos, h, payload)))
			break;
		if (h.flags & RING_BATCH) {
			if (!deliver_batch(r, payload, &d))
				break;
		} else if (!(h.flags & RING_DISCARD)) {
			deliver(&d, payload, h.len);
		}
		r->cons_sub = 0;
		pos += ring_record_size(h.len);
		if (pos - start >= batch) {
			ring_release_span(r, start, pos);
			start = pos;
		}
		if (d.ret < 0 || d.n == INT32_MAX)
			break;
	}
	if (pos != start)
		ring_release_span(r, start, pos);
	r->cons = pos;
	return err ? err : d.ret < 0 ? d.ret : d.n;
}
