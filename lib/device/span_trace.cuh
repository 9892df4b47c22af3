/* SPDX-License-Identifier: MIT */
/*
 * bpf_egpu_trace_span (helper 524) and bpf_egpu_trace_span_flush (525):
 * warp accesses as compact records (16 bytes when affine) in a span of
 * the SM's shard that the leading lane owns, its cursor in the lane's
 * state (a register of the probe's thread-local value), published with
 * one fence and one header store when full, when its owner flushes, or
 * when its owner's record goes into another lane's span. Layout, state
 * and decisions: lib/maps/span_layout.h; the proof: docs/events.md,
 * "Spans".
 */
#ifndef EGPU_DEVICE_SPAN_TRACE_CUH
#define EGPU_DEVICE_SPAN_TRACE_CUH

#include "maps/span_layout.h"
#include "warp_trace.cuh"

/* The record of one warp access: its words and slots. */
struct span_rec {
	uint64_t w0, w1;
	uint32_t fmt, width, slots;
};

/*
 * The widest delta of the lanes of @mask (votes, not redux.sync: the
 * runtime is built for compute_75).
 */
RT_INLINE uint32_t span_width_of(uint32_t mask, uint64_t delta)
{
	uint32_t w = span_delta_width((int64_t)delta);

	return __any_sync(mask, w == 3) ? 3 : __any_sync(mask, w == 2) ? 2 :
	       __any_sync(mask, w == 1) ? 1 : 0;
}

/* The group's record for access @a (@addr this lane's, @info packed). */
RT_INLINE struct span_rec span_rec_of(const struct warp_access *a,
				      uint64_t addr, uint64_t info)
{
	uint32_t size = (uint32_t)(info & 0xffff);
	uint32_t kind = (uint32_t)(info >> 16 & 0xff);
	uint32_t site = (uint32_t)(info >> 32);
	bool fit = span_fields_fit(kind, size, site);
	struct span_rec r;

	if (fit && a->affine && span_affine_fits(a->base, a->stride)) {
		r.fmt = SPAN_AFFINE;
		r.width = 0;
		r.w1 = span_affine_w1(a->base, a->stride);
	} else { /* uniform in the group: every lane reduces */
		r.fmt = fit ? SPAN_SCATTERED : SPAN_LONG;
		r.width = span_width_of(a->mask, addr - a->base);
		r.w1 = a->base;
	}
	r.w0 = span_word0(r.fmt, r.width, fit ? kind : 0, fit ? size : 0,
			  fit ? site : 0, a->mask);
	r.slots = span_rec_slots(r.fmt, __popc(a->mask), r.width);
	return r;
}

RT_INLINE void span_store2(uint64_t at, uint64_t a, uint64_t b)
{
	asm volatile("st.global.v2.u64 [%0], {%1, %2};"
		     :: "l"(at), "l"(a), "l"(b) : "memory");
}

/* Slot 1 of a span: its owner, as struct span_info. */
RT_INLINE uint64_t span_info_word(void)
{
	uint32_t block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y *
						   blockIdx.z);
	uint32_t tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y *
						   threadIdx.z);

	return block | (uint64_t)(tid / 32) << 32 | (uint64_t)rt_smid() << 48;
}

/* Address of slot @slot of the span of state @st in shard @shard. */
RT_INLINE uint64_t span_addr(const struct dev_ring *v, uint32_t shard,
			     uint64_t st, uint32_t slot)
{
	uint64_t data = v->flags & RING_IN_DEVICE_MEMORY ?
			ring_shard_data(v, shard) : v->data;

	return data + ((span_st_start(st) * SPAN_SLOT) & v->mask) +
	       (uint64_t)slot * SPAN_SLOT;
}

/*
 * Publish the span of @st: everything written in it first, one fence,
 * then its header; in a ring in GPU memory counted in its shard's
 * published-bytes word (ring_publish_at).
 */
RT_INLINE void span_publish(const struct dev_ring *v, uint32_t shard,
			    uint64_t st)
{
	bool local = v->flags & RING_IN_DEVICE_MEMORY;

	ring_publish_at(local, span_addr(v, shard, st, 0),
			span_st_slots(st) * SPAN_SLOT - RING_HDR_SIZE,
			RING_COMMIT | RING_SPAN,
			local ? ring_shard_done(v, shard) : 0);
}

