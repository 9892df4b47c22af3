// SPDX-License-Identifier: MIT
// timing.bpf.c with libegpu's map types: the start time is thread-local
// (a register of the kernel once copied in: no memory traffic), the
// histogram has a copy per SM (warps of different SMs add to different
// words; the host reads the sum), added to once per warp and bucket.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

#define BUCKETS 32

struct {
	__uint(type, BPF_MAP_TYPE_EGPU_THREAD_LOCAL);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} started SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_EGPU_SM_ARRAY);
	__uint(max_entries, BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

GPU_ENTRY("*")
int timing_entry(void *ctx)
{
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&started, &zero);

	*t = bpf_get_globaltimer(); /* never NULL: a constant key in range */
	return 0;
}

GPU_EXIT("*")
int timing_exit(void *ctx)
{
	__u32 zero = 0, bucket = 0;
	__u64 *t = bpf_map_lookup_elem(&started, &zero);
	__u64 d = bpf_get_globaltimer() - *t, *slot;

	while (d > 1 && bucket < BUCKETS - 1) {
		d >>= 1;
		bucket++;
	}
	slot = bpf_map_lookup_elem(&hist, &bucket);
	if (slot)
		bpf_egpu_warp_add(slot, 1); /* one atomic per warp and bucket */
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
