// SPDX-License-Identifier: MIT
// What naive_timing.bpf.c and tuned_timing.bpf.c share: each thread's start
// time in a thread-local map at entry, and per kernel id (per SM) the sum
// of the threads' durations and their count.
#ifndef KSTAT_TIMING_H
#define KSTAT_TIMING_H

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
int timing_entry(struct egpu_kernel_ctx *ctx)
{
	__u32 z = 0;
	__u64 *t = bpf_map_lookup_elem(&t0, &z);

	*t = bpf_get_globaltimer();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";

#endif
