// SPDX-License-Identifier: MIT
// Empty entry and exit probes: the fixed cost of a probe call.
#include <egpu/bpf_helpers.h>

GPU_ENTRY("*")
int empty_entry(void *ctx)
{
	return 0;
}

GPU_EXIT("*")
int empty_exit(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
