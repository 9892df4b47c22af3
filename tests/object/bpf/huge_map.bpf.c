/* SPDX-License-Identifier: MIT */
/* A 1 TiB array map: refused before anything is allocated. */
#include <egpu/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1u << 28);
	__type(key, __u32);
	__type(value, char[4096]);
} tebibyte SEC(".maps");

GPU_ENTRY("k") int touch(void)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&tebibyte, &k) != 0;
}
