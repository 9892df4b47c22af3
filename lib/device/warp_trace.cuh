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

/* The lanes' stride if every lane of @mask accessed base + i * stride. */
RT_INLINE bool warp_affine(uint32_t mask, uint64_t addr, uint64_t base,
			   int32_t *stride)
{
	uint32_t leader = __ffs(mask) - 1, rest = mask & (mask - 1);
	uint32_t second = rest ? __ffs(rest) - 1 : leader;
	uint64_t next = __shfl_sync(mask, addr, second);
	int64_t s = rest ? (int64_t)(next - base) / (int64_t)(second - leader) : 0;
	uint64_t want = base + (uint64_t)((int64_t)(rt_lane() - leader) * s);

	*stride = (int32_t)s;
	return __all_sync(mask, s == (int64_t)(int32_t)s && addr == want);
}

/* 0, -EAGAIN (dropped: counted once for the warp), -E2BIG. */
RT_INLINE int64_t warp_trace(struct dev_ring *r, uint64_t addr, uint64_t info,
			     uint64_t tag)
{
	uint32_t mask = __activemask(), lane = rt_lane();
	uint32_t leader = __ffs(mask) - 1, n = __popc(mask);
	uint64_t base = __shfl_sync(mask, addr, leader), at = 0;
	int32_t stride;
	bool affine = warp_affine(mask, addr, base, &stride);
	uint32_t len = (uint32_t)sizeof(struct egpu_warp_access) +
		       (affine ? 0 : n * 8u);
	struct egpu_warp_access *rec;

	if (len > ring_max_payload(r))
		return -E2BIG;
	if (lane == leader) /* alone: one reservation for the warp */
		at = (uint64_t)(uintptr_t)ring_reserve(r, len);
	at = __shfl_sync(mask, at, leader);
	if (!at)
		return -EAGAIN;
	rec = (struct egpu_warp_access *)(uintptr_t)(at + RING_HDR_SIZE);
	if (!affine)
		((uint64_t *)(rec + 1))[__popc(mask & rt_lanes_below())] = addr;
	if (lane == leader) {
		uint64_t *w = (uint64_t *)rec;

		w[0] = base;
		w[1] = tag;
		w[2] = (uint64_t)(info >> 32) << 32 | mask;
		w[3] = (uint64_t)(uint32_t)stride |
		       (uint64_t)(info & 0xffff) << 32 |
		       (uint64_t)((info >> 16) & 0xff) << 48 |
		       (uint64_t)(affine ? EGPU_WARP_AFFINE : 0) << 56;
	}
	__syncwarp(mask);
	if (lane == leader)
		ring_publish(r, (struct ring_hdr *)(uintptr_t)at, len, RING_COMMIT);
	return 0;
}

#endif
