/* SPDX-License-Identifier: MIT */
/*
 * Calls every helper <egpu/bpf_helpers.h> declares, in numeric order; the
 * hash map and update flag use Linux's names.
 */
#include <egpu/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8);
	__type(key, u32);
	__type(value, u64);
} h SEC(".maps");

struct {
	__uint(type, EGPU_MAP_RINGBUF);
	__uint(max_entries, 4096);
} r SEC(".maps");

struct {
	__uint(type, EGPU_MAP_PERF_EVENT_ARRAY);
	__uint(key_size, 4);
	__uint(value_size, 4);
} pe SEC(".maps");

GPU_ENTRY("k") int all_helpers(void *ctx)
{
	u32 k = 0;
	u64 v = 0, x, y, z;
	void *e;

	bpf_map_lookup_elem(&h, &k);
	bpf_map_update_elem(&h, &k, &v, BPF_NOEXIST);
	bpf_map_delete_elem(&h, &k);
	v += bpf_ktime_get_ns();
	bpf_printk("v=%llu", v);
	v += bpf_get_current_pid_tgid();
	bpf_perf_event_output(ctx, &pe, 0, &v, sizeof(v));
	bpf_ringbuf_output(&r, &v, sizeof(v), 0);
	e = bpf_ringbuf_reserve(&r, 8, 0);
	if (e)
		bpf_ringbuf_submit(e, 0);
	e = bpf_ringbuf_reserve(&r, 8, 0);
	if (e)
		bpf_ringbuf_discard(e, 0);
	bpf_puts("hello");
	v += bpf_get_globaltimer();
	bpf_get_block_idx(&x, &y, &z);
	bpf_get_block_dim(&x, &y, &z);
	bpf_get_thread_idx(&x, &y, &z);
	bpf_membar();
	if (v == 12345)
		bpf_exit_thread();
	bpf_get_grid_dim(&x, &y, &z);
	return bpf_get_sm_id() + bpf_get_warp_id() + bpf_get_lane_id() + x;
}
