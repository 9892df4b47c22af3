// SPDX-License-Identifier: MIT
// Counts the threads entering and leaving every kernel, and its memory
// accesses by kind.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 + EGPU_MEM_ASYNC + 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps"); /* 0: entries, 1: exits, 2 + kind: accesses */

static __always_inline void bump(__u32 key)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
}

GPU_ENTRY("*")
int count_entry(void *ctx)
{
	bump(0);
	return 0;
}

GPU_EXIT("*")
int count_exit(void *ctx)
{
	bump(1);
	return 0;
}

GPU_MEM("*")
int count_access(struct egpu_mem_ctx *ctx)
{
	bump(2 + ctx->kind);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
