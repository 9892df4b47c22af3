/* SPDX-License-Identifier: MIT */
/* bpftime's GPU hash map (1501) has no implementation in libegpu. */
#include <egpu/bpf_helpers.h>

struct {
	__uint(type, 1501);
	__uint(max_entries, 8);
	__type(key, u32);
	__type(value, u64);
} gpu_hash SEC(".maps");

GPU_ENTRY("k") int p(void)
{
	u32 key = 0;

	return bpf_map_lookup_elem(&gpu_hash, &key) != 0;
}
