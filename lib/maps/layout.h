/* SPDX-License-Identifier: MIT */
/*
 * The layout of maps in GPU memory, shared by the host (C11, lib/maps) and
 * the device runtime (CUDA C, lib/device). Plain C with fixed-width types
 * only, so both compilers agree; the static asserts at the end check that.
 *
 * A map is one allocation: the descriptor, padded to DEV_MAP_DATA_OFFSET,
 * then the data. The descriptor's device address is the map's handle, the
 * constant the JIT puts in programs (jit_map.addr).
 *
 *  ARRAY, GPU_ARRAY (1503)   value of key k at data + k * value_size
 *  PERCPU_ARRAY, 1502        value of (k, thread t) at
 *                            data + (k * threads + t) * value_size, so a
 *                            warp's values for one key are contiguous
 *  SM_ARRAY (4097)           value of (k, SM s) at data + (s & (threads
 *                            - 1)) * dev_map_sm_stride() + k * value_size:
 *                            an SM's array is contiguous, its copy padded
 *                            to whole L2 lines; threads >= the SM count
 *  THREAD_LOCAL (4096)       registers of each thread (core/tlocal.h);
 *                            its data is an unused array
 *  HASH                      slot_cnt slots of slot_size bytes: a header
 *                            (state word, home-lock word), the key rounded
 *                            up to 8 bytes, the value rounded up to 8 bytes;
 *                            open addressing, linear probing, FNV-1a
 *
 * docs/maps.md describes the concurrency protocol of hash slots.
 */
#ifndef EGPU_MAPS_LAYOUT_H
#define EGPU_MAPS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define LAYOUT_ASSERT(c, msg) static_assert(c, msg)
#else
#define LAYOUT_ASSERT(c, msg) _Static_assert(c, msg)
#endif
#ifdef __CUDACC__
#define LAYOUT_INLINE static inline __host__ __device__
#else
#define LAYOUT_INLINE static inline
#endif

/*
 * A hash slot's header. Its state word holds the state in bits 0-1 and a
 * generation in bits 2-31 that every claim of the slot advances, so an
 * operation that saw the slot before it was deleted and reused cannot mistake
 * the new entry for the old (a delete's CAS then fails).
 */
enum dev_slot_state {
	DEV_SLOT_EMPTY = 0,   /* never used: ends every probe chain */
	DEV_SLOT_USED = 1,    /* key and value valid */
	DEV_SLOT_DELETED = 2, /* tombstone: reusable, probe chains go on */
	DEV_SLOT_BUSY = 3,    /* claimed by an inserter writing key and value */
};

#define DEV_SLOT_STATE_MASK 3u
#define DEV_SLOT_GEN_ONE 4u

struct dev_slot_hdr {
	uint32_t state; /* enum dev_slot_state | generation */
	uint32_t lock;  /* serialises inserts of keys whose home is this slot */
};

/*
 * SM_ARRAY: bytes from one SM's copy to the next, the array rounded up to
 * whole 128-byte L2 lines, so no line (and no L2 atomic unit's queue)
 * holds two SMs' counters.
 */
#define DEV_MAP_L2_LINE 128u
LAYOUT_INLINE uint64_t dev_map_sm_stride(uint32_t max_entries,
					 uint32_t value_size)
{
	uint64_t n = (uint64_t)max_entries * value_size;

	return (n + DEV_MAP_L2_LINE - 1) / DEV_MAP_L2_LINE * DEV_MAP_L2_LINE;
}

LAYOUT_INLINE uint32_t dev_slot_state_of(uint32_t word)
{
	return word & DEV_SLOT_STATE_MASK;
}

/* @word with its state replaced by @state; same generation. */
LAYOUT_INLINE uint32_t dev_slot_word(uint32_t word, uint32_t state)
{
	return (word & ~DEV_SLOT_STATE_MASK) | state;
}

/* The word of a new claim of a slot whose word is @word. */
LAYOUT_INLINE uint32_t dev_slot_claim_word(uint32_t word, uint32_t state)
{
	return dev_slot_word(word + DEV_SLOT_GEN_ONE, state);
}

/* The descriptor a map handle points at. */
struct dev_map_desc {
	uint32_t type;        /* enum egpu_map_type */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t slot_cnt;    /* hash: slots in the table (2 * max_entries + 1) */
	uint32_t slot_size;   /* hash: bytes per slot */
	uint32_t threads;     /* per-thread arrays: slots per key, a power of 2 */
	uint32_t count;       /* hash: live entries, kept with atomics */
	uint64_t data;        /* device address of the values or slots */
	uint32_t max_probe;   /* hash: farthest any key was placed from its home */
	uint32_t pad;
	uint64_t reserved[2]; /* zero; room to grow without moving data */
};

/* Where the data starts inside a map's allocation (keeps it 256-aligned). */
#define DEV_MAP_DATA_OFFSET 256u

/* Per-thread slots per key when the context does not choose. */
#define DEV_MAP_THREADS_MAX (1u << 20)
/* Bound on a per-thread map's data when the count is chosen by default. */
#define DEV_MAP_THREADS_BYTES ((uint64_t)256 << 20)

LAYOUT_INLINE uint32_t dev_round8(uint32_t n)
{
	return (n + 7u) & ~7u;
}

LAYOUT_INLINE uint32_t dev_slot_size(uint32_t key_size, uint32_t value_size)
{
	return (uint32_t)sizeof(struct dev_slot_hdr) + dev_round8(key_size) +
	       dev_round8(value_size);
}

LAYOUT_INLINE uint32_t dev_slot_key_offset(void)
{
	return (uint32_t)sizeof(struct dev_slot_hdr);
}

LAYOUT_INLINE uint32_t dev_slot_value_offset(uint32_t key_size)
{
	return (uint32_t)sizeof(struct dev_slot_hdr) + dev_round8(key_size);
}

/* FNV-1a over the key bytes; a key's home slot is the hash % slot_cnt. */
LAYOUT_INLINE uint32_t dev_hash_key(const void *key, uint32_t len)
{
	const uint8_t *p = (const uint8_t *)key;
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

LAYOUT_ASSERT(sizeof(struct dev_slot_hdr) == 8, "slot header is 8 bytes");
LAYOUT_ASSERT(offsetof(struct dev_slot_hdr, lock) == 4, "lock after state");
LAYOUT_ASSERT(offsetof(struct dev_map_desc, slot_cnt) == 16, "descriptor");
LAYOUT_ASSERT(offsetof(struct dev_map_desc, count) == 28, "descriptor");
LAYOUT_ASSERT(offsetof(struct dev_map_desc, data) == 32, "descriptor");
LAYOUT_ASSERT(offsetof(struct dev_map_desc, max_probe) == 40, "descriptor");
LAYOUT_ASSERT(sizeof(struct dev_map_desc) == 64, "descriptor is 64 bytes");
LAYOUT_ASSERT(sizeof(struct dev_map_desc) <= DEV_MAP_DATA_OFFSET,
	      "descriptor fits before the data");

#endif
