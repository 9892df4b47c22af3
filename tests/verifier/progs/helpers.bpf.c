/* SPDX-License-Identifier: MIT */
/* Helpers: argument checks and where each may be called. */
#include "bpf_prog.h"

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64[2]);
} out SEC(".maps");

/* expect: accept */
SEC("gpu/entry/indices")
int thread_indices(struct egpu_kernel_ctx *ctx)
{
	u64 bx, by, bz, tx, ty, tz, dx, dy, dz, gx, gy, gz;

	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	bpf_get_block_dim(&dx, &dy, &dz);
	bpf_get_grid_dim(&gx, &gy, &gz);
	return (bx * dx + tx) + (by * dy + ty) * gx + bz + tz + dz + gy + gz;
}

/* expect: accept */
SEC("gpu/mem/index_into_map")
int index_into_map(struct egpu_mem_ctx *ctx)
{
	u32 key = 0;
	u64 *v = bpf_map_lookup_elem(&out, &key);
	u64 x, y, z;

	if (!v)
		return 0;
	bpf_get_thread_idx(v, &y, &z);
	bpf_get_block_idx(&x, &y, &z);
	return x;
}

/* expect: accept */
SEC("gpu/exit/exit_thread")
int exit_at_exit(struct egpu_kernel_ctx *ctx)
{
	if (ctx->params_size == 0)
		bpf_exit_thread();
	return 0;
}

/* expect: reject "helper exit_thread#507 is not allowed in memory probes" */
SEC("gpu/mem/exit_thread")
int exit_in_mem_probe(struct egpu_mem_ctx *ctx)
{
	if (ctx->size == 0)
		bpf_exit_thread();
	return 0;
}

/* expect: accept (bpftime's atomizer ends threads at entry) */
SEC("gpu/entry/exit_thread")
int exit_in_entry_probe(struct egpu_kernel_ctx *ctx)
{
	bpf_exit_thread();
	return 0;
}

/* expect: accept */
SEC("gpu/entry/printk")
int print_it(struct egpu_kernel_ctx *ctx)
{
	static const char fmt[] = "kernel %llu\n";

	return bpf_trace_printk(fmt, sizeof(fmt), ctx->kernel_id);
}

/* expect: accept */
SEC("gpu/entry/printk_stack")
int print_from_stack(struct egpu_kernel_ctx *ctx)
{
	char fmt[] = "sm %d";

	return bpf_trace_printk(fmt, sizeof(fmt), bpf_get_sm_id());
}

/* expect: reject "out-of-bounds access to stack" */
SEC("gpu/entry/printk_too_long")
int print_too_long(struct egpu_kernel_ctx *ctx)
{
	char fmt[] = "sm %d";

	return bpf_trace_printk(fmt, 520, bpf_get_sm_id());
}

/* expect: accept */
SEC("gpu/entry/timers")
int timers(struct egpu_kernel_ctx *ctx)
{
	bpf_membar();
	return bpf_ktime_get_ns() - bpf_get_globaltimer() +
	       bpf_get_current_pid_tgid();
}

/* expect: reject "misaligned map value access" */
SEC("gpu/entry/misaligned_out")
int misaligned_out(struct egpu_kernel_ctx *ctx)
{
	u32 key = 0;
	char *v = bpf_map_lookup_elem(&out, &key);
	u64 y, z;

	if (!v)
		return 0;
	bpf_get_thread_idx((u64 *)(v + 4), &y, &z);
	return 0;
}

/* expect: reject "r2 is not initialised" */
SEC("gpu/entry/missing_argument")
int missing_argument(struct egpu_kernel_ctx *ctx)
{
	long (*lookup_one)(void *map) = (void *)1;

	return lookup_one(&out);
}
