/* SPDX-License-Identifier: MIT */
/* Every attach section, every accepted map type and global data. */
#include <egpu/bpf_helpers.h>

struct event {
	u64 ts;
	u32 lane;
};

struct {
	__uint(type, EGPU_MAP_HASH);
	__uint(max_entries, 64);
	__uint(map_flags, 1); /* BPF_F_NO_PREALLOC */
	__type(key, u32);
	__type(value, u64);
} counts SEC(".maps");

struct {
	__uint(type, EGPU_MAP_ARRAY);
	__uint(max_entries, 8);
	__type(key, u32);
	__type(value, u32);
} arr SEC(".maps");

struct {
	__uint(type, EGPU_MAP_PERF_EVENT_ARRAY);
	__uint(max_entries, 2);
	__uint(key_size, 4);
	__uint(value_size, 4);
} perf SEC(".maps");

struct {
	__uint(type, EGPU_MAP_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} pcpu SEC(".maps");

struct {
	__uint(type, EGPU_MAP_RINGBUF);
	__uint(max_entries, 4096);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERGPUTD_ARRAY_MAP);
	__uint(max_entries, 4);
	__type(key, u32);
	__type(value, u64);
} perthread SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY_MAP);
	__uint(max_entries, 16);
	__type(key, u32);
	__type(value, struct event);
} garr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_RINGBUF_MAP);
	__uint(max_entries, 32);
	__type(key, u32);
	__type(value, struct event);
} grb SEC(".maps");

u64 data_first = 0x1122334455667788ULL;
u32 data_second = 0xabcd0042;
const volatile u32 ro_value = 0x0badf00d;
u64 bss_value;

GPU_ENTRY("vecAdd") int on_entry(void *ctx)
{
	u32 key = 0;
	u64 *v = bpf_map_lookup_elem(&counts, &key);

	if (v)
		*v += data_second + ro_value;
	bss_value = (u64)ctx;
	return 0;
}

GPU_EXIT("_Z9*") int on_exit(void)
{
	u32 key = 1;
	u64 one = 1;

	bpf_map_update_elem(&perthread, &key, &one, EGPU_ANY);
	return 0;
}

GPU_MEM(GPU_ALL_KERNELS) int on_mem(void)
{
	struct event *e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);

	if (!e)
		return 0;
	e->ts = bpf_get_globaltimer();
	e->lane = bpf_get_lane_id();
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("kprobe/_Z9vectorAddPKfS0_Pf") int kp(void)
{
	u32 key = 0;

	return bpf_map_lookup_elem(&garr, &key) != 0;
}

SEC("kretprobe/reduce") int krp(void)
{
	u32 key = 0;

	return bpf_map_lookup_elem(&arr, &key) != 0;
}

SEC("kprobe/__memcapture") int memcap(void)
{
	u32 key = 0;

	return bpf_map_lookup_elem(&pcpu, &key) != 0;
}

SEC("socket") int sock(void)
{
	struct event e = { .ts = data_first };

	bpf_perf_event_output(0, &perf, 0, &e, sizeof(e));
	return bpf_map_lookup_elem(&grb, &e.lane) != 0;
}

char LICENSE[] SEC("license") = "GPL";
