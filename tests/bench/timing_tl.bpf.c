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

/* timing_tlonly.bpf.c: one histogram for the whole GPU, as timing.bpf.c. */
#ifdef HIST_ONE_COPY
#define HIST_TYPE BPF_MAP_TYPE_ARRAY
#else
#define HIST_TYPE BPF_MAP_TYPE_EGPU_SM_ARRAY
#endif

struct {
	__uint(type, HIST_TYPE);
	__uint(max_entries, BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

/* floor(log2(d)) for d > 1, else 0: five steps, not a loop per bit. */
static __always_inline __u32 log2_bucket(__u64 d)
{
	__u32 b = 0;

	if (d >> 32) { d >>= 32; b += 32; }
	if (d >> 16) { d >>= 16; b += 16; }
	if (d >> 8) { d >>= 8; b += 8; }
	if (d >> 4) { d >>= 4; b += 4; }
	if (d >> 2) { d >>= 2; b += 2; }
	if (d >> 1)
		b += 1;
	return b < BUCKETS - 1 ? b : BUCKETS - 1;
}

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
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&started, &zero);
	__u32 bucket = log2_bucket(bpf_get_globaltimer() - *t);
	__u64 *slot = bpf_map_lookup_elem(&hist, &bucket);

	if (slot)
		bpf_egpu_warp_add(slot, 1); /* one atomic per warp and bucket */
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
