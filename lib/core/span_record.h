/* SPDX-License-Identifier: MIT */
/*
 * A span's compact records of memory accesses and the per-lane span state
 * (docs/events.md, "Spans"): the words the GPU writes, the decoders read
 * and the splicer's trace mode folds into its code as constants
 * (lib/ptx/trace_site.c), one definition for all of them. How spans sit
 * in a ring: lib/maps/span_layout.h.
 */
#ifndef EGPU_CORE_SPAN_RECORD_H
#define EGPU_CORE_SPAN_RECORD_H

#include <stdint.h>

#ifdef __CUDACC__
#define SPAN_FN static inline __host__ __device__
#else
#define SPAN_FN static inline
#endif

/* Spans and their records are made of 16-byte slots (a short record:
 * half of one). */
#define SPAN_SLOT 16u

/*
 * A record's first word (never zero):
 *   bits 0-1 format: SPAN_AFFINE, SPAN_SCATTERED, SPAN_LONG
 *   bits 2-3 scattered: log2 of a delta's bytes (1, 2, 4, 8); affine: 0
 *            (else a short record, below)
 *   bits 4-6 kind (EGPU_MEM_*), bits 7-12 bytes per lane, bits 13-31 site
 *            (all 0 in SPAN_LONG, whose next slot holds them whole)
 *   bits 32-63 the active lanes
 * Second word: affine: the lowest lane's address (48 bits) and a signed
 * 16-bit stride in the top bits, lane i of the mask at base + (i - lowest)
 * * stride; scattered and long: the lowest lane's address. Scattered and
 * long records go on with one signed delta (address - base) per active
 * lane in lane order, little-endian, padded to a slot; a long record's
 * second slot is struct span_long first.
 */
#define SPAN_AFFINE 1u
#define SPAN_SCATTERED 2u
#define SPAN_LONG 3u

#define SPAN_KIND_BITS 3u
#define SPAN_SIZE_BITS 6u
#define SPAN_SITE_BITS 19u
#define SPAN_ADDR_BITS 48u

SPAN_FN uint64_t span_word0(uint32_t fmt, uint32_t width_log2, uint32_t kind,
			    uint32_t size, uint32_t site, uint32_t mask)
{
	return (uint64_t)fmt | (uint64_t)width_log2 << 2 |
	       (uint64_t)kind << 4 | (uint64_t)size << 7 |
	       (uint64_t)site << 13 | (uint64_t)mask << 32;
}

SPAN_FN uint32_t span_w0_fmt(uint64_t w) { return (uint32_t)(w & 3); }
SPAN_FN uint32_t span_w0_width(uint64_t w) { return (uint32_t)(w >> 2 & 3); }
SPAN_FN uint32_t span_w0_kind(uint64_t w) { return (uint32_t)(w >> 4 & 7); }
SPAN_FN uint32_t span_w0_size(uint64_t w) { return (uint32_t)(w >> 7 & 63); }
SPAN_FN uint32_t span_w0_site(uint64_t w) { return (uint32_t)(w >> 13 & 0x7ffff); }
SPAN_FN uint32_t span_w0_mask(uint64_t w) { return (uint32_t)(w >> 32); }

/*
 * An access as the span helpers take it (bpf_egpu_trace_access_span in
 * <egpu/bpf_helpers.h> packs it from the probe's ctx): its bytes, kind
 * and site.
 */
SPAN_FN uint64_t span_access_info(uint32_t size, uint32_t kind, uint32_t site)
{
	return (uint64_t)size | (uint64_t)kind << 16 | (uint64_t)site << 32;
}

/* Whether kind, size and site fit the first word (else SPAN_LONG). */
SPAN_FN int span_fields_fit(uint32_t kind, uint32_t size, uint32_t site)
{
	return kind >> SPAN_KIND_BITS == 0 && size >> SPAN_SIZE_BITS == 0 &&
	       site >> SPAN_SITE_BITS == 0;
}

/* Whether an affine access of @base and @stride fits the second word. */
SPAN_FN int span_affine_fits(uint64_t base, int64_t stride)
{
	return base >> SPAN_ADDR_BITS == 0 && stride >= -32768 && stride <= 32767;
}

SPAN_FN uint64_t span_affine_w1(uint64_t base, int32_t stride)
{
	return base | (uint64_t)(uint16_t)(int16_t)stride << SPAN_ADDR_BITS;
}

/*
 * A short record: a full warp's access at lane 0's address + lane * size,
 * 8 bytes, one word (0.25 byte per lane access for 4-byte lanes):
 *   bits 0-1   SPAN_AFFINE
 *   bits 2-3   s, 1 to 3 (never 0: that is a 16-byte affine record):
 *              bytes per lane 2 << s (4, 8, 16)
 *   bits 4-5   kind - 1 (EGPU_MEM_LOAD to EGPU_MEM_ASYNC)
 *   bits 6-15  site
 *   bits 16-63 lane 0's address (48 bits)
 * It fills either half of a slot. Every other record starts a slot, so
 * one that follows a short record in a slot's first half leaves the
 * second half zero: a zero word there is padding, where a zero word at a
 * slot's start ends the span's records.
 */
