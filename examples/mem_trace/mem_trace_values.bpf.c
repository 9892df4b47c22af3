// SPDX-License-Identifier: MIT
/*
 * mem_trace, values mode: every global load and store of add_and_gather
 * with the value it moves, one ring record per thread and access. A load's
 * value is what bpf_egpu_read_mem finds at its address (the probe runs
 * before the load: the bytes it is about to read); a store's is what
 * bpf_egpu_read_value gives (the register or constant it writes), and
 * bpf_egpu_read_mem the bytes it is about to overwrite.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

#include "mem_trace.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} values SEC(".maps");

/* The @size bytes at @ctx's address (@from_mem) or of its stored value,
 * zero-extended: 4- and 8-byte accesses (others are not recorded). */
static __always_inline long read_bytes(struct egpu_mem_ctx *ctx, __u64 *v,
				       __u32 size, int from_mem)
{
	*v = 0;
	if (size == 8)
		return from_mem ? bpf_egpu_read_mem(ctx, v, 8, 0)
				: bpf_egpu_read_value(ctx, v, 8, 0);
	return from_mem ? bpf_egpu_read_mem(ctx, v, 4, 0)
			: bpf_egpu_read_value(ctx, v, 4, 0);
}

SEC("gpu/mem/add_and_gather/global/load,store")
int trace_values(struct egpu_mem_ctx *ctx)
{
	struct mt_value r = {
		.addr = ctx->addr, .site = ctx->site, .size = ctx->size,
		.kind = ctx->kind,
	};

	if (r.size != 4 && r.size != 8)
		return 0;
	r.thread = bpf_egpu_global_thread_x();
	if (read_bytes(ctx, &r.before, r.size, 1))
		return 0;
	if (r.kind == EGPU_MEM_STORE && read_bytes(ctx, &r.stored, r.size, 0))
		return 0;
	bpf_ringbuf_output(&values, &r, sizeof(r), 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
