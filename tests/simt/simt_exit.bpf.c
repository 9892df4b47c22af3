// SPDX-License-Identifier: MIT
/*
 * Every SIMT helper at the exit of simt_kernel, each lane's results kept in
 * its own slot of `lanes` for the host to compare with what a warp of its
 * shape must give (test_simt_gpu.c).
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

#include "simt_test.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SIMT_THREADS);
	__type(key, __u32);
	__type(value, struct simt_lane);
} lanes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2); /* 0: same deltas, 1: different deltas */
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct simt_atomics);
} atomics SEC(".maps");

/* Atomics with a different operand per lane, as probes write them. */
static __always_inline void per_lane_atomics(struct simt_lane *r, __u32 tid,
					     __u32 lane)
{
	__u32 zero = 0;
	struct simt_atomics *a = bpf_map_lookup_elem(&atomics, &zero);
	__u64 v = SIMT_VAL(tid, lane);

	if (!a)
		return;
	r->add64 = __sync_fetch_and_add(&a->add64, v);
	r->or64 = __sync_fetch_and_or(&a->or64, 1ull << (tid % 64));
	r->xor64 = __sync_fetch_and_xor(&a->xor64, v);
	r->add32 = __sync_fetch_and_add(&a->add32, (__u32)v);
	r->and32 = __sync_fetch_and_and(&a->and32, ~(1u << lane));
	__sync_fetch_and_add(&a->plain64, v);
}

GPU_EXIT("simt_kernel")
int simt_exit(struct egpu_kernel_ctx *ctx)
{
	__u64 tx, ty, tz, bx, by, bz;
	__u32 tid, lane, zero = 0, one = 1;
	struct simt_lane *r;
	__u64 *same, *mixed;

	bpf_get_thread_idx(&tx, &ty, &tz);
	bpf_get_block_idx(&bx, &by, &bz);
	tid = bx * SIMT_BLOCK + tx;
	lane = bpf_get_lane_id();
	r = bpf_map_lookup_elem(&lanes, &tid);
	same = bpf_map_lookup_elem(&counters, &zero);
	mixed = bpf_map_lookup_elem(&counters, &one);
	if (!r || !same || !mixed)
		return 0;
	r->mask = bpf_egpu_active_mask();
	r->ticket = bpf_egpu_warp_add(same, 1);
	r->fetched = bpf_egpu_warp_add(mixed, lane + 1);
	r->ballot = bpf_egpu_ballot(lane & 1);
	r->match = bpf_egpu_match(lane / 4);
	r->shfl = bpf_egpu_shfl((__u64)tid << 32 | 3, 0);
	r->slept = bpf_egpu_nanosleep(100);
	r->lane = lane;
	per_lane_atomics(r, tid, lane);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
