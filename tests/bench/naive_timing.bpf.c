// SPDX-License-Identifier: MIT
// A timing probe written the way the eBPF habit teaches (issue 24): the
// start time per thread, and at exit each thread adds its duration and a
// count into a per-SM array keyed by the kernel's id, two atomic adds per
// thread, locals declared together. The JIT, not the probe, makes it cheap.
#include "kstat_timing.h"

GPU_EXIT("*")
int naive_exit(struct egpu_kernel_ctx *ctx)
{
	__u32 z = 0, k = ctx->kernel_id;
	__u64 *t = bpf_map_lookup_elem(&t0, &z);
	struct kstat *s = bpf_map_lookup_elem(&kstats, &k);

	if (!s)
		return 0;
	__sync_fetch_and_add(&s->ns, bpf_get_globaltimer() - *t);
	__sync_fetch_and_add(&s->runs, 1);
	return 0;
}
