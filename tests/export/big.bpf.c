// SPDX-License-Identifier: MIT
// Maps of 1M keys for metrics_bench (filled from the host).
#include <egpu/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 20);
	__type(key, __u32);
	__type(value, __u64);
} big_array SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 20);
	__type(key, __u64);
	__type(value, __u64);
} big_hash SEC(".maps");

SEC("egpu/run")
int touch(void *ctx)
{
	__u32 k = 0;
	__u64 h = 0;

	return bpf_map_lookup_elem(&big_array, &k) != 0 &&
	       bpf_map_lookup_elem(&big_hash, &h) != 0;
}

char LICENSE[] SEC("license") = "GPL";
