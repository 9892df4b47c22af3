// SPDX-License-Identifier: MIT
/*
 * atomizer: thin a kernel out from the outside. An entry probe ends every
 * thread whose global index is not a multiple of STRIDE before the kernel
 * body runs (helper 507, bpf_exit_thread), and counts the threads it let
 * through. With vecapp the vector add then computes one element in
 * STRIDE, which the app reports as wrong results: the point of the
 * scenario is that the probe, not the application, decides which threads
 * run. Helper 507 is allowed at entry for this (docs/verifier.md).
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

#define STRIDE 4

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} threads SEC(".maps"); /* 0: let through, 1: ended at entry */

GPU_ENTRY("vec_add")
int atomize(struct egpu_kernel_ctx *ctx)
{
	__u64 bx, by, bz, tx, ty, tz, dx, dy, dz;
	__u32 key;
	__u64 *n;

	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	bpf_get_block_dim(&dx, &dy, &dz);
	key = ((bx * dx + tx) % STRIDE) != 0;
	n = bpf_map_lookup_elem(&threads, &key);
	if (n)
		__sync_fetch_and_add(n, 1);
	if (key)
		bpf_exit_thread();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
