// SPDX-License-Identifier: MIT
/*
 * mem_trace_warp.bpf.c with reservations batched: each lane keeps the span
 * of its SM's shard it claimed last in a thread-local value (a register of
 * the kernel once the probe is copied in), bpf_egpu_trace_access_batch
 * places the warp's record there and claims a new span only when the
 * record does not fit. At exit every thread closes its span, so the
 * consumer never waits at an unused rest.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 28);
	__uint(map_flags, EGPU_F_RING_DEVICE);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_EGPU_THREAD_LOCAL);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} span SEC(".maps");

GPU_MEM("*")
int trace_batch(struct egpu_mem_ctx *ctx)
{
	__u32 zero = 0;
	__u64 *st = bpf_map_lookup_elem(&span, &zero);

	if (ctx->space == EGPU_SPACE_GLOBAL) /* never NULL: a constant key */
		*st = bpf_egpu_trace_access_batch(&events, *st, ctx,
						  bpf_get_globaltimer());
	return 0;
}

GPU_EXIT("*")
int trace_batch_exit(void *ctx)
{
	__u32 zero = 0;
	__u64 *st = bpf_map_lookup_elem(&span, &zero);

	bpf_egpu_trace_flush(&events, *st);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
