// SPDX-License-Identifier: MIT
/*
 * Probes written the way bpftime's examples are (bpftime's map types,
 * helper numbers and section names), for the features libegpu took from
 * it: blocks 2 and 3 of saxpy end at entry (exit_thread), the threads left
 * count themselves in a 1504 array, a 1513 array in host memory, a 1512
 * per-thread array in host memory, a 1501 hash, and send their index with
 * perf_event_output whose r1 is not the ctx.
 */
#include <egpu/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_GPU_KERNEL_SHARED_ARRAY_MAP);
	__uint(max_entries, 2);
	__type(key, u32);
	__type(value, u64);
} kshared SEC(".maps"); /* 0: threads past the entry, 1: at the exit */

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY_HOST_MAP);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} hostarr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERGPUTD_ARRAY_HOST_MAP);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} hostpt SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_HASH_MAP);
	__uint(max_entries, 4);
	__type(key, u32);
	__type(value, u64);
} ghash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_RINGBUF_MAP);
	__uint(max_entries, 4096);
	__type(key, u32);
	__type(value, u64);
} events SEC(".maps");

static void add(void *map, u32 key)
{
	u64 *v = bpf_map_lookup_elem(map, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("kprobe/saxpy")
int partition(void *ctx)
{
	u64 x, y, z;

	bpf_get_block_idx(&x, &y, &z);
	if (x >= 2)
		bpf_exit_thread();
	add(&kshared, 0);
	return 0;
}

SEC("kretprobe/saxpy")
int survivors(void *ctx)
{
	u64 x, y, z, bx, by, bz, bdx, bdy, bdz, id;
	u32 key = 0;
	u64 *v;

	bpf_get_thread_idx(&x, &y, &z);
	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_block_dim(&bdx, &bdy, &bdz);
	id = bx * bdx + x;
	add(&kshared, 1);
	add(&hostarr, 0);
	v = bpf_map_lookup_elem(&hostpt, &key);
	if (v)
		*v += 1;
	if (id == 7) {
		key = 7;
		bpf_map_update_elem(&ghash, &key, &id, EGPU_ANY);
	}
	bpf_perf_event_output((void *)0, &events, 0, &id, sizeof(id));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
