/* SPDX-License-Identifier: MIT */
/* The ctx at each attach point: read-only structs, or a direct run's memory. */
#include "bpf_prog.h"

struct {
	__uint(type, MAP_HASH);
	__uint(max_entries, 4096);
	__type(key, u64);
	__type(value, u64);
} addrs SEC(".maps");

/* expect: accept */
SEC("gpu/entry/read")
int read_entry_ctx(struct egpu_kernel_ctx *ctx)
{
	return ctx->kernel_id + ctx->params + ctx->params_size + ctx->attach;
}

/* expect: reject "write into read-only ctx" */
SEC("gpu/entry/write")
int write_entry_ctx(struct egpu_kernel_ctx *ctx)
{
	ctx->kernel_id = 0;
	return 0;
}

/* expect: reject "out-of-bounds access to ctx: off 32 size 8" */
SEC("kprobe/past_end")
int read_past_ctx(struct egpu_kernel_ctx *ctx)
{
	return ctx[1].kernel_id;
}

/* expect: accept */
SEC("kretprobe/exit_ctx")
int read_exit_ctx(struct egpu_kernel_ctx *ctx)
{
	return ctx->attach == 2;
}

/* expect: accept */
SEC("gpu/mem/addresses")
int record_address(struct egpu_mem_ctx *ctx)
{
	u64 addr = ctx->addr & ~0xfffULL, one = 1;
	u64 *v = bpf_map_lookup_elem(&addrs, &addr);

	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&addrs, &addr, &one, 0);
	return 0;
}

/* expect: reject "write into read-only ctx" */
SEC("kprobe/__memcapture")
int write_mem_ctx(struct egpu_mem_ctx *ctx)
{
	ctx->size = 0;
	return 0;
}

/* expect: reject "variable offset access to ctx" */
SEC("gpu/mem/variable")
int variable_ctx_offset(struct egpu_mem_ctx *ctx)
{
	u32 *words = (u32 *)ctx;

	return words[ctx->size & 7];
}

/* expect: accept */
SEC("run/64")
int direct_run(u64 *mem, u64 len)
{
	u64 sum = 0;

	for (int i = 0; i < 8; i++)
		sum += mem[i];
	mem[0] = sum;
	return len;
}

/* expect: reject "out-of-bounds access to ctx: off 64 size 8" */
SEC("run/64")
int direct_run_past_end(u64 *mem, u64 len)
{
	u64 sum = 0;

	for (int i = 0; i < 9; i++)
		sum += mem[i];
	return sum;
}

/* expect: accept */
SEC("run/16")
int direct_run_bytes(u8 *mem, u64 len)
{
	return mem[3] | mem[15] << 8;
}

/* Entry and exit probes read the kernel's parameters through ctx->params
 * (the instrumenter checks each kernel has the bytes they reach). */

/* expect: accept */
SEC("gpu/entry/param_n")
int read_param_n(struct egpu_kernel_ctx *ctx)
{
	const int *p = (const int *)ctx->params;

	return p[6];
}

/* expect: accept */
SEC("gpu/exit/param_bounded")
int read_param_bounded(struct egpu_kernel_ctx *ctx)
{
	const u64 *p = (const u64 *)ctx->params;

	return p[ctx->site & 3];
}

/* expect: reject "write into the kernel's parameters" */
SEC("gpu/entry/param_write")
int write_param(struct egpu_kernel_ctx *ctx)
{
	*(u32 *)ctx->params = 0;
	return 0;
}

/* expect: reject "is not a pointer" */
SEC("gpu/entry/param_unbounded")
int read_param_unbounded(struct egpu_kernel_ctx *ctx)
{
	const u8 *p = (const u8 *)ctx->params;

	return p[ctx->params_size];
}

/* expect: reject "out-of-bounds access to kernel parameters" */
SEC("gpu/entry/param_past_limit")
int read_param_past_limit(struct egpu_kernel_ctx *ctx)
{
	const u32 *p = (const u32 *)ctx->params;

	return p[8191];
}

/* expect: accept */
SEC("gpu/entry/param_address")
int param_address_as_number(struct egpu_kernel_ctx *ctx)
{
	u64 key = ctx->params >> 3;
	u64 one = 1;

	return bpf_map_update_elem(&addrs, &key, &one, 0);
}
