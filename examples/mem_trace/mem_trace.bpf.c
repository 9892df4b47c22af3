// SPDX-License-Identifier: MIT
/*
 * mem_trace, tracing mode: every global memory access with its address, one
 * ring record per warp-level access. The lanes share their addresses by
 * shuffles and the lowest lane sends the record: a base address when the
 * lanes access consecutive elements (coalesced), all 32 addresses when not.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

#include "mem_trace.h"
#include "warp_lanes.h"

/* mem_trace_dev.bpf.c keeps the ring in GPU memory (EGPU_F_RING_DEVICE). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 28);
#ifdef MT_RING_FLAGS
	__uint(map_flags, MT_RING_FLAGS);
#endif
} events SEC(".maps");

/* Linear block index * warps per block + warp within the block. */
/* The ctx fields a record carries. */
struct mt_site_of {
	__u32 site;
	__u32 size;
	__u16 kind;
};

static __always_inline __u32 global_warp(void)
{
	__u64 tx, ty, tz, dx, dy, dz, bx, by, bz, gx, gy, gz;
	__u64 threads, block, tid;

	bpf_get_thread_idx(&tx, &ty, &tz);
	bpf_get_block_dim(&dx, &dy, &dz);
	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_grid_dim(&gx, &gy, &gz);
	threads = dx * dy * dz;
	block = (bz * gy + by) * gx + bx;
	tid = (tz * dy + ty) * dx + tx;
	return block * ((threads + MT_WARP - 1) / MT_WARP) + tid / MT_WARP;
}

static __always_inline void fill(struct mt_warp_access *r,
				 const struct mt_site_of *at, __u64 base,
				 __u32 mask, __u32 affine)
{
	r->ns = bpf_get_globaltimer();
	r->base = base;
	r->site = at->site;
	r->warp = global_warp();
	r->mask = mask;
	r->size = at->size;
	r->kind = at->kind;
	r->affine = affine;
	r->reserved = 0;
}

/*
 * The probe copies what it needs of its ctx first: a ctx pointer that lives
 * across the helper calls would be spilled to the stack, and the
 * instrumentation could no longer fold the ctx into constants.
 */
GPU_MEM("*")
int trace_access(struct egpu_mem_ctx *ctx)
{
	struct mt_site_of at = {
		.site = ctx->site, .size = ctx->size, .kind = ctx->kind,
	};
	struct mt_warp_addrs full;
	struct mt_warp_access *r;
	__u64 addr = ctx->addr;
	struct mt_lanes w;

	if (ctx->space != EGPU_SPACE_GLOBAL)
		return 0;
	mt_lanes_of(&w, addr, at.size);
	if (w.spread) {
		for (int i = 0; i < MT_WARP; i++)
			full.addr[i] = w.mask & (1u << i) ? bpf_egpu_shfl(addr, i) : 0;
		if (w.lane != w.leader)
			return 0;
		fill(&full.head, &at, w.base, w.mask, 0);
		bpf_ringbuf_output(&events, &full, sizeof(full), 0);
		return 0;
	}
	if (w.lane != w.leader)
		return 0;
	/* Coalesced: the record is written straight into the ring. */
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r)
		return 0;
	fill(r, &at, w.base, w.mask, 1);
	bpf_ringbuf_submit(r, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
