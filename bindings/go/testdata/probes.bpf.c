// SPDX-License-Identifier: MIT
/*
 * Programs the Go binding tests load: a hash map of counters, an array,
 * a per-thread array, a program run directly and probes of add_one.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} per_thread SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_EGPU_SM_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} per_sm SEC(".maps");

/*
 * Direct run: counts[mem[0]] += mem[1], mem[2] = 7; returns the new count.
 * Needs 3 bytes of memory.
 */
SEC("egpu/run")
int add(__u8 *mem, __u64 len)
{
	__u32 key;
	__u64 n, *v;

	if (len < 3)
		return -1;
	key = mem[0];
	n = mem[1];
	mem[2] = 7;
	v = bpf_map_lookup_elem(&counts, &key);
	if (!v) {
		bpf_map_update_elem(&counts, &key, &n, EGPU_NOEXIST);
		return n;
	}
	*v += n;
	return *v;
}

GPU_ENTRY("add_one")
int on_entry(struct egpu_kernel_ctx *ctx)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&slots, &zero);
	__u64 *mine = bpf_map_lookup_elem(&per_thread, &zero);

	if (v)
		__sync_fetch_and_add(v, 1);
	if (mine)
		*mine += 1;
	return 0;
}

GPU_EXIT("add_one")
int on_exit(struct egpu_kernel_ctx *ctx)
{
	__u32 one = 1;
	__u64 *v = bpf_map_lookup_elem(&slots, &one);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
