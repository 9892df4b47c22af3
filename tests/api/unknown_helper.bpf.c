// SPDX-License-Identifier: MIT
// A program calling a helper no one defines, beside good ones: it is refused
// alone, everywhere, and its object loads.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

static long (*no_such_helper)(void) = (void *)9999;

GPU_ENTRY("saxpy")
int good_entry(struct egpu_kernel_ctx *ctx)
{
	return 0;
}

GPU_ENTRY("saxpy")
int calls_unknown(struct egpu_kernel_ctx *ctx)
{
	return (int)no_such_helper();
}

SEC("egpu/run")
int run_unknown(void *mem)
{
	return (int)no_such_helper();
}

char LICENSE[] SEC("license") = "GPL";
