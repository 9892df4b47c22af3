// SPDX-License-Identifier: MIT
/*
 * threadhist: per GPU thread, how many times it ran the kernel and how long
 * it spent in it (globaltimer, ns). Per-thread maps give each thread its own
 * slot, so there are no atomics on the hot path.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} entered_at SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} per_thread SEC(".maps"); /* key 0: runs, key 1: total ns */

GPU_ENTRY("stride_work")
int hist_entry(struct egpu_kernel_ctx *ctx)
{
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&entered_at, &zero);

	if (t)
		*t = bpf_get_globaltimer();
	return 0;
}

GPU_EXIT("stride_work")
int hist_exit(struct egpu_kernel_ctx *ctx)
{
	__u32 zero = 0, one = 1;
	__u64 *t = bpf_map_lookup_elem(&entered_at, &zero);
	__u64 *runs = bpf_map_lookup_elem(&per_thread, &zero);
	__u64 *ns = bpf_map_lookup_elem(&per_thread, &one);

	if (!t || !runs || !ns)
		return 0;
	*runs += 1;
	*ns += bpf_get_globaltimer() - *t;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
