// SPDX-License-Identifier: MIT
/*
 * kernelretsnoop: when each GPU thread of `straggle` leaves the kernel, send
 * its thread and block index and the GPU's global timer to the host through
 * a ring buffer. config[0] != 0 sends to the 4 KiB ring instead, to show
 * drops being counted.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct exit_event {
	__u32 thread[3];
	__u32 block[3];
	__u64 ns; /* %globaltimer at exit */
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* 200k events of 40 bytes */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* 102 events: the rest are dropped */
} events_small SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} config SEC(".maps");

GPU_EXIT("straggle")
int on_exit(struct egpu_kernel_ctx *ctx)
{
	__u64 x, y, z, bx, by, bz;
	struct exit_event ev;
	__u32 zero = 0, *small = bpf_map_lookup_elem(&config, &zero);

	bpf_get_thread_idx(&x, &y, &z);
	bpf_get_block_idx(&bx, &by, &bz);
	ev.thread[0] = x;
	ev.thread[1] = y;
	ev.thread[2] = z;
	ev.block[0] = bx;
	ev.block[1] = by;
	ev.block[2] = bz;
	ev.ns = bpf_get_globaltimer();
	if (small && *small)
		bpf_ringbuf_output(&events_small, &ev, sizeof(ev), 0);
	else
		bpf_ringbuf_output(&events, &ev, sizeof(ev), 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
