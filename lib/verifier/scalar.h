/* SPDX-License-Identifier: MIT */
/*
 * The abstract value of a scalar register: signed and unsigned 64-bit
 * ranges, the same for its low 32 bits, and its known bits. Every concrete
 * value the register may hold at run time lies in all five at once.
 */
#ifndef EGPU_SCALAR_H
#define EGPU_SCALAR_H

#include <stdbool.h>
#include <stdint.h>

#include "tnum.h"

struct strbuf;

struct scalar {
	struct tnum t;
	uint64_t umin, umax;
	int64_t smin, smax;
	uint32_t u32min, u32max;
	int32_t s32min, s32max;
};

/* Conditions of conditional jumps, with "not set" for JSET's false side. */
enum cmp_op {
	CMP_EQ, CMP_NE, CMP_GT, CMP_GE, CMP_LT, CMP_LE,
	CMP_SGT, CMP_SGE, CMP_SLT, CMP_SLE, CMP_SET, CMP_NSET,
};

void sc_const(struct scalar *s, uint64_t v);
void sc_unknown(struct scalar *s);
/* Any value that fits in @bits bits, zero-extended. */
void sc_unknown_bits(struct scalar *s, unsigned int bits);
static inline bool sc_is_const(const struct scalar *s)
{
	return tnum_is_const(s->t);
}

/*
 * Let each of the five descriptions tighten the others. Returns false when
 * they admit no value at all (an impossible branch).
 */
bool sc_sync(struct scalar *s);

/* Keep the low @bits bits (8, 16, 32), zero-extended. */
void sc_trunc(struct scalar *s, unsigned int bits);
/* Sign-extend the low @bits bits (8, 16, 32). */
void sc_sext(struct scalar *s, unsigned int bits);

/*
 * dst = dst OP src on 64 bits, for the ALU operations other than MOV, NEG
 * and END; @sdiv selects signed DIV/MOD. Division by zero follows the ISA.
 * Returns false only if the result came out empty (an internal error).
 */
bool sc_alu64(struct scalar *dst, const struct scalar *src, uint8_t op,
	      bool sdiv);
/* The same on the low 32 bits, result zero-extended (ALU class). */
bool sc_alu32(struct scalar *dst, const struct scalar *src, uint8_t op,
	      bool sdiv);
void sc_bswap(struct scalar *s, unsigned int bits);

/*
 * Narrow @a and @b to the values for which "a OP b" holds, on 64 bits or on
 * the low 32 (@jmp32). Returns false when no such values exist.
 */
bool sc_refine(struct scalar *a, struct scalar *b, enum cmp_op op,
	       bool jmp32);
enum cmp_op cmp_negate(enum cmp_op op);

/* @s becomes a scalar holding @s and @old, its moving bounds widened. */
void sc_widen(struct scalar *s, const struct scalar *old);
/* Every value of @cur is a value of @old. */
bool sc_contains(const struct scalar *old, const struct scalar *cur);
bool sc_equal(const struct scalar *a, const struct scalar *b);
bool sc_in(const struct scalar *s, uint64_t v);

void sc_print(struct strbuf *sb, const struct scalar *s);

#endif
