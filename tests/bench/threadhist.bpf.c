// SPDX-License-Identifier: MIT
// Per-thread run counter at exit (bpftime's threadhist).
#include <egpu/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} runs SEC(".maps");

GPU_EXIT("*")
int threadhist_exit(void *ctx)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&runs, &zero);

	if (n)
		*n += 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
