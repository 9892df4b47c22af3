/* SPDX-License-Identifier: MIT */
/*
 * bpf_egpu_trace_warp (helper 521): a warp-level memory access as one
 * ring record, struct egpu_warp_access (include/egpu/ctx.h). The active
 * lanes find together whether their addresses are affine (two shuffles
 * and a vote), the lowest lane reserves one record for the warp (in its
 * SM's shard of a ring in GPU memory: ring.cuh), every lane writes its
 * address into it when they are not, and after a warp barrier the lowest
 * lane fences and publishes: one reservation, one fence, one header per
 * warp access, 32 bytes for the common affine case.
 */
#ifndef EGPU_DEVICE_WARP_TRACE_CUH
#define EGPU_DEVICE_WARP_TRACE_CUH

#include "egpu/ctx.h"
#include "ring.cuh"

/*
 * The lanes' stride if every lane of @mask accessed base + i * stride (0
 * for a lane alone). In a full warp the second lane is the leader's
 * neighbour: no division.
 */
RT_INLINE bool warp_affine(uint32_t mask, uint64_t addr, uint64_t base,
			   int32_t *stride)
{
	uint32_t leader = __ffs(mask) - 1, rest = mask & (mask - 1);
	uint32_t gap = rest ? __ffs(rest) - 1 - leader : 0;
	int64_t d = (int64_t)(__shfl_sync(mask, addr, leader + gap) - base);
	int64_t s = gap <= 1 ? d : d / (int64_t)gap;
	uint64_t want = base + (uint64_t)((int64_t)(rt_lane() - leader) * s);

	*stride = (int32_t)s;
	return __all_sync(mask, s == (int64_t)(int32_t)s && addr == want);
}

/* What the active lanes of a warp find together about their access. */
struct warp_access {
	uint32_t mask;   /* the active lanes */
	uint32_t len;    /* payload bytes of their record */
	uint64_t base;   /* the lowest lane's address */
	int32_t stride;  /* when affine */
	bool affine;
};

RT_INLINE struct warp_access warp_access_of(uint64_t addr)
{
	struct warp_access a;

	a.mask = __activemask();
	a.base = __shfl_sync(a.mask, addr, __ffs(a.mask) - 1);
	a.affine = warp_affine(a.mask, addr, a.base, &a.stride);
	a.len = (uint32_t)sizeof(struct egpu_warp_access) +
		(a.affine ? 0 : __popc(a.mask) * 8u);
	return a;
}

/* A record of @len payload bytes for the leader alone, or 0 (dropped). */
RT_INLINE uint64_t warp_reserve(struct dev_ring *r, uint32_t len)
{
	struct ring_shard s = ring_shard_of(r);
	uint32_t need = (uint32_t)ring_record_size(len);
	uint64_t pos;

	if (!ring_claim_one(&s, need, need, &pos))
		return 0;
	return s.data + (pos & s.mask);
}

/*
 * The record of access @a at ring address @at (its header's): the lanes'
 * addresses when not affine, the leader's four words, then after a warp
 * barrier the leader's fence and header.
 */
RT_INLINE void warp_record(const struct dev_ring *r, uint64_t at,
			   const struct warp_access *a, uint64_t addr,
			   uint64_t info, uint64_t tag)
{
	uint64_t *w = (uint64_t *)(uintptr_t)(at + RING_HDR_SIZE);
	uint32_t rank = __popc(a->mask & rt_lanes_below());

	if (!a->affine)
		rt_store_global(w + sizeof(struct egpu_warp_access) / 8 + rank,
				addr);
	if (rank == 0) {
		rt_store_global(w, a->base);
		rt_store_global(w + 1, tag);
		rt_store_global(w + 2, (uint64_t)(info >> 32) << 32 | a->mask);
		rt_store_global(w + 3, (uint64_t)(uint32_t)a->stride |
				(uint64_t)(info & 0xffff) << 32 |
				(uint64_t)((info >> 16) & 0xff) << 48 |
				(uint64_t)(a->affine ? EGPU_WARP_AFFINE : 0) << 56);
	}
	__syncwarp(a->mask);
	if (rank == 0)
		ring_publish(r, (struct ring_hdr *)(uintptr_t)at, a->len,
			     RING_COMMIT);
}

