// SPDX-License-Identifier: MIT
/*
 * printk: bpf_printk from inside a GPU kernel. Thread 0 of each block says
 * hello at kernel entry; block 0 also prints a line with five arguments
 * (bpf_printk turns into bpf_trace_vprintk past three) and a bpf_puts.
 * Lines reach the host asynchronously, when it polls.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

GPU_ENTRY("hello")
int say_hello(struct egpu_kernel_ctx *ctx)
{
	__u64 x, y, z, bx, by, bz, gx, gy, gz;

	bpf_get_thread_idx(&x, &y, &z);
	if (x || y || z)
		return 0;
	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_grid_dim(&gx, &gy, &gz);
	bpf_printk("hello from block %llu of %llu", bx, gx);
	if (bx == 0) {
		bpf_printk("grid %llux%llux%llu, kernel %llu, %u parameter bytes",
			   gx, gy, gz, ctx->kernel_id, ctx->params_size);
		bpf_puts("entry probe done");
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
