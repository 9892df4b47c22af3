/* SPDX-License-Identifier: MIT */
/*
 * Span records of memory accesses (bpf_egpu_trace_span, helper 524; the
 * protocol and its proof: docs/events.md, "Spans"): the layout the GPU
 * writes, the host decodes and the CPU model plays, and the pure parts of
 * the producer's logic (the per-lane state and its decisions), so that
 * lib/device/span_trace.cuh and tests/events/test_span.c run one source.
 *
 * A span is one ring record claimed whole by one lane (its owner) and
 * filled with the compact records of the warp accesses it leads; it is
 * published once, with one fence and one header store, when full or when
 * its owner flushes (exit probe) or leads no more. In 16-byte slots:
 *
 *   slot 0      struct ring_hdr {len, flags}, struct span_info
 *   slot 1...   records, each one or more slots; an all-zero word ends them
 *
 * Claimed, a span's header reads {len, RING_SPAN} (no RING_COMMIT: still
 * unpublished, but its length is known, so a consumer told that no
 * producer runs any more can take it: ring_walk's reclaim); published,
 * {len, RING_COMMIT | RING_SPAN}. A span never crosses its shard's end
 * (one that would is published as a discard and claimed again), so the
 * consumer's zeroing covers all of it and unused slots read zero.
 */
#ifndef EGPU_MAPS_SPAN_LAYOUT_H
#define EGPU_MAPS_SPAN_LAYOUT_H

#include "maps/ring_layout.h"

/* struct ring_hdr.flags: the payload is a span (with RING_COMMIT: published) */
#define RING_SPAN 16u

#define SPAN_SLOT 16u
#define SPAN_MIN_SLOTS 4u   /* a warp's first span: 64 bytes */
#define SPAN_MAX_SLOTS 256u /* spans double up to 4 KiB */

/* Slot 0's second word: who owns the span (all its records are one warp's). */
struct span_info {
	uint32_t block; /* linear block index */
	uint16_t warp;  /* warp of the block (threadIdx linear / 32) */
	uint16_t smid;
};

/*
 * A record's first word (never zero):
 *   bits 0-1 format: SPAN_AFFINE, SPAN_SCATTERED, SPAN_LONG
 *   bits 2-3 scattered: log2 of a delta's bytes (1, 2, 4, 8)
 *   bits 4-6 kind (EGPU_MEM_*), bits 7-12 bytes per lane, bits 13-31 site
 *            (all 0 in SPAN_LONG, whose next slot holds them whole)
 *   bits 32-63 the active lanes
 * Second word: affine: the lowest lane's address (48 bits) and a signed
 * 16-bit stride in the top bits, lane i of the mask at base + (i - lowest)
 * * stride; scattered and long: the lowest lane's address. Scattered and
 * long records go on with one signed delta (address - base) per active
 * lane in lane order, little-endian, padded to a slot; a long record's
 * second slot is struct span_long first.
 */
#define SPAN_AFFINE 1u
#define SPAN_SCATTERED 2u
#define SPAN_LONG 3u

#define SPAN_KIND_BITS 3u
#define SPAN_SIZE_BITS 6u
#define SPAN_SITE_BITS 19u
#define SPAN_ADDR_BITS 48u

struct span_long {
	uint32_t site;
	uint16_t size;
	uint8_t kind;
	uint8_t pad[9];
};

RING_INLINE uint64_t span_word0(uint32_t fmt, uint32_t width_log2,
				uint32_t kind, uint32_t size, uint32_t site,
				uint32_t mask)
{
	return (uint64_t)fmt | (uint64_t)width_log2 << 2 |
	       (uint64_t)kind << 4 | (uint64_t)size << 7 |
	       (uint64_t)site << 13 | (uint64_t)mask << 32;
}

RING_INLINE uint32_t span_w0_fmt(uint64_t w) { return (uint32_t)(w & 3); }
RING_INLINE uint32_t span_w0_width(uint64_t w) { return (uint32_t)(w >> 2 & 3); }
RING_INLINE uint32_t span_w0_kind(uint64_t w) { return (uint32_t)(w >> 4 & 7); }
RING_INLINE uint32_t span_w0_size(uint64_t w) { return (uint32_t)(w >> 7 & 63); }
RING_INLINE uint32_t span_w0_site(uint64_t w) { return (uint32_t)(w >> 13 & 0x7ffff); }
RING_INLINE uint32_t span_w0_mask(uint64_t w) { return (uint32_t)(w >> 32); }

/* Whether kind, size and site fit the first word (else SPAN_LONG). */
RING_INLINE int span_fields_fit(uint32_t kind, uint32_t size, uint32_t site)
{
	return kind >> SPAN_KIND_BITS == 0 && size >> SPAN_SIZE_BITS == 0 &&
	       site >> SPAN_SITE_BITS == 0;
}

/* Whether an affine access of @base and @stride fits the second word. */
RING_INLINE int span_affine_fits(uint64_t base, int64_t stride)
{
	return base >> SPAN_ADDR_BITS == 0 && stride >= -32768 && stride <= 32767;
}

RING_INLINE uint64_t span_affine_w1(uint64_t base, int32_t stride)
{
	return base | (uint64_t)(uint16_t)(int16_t)stride << SPAN_ADDR_BITS;
}

/* log2 of the bytes a delta @d needs: 0 (int8) to 3 (int64). */
RING_INLINE uint32_t span_delta_width(int64_t d)
{
	if (d >= -128 && d <= 127)
		return 0;
	if (d >= -32768 && d <= 32767)
		return 1;
	return d >= -2147483647 - 1 && d <= 2147483647 ? 2 : 3;
}

