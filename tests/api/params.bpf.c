// SPDX-License-Identifier: MIT
// Probes reading what the probed code sees: a kernel's arguments at entry,
// the bytes a memory access touches, the value a store writes.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 7);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

/* saxpy(float a, const float *x, float *y, int n): n sits at offset 24. */
#define SAXPY_N_OFF 24

static __always_inline void keep(__u32 key, __u64 value)
{
	__u64 *v = bpf_map_lookup_elem(&seen, &key);

	if (v)
		*v = value;
}

/* seen[0] = n; returns the helper's result. */
GPU_ENTRY("saxpy")
int record_n(struct egpu_kernel_ctx *ctx)
{
	int n = 0;
	long rc = bpf_egpu_read_param(ctx, &n, sizeof(n), SAXPY_N_OFF);

	keep(0, (__u64)n);
	return (int)rc;
}

/* Reads 8 bytes at n's offset: past the 28-byte block, so -14, zeroed. */
GPU_EXIT("saxpy")
int read_past_end(struct egpu_kernel_ctx *ctx)
{
	__u64 v = 0x5555;
	long rc = bpf_egpu_read_param(ctx, &v, sizeof(v), SAXPY_N_OFF);

	keep(1, v);
	return (int)rc;
}

/* seen[4] = n, read through ctx->params: the verifier bounds the read
 * (bytes 24..27), the instrumenter puts it only into kernels that have
 * them. */
GPU_ENTRY("saxpy")
int direct_n(struct egpu_kernel_ctx *ctx)
{
	keep(4, (__u64)*(const int *)(ctx->params + SAXPY_N_OFF));
	return 0;
}

/* seen[2] += the 4-byte value every store to global memory overwrites,
 * seen[3] += the value every global load reads (float bits as integers).
 * The section probes global accesses only (the test below still checks). */
SEC("gpu/mem/vadd_mem/global")
int mem_values(struct egpu_mem_ctx *ctx)
{
	__u32 v = 0, key = ctx->kind == EGPU_MEM_STORE ? 2 : 3;
	__u64 *sum;

	if (ctx->space != EGPU_SPACE_GLOBAL || ctx->size != 4 ||
	    ctx->kind == EGPU_MEM_ATOMIC)
		return 0;
	if (bpf_egpu_read_mem(ctx, &v, sizeof(v), 0))
		return 1;
	sum = bpf_map_lookup_elem(&seen, &key);
	if (sum)
		__sync_fetch_and_add(sum, v);
	return 0;
}

/* seen[5] += the 4-byte value every global store writes (its register or
 * immediate, read before the store), seen[6] += 1 for each access without
 * one (loads: read_value refuses, -14). */
SEC("gpu/mem/vadd_mem/global")
int store_values(struct egpu_mem_ctx *ctx)
{
	__u32 v = 0, key = 5;
	__u64 *sum;

	if (ctx->size != 4)
		return 0;
	if (bpf_egpu_read_value(ctx, &v, sizeof(v), 0)) {
		key = 6;
		v = 1;
	}
	sum = bpf_map_lookup_elem(&seen, &key);
	if (sum)
		__sync_fetch_and_add(sum, v);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
