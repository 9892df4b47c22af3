/* SPDX-License-Identifier: MIT */
/* Linux's LRU hash map (9) has no implementation in libegpu. */
#include <egpu/bpf_helpers.h>

struct {
	__uint(type, 9);
	__uint(max_entries, 8);
	__type(key, u32);
	__type(value, u64);
} lru_hash SEC(".maps");

GPU_ENTRY("k") int p(void)
{
	u32 key = 0;

	return bpf_map_lookup_elem(&lru_hash, &key) != 0;
}