/* Slots of a record: @fmt, @lanes active, deltas of 1 << @width bytes. */
RING_INLINE uint32_t span_rec_slots(uint32_t fmt, uint32_t lanes,
				    uint32_t width)
{
	if (fmt == SPAN_AFFINE)
		return 1;
	return 1 + (fmt == SPAN_LONG) +
	       ((lanes << width) + SPAN_SLOT - 1) / SPAN_SLOT;
}

/* The largest record: long, 32 lanes of 8-byte deltas (18 slots). */
#define SPAN_REC_MAX_SLOTS (2u + 32u * 8u / SPAN_SLOT)

/*
 * The record of an access by one lane alone, as the CPU back end makes it
 * (a run is one lane), into @w (6 words): its slots.
 */
RING_INLINE uint32_t span_encode_one(uint64_t *w, uint64_t addr, uint64_t info)
{
	uint32_t size = (uint32_t)(info & 0xffff), kind = (uint32_t)(info >> 16 & 0xff);
	uint32_t site = (uint32_t)(info >> 32);

	if (span_fields_fit(kind, size, site) && span_affine_fits(addr, 0)) {
		w[0] = span_word0(SPAN_AFFINE, 0, kind, size, site, 1);
		w[1] = span_affine_w1(addr, 0);
		return 1;
	}
	w[0] = span_word0(SPAN_LONG, 0, 0, 0, 0, 1);
	w[1] = addr;
	w[2] = site | (uint64_t)size << 32 | (uint64_t)kind << 48;
	w[3] = w[4] = w[5] = 0; /* the one delta, 0 */
	return 3;
}

/*
 * A lane's span state, a u64 the probe keeps in a thread-local value (a
 * register), 0 at the thread's start:
 *   bits 0-35  start: the span's ring position / 16 (mod 2^36)
 *   bits 36-44 slots used (slot 0 included)
 *   bits 45-53 slots of the span
 *   bit  54    this lane owns the span and it is open
 *   bits 55-63 a tag of the ring's descriptor address
 * A lane that does not own one keeps the start of the span its last
 * record went into: the floor below which none of its later records may
 * go (per-thread order, docs/events.md).
 */
#define SPAN_START_BITS 36u
#define SPAN_OWN (1ull << 54)

RING_INLINE uint64_t span_state(uint32_t tag, uint64_t start, uint32_t used,
				uint32_t slots, int own)
{
	return (start & ((1ull << SPAN_START_BITS) - 1)) |
	       (uint64_t)used << 36 | (uint64_t)slots << 45 |
	       (own ? SPAN_OWN : 0) | (uint64_t)(tag & 0x1ff) << 55;
}

RING_INLINE uint64_t span_st_start(uint64_t s) { return s & ((1ull << SPAN_START_BITS) - 1); }
RING_INLINE uint32_t span_st_used(uint64_t s) { return (uint32_t)(s >> 36 & 0x1ff); }
RING_INLINE uint32_t span_st_slots(uint64_t s) { return (uint32_t)(s >> 45 & 0x1ff); }
RING_INLINE int span_st_own(uint64_t s) { return (s & SPAN_OWN) != 0; }
RING_INLINE uint32_t span_st_tag(uint64_t s) { return (uint32_t)(s >> 55); }

/* The tag of a ring whose descriptor is at @addr (128-byte aligned). */
RING_INLINE uint32_t span_ring_tag(uint64_t addr)
{
	return (uint32_t)(addr >> 7 & 0x1ff);
}

/*
 * Where a lane's last record went, as seen from a span starting at
 * @start: > 0 when later than it (the span may not take this lane's
 * record). A state of another ring (@tag) or a fresh one imposes nothing.
 */
RING_INLINE int32_t span_floor_after(uint64_t st, uint32_t tag, uint64_t start)
{
	if (!st || span_st_tag(st) != tag)
		return -1;
	/* Positions / 16 of live spans are far closer than 2^31 apart. */
	return (int32_t)(uint32_t)(span_st_start(st) - start);
}

/*
 * Whether the leader's state @st (of ring @tag) can take a record of
 * @need slots, @later saying whether a lane of the group has a floor
 * after its span (span_floor_after > 0).
 */
RING_INLINE int span_can_take(uint64_t st, uint32_t tag, uint32_t need,
			      int later)
{
	return span_st_own(st) && span_st_tag(st) == tag && !later &&
	       span_st_used(st) + need <= span_st_slots(st);
}

/*
 * The slots of the last span a lane of state @st had in ring @tag, owned
 * still or published when it filled, so that a busy warp's spans keep
 * doubling; 0 for a fresh state or another ring's.
 */
RING_INLINE uint32_t span_prev_slots(uint64_t st, uint32_t tag)
{
	return st && span_st_tag(st) == tag ? span_st_slots(st) : 0;
}

/* Slots of the span a lane claims after one of @prev slots, for @need. */
RING_INLINE uint32_t span_next_slots(uint32_t prev, uint32_t need)
{
	uint32_t n = prev ? 2 * prev : SPAN_MIN_SLOTS;

	if (n > SPAN_MAX_SLOTS)
		n = SPAN_MAX_SLOTS;
	return n < need + 1 ? need + 1 : n;
}

/*
 * The least slots a claim for a record of @need slots keeps, try @tries:
 * room to align it (need + 2: a position 8 mod 16 costs a slot), or, in a
 * lossless ring, the span exactly (header and record) at the first try,
 * published in the same call (docs/events.md "Lossless rings"); its ring
 * holds spans only, so positions stay 16-aligned and the first try takes.
 */
RING_INLINE uint32_t span_claim_least(uint32_t need, int lossless, int tries)
{
	return lossless && tries == 0 ? need + 1 : need + 2;
}

#endif
