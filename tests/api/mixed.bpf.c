// SPDX-License-Identifier: MIT
// One object, one accepted and one refused probe: loading keeps the good one.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

GPU_ENTRY("saxpy")
int good_entry(struct egpu_kernel_ctx *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&hits, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

/* Reads 8 bytes past the 32-byte ctx: refused. */
GPU_EXIT("saxpy")
int bad_exit(struct egpu_kernel_ctx *ctx)
{
	return *(volatile __u64 *)((char *)ctx + 40);
}

char LICENSE[] SEC("license") = "GPL";