/* A record that covers @len bytes at @at and that the consumer skips. */
RT_INLINE void span_skip(uint64_t at, uint32_t len)
{
	asm volatile("st.volatile.global.u64 [%0], %1;"
		     :: "l"(at), "l"((uint64_t)(RING_COMMIT | RING_DISCARD) << 32 |
				     (len - RING_HDR_SIZE))
		     : "memory");
}

/*
 * A span for a record of @need slots, asking for @asks (span_asks_slots),
 * in shard @shard: its state (owned, slot 0 used by its header and owner),
 * or a state not owning one when the shard is full (one drop counted). What
 * the claim keeps is made 16-aligned and kept from the shard's end by
 * records the consumer skips (at most one claim again, or, where
 * span_claim_again says, until it is placed or its wait for room runs
 * out). @exact: just the record's span, which the call publishes
 * (span_claim_least). @held: the first try's @held_slots are already in
 * reserved, which held @held before (the splicer's inline claim in a
 * lossless ring, for a record of one slot: need + 2 <= most, so the
 * first try runs), else SPAN_NOT_HELD.
 */
RT_INLINE uint64_t span_claim(struct dev_ring *r, const struct dev_ring *v,
			      uint32_t shard, uint32_t tag, uint32_t asks,
			      uint32_t need, bool exact, uint64_t held,
			      uint32_t held_slots)
{
	struct ring_shard s = ring_shard_at(r, v, shard);
	uint32_t most = v->max_record / SPAN_SLOT, want;
	uint32_t local = v->flags & RING_IN_DEVICE_MEMORY ? RING_RESERVED_LOCAL : 0;
	bool again = span_claim_again(v->flags & RING_LOSSLESS, need, s.mask + 1);

	for (int tries = 0; need + 2 <= most && (tries < 2 || again); tries++) {
		uint64_t pos, at;
		struct span_ask a = span_claim_ask(asks, need, exact, tries,
						   held == SPAN_NOT_HELD ? 0 : held_slots,
						   most, s.mask + 1);
		uint32_t kept, head, slots;

		want = a.want;
		if (tries || held == SPAN_NOT_HELD)
			kept = ring_claim_one(&s, a.least * SPAN_SLOT,
					      want * SPAN_SLOT, &pos);
		else
			kept = ring_claim_held(&s, held, a.least * SPAN_SLOT,
					       want * SPAN_SLOT, &pos);
		if (!kept) /* dropped: counted */
			return 0;
		head = (uint32_t)(pos & 8);
		at = s.data + (pos & s.mask);
		slots = (kept - head) / SPAN_SLOT;
		if ((pos & s.mask) + kept > s.mask + 1 || slots < need + 1) {
			span_skip(at, kept);
			continue;
		}
		if (head)
			span_skip(at, head);
		if ((kept - head) % SPAN_SLOT)
			span_skip(at + kept - 8, 8);
		span_store2(at + head, (uint64_t)(RING_SPAN | local) << 32 |
			    (slots * SPAN_SLOT - RING_HDR_SIZE), span_info_word());
		return span_state(tag, (pos + head) / SPAN_SLOT, 1, slots, 1);
	}
	ring_settle(&s, 0, 0, 1);
	return 0;
}

/*
 * The leader's place for a record of @need slots, from its own span when
 * it can take it (span_can_take), else from a new one (the old one
 * published first; @exact: span_claim's): the record's address, or 0 when
 * dropped. *@st moves past the record, or owns no span any more when
 * dropped.
 */
RT_INLINE uint64_t span_place(struct dev_ring *r, const struct dev_ring *v,
			      uint64_t *st, uint32_t tag, uint32_t need,
			      bool later, bool exact)
{
	uint32_t shard = ring_shard_here(v);
	uint64_t at;

	if (!span_can_take(*st, tag, need, later)) {
		bool mine = span_st_own(*st) && span_st_tag(*st) == tag;
		uint64_t st2;

		if (mine)
			span_publish(v, shard, *st);
		st2 = span_claim(r, v, shard, tag, span_asks_slots(*st, tag),
				 need, exact, SPAN_NOT_HELD, 0);
		if (!st2) {
			*st &= ~SPAN_OWN;
			return 0;
		}
		*st = st2;
	}
	at = span_addr(v, shard, *st, span_st_used(*st));
	*st += (uint64_t)need << 36; /* used += need */
	return at;
}

