// SPDX-License-Identifier: MIT
// ringbuf_bench probes: every thread emits one record at exit (16, 64 or
// 256 payload bytes) into a ring in host memory, or 16 bytes into a ring
// in GPU memory (one for a whole run, or a lossless one producers wait
// on); or updates a hash map; plus an array to look up.
#include <egpu/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 20);
} events SEC(".maps");

/*
 * Big enough for a whole run, with no host draining at all: 16M records of
 * 16 bytes in warp batches are 16.5 bytes each (8 of record header and 8
 * of batch header per 32), 277 MB, 2.1 MB per SM of an H100; records made
 * one by one (a lane alone) 24 bytes each, 3.05 MB per SM. Per-SM shards
 * of 512 MiB / 128 = 4 MiB leave room for SMs that run more blocks than
 * the average (docs/events.md, "Rings in GPU memory").
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 512 << 20);
	__uint(map_flags, EGPU_F_RING_DEVICE);
} dev_events SEC(".maps");

/*
 * Lossless (EGPU_F_RING_LOSSLESS): a quarter of a run's records, so
 * producers wait for the host to drain it while the kernel runs, and what
 * is delivered is the host's pace (issue 23's "16 B per thread, lossless,
 * delivered").
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 20);
	__uint(map_flags, EGPU_F_RING_DEVICE | EGPU_F_RING_LOSSLESS);
} lossless_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 20);
	__type(key, __u32);
	__type(value, __u64);
} hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 20);
	__type(key, __u32);
	__type(value, __u64);
} array SEC(".maps");

/* Program NAME: one record of BYTES payload bytes into RING. */
#define EMIT(NAME, RING, BYTES)                                               \
	GPU_EXIT("touch")                                                     \
	int NAME(void *ctx)                                                   \
	{                                                                     \
		__u64 rec[BYTES / 8];                                         \
                                                                              \
		rec[0] = bpf_egpu_global_thread_x();                          \
		for (int i = 1; i < BYTES / 8; i++)                           \
			rec[i] = rec[0] + i;                                  \
		bpf_ringbuf_output(&RING, rec, sizeof(rec), 0);               \
		return 0;                                                     \
	}

EMIT(emit16, events, 16)
EMIT(emit64, events, 64)
EMIT(emit256, events, 256)
EMIT(emit16_dev, dev_events, 16)
EMIT(emit16_lossless, lossless_events, 16)

GPU_EXIT("touch")
int hash_update(void *ctx)
{
	__u64 id = bpf_egpu_global_thread_x();
	__u32 key = id & ((1 << 20) - 1);

	bpf_map_update_elem(&hash, &key, &id, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
