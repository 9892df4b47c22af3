/* SPDX-License-Identifier: MIT */
/*
 * Span records of memory accesses (bpf_egpu_trace_span, helper 524; the
 * protocol and its proof: docs/events.md, "Spans"): the layout the GPU
 * writes, the host decodes and the CPU model plays, and the pure parts of
 * the producer's logic (the per-lane state's decisions), so that
 * lib/device/span_trace.cuh and tests/events/test_span.c run one source.
 * The records' words and the state's bits: core/span_record.h.
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
 * {len, RING_COMMIT | RING_SPAN}, and in a ring in GPU memory also
 * RING_COUNTED, its bytes added to its shard's published-bytes word after
 * its records and before the header (so the host may copy it once:
 * ring_dev.c). A span taken by the reclaim was never counted: the
 * consumer counts it as it takes it, as it does the skips (RING_DISCARD).
 * A span never crosses its shard's end (one that would is published as a
 * discard and claimed again), so the consumer's zeroing covers all of it
 * and unused slots read zero.
 */
#ifndef EGPU_MAPS_SPAN_LAYOUT_H
#define EGPU_MAPS_SPAN_LAYOUT_H

#include "core/span_record.h"
#include "maps/ring_layout.h"

/* struct ring_hdr.flags: the payload is a span (with RING_COMMIT: published) */
#define RING_SPAN 16u

#define SPAN_MIN_SLOTS 4u   /* a warp's first span: 64 bytes */
#define SPAN_MAX_SLOTS 256u /* spans double up to 4 KiB */

/* Slot 0's second word: who owns the span (all its records are one warp's). */
struct span_info {
	uint32_t block; /* linear block index */
	uint16_t warp;  /* warp of the block (threadIdx linear / 32) */
	uint16_t smid;
};

/* A long record's second slot (core/span_record.h). */
struct span_long {
	uint32_t site;
	uint16_t size;
	uint8_t kind;
	uint8_t pad[9];
};

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
 * The slots a lane of state @st keeps for ring @tag: its span's, owned
 * still or published when it filled, a let-go's (span_let_go) or a
 * floor's; 0 for a fresh state or another ring's.
 */
RING_INLINE uint32_t span_prev_slots(uint64_t st, uint32_t tag)
{
	return st && span_st_tag(st) == tag ? span_st_slots(st) : 0;
}

/*
 * The slots a lane of state @st asks for in ring @tag at its next claim
 * (0: a first span's): twice its last span's where that filled (owned
 * still, a record needing more than it had left; or published when a
 * record filled it, used == slots: no wait since), so that a busy warp's
 * spans keep doubling; else the slots the state keeps (a let-go's: the
 * run of records the lane made between two waits).
 */
RING_INLINE uint32_t span_asks_slots(uint64_t st, uint32_t tag)
{
	uint32_t slots = span_prev_slots(st, tag);

	return span_st_own(st) || span_st_used(st) == slots ? 2 * slots : slots;
}

/* Slots of the span a lane claims asking for @asks (span_asks_slots), for
 * @need. */
RING_INLINE uint32_t span_next_slots(uint32_t asks, uint32_t need)
{
	uint32_t n = asks ? asks : SPAN_MIN_SLOTS;

	if (n > SPAN_MAX_SLOTS)
		n = SPAN_MAX_SLOTS;
	return n < need + 1 ? need + 1 : n;
}

/*
 * The least slots a claim for a record of @need slots keeps, try @tries:
 * room to align it (need + 2: a position 8 mod 16 costs a slot), or, for
 * an @exact claim, the span exactly (header and record) at the first try,
 * published in the same call (a lossless ring's span that may not stay
 * open: span_may_stay_open); a span ring holds spans only, so positions
 * stay 16-aligned and the first try takes.
 */
RING_INLINE uint32_t span_claim_least(uint32_t need, int exact, int tries)
{
	return exact && tries == 0 ? need + 1 : need + 2;
}

/*
 * The slots a claim asks for, @want at most: no more than @most (the
 * ring's largest record), nor than half its shard of @cap bytes unless the
 * least it keeps (@least) needs more, so that a span that would cross the
 * shard's end fits at the second try (a growing span never costs a drop
 * in a small ring: a lossless ring drops nothing for its spans' sizes).
 */
RING_INLINE uint32_t span_claim_slots(uint32_t want, uint32_t least,
				      uint32_t most, uint64_t cap)
{
	uint64_t half = cap / 2 / SPAN_SLOT;

	if (want > half)
		want = half > least ? (uint32_t)half : least;
	return want < most ? want : most;
}

/* The least and the wanted slots of one try of a span claim. */
struct span_ask {
	uint32_t least, want;
};

/*
 * span_claim's try @tries for a record of @need slots, asking for @asks
 * (span_asks_slots), @exact as span_claim_least takes it, in a ring whose
 * largest record has @most slots and whose shards hold @cap bytes.
 * @held_slots: the slots the splicer's inline claim already reserved and
 * hands on (0: none), which its first try takes as they are: sized as
 * the inline claim sized them (span_fold_sizes, a kernel's first span),
 * so that reserved and prod agree.
 */
