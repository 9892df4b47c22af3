/* SPDX-License-Identifier: MIT */
/* Passes a function's address (a callback, as for bpf_loop). */
#include <egpu/bpf_helpers.h>

static long (*loop)(u32 n, void *fn, void *ctx, u64 flags) = (void *)181;

static __noinline long body(u32 i, void *ctx)
{
	return i + (long)ctx;
}

GPU_ENTRY("k") int p(void)
{
	return loop(4, body, 0, 0);
}
