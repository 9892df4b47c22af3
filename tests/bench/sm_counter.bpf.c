// SPDX-License-Identifier: MIT
// One 8-byte counter per SM (an SM array of one entry): the case where the
// SMs' copies would share L2 lines without the padding of each copy to a
// whole line (lib/maps/layout.h). Plain __sync_fetch_and_add, one atomic
// per warp after aggregation.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_EGPU_SM_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} exits SEC(".maps");

GPU_EXIT("*")
int sm_counter_exit(void *ctx)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&exits, &zero);

	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
