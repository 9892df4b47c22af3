// SPDX-License-Identifier: MIT
/*
 * Ring buffer programs the Python and Go binding tests run on the CPU:
 * records into a large ring and into one holding exactly 64 of them, and
 * a plain array to be refused as a ring.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* 64 records of 64 bytes with their headers */
} tiny SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} plain SEC(".maps");

/* 56 payload bytes: 64 with the record header. */
struct event {
	__u64 seq, tag, square, pad[4];
};

/* ctx = { u64 n, u64 tag }: emit n (at most 100) records {i, tag, i*i}
 * into @ring; returns how many it kept. */
static __always_inline int emit(void *ring, __u64 *ctx)
{
	struct event ev = { .tag = ctx[1] };
	int sent = 0;

	for (__u64 i = 0; i < ctx[0] && i < 100; i++) {
		ev.seq = i;
		ev.square = i * i;
		if (!bpf_ringbuf_output(ring, &ev, sizeof(ev), 0))
			sent++;
	}
	return sent;
}

SEC("egpu/run")
int emit_events(__u64 *ctx)
{
	return emit(&events, ctx);
}

SEC("egpu/run")
int emit_tiny(__u64 *ctx)
{
	return emit(&tiny, ctx);
}

/* Reserve a record of 8 bytes and submit it, or discard it when ctx[0]
 * is odd. */
SEC("egpu/run")
int reserve(__u64 *ctx)
{
	__u64 *v = bpf_ringbuf_reserve(&events, 8, 0);

	if (!v)
		return -1;
	*v = ctx[0];
	if (ctx[0] & 1)
		bpf_ringbuf_discard(v, 0);
	else
		bpf_ringbuf_submit(v, 0);
	return 0;
}

/* A warp access on the CPU (one lane): ctx = { state, addr }, a load of
 * 4 bytes at site 9, as a span of one record (bpf_egpu_trace_span). */
SEC("egpu/run")
int span_one(__u64 *ctx)
{
	return (int)bpf_egpu_trace_span(&events, ctx[0], ctx[1],
					4 | EGPU_MEM_LOAD << 16 | 9ull << 32);
}

char LICENSE[] SEC("license") = "GPL";
