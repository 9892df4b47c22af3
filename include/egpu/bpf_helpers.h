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

#endif
