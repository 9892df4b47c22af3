// SPDX-License-Identifier: MIT
// Programs `egpu run FILE.o` runs on the CPU: probes reading the kernel's
// parameters, and a direct run calling GPU helpers.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} runs SEC(".maps");

/* saxpy(float a, const float *x, float *y, int n): n at byte 24. */
GPU_ENTRY("saxpy")
int n_by_helper(struct egpu_kernel_ctx *ctx)
{
	int n = -1;

	if (bpf_egpu_read_param(ctx, &n, sizeof(n), 24))
		return -1;
	return n;
}

GPU_EXIT("saxpy")
int n_direct(struct egpu_kernel_ctx *ctx)
{
	return *(const int *)(ctx->params + 24);
}

/* The sum of its memory's bytes, plus the thread's x index and SM (0 on
 * the CPU), plus 1000 times the runs so far. */
SEC("egpu/run")
int sum_bytes(unsigned char *mem, __u64 len)
{
	__u64 x, y, z, sum = 0, *n;
	__u32 key = 0;

	for (__u32 i = 0; i < 16 && i < len; i++)
		sum += mem[i];
	bpf_get_thread_idx(&x, &y, &z);
	n = bpf_map_lookup_elem(&runs, &key);
	if (!n)
		return -1;
	sum += x + bpf_get_sm_id() + 1000 * (*n)++;
	return (int)sum;
}

char LICENSE[] SEC("license") = "GPL";