#define SPAN_SHORT_BYTES 8u
#define SPAN_SHORT_SITE_BITS 10u
#define SPAN_SHORT_ADDR_SHIFT 16u

/* Whether a full warp's unit-stride access of @kind, @size, @site may be a
 * short record (its address must fit 48 bits too). */
SPAN_FN int span_short_fits(uint32_t kind, uint32_t size, uint32_t site)
{
	return kind >= 1 && kind <= 4 && (size == 4 || size == 8 || size == 16) &&
	       site >> SPAN_SHORT_SITE_BITS == 0;
}

/* A short record's low 16 bits: all but the address. */
SPAN_FN uint32_t span_short_low(uint32_t kind, uint32_t size, uint32_t site)
{
	uint32_t s = size == 4 ? 1 : size == 8 ? 2 : 3;

	return SPAN_AFFINE | s << 2 | (kind - 1) << 4 | site << 6;
}

SPAN_FN uint64_t span_short_word(uint32_t kind, uint32_t size, uint32_t site,
				 uint64_t base)
{
	return (uint64_t)span_short_low(kind, size, site) |
	       base << SPAN_SHORT_ADDR_SHIFT;
}

SPAN_FN int span_w0_short(uint64_t w) { return (w & 3) == SPAN_AFFINE && (w >> 2 & 3); }
SPAN_FN uint32_t span_short_size(uint64_t w) { return 2u << (w >> 2 & 3); }
SPAN_FN uint32_t span_short_kind(uint64_t w) { return (uint32_t)(w >> 4 & 3) + 1; }
SPAN_FN uint32_t span_short_site(uint64_t w) { return (uint32_t)(w >> 6 & 0x3ff); }
SPAN_FN uint64_t span_short_base(uint64_t w) { return w >> SPAN_SHORT_ADDR_SHIFT; }

/*
 * A lane's span state, a u64 the probe keeps in a thread-local value (a
 * register), 0 at the thread's start:
 *   bits 0-35  start: the span's ring position / 16 (mod 2^36)
 *   bits 36-44 slots used (slot 0 included)
 *   bits 45-53 slots of the span
 *   bit  54    this lane owns the span and it is open
 *   bits 55-63 a tag of the ring's descriptor address
 * A lane that does not own one keeps the start of the span its last
 * record went into: the floor below which none of its later records may
 * go (per-thread order, docs/events.md).
 */
#define SPAN_START_BITS 36u
#define SPAN_USED_SHIFT 36u
#define SPAN_SLOTS_SHIFT 45u
#define SPAN_SLOTS_BITS 9u
#define SPAN_OWN (1ull << 54)
#define SPAN_TAG_SHIFT 55u
/* The state's slots used, its slots; its start and tag (what a floor
 * taken from a span keeps of the span's state: the splicer's claim). */
#define SPAN_USED_MASK (0x1ffull << SPAN_USED_SHIFT)
#define SPAN_SLOTS_MASK (0x1ffull << SPAN_SLOTS_SHIFT)
#define SPAN_START_TAG_MASK (((1ull << SPAN_START_BITS) - 1) | \
			     0x1ffull << SPAN_TAG_SHIFT)

SPAN_FN uint64_t span_state(uint32_t tag, uint64_t start, uint32_t used,
			    uint32_t slots, int own)
{
	return (start & ((1ull << SPAN_START_BITS) - 1)) |
	       (uint64_t)used << SPAN_USED_SHIFT |
	       (uint64_t)slots << SPAN_SLOTS_SHIFT |
	       (own ? SPAN_OWN : 0) | (uint64_t)(tag & 0x1ff) << SPAN_TAG_SHIFT;
}

SPAN_FN uint64_t span_st_start(uint64_t s) { return s & ((1ull << SPAN_START_BITS) - 1); }
SPAN_FN uint32_t span_st_used(uint64_t s) { return (uint32_t)(s >> SPAN_USED_SHIFT & 0x1ff); }
SPAN_FN uint32_t span_st_slots(uint64_t s) { return (uint32_t)(s >> SPAN_SLOTS_SHIFT & 0x1ff); }
SPAN_FN int span_st_own(uint64_t s) { return (s & SPAN_OWN) != 0; }
SPAN_FN uint32_t span_st_tag(uint64_t s) { return (uint32_t)(s >> SPAN_TAG_SHIFT); }

/* The tag of a ring whose descriptor is at @addr (128-byte aligned). */
SPAN_FN uint32_t span_ring_tag(uint64_t addr)
{
	return (uint32_t)(addr >> 7 & 0x1ff);
}

/* The state's slots used, one more: what a record of one slot adds. */
#define SPAN_USED_ONE (1ull << SPAN_USED_SHIFT)

/* A span claim's reservation not made yet (the runtime's span_claim and
 * the splicer's call of it: a claim that holds one passes reserved's value
 * from before its bytes). */
#define SPAN_NOT_HELD UINT64_MAX

#endif
