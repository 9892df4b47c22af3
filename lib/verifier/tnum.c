/* SPDX-License-Identifier: MIT */
/*
 * Known-bits arithmetic. Each operation returns bits that hold for every
 * pair of concrete values the operands allow (tests/verifier checks this by
 * sampling).
 */
#include "tnum.h"

struct tnum tnum_range(uint64_t min, uint64_t max)
{
	uint64_t differ = min ^ max;
	unsigned int bits;
	uint64_t low;

	if (!differ)
		return tnum_const(min);
	bits = 64 - __builtin_clzll(differ);
	if (bits >= 64)
		return tnum_unknown();
	/* Above the highest differing bit, min and max agree. */
	low = (1ULL << bits) - 1;
	return (struct tnum){ min & ~low, low };
}

struct tnum tnum_add(struct tnum a, struct tnum b)
{
	uint64_t sum_mask = a.mask + b.mask;
	uint64_t sum_value = a.value + b.value;
	/* Bits where the largest and the smallest sum differ, and every bit
	 * a carry can reach from them, are unknown. */
	uint64_t carries = (sum_mask + sum_value) ^ sum_value;
	uint64_t unknown = carries | a.mask | b.mask;

	return (struct tnum){ sum_value & ~unknown, unknown };
}

struct tnum tnum_sub(struct tnum a, struct tnum b)
{
	uint64_t diff = a.value - b.value;
	uint64_t largest = diff + a.mask;
	uint64_t smallest = diff - b.mask;
	uint64_t unknown = (largest ^ smallest) | a.mask | b.mask;

	return (struct tnum){ diff & ~unknown, unknown };
}

struct tnum tnum_and(struct tnum a, struct tnum b)
{
	uint64_t maybe_a = a.value | a.mask;
	uint64_t maybe_b = b.value | b.mask;
	uint64_t ones = a.value & b.value;

	return (struct tnum){ ones, maybe_a & maybe_b & ~ones };
}

struct tnum tnum_or(struct tnum a, struct tnum b)
{
	uint64_t ones = a.value | b.value;

	return (struct tnum){ ones, (a.mask | b.mask) & ~ones };
}

struct tnum tnum_xor(struct tnum a, struct tnum b)
{
	uint64_t unknown = a.mask | b.mask;

	return (struct tnum){ (a.value ^ b.value) & ~unknown, unknown };
}

/*
 * a * b is the sum over the bits i of a of (a_i * b) << i. Known ones of a
 * add b's known part (collected exactly in @exact) plus b's unknown part;
 * unknown bits of a add either 0 or b, which {0, b.value | b.mask} covers.
 */
struct tnum tnum_mul(struct tnum a, struct tnum b)
{
	struct tnum exact = tnum_const(a.value * b.value);
	struct tnum spread = tnum_const(0);

	while (a.value | a.mask) {
		if (a.value & 1)
			spread = tnum_add(spread, (struct tnum){ 0, b.mask });
		else if (a.mask & 1)
			spread = tnum_add(spread,
					  (struct tnum){ 0, b.value | b.mask });
		a.value >>= 1;
		a.mask >>= 1;
		b.value <<= 1;
		b.mask <<= 1;
	}
	return tnum_add(exact, spread);
}

struct tnum tnum_lsh(struct tnum a, unsigned int k)
{
	return (struct tnum){ a.value << k, a.mask << k };
}

struct tnum tnum_rsh(struct tnum a, unsigned int k)
{
	return (struct tnum){ a.value >> k, a.mask >> k };
}

/* An unknown sign bit makes every bit it is copied into unknown. */
struct tnum tnum_arsh(struct tnum a, unsigned int k)
{
	return (struct tnum){ (uint64_t)((int64_t)a.value >> k),
			      (uint64_t)((int64_t)a.mask >> k) };
}

static uint64_t bswap_bits(uint64_t v, unsigned int bits)
{
	switch (bits) {
	case 16:
		return __builtin_bswap16((uint16_t)v);
	case 32:
		return __builtin_bswap32((uint32_t)v);
	default:
		return __builtin_bswap64(v);
	}
}

/* A byte swap only moves bits, so it moves the knowledge with them. */
struct tnum tnum_bswap(struct tnum a, unsigned int bits)
{
	return (struct tnum){ bswap_bits(a.value, bits),
			      bswap_bits(a.mask, bits) };
}

struct tnum tnum_trunc(struct tnum a, unsigned int bits)
{
	uint64_t keep = bits >= 64 ? UINT64_MAX : (1ULL << bits) - 1;

	return (struct tnum){ a.value & keep, a.mask & keep };
}

struct tnum tnum_sext(struct tnum a, unsigned int bits)
{
	unsigned int shift = 64 - bits;

	return tnum_arsh(tnum_lsh(a, shift), shift);
}

bool tnum_intersect(struct tnum a, struct tnum b, struct tnum *out)
{
	uint64_t both_known = ~a.mask & ~b.mask;

	if ((a.value ^ b.value) & both_known)
		return false;
	out->mask = a.mask & b.mask;
	out->value = (a.value | b.value) & ~out->mask;
	return true;
}

bool tnum_contains(struct tnum a, struct tnum b)
{
	if (b.mask & ~a.mask)
		return false;
	return (b.value & ~a.mask) == a.value;
}

bool tnum_in(struct tnum t, uint64_t v)
{
	return (v & ~t.mask) == t.value;
}
