/* SPDX-License-Identifier: MIT */
/*
 * Map types and map definitions for eBPF programs run by libegpu.
 *
 *	struct {
 *		__uint(type, EGPU_MAP_HASH);
 *		__uint(max_entries, 1024);
 *		__type(key, u32);
 *		__type(value, u64);
 *	} counts SEC(".maps");
 *
 * Compile with -g: libbpf reads these definitions from BTF.
 */
#ifndef EGPU_BPF_MAPS_H
#define EGPU_BPF_MAPS_H

/* The same values as include/egpu.h, for programs that do not include it. */
#ifndef EGPU_H
enum egpu_map_type {
	EGPU_MAP_HASH = 1,
	EGPU_MAP_ARRAY = 2,
	EGPU_MAP_PERF_EVENT_ARRAY = 4,
	EGPU_MAP_PERCPU_ARRAY = 6,       /* one value per GPU thread */
	EGPU_MAP_RINGBUF = 27,
	EGPU_MAP_PERTHREAD_ARRAY = 1502, /* bpftime's per-thread array */
	EGPU_MAP_GPU_ARRAY = 1503,       /* bpftime's GPU array */
	EGPU_MAP_GPU_RINGBUF = 1527,     /* bpftime's GPU ring buffer */
	EGPU_MAP_GPU_HASH = 1501,        /* bpftime's GPU hash: a HASH */
	EGPU_MAP_GPU_KERNEL_SHARED_ARRAY = 1504, /* bpftime's: a GPU_ARRAY */
	EGPU_MAP_PERTHREAD_ARRAY_HOST = 1512, /* 1502 in mapped host memory */
	EGPU_MAP_GPU_ARRAY_HOST = 1513,  /* 1503 in mapped host memory */
	EGPU_MAP_THREAD_LOCAL = 4096,    /* per thread and launch, in registers */
	EGPU_MAP_SM_ARRAY = 4097,        /* one copy per SM, host sums them */
};

/* Flags of bpf_map_update_elem(). */
enum egpu_update_flags {
	EGPU_ANY = 0,     /* create or replace */
	EGPU_NOEXIST = 1, /* create only */
	EGPU_EXIST = 2,   /* replace only */
};
#endif

/*
 * map_flags of ring maps (RINGBUF, PERF_EVENT_ARRAY, GPU_RINGBUF):
 * __uint(map_flags, EGPU_F_RING_DEVICE) keeps the records in GPU memory,
 * which the host drains with the copy engine, instead of host memory the
 * GPU writes over the bus: far more bandwidth, records arrive later
 * (docs/events.md). Bit 24: no Linux map flag uses it (they end at 18).
 */
#define EGPU_F_RING_DEVICE (1u << 24)
/*
 * With EGPU_F_RING_DEVICE: one shard for the whole GPU instead of one per
 * SM, every producer reserving on the same counter (the ring the first
 * benchmarks measured; docs/events.md "Shards"). Bit 25.
 */
#define EGPU_F_RING_ONE_SHARD (1u << 25)
/*
 * Lossless: a producer that finds the ring full waits for the host to
 * drain it, at most a second (egpu_map_set_ring_wait), then drops and
 * counts as without the flag; a consumer that stopped polling costs that
 * one wait, not one per record (docs/events.md "Lossless rings"). Bit 26.
 */
#define EGPU_F_RING_LOSSLESS (1u << 26)

/*
 * Linux's names, for programs written against libbpf. A vmlinux.h or
 * <linux/bpf.h> included before this file defines them already; included
 * after it, they would clash with these macros.
 */
#if !defined(__VMLINUX_H__) && !defined(_UAPI__LINUX_BPF_H__)
#define BPF_MAP_TYPE_HASH EGPU_MAP_HASH
#define BPF_MAP_TYPE_ARRAY EGPU_MAP_ARRAY
#define BPF_MAP_TYPE_PERF_EVENT_ARRAY EGPU_MAP_PERF_EVENT_ARRAY
#define BPF_MAP_TYPE_PERCPU_ARRAY EGPU_MAP_PERCPU_ARRAY
#define BPF_MAP_TYPE_RINGBUF EGPU_MAP_RINGBUF
#define BPF_ANY EGPU_ANY
#define BPF_NOEXIST EGPU_NOEXIST
#define BPF_EXIST EGPU_EXIST
#endif

/* bpftime's names, so its GPU probes build unchanged. */
#ifndef BPF_MAP_TYPE_PERGPUTD_ARRAY_MAP
#define BPF_MAP_TYPE_PERGPUTD_ARRAY_MAP 1502
#endif
#ifndef BPF_MAP_TYPE_GPU_ARRAY_MAP
#define BPF_MAP_TYPE_GPU_ARRAY_MAP 1503
#endif
#ifndef BPF_MAP_TYPE_GPU_RINGBUF_MAP
#define BPF_MAP_TYPE_GPU_RINGBUF_MAP 1527
#endif
#ifndef BPF_MAP_TYPE_GPU_HASH_MAP
#define BPF_MAP_TYPE_GPU_HASH_MAP 1501
#endif
#ifndef BPF_MAP_TYPE_GPU_KERNEL_SHARED_ARRAY_MAP
#define BPF_MAP_TYPE_GPU_KERNEL_SHARED_ARRAY_MAP 1504
#endif
#ifndef BPF_MAP_TYPE_PERGPUTD_ARRAY_HOST_MAP
#define BPF_MAP_TYPE_PERGPUTD_ARRAY_HOST_MAP 1512
#endif
#ifndef BPF_MAP_TYPE_GPU_ARRAY_HOST_MAP
#define BPF_MAP_TYPE_GPU_ARRAY_HOST_MAP 1513
#endif

/*
 * libegpu's own map types (docs/maps.md):
 * - EGPU_THREAD_LOCAL: a value per key and GPU thread for the current
 *   launch, shared by every probe of the kernel (entry, exit, memory).
 *   Copied into the kernel, the values are registers: no memory access.
 *   Look up constant keys only (the result is then never NULL); the value
 *   cannot be passed to helpers; the host cannot read it.
 * - EGPU_SM_ARRAY: an array with one copy per SM; a probe updates its
 *   SM's copy (atomic adds are warp-aggregated), the host reads the sum.
 */
#ifndef BPF_MAP_TYPE_EGPU_THREAD_LOCAL
#define BPF_MAP_TYPE_EGPU_THREAD_LOCAL 4096
#endif
#ifndef BPF_MAP_TYPE_EGPU_SM_ARRAY
#define BPF_MAP_TYPE_EGPU_SM_ARRAY 4097
#endif

/* BTF map definitions, as libbpf's bpf_helpers.h spells them. */
#ifndef __uint
#define __uint(name, val) int (*name)[val]
#endif
#ifndef __type
#define __type(name, val) typeof(val) *name
#endif
#ifndef __array
#define __array(name, val) typeof(val) *name[]
#endif

#endif
