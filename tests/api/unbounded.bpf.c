// SPDX-License-Identifier: MIT
// A loop the verifier cannot bound: it follows it to its instruction budget
// (1 M), which must cost little memory at any verbosity.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} limit SEC(".maps");

/* The bound comes from a map: any value, so every iteration may go on. */
GPU_ENTRY("saxpy")
int spin(struct egpu_kernel_ctx *ctx)
{
	__u32 key = 0, *n = bpf_map_lookup_elem(&limit, &key);
	__u64 sum = 0;

	if (!n)
		return 0;
	for (__u32 i = 0; i < *n; i++)
		sum += bpf_get_sm_id();
	return (int)sum;
}

char LICENSE[] SEC("license") = "GPL";
