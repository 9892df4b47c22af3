// SPDX-License-Identifier: MIT
// naive_timing.bpf.c written for the GPU by hand: each warp adds its
// lanes' durations and count with bpf_egpu_warp_add, one atomic each per
// warp. The transformer benchmark compares the two: the JIT should make
// the naive one cost what this one does.
#include "kstat_timing.h"

GPU_EXIT("*")
int tuned_exit(struct egpu_kernel_ctx *ctx)
{
	__u32 z = 0;
	__u64 *t = bpf_map_lookup_elem(&t0, &z);
	__u64 d = bpf_get_globaltimer() - *t;
	__u32 k = ctx->kernel_id;
	struct kstat *s = bpf_map_lookup_elem(&kstats, &k);

	if (!s)
		return 0;
	bpf_egpu_warp_add(&s->ns, d);
	bpf_egpu_warp_add(&s->runs, 1);
	return 0;
}
