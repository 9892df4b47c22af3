// SPDX-License-Identifier: MIT
// Threads entering and leaving each kernel, by the context's kernel id.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} entries SEC(".maps"), exits SEC(".maps");

static __always_inline void bump(void *map, __u64 kernel_id)
{
	__u32 key = kernel_id;
	__u64 *v = bpf_map_lookup_elem(map, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
}

GPU_ENTRY("*")
int count_entry(struct egpu_kernel_ctx *ctx)
{
	bump(&entries, ctx->kernel_id);
	return 0;
}

GPU_EXIT("*")
int count_exit(struct egpu_kernel_ctx *ctx)
{
	bump(&exits, ctx->kernel_id);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
