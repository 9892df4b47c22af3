// SPDX-License-Identifier: MIT
// Programs the event tests run: every ring and print helper, on the CPU
// (direct runs), on the GPU (direct runs and probes of kernels.cu).
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* 64 records of 64 bytes; libbpf rounds
				    * ring sizes up to a page anyway */
} tiny SEC(".maps");

/*
 * Rings in GPU memory. 128 MiB make shards of 1 MiB, one per SM (132 on
 * an H100): the records of all threads of 2^19 (29 MiB in warps' batches)
 * fit with room to spare, even if two SMs shared a shard.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 27);
	__uint(map_flags, EGPU_F_RING_DEVICE);
} drb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
	__uint(map_flags, EGPU_F_RING_DEVICE);
} dtiny SEC(".maps");

/*
 * 8 MiB in GPU memory: shards of 64 KiB (one per SM on an H100 or H200),
 * far less than 4M threads emit, so every shard drops while a consumer
 * drains; smcount says how many records each SM emitted.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
	__uint(map_flags, EGPU_F_RING_DEVICE);
} dmid SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} smcount SEC(".maps");

/* Warp records of kernels.cu's gather (bpf_egpu_trace_warp). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 26);
	__uint(map_flags, EGPU_F_RING_DEVICE);
} dtrace SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} perf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_RINGBUF_MAP); /* bpftime's 1527 */
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} gpurb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} plain SEC(".maps");

/* 56 payload bytes: records of 64 bytes with the header. */
struct event {
	__u64 tid, bid, a, b, c, d, e;
};

/* ctx = { u64 n, u64 tag }: up to @max records {i, tag, ...} into @ring. */
static __always_inline int out_into(void *ring, __u64 *ctx, __u64 max)
{
	struct event ev = { .bid = ctx[1] };
	int sent = 0;

	for (__u64 i = 0; i < ctx[0] && i < max; i++) {
		ev.tid = i;
		if (!bpf_ringbuf_output(ring, &ev, sizeof(ev), 0))
			sent++;
	}
	return sent;
}

/* Direct run: emits n records. */
SEC("egpu/run")
int out(__u64 *ctx)
{
	return out_into(&rb, ctx, 64);
}

/* Direct run: ctx = { addr, info }: one warp record of one lane into rb. */
SEC("egpu/run")
int trace_one(__u64 *ctx)
{
	return bpf_egpu_trace_warp(&rb, ctx[0], ctx[1], 0xabc);
}

/* Same into the 4 KiB ring: the 65th record on finds it full. */
SEC("egpu/run")
int out_tiny(__u64 *ctx)
{
	return out_into(&tiny, ctx, 100);
}

/* Same into a ring in GPU memory (a host ring until the GPU's first use). */
SEC("egpu/run")
int out_dev(__u64 *ctx)
{
	return out_into(&drb, ctx, 64);
}

/* Reserve three, submit the even ones, discard the odd one. */
SEC("egpu/run")
int resv(void *ctx)
{
	int sent = 0;

	for (__u64 i = 0; i < 3; i++) {
		__u64 *v = bpf_ringbuf_reserve(&rb, 16, 0);

		if (!v)
			return -1;
		v[0] = 100 + i;
		v[1] = ~i;
		if (i & 1) {
			bpf_ringbuf_discard(v, 0);
		} else {
			bpf_ringbuf_submit(v, 0);
			sent++;
		}
	}
	return sent;
}

/* Readable bytes beyond any record of the 4 KiB ring. */
char big[8192];

/* Errors a program gets at run time: bad flags, record too big. */
SEC("egpu/run")
int bad_calls(void *ctx)
{
	__u64 v = 1;
	void *r;

	if (bpf_ringbuf_output(&rb, &v, 8, 4) != -22)
		return 1;
	if (bpf_ringbuf_output(&tiny, big, 4096, 0) != -7)
		return 2;
	r = bpf_ringbuf_reserve(&rb, 8, 1);
	if (r) {
		bpf_ringbuf_discard(r, 0);
		return 3;
	}
	if (bpf_perf_event_output(ctx, &perf, 1ull << 32, &v, 8) != -22)
		return 4;
	return 0;
}

/* bpf_perf_event_output on both map kinds bpftime programs use. */
SEC("egpu/run")
int perf_out(void *ctx)
{
	__u64 v = 42, w = 43;

	return bpf_perf_event_output(ctx, &perf, BPF_F_CURRENT_CPU, &v, 8) |
	       bpf_perf_event_output(ctx, &gpurb, 0, &w, 8);
}

/* Every print helper once. */
SEC("egpu/run")
int prints(void *ctx)
{
	bpf_printk("printk %d %u %s", -3, 7, "str");
	bpf_printk("vprintk %d %d %d %d %lld", 1, 2, 3, 4, -5ll);
	bpf_puts("puts line");
	return 0;
}

