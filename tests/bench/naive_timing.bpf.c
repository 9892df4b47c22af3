// SPDX-License-Identifier: MIT
// A timing probe written the way the eBPF habit teaches (issue 24): the
// start time per thread, and at exit each thread adds its duration and a
// count into a per-SM array keyed by the kernel's id, two atomic adds per
// thread, locals declared together. The JIT, not the probe, makes it cheap.
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
int naive_entry(struct egpu_kernel_ctx *ctx)
{
	__u32 z = 0;
	__u64 *t = bpf_map_lookup_elem(&t0, &z);

	*t = bpf_get_globaltimer();
	return 0;
}

GPU_EXIT("*")
int naive_exit(struct egpu_kernel_ctx *ctx)
{
	__u32 z = 0, k = ctx->kernel_id;
	__u64 *t = bpf_map_lookup_elem(&t0, &z);
	struct kstat *s = bpf_map_lookup_elem(&kstats, &k);

	if (!s)
		return 0;
	__sync_fetch_and_add(&s->ns, bpf_get_globaltimer() - *t);
	__sync_fetch_and_add(&s->runs, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
