// SPDX-License-Identifier: MIT
/*
 * cuda-counter: per kernel, how many threads entered and left it, how many
 * launches ran, and the span from the first thread's entry to the last
 * thread's exit (globaltimer, ns) summed over launches; and the `n`
 * argument each kernel was launched with, read from its parameters.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

#define MAX_KERNELS 64

struct kernel_stats {
	__u64 launches;
	__u64 entries;
	__u64 exits;
	__u64 first_entry; /* globaltimer of the first entry, this launch */
	__u64 last_exit;   /* globaltimer of the last exit, this launch */
	__u64 n;           /* the kernel's int n argument, last launch */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_KERNELS);
	__type(key, __u32);
	__type(value, struct kernel_stats);
} stats SEC(".maps");

static __always_inline int is_first_thread(void)
{
	__u64 bx, by, bz, tx, ty, tz;

	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	return !(bx | by | bz | tx | ty | tz);
}

GPU_ENTRY("*")
int count_entry(struct egpu_kernel_ctx *ctx)
{
	__u32 id = (__u32)ctx->kernel_id;
	struct kernel_stats *s = bpf_map_lookup_elem(&stats, &id);
	__u64 now = bpf_get_globaltimer();

	if (!s)
		return 0;
	__sync_fetch_and_add(&s->entries, 1);
	if (is_first_thread())
		__sync_fetch_and_add(&s->launches, 1);
	/* Keep the earliest entry: the first thread to get here wins; the
	 * others see it set and leave the cache line alone. */
	if (!s->first_entry)
		__sync_val_compare_and_swap(&s->first_entry, 0, now);
	return 0;
}

GPU_EXIT("*")
int count_exit(struct egpu_kernel_ctx *ctx)
{
	__u32 id = (__u32)ctx->kernel_id;
	struct kernel_stats *s = bpf_map_lookup_elem(&stats, &id);
	__u64 now = bpf_get_globaltimer();

	if (!s)
		return 0;
	__sync_fetch_and_add(&s->exits, 1);
	/* Raise last_exit to now; a bounded number of tries under contention. */
	for (int i = 0; i < 8; i++) {
		__u64 old = s->last_exit;

		if (now <= old || __sync_val_compare_and_swap(&s->last_exit, old, now) == old)
			break;
	}
	return 0;
}

/*
 * The kernel's `n` argument, read through ctx->params at its offset in the
 * parameter block (ABI layout: each parameter at its alignment). The
 * verifier bounds the read (bytes 0..27 here); kernels with fewer
 * parameter bytes would get no probe.
 */
static __always_inline int record_n(struct egpu_kernel_ctx *ctx, __u32 off)
{
	__u32 id = (__u32)ctx->kernel_id;
	struct kernel_stats *s;

	if (!is_first_thread())
		return 0;
	s = bpf_map_lookup_elem(&stats, &id);
	if (s)
		s->n = *(const int *)(ctx->params + off);
	return 0;
}

/* vectorAdd(const float *a, const float *b, float *c, int n): n at 24 */
GPU_ENTRY("vectorAdd")
int vector_add_n(struct egpu_kernel_ctx *ctx)
{
	return record_n(ctx, 24);
}

/* scale<float>(float *x, float factor, int n): n at 12 */
GPU_ENTRY("scale")
int scale_n(struct egpu_kernel_ctx *ctx)
{
	return record_n(ctx, 12);
}

char LICENSE[] SEC("license") = "GPL";
