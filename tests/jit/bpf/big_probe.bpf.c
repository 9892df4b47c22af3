// SPDX-License-Identifier: MIT
/*
 * A probe of about 1000 instructions for measuring translation time
 * (`egpu jit --stats`): ctx reads, arithmetic, stack traffic, branches, a
 * map update and helper calls, unrolled.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} acc SEC(".maps");

#define STEP(i)                                                               \
	do {                                                                  \
		__u64 v = (ctx->kernel_id + (i)) * ((i) + 3);                 \
		sum = (sum + v) ^ (i);                                        \
		buf[(i) % 16] = sum;                                          \
		if ((buf[((i) + 5) % 16] >> 3) > 1000 + (i))                  \
			sum -= buf[((i) + 7) % 16];                           \
		sum &= 0xffffff;                                              \
		if ((i) % 16 == 0)                                            \
			sum += bpf_get_globaltimer() & 0xff;                  \
	} while (0)

#define STEP8(i)                                                              \
	STEP(i); STEP(i + 1); STEP(i + 2); STEP(i + 3);                       \
	STEP(i + 4); STEP(i + 5); STEP(i + 6); STEP(i + 7)

GPU_EXIT("*")
int big_probe(struct egpu_kernel_ctx *ctx)
{
	volatile __u64 buf[16] = { 0 };
	__u64 sum = ctx->params_size;
	__u32 key = ctx->kernel_id & 63;
	__u64 *slot;

	STEP8(0); STEP8(8); STEP8(16); STEP8(24); STEP8(32); STEP8(40);
	STEP8(48); STEP8(56); STEP8(64); STEP8(72); STEP(80); STEP(81);
	slot = bpf_map_lookup_elem(&acc, &key);
	if (slot)
		__sync_fetch_and_add(slot, sum);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
