// SPDX-License-Identifier: MIT
/*
 * mem_trace's tracing probe on libegpu's warp records: one call of
 * bpf_egpu_trace_access per access, which makes one compressed record per
 * warp-level access (struct egpu_warp_access: base, stride and mask when
 * the lanes' addresses are affine, every address otherwise) in the
 * reserving lane's SM's shard of a ring in GPU memory. The tag is the
 * time of the access, for the bandwidth over time.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 28);
	__uint(map_flags, EGPU_F_RING_DEVICE);
} events SEC(".maps");

GPU_MEM("*")
int trace_warp(struct egpu_mem_ctx *ctx)
{
	if (ctx->space == EGPU_SPACE_GLOBAL)
		bpf_egpu_trace_access(&events, ctx, bpf_get_globaltimer());
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
