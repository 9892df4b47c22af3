// SPDX-License-Identifier: MIT
/* The GPU timer at the entry of `stamp`, for the host to place in time. */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} entry_ns SEC(".maps");

GPU_ENTRY("stamp")
int on_entry(struct egpu_kernel_ctx *ctx)
{
	__u32 zero = 0;
	__u64 *ns = bpf_map_lookup_elem(&entry_ns, &zero);

	if (ns)
		*ns = bpf_get_globaltimer();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