/* The group writes record @rec at @at; this lane's delta if scattered. */
RT_INLINE void span_write(const struct span_rec *rec,
			  const struct warp_access *a, uint64_t at,
			  uint64_t addr, uint64_t info)
{
	uint32_t rank = __popc(a->mask & rt_lanes_below());
	uint64_t d, p;

	if (rank == 0)
		span_store2(at, rec->w0, rec->w1);
	if (rec->fmt == SPAN_AFFINE)
		return;
	if (rank == 0 && rec->fmt == SPAN_LONG)
		span_store2(at + SPAN_SLOT, info >> 32 | (info & 0xffff) << 32 |
			    (info >> 16 & 0xff) << 48, 0);
	d = addr - a->base;
	p = at + SPAN_SLOT * (rec->fmt == SPAN_LONG ? 2 : 1) +
	    ((uint64_t)rank << rec->width);
	switch (rec->width) {
	case 0: asm volatile("st.global.u8 [%0], %1;" :: "l"(p), "h"((uint16_t)d) : "memory"); break;
	case 1: asm volatile("st.global.u16 [%0], %1;" :: "l"(p), "h"((uint16_t)d) : "memory"); break;
	case 2: asm volatile("st.global.u32 [%0], %1;" :: "l"(p), "r"((uint32_t)d) : "memory"); break;
	default: asm volatile("st.global.u64 [%0], %1;" :: "l"(p), "l"(d) : "memory"); break;
	}
	/* Orders the lanes' deltas before any later fence of the owner. */
	__syncwarp(a->mask);
}

/* bpf_egpu_trace_span_flush: the span @st owns published. */
RT_INLINE void span_flush(struct dev_ring *r, uint64_t st)
{
	struct dev_ring v;

	if (!span_st_own(st) || span_st_tag(st) != span_ring_tag((uintptr_t)r))
		return;
	v = ring_shape(r);
	span_publish(&v, ring_shard_here(&v), st);
}

/*
 * bpf_egpu_trace_span: this lane's new state. The group's leader places
 * the record (span_place) and publishes its span when full; every other
 * lane publishes a span it owns (its record went into the leader's) and
 * keeps the leader's span's start as its floor. When the record is
 * dropped the other lanes' states stay as they were. In a lossless ring
 * the span is just the record's and published at once, unless @site (the
 * splicer's trace mode, which publishes a lane's span before every wait)
 * and the group is the whole warp (docs/events.md, "Lossless rings").
 */
RT_INLINE uint64_t span_trace(struct dev_ring *r, uint64_t st, uint64_t addr,
			      uint64_t info, bool site)
{
	struct warp_access a = warp_access_of(addr);
	struct span_rec rec = span_rec_of(&a, addr, info);
	uint32_t leader = __ffs(a.mask) - 1, tag = span_ring_tag((uintptr_t)r);
	uint64_t lst = __shfl_sync(a.mask, st, leader), at = 0;
	bool later = __any_sync(a.mask,
		span_floor_after(st, tag, span_st_start(lst)) > 0);
	bool keep = span_may_stay_open(__ldg(&r->flags) & RING_LOSSLESS, site,
				       a.mask);

	if (rt_lane() == leader) {
		struct dev_ring v = ring_shape(r);

		at = span_place(r, &v, &lst, tag, rec.slots, later, !keep);
	}
	at = __shfl_sync(a.mask, at, leader);
	if (!at)
		return rt_lane() == leader ? lst : st;
	lst = __shfl_sync(a.mask, lst, leader);
	span_write(&rec, &a, at, addr, info);
	if (rt_lane() == leader) {
		if (span_st_used(lst) < span_st_slots(lst) && keep)
			return lst;
		span_flush(r, lst);
		return lst & ~SPAN_OWN;
	}
	span_flush(r, st); /* a span this lane owns: its record went elsewhere */
	return span_state(tag, span_st_start(lst), 0,
			  span_st_tag(st) == tag ? span_st_slots(st) : 0, 0);
}

/*
 * The splicer's trace mode (lib/ptx/trace_site.c; docs/events.md, "The
 * splicer's trace mode") keeps a lane's state in registers with two more:
 * where its span's next record goes and the slots left in it, so that the
 * common case (an affine access, the leader's span with room) stores its
 * record inline. Both come from the state, for a lane that owns a span,
 * else 0.
 */
struct span_regs {
	uint64_t st, cur;
	uint32_t left;
};

RT_INLINE struct span_regs span_regs_of(struct dev_ring *r, uint64_t st)
{
	struct span_regs g = { st, 0, 0 };
	struct dev_ring v;

	if (!span_st_own(st))
		return g;
	v = ring_shape(r);
	g.cur = span_addr(&v, ring_shard_here(&v), st, span_st_used(st));
	g.left = span_st_slots(st) - span_st_used(st);
	return g;
}

#endif
