// SPDX-License-Identifier: MIT
// Loops the verifier cannot bound: it follows them to its instruction budget
// (1 M) or its states' memory budget (128 MiB), which must cost little
// memory at any verbosity.
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

/* A full stack and three branches an iteration: each queued state carries
 * the stack, so the states' memory runs out before the instructions. */
GPU_ENTRY("saxpy")
int fat_spin(struct egpu_kernel_ctx *ctx)
{
	volatile __u64 buf[60];
	__u32 key = 0, *n = bpf_map_lookup_elem(&limit, &key);
	__u64 sum = 0;

	for (int i = 0; i < 60; i++)
		buf[i] = bpf_get_sm_id();
	if (!n)
		return 0;
	for (__u32 i = 0; i < *n; i++) {
		if (bpf_get_sm_id() & 1)
			sum += buf[i % 60];
		if (bpf_get_sm_id() & 2)
			sum += 3;
		if (bpf_get_sm_id() & 4)
			sum += 5;
	}
	return (int)sum;
}

char LICENSE[] SEC("license") = "GPL";
