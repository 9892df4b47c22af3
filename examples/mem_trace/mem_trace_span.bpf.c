// SPDX-License-Identifier: MIT
/*
 * mem_trace's complete trace on spans (bpf_egpu_trace_span): every global
 * access of a warp as a compact record (16 bytes when affine) in a span
 * its leading lane owns, in its SM's shard of a ring in GPU memory; the
 * span's state in a thread-local value (a register), published once per
 * span; the exit probe publishes what is left (docs/events.md, "Spans").
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

#ifndef MT_SPAN_RING_FLAGS
#define MT_SPAN_RING_FLAGS EGPU_F_RING_DEVICE
#define MT_SPAN_RING_BYTES (1 << 28)
#endif

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, MT_SPAN_RING_BYTES);
	__uint(map_flags, MT_SPAN_RING_FLAGS);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_EGPU_THREAD_LOCAL);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} span SEC(".maps");

GPU_MEM("*")
int trace_span(struct egpu_mem_ctx *ctx)
{
	__u32 zero = 0;
	__u64 *st = bpf_map_lookup_elem(&span, &zero);

	if (st && ctx->space == EGPU_SPACE_GLOBAL)
		*st = bpf_egpu_trace_access_span(&events, *st, ctx);
	return 0;
}

GPU_EXIT("*")
int trace_span_exit(void *ctx)
{
	__u32 zero = 0;
	__u64 *st = bpf_map_lookup_elem(&span, &zero);

	if (st)
		bpf_egpu_trace_span_flush(&events, *st);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