RING_INLINE struct span_ask span_claim_ask(uint32_t asks, uint32_t need,
					   int exact, int tries,
					   uint32_t held_slots, uint32_t most,
					   uint64_t cap)
{
	struct span_ask a;

	if (!tries && held_slots)
		return (struct span_ask){ span_claim_least(need, 1, 0), held_slots };
	a.least = span_claim_least(need, exact, tries);
	a.want = span_claim_slots(exact ? a.least : span_next_slots(asks, need + 1),
				  a.least, most, cap);
	return a;
}

/*
 * What the splicer's inline claim (ptx/trace_site.c) folds of span_claim's
 * size for a record of one slot, in a ring whose largest record has
 * @most slots and whose shards hold @cap bytes: the least slots, a fresh
 * state's span's and the most. It claims only where its span starts a
 * slot (else the runtime claims), so it needs no room to align: at least
 * the header and the slot, as an exact claim's first try. For a state
 * asking for a > 0 slots (span_asks_slots) it claims min(max(a, least),
 * most), which is span_claim_slots(span_next_slots(a, 1), least, @most,
 * @cap): both only clamp what the state asks for (test_span checks every
 * state's). So a warp that makes two short records between two waits of
 * a lossless ring publishes spans of two slots.
 */
struct span_fold {
	uint32_t least, first, most;
};

RING_INLINE struct span_fold span_fold_sizes(uint32_t most, uint64_t cap)
{
	uint32_t least = span_claim_least(1, 1, 0);

	return (struct span_fold){
		least,
		span_claim_slots(span_next_slots(0, 1), least, most, cap),
		span_claim_slots(SPAN_MAX_SLOTS, least, most, cap),
	};
}

/*
 * Which shard of a ring in GPU memory holds a span, from the span's
 * address (the splicer's inline publish counts it there: ptx/trace_site.c),
 * without a division: shard = (@off * m) >> k, @off its header's bytes
 * past shard 0's records, k = 31 + floor(log2(stride)) and m =
 * ceil(2^k / stride) < 2^31, stride the bytes from one shard's records to
 * the next's (capacity + largest record). Exact where spans start, from
 * i * stride to i * stride + capacity - 16: m >= 2^k / stride, so the
 * quotient is at least i, and it stays under i + 1 while @off * (m *
 * stride - 2^k) < (largest record + 16) * 2^k, which holds while @off <
 * 2^31 (mem_trace.c counts only rings whose records and pads span less)
 * as m * stride - 2^k < stride < 2^(k - 30). test_span checks the first
 * and last spans of every shard of rings of every size.
 */
struct span_shard_div {
	uint32_t m, k;
};

RING_INLINE struct span_shard_div span_shard_div_of(uint64_t stride)
{
	uint32_t k = 31;

	for (uint64_t s = stride; s > 1; s >>= 1)
		k++;
	return (struct span_shard_div){
		(uint32_t)(((1ull << k) + stride - 1) / stride), k };
}

RING_INLINE uint32_t span_shard_at(struct span_shard_div dv, uint32_t off)
{
	return (uint32_t)((uint64_t)off * dv.m >> dv.k);
}

/*
 * Whether a claim for a record of @need slots tries again after two
 * claims that would have crossed the end of its shard of @cap bytes
 * (else it drops, counted): in a @lossless ring, when its least span
 * takes at most half the shard, so that each try fails only if other
 * warps claimed a whole shard since the one before (in a smaller shard
 * the span might fit at one position only).
 */
RING_INLINE int span_claim_again(int lossless, uint32_t need, uint64_t cap)
{
	return lossless && 2ull * (need + 2) * SPAN_SLOT <= cap;
}

/*
 * Whether a span may stay open after the call that wrote a record of the
 * group @mask into it (docs/events.md, "Lossless rings"): always in a ring
 * that drops when full; in a @lossless ring only in the splicer's trace
 * mode (@site), which publishes a lane's span before every instruction
 * that waits for other threads and before every branch that splits its
 * warp, and only for a group of the whole warp (a group of fewer lanes
 * may be one side of such a split, and their waits to reconverge are not
 * in the PTX). Otherwise the span holds the one record and the call
 * publishes it.
 */
RING_INLINE int span_may_stay_open(int lossless, int site, uint32_t mask)
{
	return !lossless || (site && mask == 0xffffffffu);
}

/*
 * The state of a lane at a wait (or a call) in the splicer's trace mode:
 * a span it owns published first, its slots become the slots it used, so
 * that the next span has room for the same run of records and no more,
 * not twice a span that was mostly left empty; and its used slots 0, so
 * that a span published when a record filled it does not double the next
 * either (span_asks_slots): a loop that makes the same records between two
 * waits gets spans of just their size.
 */
RING_INLINE uint64_t span_let_go(uint64_t st)
{
	uint64_t slots = span_st_own(st) ? span_st_used(st) : span_st_slots(st);

	return (st & ~(SPAN_OWN | SPAN_USED_MASK | SPAN_SLOTS_MASK)) |
	       slots << SPAN_SLOTS_SHIFT;
}

#endif
