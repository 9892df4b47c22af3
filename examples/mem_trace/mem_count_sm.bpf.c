// SPDX-License-Identifier: MIT
/*
 * mem_trace, counting mode with libegpu's per-SM array: per site, the
 * lanes that accessed global memory, each warp adding once to its SM's
 * copy (no hand-made spreading over slots); the host reads the sum.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

#include "mem_trace.h"

struct {
	__uint(type, BPF_MAP_TYPE_EGPU_SM_ARRAY);
	__uint(max_entries, MT_MAX_SITES);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

GPU_MEM("*")
int count_access(struct egpu_mem_ctx *ctx)
{
	__u32 site = ctx->site;
	__u64 *c;

	if (ctx->space != EGPU_SPACE_GLOBAL)
		return 0;
	c = bpf_map_lookup_elem(&counts, &site);
	if (c)
		bpf_egpu_warp_add(c, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
