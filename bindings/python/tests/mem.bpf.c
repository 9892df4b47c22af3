// SPDX-License-Identifier: MIT
/*
 * The memory probe the Python and Go binding tests attach to add_one
 * (tests/kernels.cu): it counts the accesses by kind and state space. An
 * object of its own, so that the probes of probes.bpf.c keep their
 * attachments and counts.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} mem_counts SEC(".maps");

/* mem_counts[kind * 8 + space] += 1 */
GPU_MEM("add_one")
int count_mem(struct egpu_mem_ctx *ctx)
{
	__u32 key = (ctx->kind & 7) * 8 + (ctx->space & 7);
	__u64 *n = bpf_map_lookup_elem(&mem_counts, &key);

	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
