// SPDX-License-Identifier: MIT
// naive_timing.bpf.c written for the GPU by hand: each warp adds its
// lanes' durations and count with bpf_egpu_warp_add, one atomic each per
// warp. The transformer benchmark compares the two: the JIT should make
// the naive one cost what this one does.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct kstat {
	__u64 ns;
	__u64 runs;
};

struct {
	__uint(type, BPF_MAP_TYPE_EGPU_THREAD_LOCAL);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} t0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_EGPU_SM_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct kstat);
} kstats SEC(".maps");

GPU_ENTRY("*")
int tuned_entry(struct egpu_kernel_ctx *ctx)
{
	__u32 z = 0;
	__u64 *t = bpf_map_lookup_elem(&t0, &z);

	*t = bpf_get_globaltimer();
	return 0;
}

GPU_EXIT("*")
int tuned_exit(struct egpu_kernel_ctx *ctx)
{
	__u32 z = 0;
	__u64 *t = bpf_map_lookup_elem(&t0, &z);
	__u64 d = bpf_get_globaltimer() - *t;
	__u32 k = ctx->kernel_id;
	struct kstat *s = bpf_map_lookup_elem(&kstats, &k);

	if (!s)
		return 0;
	bpf_egpu_warp_add(&s->ns, d);
	bpf_egpu_warp_add(&s->runs, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
