// SPDX-License-Identifier: MIT
// Every kernel timed per thread: the entry probe notes %globaltimer in a
// thread-local slot (a register of the kernel: no memory traffic), the exit
// probe adds one to the log2 bucket of the thread's duration in the
// kernel's histogram. The histograms are the values of a per-SM array
// keyed by the context's kernel id, so Map.by_kernel() reads them per
// kernel name, summed over the SMs' copies. transformer_timing.ipynb uses it.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

#define BUCKETS 32     /* bucket b: durations in [2^b, 2^(b+1)) ns; 0 also 0 ns */
#define MAX_KERNELS 128 /* kernel ids beyond this are not counted (the
			   notebook checks every kernel it launched was) */

struct log2_hist {
	__u64 count[BUCKETS];
};

struct {
	__uint(type, BPF_MAP_TYPE_EGPU_THREAD_LOCAL);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} started SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_EGPU_SM_ARRAY);
	__uint(max_entries, MAX_KERNELS);
	__type(key, __u32);
	__type(value, struct log2_hist);
} durations SEC(".maps");

/* floor(log2(ns)) (0 for 0 ns), found by a binary search over the shift. */
static __always_inline __u32 log2_bucket(__u64 ns)
{
	__u32 b = 0;

#pragma unroll
	for (__u32 shift = 32; shift; shift >>= 1) {
		if (ns >> shift) {
			ns >>= shift;
			b += shift;
		}
	}
	return b < BUCKETS ? b : BUCKETS - 1;
}

GPU_ENTRY("*")
int timing_entry(struct egpu_kernel_ctx *ctx)
{
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&started, &zero);

	*t = bpf_get_globaltimer(); /* never NULL: a constant key in range */
	return 0;
}

GPU_EXIT("*")
int timing_exit(struct egpu_kernel_ctx *ctx)
{
	/* One key variable for both lookups: the thread-local key must read
	 * as a constant, and the verifier tracks a constant per 8-byte stack
	 * slot, which a second 4-byte key next to it would share and blur. */
	__u32 key = 0;
	__u64 *t = bpf_map_lookup_elem(&started, &key);
	__u32 bucket = log2_bucket(bpf_get_globaltimer() - *t);
	struct log2_hist *hist;

	key = ctx->kernel_id;
	hist = bpf_map_lookup_elem(&durations, &key);
	if (hist)
		bpf_egpu_warp_add(&hist->count[bucket], 1); /* one atomic per warp and bucket */
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
