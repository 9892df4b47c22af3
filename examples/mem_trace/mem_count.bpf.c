// SPDX-License-Identifier: MIT
/*
 * mem_trace, counting mode: per site, the lanes that accessed global
 * memory (the host multiplies by the site's access size from the report).
 * Lanes of a warp at the same site add to the same counter, which
 * bpf_egpu_warp_add turns into one atomic per warp; warps on different SMs
 * (and warp slots) add to different counters.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

#include "mem_trace.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MT_MAX_SITES);
	__type(key, __u32);
	__type(value, struct mt_site_counts);
} counts SEC(".maps");

GPU_MEM("*")
int count_access(struct egpu_mem_ctx *ctx)
{
	__u32 site = ctx->site;
	struct mt_site_counts *c;
	struct mt_slot *s;

	if (ctx->space != EGPU_SPACE_GLOBAL)
		return 0;
	c = bpf_map_lookup_elem(&counts, &site);
	if (!c)
		return 0;
	s = &c->slot[mt_slot_of(bpf_get_sm_id(), bpf_get_warp_id())];
	bpf_egpu_warp_add(&s->accesses, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
