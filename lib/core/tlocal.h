/* SPDX-License-Identifier: MIT */
/*
 * Thread-local maps (EGPU_MAP_THREAD_LOCAL) in probes copied into kernels:
 * how their values are named between the JIT and the PTX rewriter.
 *
 * The JIT gives a thread-local map's value of key k the placeholder
 * address thread_local_base(handle) + k * value_size, a range no memory
 * has. After optimisation every access is at a constant placeholder
 * address (the verifier allows constant keys and offsets only), and the
 * JIT turns each into moves on a register named after its 8-byte word
 * (THREAD_LOCAL_REG_PREFIX + hex word number). The PTX rewriter declares
 * those registers once per instrumented function and zeroes them at its
 * entry: every probe copied into a kernel shares them, and no load or
 * store remains.
 */
#ifndef EGPU_CORE_TLOCAL_H
#define EGPU_CORE_TLOCAL_H

#include <stdbool.h>
#include <stdint.h>

/* Values of one thread-local map: at most 64 registers of 8 bytes. */
#define THREAD_LOCAL_MAX_BYTES 512u
#define THREAD_LOCAL_TAG 0xf000000000000000ull
#define THREAD_LOCAL_SPAN_BITS 10 /* bytes of one map's range: 1024 */
#define THREAD_LOCAL_REG_PREFIX "%egpu_tl_"

/* The placeholder address of the values of the map with @handle. */
static inline uint64_t thread_local_base(uint64_t handle)
{
	return THREAD_LOCAL_TAG |
	       ((handle & 0xffffffffffffull) << THREAD_LOCAL_SPAN_BITS);
}

static inline bool thread_local_addr(uint64_t a)
{
	return (a & 0xfc00000000000000ull) == THREAD_LOCAL_TAG;
}

/* The 8-byte word number naming the register of address @a. */
static inline uint64_t thread_local_word(uint64_t a)
{
	return (a & ~THREAD_LOCAL_TAG) >> 3;
}

#endif
