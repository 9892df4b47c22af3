/* SPDX-License-Identifier: MIT */
/*
 * Known bits of a 64-bit value ("tristate numbers"): every bit is known 0,
 * known 1, or unknown. @value holds the known ones, @mask the unknown ones;
 * a bit is never set in both.
 */
#ifndef EGPU_TNUM_H
#define EGPU_TNUM_H

#include <stdbool.h>
#include <stdint.h>

struct tnum {
	uint64_t value;
	uint64_t mask;
};

static inline struct tnum tnum_const(uint64_t v)
{
	return (struct tnum){ v, 0 };
}

static inline struct tnum tnum_unknown(void)
{
	return (struct tnum){ 0, UINT64_MAX };
}

static inline bool tnum_is_const(struct tnum t)
{
	return t.mask == 0;
}

/* Smallest and largest unsigned value the bits allow. */
static inline uint64_t tnum_umin(struct tnum t)
{
	return t.value;
}

static inline uint64_t tnum_umax(struct tnum t)
{
	return t.value | t.mask;
}

/* The low 32 bits, upper ones known 0. */
static inline struct tnum tnum_low32(struct tnum t)
{
	return (struct tnum){ t.value & UINT32_MAX, t.mask & UINT32_MAX };
}

struct tnum tnum_range(uint64_t min, uint64_t max);
struct tnum tnum_add(struct tnum a, struct tnum b);
struct tnum tnum_sub(struct tnum a, struct tnum b);
struct tnum tnum_mul(struct tnum a, struct tnum b);
struct tnum tnum_and(struct tnum a, struct tnum b);
struct tnum tnum_or(struct tnum a, struct tnum b);
struct tnum tnum_xor(struct tnum a, struct tnum b);
struct tnum tnum_lsh(struct tnum a, unsigned int k);
struct tnum tnum_rsh(struct tnum a, unsigned int k);
struct tnum tnum_arsh(struct tnum a, unsigned int k);
struct tnum tnum_bswap(struct tnum a, unsigned int bits);
/* Sign-extend from bit @bits - 1. */
struct tnum tnum_sext(struct tnum a, unsigned int bits);
/* Keep the low @bits bits, clear the rest. */
struct tnum tnum_trunc(struct tnum a, unsigned int bits);
/* Bits both describe; false (and *out untouched) if they contradict. */
bool tnum_intersect(struct tnum a, struct tnum b, struct tnum *out);
/* Whether every value of @b is a value of @a. */
bool tnum_contains(struct tnum a, struct tnum b);
bool tnum_in(struct tnum t, uint64_t v);
/* Whether every value is a multiple of @size (a power of two). */
static inline bool tnum_is_aligned(struct tnum t, uint64_t size)
{
	return !((t.value | t.mask) & (size - 1));
}

#endif
