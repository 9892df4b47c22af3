// SPDX-License-Identifier: MIT
/*
 * Host probes as bpftime's examples write them: libbpf's bpf_tracing.h
 * (BPF_KPROBE, PT_REGS_*) for x86-64, over egpu's struct egpu_pt_regs
 * standing in for the kernel's struct pt_regs (vmlinux.h's layout).
 */
#include "uprobe_regs.h"

static const __u64 (*bpf_get_thread_idx)(__u64 *x, __u64 *y, __u64 *z) =
	(void *)505;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

static void put(__u32 k, __u64 v)
{
	bpf_map_update_elem(&seen, &k, &v, BPF_ANY);
}

/* cudaLaunchKernel(func, dim3 grid, dim3 block, args, shmem, stream):
 * shmem and stream on the stack, above the return address. */
SEC("uprobe//usr/local/cuda/lib64/libcudart.so.13:cudaLaunchKernel")
int BPF_KPROBE(on_launch, const void *func, __u64 grid_xy, __u64 grid_z,
	       __u64 block_xy, __u64 block_z)
{
	__u64 shmem = 0;

	put(0, (__u64)func);
	put(1, grid_xy);
	put(2, grid_z);
	put(3, block_xy);
	put(4, block_z);
	put(5, ctx->r9);
	put(6, bpf_probe_read_user(&shmem, sizeof(shmem),
				   (const void *)(ctx->sp + 8)));
	put(7, shmem);
	return 0;
}

SEC("uretprobe/cuMemAlloc")
int BPF_KRETPROBE(on_alloc_ret, long rc)
{
	__u64 bad = 1;

	put(8, rc);
	/* an unreadable address: -EFAULT and zeroes, no crash */
	put(9, bpf_probe_read_user(&bad, sizeof(bad), (const void *)8));
	put(10, bad);
	return 0;
}

/* No function in the section: egpu attach --uprobe plain=FUNCTION. */
SEC("uprobe")
int plain(struct pt_regs *ctx)
{
	return PT_REGS_PARM1(ctx) + 1;
}

/* A GPU helper in a host probe: refused at load, the rest still load. */
SEC("uprobe/cudaMalloc")
int gpu_only(struct pt_regs *ctx)
{
	__u64 x, y, z;

	bpf_get_thread_idx(&x, &y, &z);
	return x;
}

/* GPU probes share the object: attached to kernels, not run here. */
SEC("gpu/entry/*")
int on_entry(void *ctx)
{
	put(15, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
