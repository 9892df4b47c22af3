/* SPDX-License-Identifier: MIT */
/*
 * The consumer of an event ring: walks published records from its
 * position, hands each to a callback where it lies (no copy), then zeroes
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

int ring_consume(struct event_ring *r, egpu_sample_fn fn, void *user,
		 uint64_t *bytes)
{
	/* Give space back every quarter ring, so producers need not wait
	 * for the end of a long batch. */
	const uint64_t batch = r->cap / 4;
	uint64_t start = r->cons, pos = r->cons;
	int n = 0, ret = 0;

	for (;;) {
		struct ring_hdr h = ring_hdr_at(r, pos);
		const uint8_t *payload;

		if (!(h.flags & RING_COMMIT))
			break;
		if (h.len > r->max_record - RING_HDR_SIZE) {
			ret = err_set(EGPU_EFORMAT,
				      "ring '%s': record at position %llu claims %u bytes (at most %u): a producer wrote outside its record",
				      r->name, (unsigned long long)pos, h.len,
				      r->max_record - RING_HDR_SIZE);
			break;
		}
		payload = r->data + (pos & (r->cap - 1)) + RING_HDR_SIZE;
		pos += ring_record_size(h.len);
		if (!(h.flags & RING_DISCARD)) {
			if (bytes)
				*bytes += h.len;
			n++;
			ret = fn(user, payload, h.len);
			if (ret < 0)
				break;
		}
		if (pos - start >= batch) {
			ring_release_span(r, start, pos);
			start = pos;
		}
		if (n == INT32_MAX)
			break;
	}
	if (pos != start)
		ring_release_span(r, start, pos);
	r->cons = pos;
	return ret < 0 ? ret : n;
}
