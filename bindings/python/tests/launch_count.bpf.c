// SPDX-License-Identifier: MIT
// Threads entering each kernel, and the threads each launch made (the
// first thread adds the grid's size): equal per kernel when every
// launched thread ran the probe exactly once.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} threads SEC(".maps"), launched SEC(".maps");

GPU_ENTRY("*")
int on_entry(struct egpu_kernel_ctx *ctx)
{
	__u64 bx, by, bz, tx, ty, tz, gx, gy, gz, dx, dy, dz, *v;
	__u32 key = ctx->kernel_id;

	v = bpf_map_lookup_elem(&threads, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	if (bx | by | bz | tx | ty | tz)
		return 0;
	bpf_get_grid_dim(&gx, &gy, &gz);
	bpf_get_block_dim(&dx, &dy, &dz);
	v = bpf_map_lookup_elem(&launched, &key);
	if (v)
		__sync_fetch_and_add(v, gx * gy * gz * dx * dy * dz);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
