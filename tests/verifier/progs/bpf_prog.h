/* SPDX-License-Identifier: MIT */
/*
 * Minimal program-author header for the verifier's C corpus: section
 * names, BTF map definitions, the helpers by number, the ctx structs.
 * include/egpu/ (written in parallel) will replace it.
 */
#ifndef EGPU_TEST_BPF_PROG_H
#define EGPU_TEST_BPF_PROG_H

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed int s32;
typedef signed long long s64;

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#define __noinline __attribute__((noinline))
#define __inline_always inline __attribute__((always_inline))

enum {
	MAP_HASH = 1,
	MAP_ARRAY = 2,
	MAP_PERF_EVENT_ARRAY = 4,
	MAP_PERCPU_ARRAY = 6,
	MAP_RINGBUF = 27,
	MAP_PERTHREAD_ARRAY = 1502,
};

/* r1 of probes */
#include <egpu/ctx.h> /* struct egpu_kernel_ctx, egpu_mem_ctx */

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key,
				   const void *value, u64 flags) = (void *)2;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)3;
static u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static long (*bpf_trace_printk)(const char *fmt, u32 fmt_size, ...) =
	(void *)6;
static u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static long (*bpf_perf_event_output)(void *ctx, void *map, u64 flags,
				     void *data, u64 size) = (void *)25;
static long (*bpf_ringbuf_output)(void *ringbuf, void *data, u64 size,
				  u64 flags) = (void *)130;
static void *(*bpf_ringbuf_reserve)(void *ringbuf, u64 size, u64 flags) =
	(void *)131;
static void (*bpf_ringbuf_submit)(void *data, u64 flags) = (void *)132;
static void (*bpf_ringbuf_discard)(void *data, u64 flags) = (void *)133;
static long (*bpf_puts)(const char *s) = (void *)501;
static u64 (*bpf_get_globaltimer)(void) = (void *)502;
static long (*bpf_get_block_idx)(u64 *x, u64 *y, u64 *z) = (void *)503;
static long (*bpf_get_block_dim)(u64 *x, u64 *y, u64 *z) = (void *)504;
static long (*bpf_get_thread_idx)(u64 *x, u64 *y, u64 *z) = (void *)505;
static long (*bpf_membar)(void) = (void *)506;
static long (*bpf_exit_thread)(void) = (void *)507;
static long (*bpf_get_grid_dim)(u64 *x, u64 *y, u64 *z) = (void *)508;
static u64 (*bpf_get_sm_id)(void) = (void *)509;
static u64 (*bpf_get_warp_id)(void) = (void *)510;
static u64 (*bpf_get_lane_id)(void) = (void *)511;

#endif
