// SPDX-License-Identifier: MIT
/*
 * kernelstat: per kernel, the launches that completed, the threads that
 * entered and left them, and each launch's duration from its first
 * thread's entry to its last thread's exit (globaltimer, ns).
 *
 * Two atomics per thread: one on entry, one on exit, counting the launch
 * in flight. The first thread in notes the start; the last thread out
 * (its exit count reaching the launch's thread count) adds the launch to
 * the totals and clears the counts for the next launch. This assumes the
 * launches of one kernel do not overlap (one stream), which the tool
 * guarantees.
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

#define MAX_KERNELS 64

/* Read by the host: keep in step with readStats in ../stats.go. */
struct kernel_stats {
	__u64 launches; /* launches completed */
	__u64 entries;  /* threads that entered them */
	__u64 exits;    /* threads that left them */
	__u64 total_ns; /* launch durations, summed */
	__u64 max_ns;   /* longest launch */
	__u64 started;  /* the launch in flight: its first entry */
	__u64 entered;  /* ... threads in so far */
	__u64 exited;   /* ... threads out so far */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_KERNELS);
	__type(key, __u32);
	__type(value, struct kernel_stats);
} stats SEC(".maps");

static __always_inline __u64 launch_threads(void)
{
	__u64 gx, gy, gz, bx, by, bz;

	bpf_get_grid_dim(&gx, &gy, &gz);
	bpf_get_block_dim(&bx, &by, &bz);
	return gx * gy * gz * bx * by * bz;
}

GPU_ENTRY("*")
int kernelstat_entry(struct egpu_kernel_ctx *ctx)
{
	__u32 id = (__u32)ctx->kernel_id;
	struct kernel_stats *s = bpf_map_lookup_elem(&stats, &id);

	if (!s)
		return 0;
	if (__sync_fetch_and_add(&s->entered, 1) == 0) {
		__sync_lock_test_and_set(&s->started, bpf_get_globaltimer());
		bpf_membar(); /* the start is visible before this thread exits */
	}
	return 0;
}

/* The last thread out: add the launch to the totals, clear the counts. */
static __always_inline void close_launch(struct kernel_stats *s, __u64 threads)
{
	__u64 now = bpf_get_globaltimer();
	__u64 took, max;

	bpf_membar(); /* see the first thread's start */
	took = now - __sync_fetch_and_add(&s->started, 0);
	__sync_fetch_and_add(&s->entries, __sync_lock_test_and_set(&s->entered, 0));
	__sync_fetch_and_add(&s->exits, threads);
	__sync_lock_test_and_set(&s->exited, 0);
	__sync_fetch_and_add(&s->total_ns, took);
	/* One closing thread per launch, and launches do not overlap: no
	 * other thread writes max_ns meanwhile. */
	max = __sync_fetch_and_add(&s->max_ns, 0);
	if (took > max)
		__sync_lock_test_and_set(&s->max_ns, took);
	__sync_fetch_and_add(&s->launches, 1);
}

GPU_EXIT("*")
int kernelstat_exit(struct egpu_kernel_ctx *ctx)
{
	__u32 id = (__u32)ctx->kernel_id;
	struct kernel_stats *s = bpf_map_lookup_elem(&stats, &id);
	__u64 threads = launch_threads();

	if (!s)
		return 0;
	if (__sync_fetch_and_add(&s->exited, 1) + 1 == threads)
		close_launch(s, threads);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
