// SPDX-License-Identifier: MIT
/*
 * Programs the Python binding tests load: maps with int, struct and
 * per-thread values, global data, programs run directly and probes.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct flow {
	__u32 src;
	__u32 dst;
	__u16 port;
	__u16 proto;
};

struct stats {
	__u64 packets;
	__u32 last_len;
	__u32 flags;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, struct flow);
	__type(value, struct stats);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} per_thread SEC(".maps");

/* Threads leaving add_one, counted in their SM's copy. */
struct {
	__uint(type, BPF_MAP_TYPE_EGPU_SM_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} per_sm SEC(".maps");

const volatile __u64 step = 3;
__u64 total = 100;

/*
 * Direct run: counts[mem[0]] += step, total += step, mem[1] = 42; returns
 * total. Needs at least 2 bytes of memory.
 */
SEC("egpu/run")
int bump(__u8 *mem, __u64 len)
{
	__u32 key;
	__u64 one = step, *v;

	if (len < 2)
		return -1;
	key = mem[0];
	v = bpf_map_lookup_elem(&counts, &key);
	if (v)
		*v += step;
	else
		bpf_map_update_elem(&counts, &key, &one, EGPU_NOEXIST);
	total += step;
	mem[1] = 42;
	return total;
}

/* Direct run: flows[*flow].packets += 1 and last_len = the memory size. */
SEC("egpu/run")
int account(struct flow *f, __u64 len)
{
	struct stats fresh = { .packets = 1, .last_len = (__u32)len };
	struct flow key;
	struct stats *s;

	if (len < sizeof(key))
		return -1;
	key = *f;
	s = bpf_map_lookup_elem(&flows, &key);
	if (!s)
		return bpf_map_update_elem(&flows, &key, &fresh, EGPU_ANY);
	s->packets++;
	s->last_len = (__u32)len;
	return 0;
}

/* Probes of the kernel add_one (tests/kernels.cu). */
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
	__u32 zero = 0, one = 1;
	__u64 *v = bpf_map_lookup_elem(&slots, &one);
	__u64 *mine = bpf_map_lookup_elem(&per_sm, &zero);

	if (v)
		__sync_fetch_and_add(v, 1);
	if (mine)
		bpf_egpu_warp_add(mine, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
