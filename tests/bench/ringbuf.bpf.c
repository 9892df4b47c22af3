// SPDX-License-Identifier: MIT
// ringbuf_bench probes: every thread emits one record at exit (16, 64 or
// 256 payload bytes), or updates a hash map; plus an array to look up.
#include <egpu/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 20);
} events SEC(".maps");

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

#define EMIT(BYTES)                                                           \
	GPU_EXIT("touch")                                                     \
	int emit##BYTES(void *ctx)                                            \
	{                                                                     \
		__u64 rec[BYTES / 8];                                         \
                                                                              \
		rec[0] = bpf_egpu_global_thread_x();                          \
		for (int i = 1; i < BYTES / 8; i++)                           \
			rec[i] = rec[0] + i;                                  \
		bpf_ringbuf_output(&events, rec, sizeof(rec), 0);             \
		return 0;                                                     \
	}

EMIT(16)
EMIT(64)
EMIT(256)

GPU_EXIT("touch")
int hash_update(void *ctx)
{
	__u64 id = bpf_egpu_global_thread_x();
	__u32 key = id & ((1 << 20) - 1);

	bpf_map_update_elem(&hash, &key, &id, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