/* 0, -EAGAIN (dropped: counted once for the warp), -E2BIG. */
RT_INLINE int64_t warp_trace(struct dev_ring *r, uint64_t addr, uint64_t info,
			     uint64_t tag)
{
	struct warp_access a = warp_access_of(addr);
	uint32_t leader = __ffs(a.mask) - 1;
	uint64_t at = 0;

	if (a.len > ring_max_payload(r))
		return -E2BIG;
	if (rt_lane() == leader) /* alone: one reservation for the warp */
		at = warp_reserve(r, a.len);
	at = __shfl_sync(a.mask, at, leader);
	if (!at)
		return -EAGAIN;
	warp_record(r, at, &a, addr, info, tag);
	return 0;
}

/*
 * Batched warp records (bpf_egpu_trace_warp_batch, helper 522, and
 * bpf_egpu_trace_flush, 523; the protocol: docs/events.md, "Batched warp
 * records"). A lane claims a span of WARP_SPAN_BYTES of its shard once and
 * fills it with the records of the accesses it leads; each record is still
 * published alone. The span's state is a word the probe keeps per lane
 * (thread-local map), 0 when none is open (lengths in 8-byte words):
 *   bits 0-12   words left in the span
 *   bits 13-20  the shard (shards number under 256: ring_dev_fit_shards)
 *   bits 21-47  the word offset of the next record in the shard (position &
 *               mask, rings hold at most RING_MAX_BYTES: records are
 *               addressed by their offset alone)
 *   bits 48-63  the ring's tag (warp_ring_tag), so that a state of another
 *               ring is let go, never written through
 * A span's unused rest is published as a discard record (the consumer
 * skips it, counting nothing) before a new span is claimed and by the
 * flush at exit, so the consumer never waits at a hole.
 */
#define WARP_SPAN_BYTES 1024u

RT_INLINE uint32_t warp_span_left(uint64_t st) { return (uint32_t)(st & 0x1fff) * 8; }
RT_INLINE uint32_t warp_span_shard(uint64_t st) { return (uint32_t)(st >> 13 & 0xff); }
RT_INLINE uint64_t warp_span_off(uint64_t st) { return (st >> 21 & 0x7ffffff) * 8; }

/* Bits of the descriptor's address (128-byte aligned) that tell rings apart. */
RT_INLINE uint64_t warp_ring_tag(const struct dev_ring *r)
{
	return (uint64_t)(uintptr_t)r >> 7 & 0xffff;
}

RT_INLINE uint64_t warp_span_state(const struct dev_ring *r, uint64_t off,
				   uint32_t shard, uint32_t left)
{
	return left ? warp_ring_tag(r) << 48 | off / 8 << 21 |
		      (uint64_t)shard << 13 | left / 8 : 0;
}

/*
 * Whether @st can name a span of ring @r of shape @v, so that a stale or
 * foreign word is never written through.
 */
RT_INLINE bool warp_span_valid(const struct dev_ring *r,
			       const struct dev_ring *v, uint64_t st)
{
	uint32_t shards = v->flags & RING_IN_DEVICE_MEMORY ? v->shards : 1;

	return st >> 48 == warp_ring_tag(r) && warp_span_shard(st) < shards &&
	       warp_span_off(st) <= v->mask &&
	       warp_span_left(st) <= v->max_record;
}

/* Where a state's next record goes: in its shard, or the host ring. */
RT_INLINE uint64_t warp_span_at(const struct dev_ring *v, uint64_t st)
{
	uint64_t data = v->flags & RING_IN_DEVICE_MEMORY ?
			ring_shard_data(v, warp_span_shard(st)) : v->data;

	return data + warp_span_off(st);
}

