/* SPDX-License-Identifier: MIT */
/* bpftime's map types that libegpu implements with its own (docs/maps.md). */
#include <egpu/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_GPU_HASH_MAP);
	__uint(max_entries, 8);
	__type(key, u32);
	__type(value, u64);
} ghash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_KERNEL_SHARED_ARRAY_MAP);
	__uint(max_entries, 2);
	__type(key, u32);
	__type(value, u64);
	__uint(map_flags, 1u << 10); /* BPF_F_MMAPABLE, as bpftime's probes */
} kshared SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERGPUTD_ARRAY_HOST_MAP);
	__uint(max_entries, 3);
	__type(key, u32);
	__type(value, u64);
} pthost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY_HOST_MAP);
	__uint(max_entries, 4);
	__type(key, u32);
	__type(value, u64);
} ghost SEC(".maps");

GPU_EXIT("k") int count(void)
{
	u32 key = 0;
	u64 *v = bpf_map_lookup_elem(&kshared, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
	v = bpf_map_lookup_elem(&ghost, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
	v = bpf_map_lookup_elem(&pthost, &key);
	if (v)
		*v += 1;
	return bpf_map_update_elem(&ghash, &key, &key, EGPU_ANY);
}

char LICENSE[] SEC("license") = "GPL";
