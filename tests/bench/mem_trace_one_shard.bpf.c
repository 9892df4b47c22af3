// SPDX-License-Identifier: MIT
/*
 * bench_mem's "trace (device ring, one shard)" row: mem_trace's tracing
 * probe with its ring in GPU memory in one shard for the whole GPU, every
 * warp reserving on one counter: the ring the first device-ring rows of
 * docs/benchmarks.md measured, kept to reproduce them beside the shards.
 */
#define MT_RING_FLAGS (EGPU_F_RING_DEVICE | EGPU_F_RING_ONE_SHARD)
#include "../../examples/mem_trace/mem_trace.bpf.c"
