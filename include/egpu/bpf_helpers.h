/* SPDX-License-Identifier: MIT */
/*
 * Everything an eBPF program for libegpu needs, with no other header:
 * fixed-width types, SEC() and the GPU section macros, map definitions,
 * the helpers and bpf_printk(). Build with `clang -target bpf -O2 -g`.
 *
 * Helper numbers are Linux's for the standard helpers and bpftime's for
 * the GPU ones (501-511), so existing bpftime probes run unchanged. To
 * combine with libbpf's <bpf/bpf_helpers.h>, include that one first: the
 * definitions it already made are then not repeated here.
 */
#ifndef EGPU_BPF_HELPERS_H
#define EGPU_BPF_HELPERS_H

#include "bpf_maps.h"
#include "bpf_sections.h"
#include "bpf_types.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#ifndef __noinline
#define __noinline __attribute__((noinline))
#endif

#ifndef __BPF_HELPERS__
/* Standard helpers (Linux numbers). */

/* Pointer to the value stored under @key, or NULL. */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
/* Store @value under @key; @flags: EGPU_ANY, EGPU_NOEXIST, EGPU_EXIST. */
static long (*bpf_map_update_elem)(void *map, const void *key,
				   const void *value, __u64 flags) = (void *)2;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)3;
/* The GPU's global timer, in nanoseconds. */
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
/*
 * Formatted print, at most three arguments; use bpf_printk(). On the GPU
 * lines reach the host asynchronously (egpu_print_poll()); returns 0 once
 * queued, < 0 when dropped.
 */
static long (*bpf_trace_printk)(const char *fmt, __u32 fmt_size, ...) = (void *)6;
static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
/* Host probes (uprobes) only: the application's memory; -EFAULT and
 * zeroes where it cannot be read. */
static long (*bpf_probe_read_user)(void *dst, __u32 size,
				   const void *unsafe_ptr) = (void *)112;
static long (*bpf_perf_event_output)(void *ctx, void *map, __u64 flags,
				     void *data, __u64 size) = (void *)25;
static long (*bpf_ringbuf_output)(void *ringbuf, void *data, __u64 size,
				  __u64 flags) = (void *)130;
static void *(*bpf_ringbuf_reserve)(void *ringbuf, __u64 size,
				    __u64 flags) = (void *)131;
static void (*bpf_ringbuf_submit)(void *data, __u64 flags) = (void *)132;
static void (*bpf_ringbuf_discard)(void *data, __u64 flags) = (void *)133;
/* Formatted print of data_len / 8 64-bit arguments (at most 12). */
static long (*bpf_trace_vprintk)(const char *fmt, __u32 fmt_size,
				 const void *data, __u32 data_len) = (void *)177;

/*
 * Linux's flags (vmlinux.h and <linux/bpf.h> have them as enum constants).
 * bpf_ringbuf_output: wakeups, accepted and meaningless on a GPU;
 * bpf_perf_event_output: the CPU index, any, as every GPU ring is one.
 */
#if !defined(__VMLINUX_H__) && !defined(_UAPI__LINUX_BPF_H__)
#define BPF_RB_NO_WAKEUP 1
#define BPF_RB_FORCE_WAKEUP 2
#define BPF_F_CURRENT_CPU 0xffffffffULL
#endif

/*
 * bpf_printk("x=%d", x): the format string is a constant in .rodata. Up
 * to 3 arguments call bpf_trace_printk, 4 to 12 bpf_trace_vprintk.
 */
#define ___egpu_nth(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, \
		    N, ...) N
#define ___egpu_cat(a, b) a##b
#define ___egpu_cat2(a, b) ___egpu_cat(a, b)
/* P (printk) for a format and 0-3 arguments, V (vprintk) for 4-12. */
#define ___egpu_pick(...)                                                    \
	___egpu_nth(__VA_ARGS__, V, V, V, V, V, V, V, V, V, P, P, P, P, 0)
