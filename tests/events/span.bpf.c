// SPDX-License-Identifier: MIT
/*
 * Spans (bpf_egpu_trace_span): a memory probe recording every global
 * access of a warp as a compact record in its leading lane's span, the
 * span's state in a thread-local value, and an exit probe publishing it;
 * into a ring in GPU memory that holds the whole trace, one in host
 * memory (readable after a trap), and one of 64 KiB that must drop.
 * Direct runs call both helpers on the CPU.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 26);
	__uint(map_flags, EGPU_F_RING_DEVICE);
} strace SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 26);
} shost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
	__uint(map_flags, EGPU_F_RING_DEVICE);
} stiny SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} srb SEC(".maps");

/* 4 KiB in host memory: the trace mode's spans at most half of it
 * (mem_trace_instrument's inline claim sizes). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 12);
} ssmall SEC(".maps");

/* Lossless: 256 KiB in GPU memory for a trace of 2 MiB, drained while
 * the kernel runs; 64 KiB never polled (wait set by the test); 64 KiB in
 * host memory for the trap. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18);
	__uint(map_flags, EGPU_F_RING_DEVICE | EGPU_F_RING_LOSSLESS);
} slossless SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
	__uint(map_flags, EGPU_F_RING_DEVICE | EGPU_F_RING_LOSSLESS);
} sstopped SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
	__uint(map_flags, EGPU_F_RING_LOSSLESS);
} shostll SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_EGPU_THREAD_LOCAL);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} span SEC(".maps");

static __always_inline int trace_into(void *ring, struct egpu_mem_ctx *ctx)
{
	__u32 zero = 0;
	__u64 *st = bpf_map_lookup_elem(&span, &zero);

	if (st && ctx->space == EGPU_SPACE_GLOBAL)
		*st = bpf_egpu_trace_access_span(ring, *st, ctx);
	return 0;
}

static __always_inline int flush_into(void *ring)
{
	__u32 zero = 0;
	__u64 *st = bpf_map_lookup_elem(&span, &zero);

	if (st)
		bpf_egpu_trace_span_flush(ring, *st);
	return 0;
}

/* NAME_mem traces into RING, NAME_exit publishes what is left. */
#define SPAN_PROBES(name, ring)                                               \
	GPU_MEM("*")                                                          \
	int name##_mem(struct egpu_mem_ctx *ctx)                              \
	{                                                                     \
		return trace_into(&ring, ctx);                                \
	}                                                                     \
	GPU_EXIT("*")                                                         \
	int name##_exit(void *ctx)                                            \
	{                                                                     \
		return flush_into(&ring);                                     \
	}

SPAN_PROBES(span, strace)
SPAN_PROBES(host, shost)
SPAN_PROBES(tiny, stiny)
SPAN_PROBES(ll, slossless)
SPAN_PROBES(stopped, sstopped)
SPAN_PROBES(hostll, shostll)

/* Direct run: ctx = { state, addr }: a store of 8 bytes at site 77. */
SEC("egpu/run")
int span_one(__u64 *ctx)
{
	return (int)bpf_egpu_trace_span(&srb, ctx[0], ctx[1],
					8 | EGPU_MEM_STORE << 16 | 77ull << 32);
}

/* Direct run: ctx = { state }. */
SEC("egpu/run")
int span_flush_one(__u64 *ctx)
{
	return (int)bpf_egpu_trace_span_flush(&srb, ctx[0]);
}

char LICENSE[] SEC("license") = "GPL";
