// SPDX-License-Identifier: MIT
// Memory probe of the GPU test: accesses counted by kind and state space,
// and every global address recorded with its size and kind.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} mem_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} mem_addrs SEC(".maps");

/* mem_counts[kind * 8 + space] += 1; mem_addrs[addr] = size << 32 | kind */
GPU_MEM("vadd_mem")
int mem_probe(struct egpu_mem_ctx *ctx)
{
	__u32 key = (ctx->kind & 7) * 8 + (ctx->space & 7);
	__u64 *n = bpf_map_lookup_elem(&mem_counts, &key);
	__u64 addr = ctx->addr, v = (__u64)ctx->size << 32 | ctx->kind;

	if (n)
		__sync_fetch_and_add(n, 1);
	if (ctx->space == EGPU_SPACE_GLOBAL)
		bpf_map_update_elem(&mem_addrs, &addr, &v, BPF_ANY);
	return 0;
}
