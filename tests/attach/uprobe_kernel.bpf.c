// SPDX-License-Identifier: MIT
/* A host probe calling a Linux kernel helper: refused, saying why. */
#include <egpu/bpf_helpers.h>

static __u64 (*bpf_get_current_task)(void) = (void *)35;

SEC("uprobe/cudaLaunchKernel")
int task(void *ctx)
{
	return bpf_get_current_task() != 0;
}

char LICENSE[] SEC("license") = "GPL";
