// SPDX-License-Identifier: MIT
// Programs the API tests load: maps of each kind, global data, probes.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} slots SEC(".maps");

const volatile __u64 step = 3;
__u64 total = 100;

/* Direct run: counts[ctx byte 0] += step; total += step; returns total. */
SEC("egpu/run")
int bump(__u8 *ctx)
{
	__u32 key = ctx[0];
	__u64 one = step, *v = bpf_map_lookup_elem(&counts, &key);

	if (v)
		*v += step;
	else
		bpf_map_update_elem(&counts, &key, &one, EGPU_NOEXIST);
	total += step;
	return total;
}

GPU_ENTRY("saxpy")
int on_entry(struct egpu_kernel_ctx *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&slots, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

GPU_EXIT("*")
int on_exit(struct egpu_kernel_ctx *ctx)
{
	__u32 key = 1;
	__u64 *v = bpf_map_lookup_elem(&slots, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
