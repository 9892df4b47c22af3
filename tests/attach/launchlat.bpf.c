// SPDX-License-Identifier: MIT
/*
 * Launch latency the way bpftime's launchlate measures it: a host uprobe
 * on cudaLaunchKernel notes when each launch was asked for, keyed by its
 * grid's x (launchapp gives every launch its own); the GPU entry probe of
 * the launched kernel reads it back and bins how long the kernel took to
 * start. Host and GPU timestamps compare directly: in host probes
 * bpf_ktime_get_ns reads the GPU's timer (docs/attach.md).
 */
#include "uprobe_regs.h"

static const __u64 (*bpf_get_block_idx)(__u64 *x, __u64 *y, __u64 *z) =
	(void *)503;
static const __u64 (*bpf_get_thread_idx)(__u64 *x, __u64 *y, __u64 *z) =
	(void *)505;
static const __u64 (*bpf_get_grid_dim)(__u64 *x, __u64 *y, __u64 *z) =
	(void *)508;

#define GRIDS 64
#define BINS 34 /* 0: started before it was launched; k: [2^(k-1), 2^k) ns */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GRIDS);
	__type(key, __u32);
	__type(value, __u64);
} launched_at SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BINS);
	__type(key, __u32);
	__type(value, __u64);
} latency SEC(".maps");

/* 0: host calls seen; 1: kernels that found their launch; 2: that did not;
 * 3: modules the runtime loaded (cuLibraryLoadData returning 0);
 * 4: driver allocations (cuMemAlloc returning 0; under EGPU_MEMCHECK=1
 * memcheck's wrapper of it too) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 5);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static void count(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("uprobe/libcudart.so:cudaLaunchKernel")
int BPF_KPROBE(on_launch, const void *func, __u64 grid_xy)
{
	__u32 gx = (__u32)grid_xy;
	__u64 now = bpf_ktime_get_ns();

	count(0);
	if (gx < GRIDS)
		bpf_map_update_elem(&launched_at, &gx, &now, BPF_ANY);
	return 0;
}

SEC("uretprobe/cuLibraryLoadData")
int BPF_KRETPROBE(on_module, long rc)
{
	if (rc == 0)
		count(3);
	return 0;
}

SEC("uretprobe/cuMemAlloc")
int BPF_KRETPROBE(on_alloc, long rc)
{
	if (rc == 0)
		count(4);
	return 0;
}

static __u32 bin_of(__s64 ns)
{
	__u32 b = 1;

	if (ns < 0)
		return 0;
	for (int i = 0; i < BINS - 2 && ns > 1; i++, ns >>= 1)
		b++;
	return b;
}

SEC("gpu/entry/*tick*")
int on_start(void *ctx)
{
	__u64 x, y, z, bx, by, bz, gx;
	__u64 now = bpf_ktime_get_ns(), *at;
	__u32 key, b;

	bpf_get_thread_idx(&x, &y, &z);
	bpf_get_block_idx(&bx, &by, &bz);
	if (x | y | z | bx | by | bz)
		return 0;
	bpf_get_grid_dim(&gx, &y, &z);
	key = (__u32)gx;
	at = bpf_map_lookup_elem(&launched_at, &key);
	if (!at || !*at) {
		count(2);
		return 0;
	}
	count(1);
	b = bin_of((__s64)(now - *at));
	at = bpf_map_lookup_elem(&latency, &b);
	if (at)
		__sync_fetch_and_add(at, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
