/* SPDX-License-Identifier: MIT */
/*
 * Building blocks of the device runtime: the calling thread's index, byte
 * copies and compares over generic pointers, a spin lock. Everything here is
 * forced inline so that the runtime's PTX holds only the egpu_dev_*
 * functions (no private names that could clash with the application's when
 * the PTX texts are merged).
 */
#ifndef EGPU_DEVICE_RT_CUH
#define EGPU_DEVICE_RT_CUH

#include <errno.h>
#include <stdint.h>

#include "egpu.h"
#include "maps/layout.h"

#define RT_INLINE static __device__ __forceinline__

/*
 * Global linear thread id: linear block index times threads per block plus
 * the linear thread index inside the block.
 */
RT_INLINE uint64_t rt_global_thread_id(void)
{
	uint64_t block = ((uint64_t)blockIdx.z * gridDim.y + blockIdx.y) *
			 gridDim.x + blockIdx.x;
	uint64_t block_threads = (uint64_t)blockDim.x * blockDim.y * blockDim.z;
	uint64_t thread = ((uint64_t)threadIdx.z * blockDim.y + threadIdx.y) *
			  blockDim.x + threadIdx.x;

	return block * block_threads + thread;
}

/* The SM the calling thread runs on (SM_ARRAY's copy). */
RT_INLINE uint32_t rt_smid(void)
{
	uint32_t id;

	asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
	return id;
}

/* The GPU's nanosecond clock, for bounded waits. */
RT_INLINE uint64_t rt_globaltimer(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory");
	return t;
}

/*
 * A store to global memory (device memory, or host memory mapped into it)
 * that skips the generic-address check; nvcc cannot tell from an address
 * computed from integers.
 */
RT_INLINE void rt_store_global(uint64_t *p, uint64_t v)
{
	asm volatile("st.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

/*
 * Keys and values come from a program's stack (local memory) or from map
 * values, through generic pointers of unknown alignment: copy and compare
 * by the widest word both sides allow.
 */
template <typename W>
RT_INLINE void rt_copy_words(void *dst, const void *src, uint32_t n)
{
	W *d = (W *)dst;
	const W *s = (const W *)src;

	for (uint32_t i = 0; i < n / sizeof(W); i++)
		d[i] = s[i];
}

RT_INLINE uint32_t rt_align_of(const void *a, const void *b, uint32_t n)
{
	uint64_t bits = (uint64_t)(uintptr_t)a | (uint64_t)(uintptr_t)b | n;

	return (bits & 7) == 0 ? 8 : (bits & 3) == 0 ? 4 : 1;
}

RT_INLINE void rt_copy(void *dst, const void *src, uint32_t n)
{
	switch (rt_align_of(dst, src, n)) {
	case 8:
		rt_copy_words<uint64_t>(dst, src, n);
		break;
	case 4:
		rt_copy_words<uint32_t>(dst, src, n);
		break;
	default:
		rt_copy_words<uint8_t>(dst, src, n);
	}
}

template <typename W>
RT_INLINE bool rt_equal_words(const void *a, const void *b, uint32_t n)
{
	const W *x = (const W *)a, *y = (const W *)b;

	for (uint32_t i = 0; i < n / sizeof(W); i++)
		if (x[i] != y[i])
			return false;
	return true;
}

RT_INLINE bool rt_equal(const void *a, const void *b, uint32_t n)
{
	switch (rt_align_of(a, b, n)) {
	case 8:
		return rt_equal_words<uint64_t>(a, b, n);
	case 4:
		return rt_equal_words<uint32_t>(a, b, n);
	default:
		return rt_equal_words<uint8_t>(a, b, n);
	}
}

/*
 * Slot states are read with acquire and written with release semantics
 * (GPU scope), so a slot seen USED has its key and value visible.
 */
RT_INLINE uint32_t rt_load_acquire(const uint32_t *p)
{
	uint32_t v;

	asm volatile("ld.acquire.gpu.b32 %0, [%1];"
		     : "=r"(v) : "l"(p) : "memory");
	return v;
}

RT_INLINE void rt_store_release(uint32_t *p, uint32_t v)
{
	asm volatile("st.release.gpu.b32 [%0], %1;"
		     :: "l"(p), "r"(v) : "memory");
}

/*
 * A spin lock; threads of one warp may contend for it, which sm_70 and
 * later (independent thread scheduling) guarantee to make progress.
 */
RT_INLINE void rt_lock(uint32_t *lock)
{
	while (atomicCAS(lock, 0u, 1u) != 0u)
		__nanosleep(32);
	__threadfence();
}

RT_INLINE void rt_unlock(uint32_t *lock)
{
	__threadfence();
	atomicExch(lock, 0u);
}

/* An array map's key: a 32-bit index. */
RT_INLINE uint32_t rt_key_index(const void *key)
{
	uint32_t idx;

	rt_copy(&idx, key, sizeof(idx));
	return idx;
}

#endif