/* A format built on the stack, as bpftime's probes write theirs. */
SEC("egpu/run")
int prints_from_stack(void *ctx)
{
	char fmt[] = "stack %d of %d";

	bpf_trace_printk(fmt, sizeof(fmt), 5, 6);
	return 0;
}

/* Probes of kernels.cu's `work` (GPU tests). */

/* The calling thread's record: its global id, block, time, a check word. */
static __always_inline void thread_event(struct event *ev)
{
	__u64 bx, by, bz, tx, ty, tz, dx, dy, dz;

	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	bpf_get_block_dim(&dx, &dy, &dz);
	ev->bid = bx;
	ev->tid = bx * dx + tx;
	ev->a = bpf_get_globaltimer();
	ev->b = ev->tid * 3 + 1; /* integrity check */
}

/* One record per thread into @ring. */
static __always_inline void emit_thread(void *ring)
{
	struct event ev = {};

	thread_event(&ev);
	bpf_ringbuf_output(ring, &ev, sizeof(ev), 0);
}

GPU_EXIT("work")
int on_exit(struct egpu_kernel_ctx *ctx)
{
	emit_thread(&rb);
	return 0;
}

/* Into the 4 KiB ring: a few dozen records fit, the rest are dropped. */
GPU_EXIT("work")
int on_exit_tiny(struct egpu_kernel_ctx *ctx)
{
	emit_thread(&tiny);
	return 0;
}

/* One record per thread into rings in GPU memory. */
GPU_EXIT("work")
int on_exit_dev(struct egpu_kernel_ctx *ctx)
{
	emit_thread(&drb);
	return 0;
}

GPU_EXIT("work")
int on_exit_tiny_dev(struct egpu_kernel_ctx *ctx)
{
	emit_thread(&dtiny);
	return 0;
}

/*
 * Four records per thread into a ring in GPU memory, numbered in c: the
 * consumer checks each thread's arrive in order (its SM's shard).
 */
GPU_EXIT("work")
int on_exit_seq_dev(struct egpu_kernel_ctx *ctx)
{
	struct event ev = {};

	thread_event(&ev);
#pragma unroll
	for (int k = 0; k < 4; k++) {
		ev.c = k;
		bpf_ringbuf_output(&drb, &ev, sizeof(ev), 0);
	}
	return 0;
}

/* One record per thread into dmid, saying its SM (e), counted per SM. */
GPU_EXIT("work")
int on_exit_sm_dev(struct egpu_kernel_ctx *ctx)
{
	struct event ev = {};
	__u32 sm = (__u32)bpf_get_sm_id();
	__u64 *n = bpf_map_lookup_elem(&smcount, &sm);

	if (n)
		__sync_fetch_and_add(n, 1);
	thread_event(&ev);
	ev.e = sm;
	bpf_ringbuf_output(&dmid, &ev, sizeof(ev), 0);
	return 0;
}

/* The same record, reserved, filled in place and submitted. */
GPU_EXIT("work")
int on_exit_resv_dev(struct egpu_kernel_ctx *ctx)
{
	struct event *ev = bpf_ringbuf_reserve(&drb, sizeof(*ev), 0);

	if (!ev)
		return 0;
	__builtin_memset(ev, 0, sizeof(*ev));
	thread_event(ev);
	bpf_ringbuf_submit(ev, 0);
	return 0;
}

/*
 * Sizes differing within a warp, from one call: 56 bytes for even threads,
 * 24 for odd ones, 40 for lane 5 alone (a warp makes two batches and a
 * record of its own at once).
 */
GPU_EXIT("work")
int on_exit_mixed(struct egpu_kernel_ctx *ctx)
{
	struct event ev = {};
	__u64 size;

	thread_event(&ev);
	size = (ev.tid & 31) == 5 ? 40 : ev.tid & 1 ? 24 : 56;
	bpf_ringbuf_output(&rb, &ev, size, 0);
	return 0;
}

/* At the entry of kernels.cu's wait_host, which then waits for the host. */
GPU_ENTRY("wait_host")
int at_entry(struct egpu_kernel_ctx *ctx)
{
	emit_thread(&rb);
	return 0;
}

GPU_ENTRY("wait_host")
int at_entry_dev(struct egpu_kernel_ctx *ctx)
{
	emit_thread(&drb);
	return 0;
}

/* Every global access of gather as one record per warp, tagged 0xabc. */
GPU_MEM("gather")
int trace_gather(struct egpu_mem_ctx *ctx)
{
	if (ctx->space == EGPU_SPACE_GLOBAL)
		bpf_egpu_trace_access(&dtrace, ctx, 0xabc);
	return 0;
}

/* Entry: thread 0 of each block prints. */
GPU_ENTRY("work")
int on_entry(struct egpu_kernel_ctx *ctx)
{
	__u64 bx, by, bz, tx, ty, tz;

	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	if (tx == 0)
		bpf_printk("block %llu of kernel %llu", bx, ctx->kernel_id);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
