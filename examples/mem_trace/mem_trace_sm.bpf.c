// SPDX-License-Identifier: MIT
/*
 * Experiment (bench_mem's "trace, per-SM buffers" row): mem_trace's
 * records kept in GPU memory in a buffer per SM, to measure what sharding
 * the reservation by SM costs before rings in GPU memory are sharded
 * again. One record per warp-level access: the leader lane takes the next
 * slot of its SM (one atomic on its SM's cursor, which only that SM's
 * warps touch) and writes a 48-byte slot: base, mask and size for affine
 * warps; other warps only flag the slot (their addresses are not kept).
 * The buffer wraps: it keeps the newest MT_SM_SLOTS records of each SM, a
 * flight recorder with no consumer.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

#include "mem_trace.h"
#include "warp_lanes.h"

#define MT_SM_SLOTS 16384 /* per SM: 256 SMs x 16K x 48 B = 192 MiB */

struct {
	__uint(type, BPF_MAP_TYPE_EGPU_SM_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cursor SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256 * MT_SM_SLOTS);
	__type(key, __u32);
	__type(value, struct mt_warp_access);
} records SEC(".maps");

GPU_MEM("*")
int trace_access(struct egpu_mem_ctx *ctx)
{
	__u64 addr = ctx->addr, *cur;
	__u32 size = ctx->size, site = ctx->site, zero = 0, key;
	__u16 kind = ctx->kind;
	struct mt_warp_access *r;
	struct mt_lanes w;

	if (ctx->space != EGPU_SPACE_GLOBAL)
		return 0;
	mt_lanes_of(&w, addr, size);
	if (w.lane != w.leader)
		return 0;
	cur = bpf_map_lookup_elem(&cursor, &zero);
	if (!cur)
		return 0;
	key = ((__u32)bpf_get_sm_id() & 255) * MT_SM_SLOTS +
	      (__u32)(bpf_egpu_warp_add(cur, 1) & (MT_SM_SLOTS - 1));
	r = bpf_map_lookup_elem(&records, &key);
	if (!r)
		return 0;
	r->ns = 0;
	r->base = w.base;
	r->site = site;
	r->warp = 0;
	r->mask = w.mask;
	r->size = size;
	r->kind = kind;
	r->affine = !w.spread;
	r->reserved = 0;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
