// SPDX-License-Identifier: MIT
// globaltimer at entry and exit; each thread's duration lands in a log2
// histogram per kernel.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

#define BUCKETS 32

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} started SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

GPU_ENTRY("*")
int timing_entry(void *ctx)
{
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&started, &zero);

	if (t)
		*t = bpf_get_globaltimer();
	return 0;
}

GPU_EXIT("*")
int timing_exit(void *ctx)
{
	__u32 zero = 0, bucket = 0;
	__u64 *t = bpf_map_lookup_elem(&started, &zero);
	__u64 d, *slot;

	if (!t)
		return 0;
	d = bpf_get_globaltimer() - *t;
	while (d > 1 && bucket < BUCKETS - 1) {
		d >>= 1;
		bucket++;
	}
	slot = bpf_map_lookup_elem(&hist, &bucket);
	if (slot)
		__sync_fetch_and_add(slot, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
