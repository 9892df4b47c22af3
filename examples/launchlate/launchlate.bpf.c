// SPDX-License-Identifier: MIT
/*
 * launchlate: when the first thread of each block of `tick` enters the
 * kernel, send the GPU's global timer, its block and SM to the host. The
 * host takes the earliest block of each launch as the kernel's start.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct entry_event {
	__u64 ns; /* %globaltimer at entry */
	__u32 block;
	__u32 smid;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* 43k events of 24 bytes */
} entries SEC(".maps");

GPU_ENTRY("tick")
int on_entry(struct egpu_kernel_ctx *ctx)
{
	struct entry_event ev;
	__u64 x, y, z;

	ev.ns = bpf_get_globaltimer();
	bpf_get_thread_idx(&x, &y, &z);
	if (x | y | z)
		return 0;
	bpf_get_block_idx(&x, &y, &z);
	ev.block = x;
	ev.smid = bpf_get_sm_id();
	bpf_ringbuf_output(&entries, &ev, sizeof(ev), 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