#define ___egpu_count(...)                                                   \
	___egpu_nth(__VA_ARGS__, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define ___egpu_u64_1(x) (unsigned long long)(x)
#define ___egpu_u64_2(x, ...) (unsigned long long)(x), ___egpu_u64_1(__VA_ARGS__)
#define ___egpu_u64_3(x, ...) (unsigned long long)(x), ___egpu_u64_2(__VA_ARGS__)
#define ___egpu_u64_4(x, ...) (unsigned long long)(x), ___egpu_u64_3(__VA_ARGS__)
#define ___egpu_u64_5(x, ...) (unsigned long long)(x), ___egpu_u64_4(__VA_ARGS__)
#define ___egpu_u64_6(x, ...) (unsigned long long)(x), ___egpu_u64_5(__VA_ARGS__)
#define ___egpu_u64_7(x, ...) (unsigned long long)(x), ___egpu_u64_6(__VA_ARGS__)
#define ___egpu_u64_8(x, ...) (unsigned long long)(x), ___egpu_u64_7(__VA_ARGS__)
#define ___egpu_u64_9(x, ...) (unsigned long long)(x), ___egpu_u64_8(__VA_ARGS__)
#define ___egpu_u64_10(x, ...) (unsigned long long)(x), ___egpu_u64_9(__VA_ARGS__)
#define ___egpu_u64_11(x, ...) (unsigned long long)(x), ___egpu_u64_10(__VA_ARGS__)
#define ___egpu_u64_12(x, ...) (unsigned long long)(x), ___egpu_u64_11(__VA_ARGS__)
#define ___egpu_printk_P(fmt, ...)                                           \
	({                                                                   \
		static const char ____fmt[] = fmt;                           \
		bpf_trace_printk(____fmt, sizeof(____fmt), ##__VA_ARGS__);   \
	})
#define ___egpu_printk_V(fmt, ...)                                           \
	({                                                                   \
		static const char ____fmt[] = fmt;                           \
		unsigned long long ____args[] = { ___egpu_cat2(              \
			___egpu_u64_, ___egpu_count(__VA_ARGS__))(__VA_ARGS__) }; \
		bpf_trace_vprintk(____fmt, sizeof(____fmt), ____args,        \
				  sizeof(____args));                         \
	})
#define bpf_printk(fmt, ...)                                                 \
	___egpu_cat2(___egpu_printk_, ___egpu_pick(fmt, ##__VA_ARGS__))(     \
		fmt, ##__VA_ARGS__)
#endif /* __BPF_HELPERS__ */

/* GPU helpers (bpftime's numbers). */

/*
 * Print a NUL-terminated string. On the GPU the string must be constant
 * data of the program (a literal), as the host reads it from there.
 */
static long (*bpf_puts)(const char *s) = (void *)501;
/* %globaltimer, in nanoseconds. */
static __u64 (*bpf_get_globaltimer)(void) = (void *)502;
/* blockIdx, blockDim, threadIdx and gridDim, one component each. */
static __u64 (*bpf_get_block_idx)(__u64 *x, __u64 *y, __u64 *z) = (void *)503;
static __u64 (*bpf_get_block_dim)(__u64 *x, __u64 *y, __u64 *z) = (void *)504;
static __u64 (*bpf_get_thread_idx)(__u64 *x, __u64 *y, __u64 *z) = (void *)505;
/* Memory barrier at GPU scope. */
static long (*bpf_membar)(void) = (void *)506;
/* End the calling GPU thread. */
static long (*bpf_exit_thread)(void) = (void *)507;
static __u64 (*bpf_get_grid_dim)(__u64 *x, __u64 *y, __u64 *z) = (void *)508;
/* %smid, %warpid and %laneid. */
static __u64 (*bpf_get_sm_id)(void) = (void *)509;
static __u64 (*bpf_get_warp_id)(void) = (void *)510;
static __u64 (*bpf_get_lane_id)(void) = (void *)511;

/*
 * SIMT helpers (libegpu's, 512 up): warp-level building blocks for cheap
 * probes. "Active" lanes are those of the calling warp that execute the
 * call together (PTX activemask). On the CPU a program is one lane: the
 * mask is 1, ballots are 1 or 0, warp_add is one atomic add.
 */

/* Mask of the active lanes of the warp (bit i: lane i). */
static __u32 (*bpf_egpu_active_mask)(void) = (void *)512;
/*
 * Atomically add @delta to the 8-byte counter *@ptr, which must lie in a
 * map value (8-aligned). Active lanes adding the same @delta to the same
 * address make one atomic between them (the lowest lane adds delta times
 * their count); lanes adding different amounts add one by one. Returns
 * the counter's value before this lane's add, as if the lanes had added in
 * lane order. Relaxed (monotonic) ordering.
 */
static __u64 (*bpf_egpu_warp_add)(__u64 *ptr, __u64 delta) = (void *)513;
/*
 * Hold the calling thread for @ns nanoseconds by spinning on the GPU's
 * %globaltimer (its step, 32 to 64 ns on an H100, is the resolution), at
 * most 1 ms per call; returns 0. Models slower memory in a memory probe.
 */
static long (*bpf_egpu_nanosleep)(__u64 ns) = (void *)514;
/* Mask of the active lanes whose @pred is not 0. */
static __u32 (*bpf_egpu_ballot)(__u64 pred) = (void *)515;
/*
 * Mask of the active lanes passing the same @value as this one (e.g. the
 * same 32-byte sector: addr >> 5). The lowest set bit is the group's leader.
 */
static __u32 (*bpf_egpu_match)(__u64 value) = (void *)516;
/*
 * @value of lane @lane (mod 32) among the active lanes; undefined (but
 * harmless) when that lane is not active. Keep the lanes converged around
 * it: no lane-dependent branch between reading a mask and shuffling.
 */
static __u64 (*bpf_egpu_shfl)(__u64 value, __u32 lane) = (void *)517;

/*
 * Reading what the probed code reads (libegpu's): the probe cannot
 * dereference ctx->addr itself, as the verifier cannot see how many bytes
 * lie behind it; these helpers check at run time. (ctx->params can be
 * dereferenced at offsets the verifier bounds, in kernels with that many
 * parameter bytes: egpu/ctx.h; read_param serves any kernel.)
 *
 * Entry and exit probes: copy @size bytes of the kernel's parameter block,
 * starting @off bytes into it (parameters at their ABI offsets, e.g. the
 * third of (float *, float *, int n) at 16), to @dst (stack or map value,
 * @size writable bytes). Returns 0, or -14 (EFAULT) with @dst zeroed when
 * [off, off + size) is not inside ctx->params_size.
 */
static long (*bpf_egpu_read_param)(void *ctx, void *dst, __u32 size,
				   __u32 off) = (void *)518;
/*
 * Memory probes: copy @size bytes from ctx->addr + @off to @dst; the
 * window is the access's ctx->size bytes. A probe runs before its access:
 * a load's bytes are those it is about to read, a store's those it is
 * about to overwrite. Returns 0, or -14 with @dst zeroed when [off, off +
 * size) is not inside ctx->size.
 */
static long (*bpf_egpu_read_mem)(void *ctx, void *dst, __u32 size,
				 __u32 off) = (void *)519;
/*
 * Memory probes on stores: copy @size bytes of the value the store is
 * about to write (ctx->value, ctx->size bytes: its source register(s) or
 * immediate, vector elements in order), from @off bytes into it, to @dst.
 * Returns 0, or -14 with @dst zeroed when [off, off + size) is not inside
 * ctx->size or the access is not a store (ctx->value is 0). E.g. a NaN
 * watch: __u32 f; if (!bpf_egpu_read_value(ctx, &f, 4, 0) &&
 * (f & 0x7fffffff) > 0x7f800000) ...
 */
static long (*bpf_egpu_read_value)(void *ctx, void *dst, __u32 size,
				   __u32 off) = (void *)520;

/*
 * Memory probes: one ring record (struct egpu_warp_access, <egpu/ctx.h>)
 * for the active lanes' access together: base address, stride and mask
 * when their addresses are affine, else every lane's address. @info packs
 * the access: size | kind << 16 | site << 32 (bpf_egpu_trace_access builds
 * it from the ctx). One lane reserves for the warp, in its SM's shard of a
 * ring in GPU memory (EGPU_F_RING_DEVICE). Returns 0, -EAGAIN (the ring
 * was full: one drop counted), -EINVAL (not a ring map).
 */
static long (*bpf_egpu_trace_warp)(void *ring, __u64 addr, __u64 info,
				   __u64 tag) = (void *)521;

/* bpf_egpu_trace_warp for the access of memory probe context @ctx. */
#define bpf_egpu_trace_access(ring, ctx, tag)                                \
	bpf_egpu_trace_warp((ring), (ctx)->addr,                              \
			    (__u64)(ctx)->size | (__u64)(ctx)->kind << 16 |   \
			    (__u64)(ctx)->site << 32, (tag))

/*
 * bpf_egpu_trace_warp with reservations batched: the leading lane places
 * the record in a span of its shard it claimed earlier (about a kilobyte,
 * one claim for many records) and claims a new one only when the record
 * does not fit. @state is the calling lane's span, kept by the probe in a
 * BPF_MAP_TYPE_EGPU_THREAD_LOCAL value (0 at first) and passed by value;
 * the helper returns the new state (every lane but the leader gets its own
 * back). Drops are counted in the ring, once per warp access. A probe
 * that batches must call bpf_egpu_trace_flush(ring, state) at kernel exit
 * (GPU_EXIT): until then the consumer waits at the span's unused rest.
 * On the CPU each record goes out at once and the state stays 0.
 */
static __u64 (*bpf_egpu_trace_warp_batch)(void *ring, __u64 state, __u64 addr,
					  __u64 info, __u64 tag) = (void *)522;

/* bpf_egpu_trace_warp_batch for the access of memory probe context @ctx. */
#define bpf_egpu_trace_access_batch(ring, state, ctx, tag)                   \
	bpf_egpu_trace_warp_batch((ring), (state), (ctx)->addr,              \
				  (__u64)(ctx)->size |                       \
				  (__u64)(ctx)->kind << 16 |                 \
				  (__u64)(ctx)->site << 32, (tag))

/*
 * Close the span of @state (bpf_egpu_trace_warp_batch): its unused rest
 * becomes a record the consumer skips. 0, or -EINVAL (not a ring map).
 * The state must not be used after: a thread that goes on tracing sets
 * it to 0 (a record placed in a closed span would overwrite the discard
 * record, which the consumer may have taken already).
 */
static long (*bpf_egpu_trace_flush)(void *ring, __u64 state) = (void *)523;

/*
 * Memory probes, the complete trace: the active lanes' access as a
 * compact record (16 bytes when affine; else base and per-lane deltas of
 * 1, 2, 4 or 8 bytes) in a span of the SM's shard that the leading lane
 * owns. @state is the lane's span state, kept by the probe in a
 * BPF_MAP_TYPE_EGPU_THREAD_LOCAL value (0 at first, one per ring) and
 * passed by value; the helper returns this lane's new state. A span is
 * published (one fence, one header store) when full, when its owner's
 * record goes into another lane's span, and at bpf_egpu_trace_span_flush,
 * which the probe calls at kernel exit (GPU_EXIT); spans never flushed
 * (a trap, no exit probe) are taken by egpu_ringbuf_reclaim() once the
 * kernel ended. Records of one thread arrive in order; a full shard drops
 * the access, counted once. Decode with egpu_span_begin/next (<egpu/egpu.h>)
 * or egpu.span in Python (docs/events.md, "Spans").
 */
static __u64 (*bpf_egpu_trace_span)(void *ring, __u64 state, __u64 addr,
				    __u64 info) = (void *)524;

/* bpf_egpu_trace_span for the access of memory probe context @ctx. */
#define bpf_egpu_trace_access_span(ring, state, ctx)                         \
	bpf_egpu_trace_span((ring), (state), (ctx)->addr,                    \
			    (__u64)(ctx)->size | (__u64)(ctx)->kind << 16 |   \
			    (__u64)(ctx)->site << 32)

/*
 * Publish the span @state owns (bpf_egpu_trace_span). 0, or -EINVAL (not
 * a ring map). A thread that goes on tracing after it sets its state to 0.
 */
static long (*bpf_egpu_trace_span_flush)(void *ring, __u64 state) = (void *)525;

/* BPF has no bit-count instruction (clang cannot lower __builtin_popcount). */
static __always_inline __u32 bpf_egpu_popcount(__u32 x)
{
	x = x - ((x >> 1) & 0x55555555);
	x = (x & 0x33333333) + ((x >> 2) & 0x33333333);
	x = (x + (x >> 4)) & 0x0f0f0f0f;
	return (x * 0x01010101) >> 24;
}

/* Index of the lowest lane of @mask (32 if none): a group's leader. */
static __always_inline __u32 bpf_egpu_lowest_lane(__u32 mask)
{
	return bpf_egpu_popcount((mask & -mask) - 1);
}

/* blockIdx.x * blockDim.x + threadIdx.x: the thread's index in a
 * one-dimensional launch. */
static __always_inline __u64 bpf_egpu_global_thread_x(void)
{
	__u64 bx, by, bz, dx, dy, dz, tx, ty, tz;

	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_block_dim(&dx, &dy, &dz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	return bx * dx + tx;
}

#endif
