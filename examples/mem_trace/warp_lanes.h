/* SPDX-License-Identifier: MIT */
/*
 * What mem_trace's warp-level probes (mem_trace.bpf.c, mem_trace_sm.bpf.c)
 * first learn of the lanes running one access together: who they are,
 * which of them sends the record, and whether their addresses are affine.
 * The probes include <egpu/bpf_helpers.h> first.
 */
#ifndef MT_WARP_LANES_H
#define MT_WARP_LANES_H

struct mt_lanes {
	__u64 base;   /* the leader's address */
	__u32 mask;   /* the lanes running the access */
	__u32 lane;   /* this one */
	__u32 leader; /* the lowest lane of mask: it sends the record */
	__u32 spread; /* 0: lane i accessed base + (i - leader) * size */
};

/*
 * Every lane of @w->mask calls this (shuffle and ballot), each with its
 * own @addr; @size is the access's bytes per lane.
 */
static __always_inline void mt_lanes_of(struct mt_lanes *w, __u64 addr,
					__u32 size)
{
	w->mask = bpf_egpu_active_mask();
	w->lane = bpf_get_lane_id();
	w->leader = bpf_egpu_lowest_lane(w->mask);
	w->base = bpf_egpu_shfl(addr, w->leader);
	/* The same answer in every lane: no lane branches off alone. */
	w->spread = bpf_egpu_ballot(addr !=
				    w->base + (__u64)(w->lane - w->leader) * size);
}

#endif
