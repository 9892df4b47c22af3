// SPDX-License-Identifier: MIT
// Probes calling user helpers from the GPU (test_helpers_gpu.c).
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

static long (*h_seq)(__u64 thread, __u64 k) = (void *)0x10000;
static long (*h_buf)(const void *b) = (void *)0x10001;   /* const u8[16] */
static long (*h_warp)(__u64 warp) = (void *)0x10002;
static long (*h_flood)(__u64 thread) = (void *)0x10003;

static __u64 global_thread(void)
{
	__u64 bx, by, bz, tx, ty, tz, dx, dy, dz;

	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_block_dim(&dx, &dy, &dz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	return bx * dx + tx;
}

/* Three calls per thread, numbered: they must arrive once each, in order. */
GPU_ENTRY("ordered")
int order_calls(struct egpu_kernel_ctx *ctx)
{
	__u64 t = global_thread(), b[2] = { t, ~t };

	h_seq(t, 0);
	h_seq(t, 1);
	h_buf(b);
	h_seq(t, 2);
	return 0;
}

/* More calls than the ring holds, nobody consuming: the rest drop. */
GPU_ENTRY("flood")
int flood_calls(struct egpu_kernel_ctx *ctx)
{
	h_flood(global_thread());
	return 0;
}

/* One call per warp, from its lane 0: the kernel time test. */
GPU_ENTRY("timed")
int warp_calls(struct egpu_kernel_ctx *ctx)
{
	if (bpf_get_lane_id() == 0)
		h_warp(global_thread() / 32);
	return 0;
}
