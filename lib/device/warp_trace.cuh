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
 * The lanes' stride if every lane of @mask accessed base + i * stride. In
 * a full warp the second lane is the leader's neighbour: no division.
 */
RT_INLINE bool warp_affine(uint32_t mask, uint64_t addr, uint64_t base,
			   int32_t *stride)
{
	uint32_t leader = __ffs(mask) - 1, rest = mask & (mask - 1);
	uint32_t gap = rest ? __ffs(rest) - 1 - leader : 1;
	int64_t d = (int64_t)(__shfl_sync(mask, addr, leader + gap) - base);
	int64_t s = gap == 1 ? d : d / (int64_t)gap;
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

#endif
