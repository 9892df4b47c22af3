// SPDX-License-Identifier: MIT
// alarm: watch every value kernel step stores to global memory and call
// the application's on_nan(kernel_id, index) the first time one is a NaN,
// once per kernel: a flag per kernel id, set with compare-and-swap, lets
// exactly one thread make the call.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

/* The application registers on_nan as this user helper (main.c). */
#define ON_NAN 0x10000
static void (*on_nan)(__u64 kernel_id, __u64 index) = (void *)ON_NAN;

/* raised[kernel id]: 1 once that kernel called on_nan; the host re-arms
 * by writing 0. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} raised SEC(".maps");

SEC("gpu/mem/step/global")
int watch_nan(struct egpu_mem_ctx *ctx)
{
	__u32 bits, key = ctx->kernel_id;
	__u64 *flag;

	/* Folded per site: loads keep nothing of this probe. */
	if (ctx->kind != EGPU_MEM_STORE || ctx->size != 4)
		return 0;
	if (bpf_egpu_read_value(ctx, &bits, sizeof(bits), 0))
		return 0;
	if ((bits & 0x7fffffff) <= 0x7f800000) /* a number or an infinity */
		return 0;
	flag = bpf_map_lookup_elem(&raised, &key);
	/* A plain read first: after the first NaN, no atomic at all. */
	if (!flag || *flag || __sync_val_compare_and_swap(flag, 0, 1))
		return 0;
	on_nan(ctx->kernel_id, bpf_egpu_global_thread_x());
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
