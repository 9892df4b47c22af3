// SPDX-License-Identifier: MIT
/*
 * memlatency: make every global load of the kernels slower by delay[0]
 * nanoseconds, as memory further away would be (eGPU's CXL.mem
 * simulation). The host sets the delay between runs.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} delay SEC(".maps");

GPU_MEM("*")
int delay_load(struct egpu_mem_ctx *ctx)
{
	__u32 zero = 0;
	__u64 *ns;

	if (ctx->kind != EGPU_MEM_LOAD || ctx->space != EGPU_SPACE_GLOBAL)
		return 0;
	ns = bpf_map_lookup_elem(&delay, &zero);
	if (ns && *ns)
		bpf_egpu_nanosleep(*ns);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