/*
 * Publish the unused rest of span @st of ring @r (shape @v) as a discard
 * record. A state that names no span of this ring is let go unwritten.
 */
RT_INLINE void warp_span_close(const struct dev_ring *r,
			       const struct dev_ring *v, uint64_t st)
{
	if (!warp_span_left(st) || !warp_span_valid(r, v, st))
		return;
	asm volatile("st.volatile.global.u64 [%0], %1;"
		     :: "l"(warp_span_at(v, st)),
			"l"((uint64_t)(RING_COMMIT | RING_DISCARD) << 32 |
			    (warp_span_left(st) - RING_HDR_SIZE))
		     : "memory");
}

/*
 * The bytes a new span asks for, for a record of @need: WARP_SPAN_BYTES,
 * or the ring's largest record; in a lossless ring just the record's. A
 * span's unwritten rest holds the consumer back, and its warp's lanes may
 * wait for other threads (a barrier) between two calls while those wait
 * for room behind it, until the bound runs out and they drop
 * (docs/events.md, "Lossless rings"): a probe cannot close its span
 * before the thread's barriers, so in a lossless ring none stays open.
 */
RT_INLINE uint32_t warp_span_want(const struct dev_ring *v, uint32_t need)
{
	if (v->flags & RING_LOSSLESS)
		return need;
	return v->max_record < WARP_SPAN_BYTES ? v->max_record : WARP_SPAN_BYTES;
}

/*
 * The leader's place for a record of @need bytes (header included) from
 * its span *@st, a new span claimed when the record does not fit (the old
 * one's rest closed first): the record's ring address, or 0 when no span
 * could be claimed (one drop counted); *@st moves past the record.
 */
RT_INLINE uint64_t warp_span_take(struct dev_ring *r, const struct dev_ring *v,
				  uint64_t *st, uint32_t need)
{
	uint32_t shard = ring_shard_here(v), kept;
	uint64_t at, pos;

	if (warp_span_left(*st) < need || warp_span_shard(*st) != shard ||
	    !warp_span_valid(r, v, *st)) {
		struct ring_shard s = ring_shard_at(r, v, shard);
		uint32_t want = warp_span_want(v, need);

		warp_span_close(r, v, *st);
		kept = ring_claim_one(&s, need, want, &pos);
		*st = warp_span_state(r, pos & v->mask, shard, kept);
		if (!kept)
			return 0;
	}
	at = warp_span_at(v, *st);
	*st = warp_span_state(r, (warp_span_off(*st) + need) & v->mask, shard,
			      warp_span_left(*st) - need);
	return at;
}

/*
 * bpf_egpu_trace_warp_batch: warp_trace's record, placed in the leader's
 * span. The leader gets its new state back, the other lanes their own
 * @st unchanged. A record larger than the ring takes is a drop, counted.
 */
RT_INLINE uint64_t warp_trace_batch(struct dev_ring *r, uint64_t st,
				    uint64_t addr, uint64_t info, uint64_t tag)
{
	struct warp_access a = warp_access_of(addr);
	uint32_t leader = __ffs(a.mask) - 1;
	uint64_t at = 0, mine = st;

	if (rt_lane() == leader) {
		struct dev_ring v = ring_shape(r);

		if (a.len <= v.max_record - RING_HDR_SIZE) {
			at = warp_span_take(r, &v, &mine,
					    (uint32_t)ring_record_size(a.len));
		} else {
			struct ring_shard s = ring_shard_at(r, &v,
							    ring_shard_here(&v));

			ring_settle(&s, 0, 0, 1);
		}
	}
	at = __shfl_sync(a.mask, at, leader);
	if (at)
		warp_record(r, at, &a, addr, info, tag);
	return mine;
}

#endif
