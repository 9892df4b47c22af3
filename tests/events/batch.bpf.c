// SPDX-License-Identifier: MIT
/*
 * Warp records with batched reservations (bpf_egpu_trace_warp_batch): a
 * memory probe placing each warp access's record in its leading lane's
 * span, the span's state in a thread-local value, and an exit probe
 * closing the span; once into a ring that holds the whole trace, once
 * into one of 64 KiB that must drop, once into a lossless one of 256 KiB
 * drained while the kernel runs. Direct runs call both helpers on the
 * CPU.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 26);
	__uint(map_flags, EGPU_F_RING_DEVICE);
} btrace SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
	__uint(map_flags, EGPU_F_RING_DEVICE);
} btiny SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18);
	__uint(map_flags, EGPU_F_RING_DEVICE | EGPU_F_RING_LOSSLESS);
} blossless SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} brb SEC(".maps");

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

	if (ctx->space == EGPU_SPACE_GLOBAL) /* never NULL: a constant key */
		*st = bpf_egpu_trace_access_batch(ring, *st, ctx, 0xabc);
	return 0;
}

static __always_inline int flush_into(void *ring)
{
	__u32 zero = 0;
	__u64 *st = bpf_map_lookup_elem(&span, &zero);

	bpf_egpu_trace_flush(ring, *st);
	return 0;
}

GPU_MEM("*")
int batch_mem(struct egpu_mem_ctx *ctx)
{
	return trace_into(&btrace, ctx);
}

GPU_EXIT("*")
int batch_exit(void *ctx)
{
	return flush_into(&btrace);
}

GPU_MEM("*")
int tiny_mem(struct egpu_mem_ctx *ctx)
{
	return trace_into(&btiny, ctx);
}

GPU_EXIT("*")
int tiny_exit(void *ctx)
{
	return flush_into(&btiny);
}

GPU_MEM("*")
int ll_mem(struct egpu_mem_ctx *ctx)
{
	return trace_into(&blossless, ctx);
}

GPU_EXIT("*")
int ll_exit(void *ctx)
{
	return flush_into(&blossless);
}

/* Direct run: ctx = { state, addr }: a store of 8 bytes at site 77. */
SEC("egpu/run")
int batch_one(__u64 *ctx)
{
	return (int)bpf_egpu_trace_warp_batch(&brb, ctx[0], ctx[1],
					      8 | EGPU_MEM_STORE << 16 |
					      77ull << 32, 0xabc);
}

/* Direct run: ctx = { state }. */
SEC("egpu/run")
int flush_one(__u64 *ctx)
{
	return (int)bpf_egpu_trace_flush(&brb, ctx[0]);
}

char LICENSE[] SEC("license") = "GPL";
