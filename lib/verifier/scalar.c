/* SPDX-License-Identifier: MIT */
/*
 * Range and known-bits arithmetic on scalars. Each transfer function may
 * lose precision but never a value: tests/verifier samples concrete values
 * and checks that every result lies in the computed description.
 */
#include <inttypes.h>
#include <string.h>

#include "core/bpf.h"
#include "core/core.h"
#include "scalar.h"

#define U32_LOW 0xffffffffULL

#define TIGHTEN_MIN(field, v) do { if ((v) > (field)) (field) = (v); } while (0)
#define TIGHTEN_MAX(field, v) do { if ((v) < (field)) (field) = (v); } while (0)

void sc_unknown(struct scalar *s)
{
	s->t = tnum_unknown();
	s->umin = 0;
	s->umax = UINT64_MAX;
	s->smin = INT64_MIN;
	s->smax = INT64_MAX;
	s->u32min = 0;
	s->u32max = UINT32_MAX;
	s->s32min = INT32_MIN;
	s->s32max = INT32_MAX;
}

void sc_const(struct scalar *s, uint64_t v)
{
	s->t = tnum_const(v);
	s->umin = s->umax = v;
	s->smin = s->smax = (int64_t)v;
	s->u32min = s->u32max = (uint32_t)v;
	s->s32min = s->s32max = (int32_t)v;
}

void sc_unknown_bits(struct scalar *s, unsigned int bits)
{
	sc_unknown(s);
	if (bits < 64) {
		s->t = tnum_trunc(s->t, bits);
		sc_sync(s);
	}
}

/* Known bits -> the four ranges. */
static void bounds_from_bits(struct scalar *s)
{
	const uint64_t sign = 1ULL << 63;
	struct tnum lo = tnum_low32(s->t);

	TIGHTEN_MIN(s->umin, tnum_umin(s->t));
	TIGHTEN_MAX(s->umax, tnum_umax(s->t));
	TIGHTEN_MIN(s->smin, (int64_t)(s->t.value | (s->t.mask & sign)));
	TIGHTEN_MAX(s->smax, (int64_t)(s->t.value | (s->t.mask & ~sign)));
	TIGHTEN_MIN(s->u32min, (uint32_t)lo.value);
	TIGHTEN_MAX(s->u32max, (uint32_t)(lo.value | lo.mask));
	TIGHTEN_MIN(s->s32min, (int32_t)(lo.value | (lo.mask & 0x80000000u)));
	TIGHTEN_MAX(s->s32max, (int32_t)(lo.value | (lo.mask & 0x7fffffffu)));
}

/* 64-bit ranges -> low 32-bit ranges. */
static void low_from_wide(struct scalar *s)
{
	/* All values share their upper half: the low halves are contiguous. */
	if ((s->umin >> 32) == (s->umax >> 32)) {
		TIGHTEN_MIN(s->u32min, (uint32_t)s->umin);
		TIGHTEN_MAX(s->u32max, (uint32_t)s->umax);
		if ((int32_t)s->umin <= (int32_t)s->umax) {
			TIGHTEN_MIN(s->s32min, (int32_t)s->umin);
			TIGHTEN_MAX(s->s32max, (int32_t)s->umax);
		}
	}
	if (((uint64_t)s->smin >> 32) == ((uint64_t)s->smax >> 32)) {
		TIGHTEN_MIN(s->u32min, (uint32_t)s->smin);
		TIGHTEN_MAX(s->u32max, (uint32_t)s->smax);
		if ((int32_t)s->smin <= (int32_t)s->smax) {
			TIGHTEN_MIN(s->s32min, (int32_t)s->smin);
			TIGHTEN_MAX(s->s32max, (int32_t)s->smax);
		}
	}
	if (s->smin >= INT32_MIN && s->smax <= INT32_MAX) {
		TIGHTEN_MIN(s->s32min, (int32_t)s->smin);
		TIGHTEN_MAX(s->s32max, (int32_t)s->smax);
	}
}

/* Low 32-bit ranges -> 64-bit ranges, where the upper half allows it. */
static void wide_from_low(struct scalar *s)
{
	if (!(s->t.mask >> 32)) {
		uint64_t hi = s->t.value & ~U32_LOW;

		TIGHTEN_MIN(s->umin, hi | s->u32min);
		TIGHTEN_MAX(s->umax, hi | s->u32max);
		TIGHTEN_MIN(s->smin, (int64_t)(hi | s->u32min));
		TIGHTEN_MAX(s->smax, (int64_t)(hi | s->u32max));
	}
	/* The value is its low half sign-extended. */
	if (s->smin >= INT32_MIN && s->smax <= INT32_MAX) {
		TIGHTEN_MIN(s->smin, (int64_t)s->s32min);
		TIGHTEN_MAX(s->smax, (int64_t)s->s32max);
	}
}

/* Signed <-> unsigned, where the range stays on one side of the sign. */
static void sign_cross(struct scalar *s)
{
	if (!((s->umin ^ s->umax) >> 63)) {
		TIGHTEN_MIN(s->smin, (int64_t)s->umin);
		TIGHTEN_MAX(s->smax, (int64_t)s->umax);
	}
	if ((s->smin ^ s->smax) >= 0) {
		TIGHTEN_MIN(s->umin, (uint64_t)s->smin);
		TIGHTEN_MAX(s->umax, (uint64_t)s->smax);
	}
	if (!((s->u32min ^ s->u32max) >> 31)) {
		TIGHTEN_MIN(s->s32min, (int32_t)s->u32min);
		TIGHTEN_MAX(s->s32max, (int32_t)s->u32max);
	}
	if ((s->s32min ^ s->s32max) >= 0) {
		TIGHTEN_MIN(s->u32min, (uint32_t)s->s32min);
		TIGHTEN_MAX(s->u32max, (uint32_t)s->s32max);
	}
}

static bool is_empty(const struct scalar *s)
{
	return s->umin > s->umax || s->smin > s->smax ||
	       s->u32min > s->u32max || s->s32min > s->s32max;
}

/* Ranges -> known bits. */
static bool bits_from_bounds(struct scalar *s)
{
	struct tnum wide = tnum_range(s->umin, s->umax);
	struct tnum low = tnum_range(s->u32min, s->u32max);

	low.mask |= ~U32_LOW; /* says nothing about the upper half */
	return tnum_intersect(s->t, wide, &s->t) &&
	       tnum_intersect(s->t, low, &s->t);
}

bool sc_sync(struct scalar *s)
{
	for (int round = 0; round < 4; round++) {
		struct scalar before = *s;

		bounds_from_bits(s);
		low_from_wide(s);
		wide_from_low(s);
		sign_cross(s);
		if (is_empty(s) || !bits_from_bounds(s))
			return false;
		if (!memcmp(&before, s, sizeof(*s)))
			break;
	}
	return true;
}

void sc_trunc(struct scalar *s, unsigned int bits)
{
	uint64_t keep = (1ULL << bits) - 1;
	struct tnum t = tnum_trunc(s->t, bits);
	uint64_t lo = 0, hi = keep;

	if (bits == 32) {
		lo = s->u32min;
		hi = s->u32max;
	} else if ((s->umin >> bits) == (s->umax >> bits)) {
		lo = s->umin & keep;
		hi = s->umax & keep;
	}
	sc_unknown(s);
	s->t = t;
	s->umin = lo;
	s->umax = hi;
	sc_sync(s);
}

void sc_sext(struct scalar *s, unsigned int bits)
{
	int64_t half = 1LL << (bits - 1);
	struct tnum t = tnum_sext(s->t, bits);
	int64_t lo = -half, hi = half - 1;

	if (bits == 32) {
		lo = s->s32min;
		hi = s->s32max;
	} else {
		sc_trunc(s, bits);
		if ((int64_t)s->umax < half) {
			lo = (int64_t)s->umin;
			hi = (int64_t)s->umax;
		} else if ((int64_t)s->umin >= half) {
			lo = (int64_t)s->umin - 2 * half;
			hi = (int64_t)s->umax - 2 * half;
		}
	}
	sc_unknown(s);
	s->t = t;
	s->smin = lo;
	s->smax = hi;
	sc_sync(s);
}

static void add_bounds(struct scalar *r, const struct scalar *a,
		       const struct scalar *b)
{
	uint64_t ulo, uhi;
	int64_t slo, shi;
	uint32_t u32lo, u32hi;
	int32_t s32lo, s32hi;

	if (!__builtin_add_overflow(a->umin, b->umin, &ulo) &&
	    !__builtin_add_overflow(a->umax, b->umax, &uhi)) {
		r->umin = ulo;
		r->umax = uhi;
	}
	if (!__builtin_add_overflow(a->smin, b->smin, &slo) &&
	    !__builtin_add_overflow(a->smax, b->smax, &shi)) {
		r->smin = slo;
		r->smax = shi;
	}
	/* The low half of a sum is the sum of the low halves. */
	if (!__builtin_add_overflow(a->u32min, b->u32min, &u32lo) &&
	    !__builtin_add_overflow(a->u32max, b->u32max, &u32hi)) {
		r->u32min = u32lo;
		r->u32max = u32hi;
	}
	if (!__builtin_add_overflow(a->s32min, b->s32min, &s32lo) &&
	    !__builtin_add_overflow(a->s32max, b->s32max, &s32hi)) {
		r->s32min = s32lo;
		r->s32max = s32hi;
	}
}

static void sub_bounds(struct scalar *r, const struct scalar *a,
		       const struct scalar *b)
{
	int64_t slo, shi;
	int32_t s32lo, s32hi;

	if (a->umin >= b->umax) {
		r->umin = a->umin - b->umax;
		r->umax = a->umax - b->umin;
	}
	if (!__builtin_sub_overflow(a->smin, b->smax, &slo) &&
	    !__builtin_sub_overflow(a->smax, b->smin, &shi)) {
		r->smin = slo;
		r->smax = shi;
	}
	if (a->u32min >= b->u32max) {
		r->u32min = a->u32min - b->u32max;
		r->u32max = a->u32max - b->u32min;
	}
	if (!__builtin_sub_overflow(a->s32min, b->s32max, &s32lo) &&
	    !__builtin_sub_overflow(a->s32max, b->s32min, &s32hi)) {
		r->s32min = s32lo;
		r->s32max = s32hi;
	}
}

/* A product over a rectangle is extreme at its corners. */
static void mul_bounds(struct scalar *r, const struct scalar *a,
		       const struct scalar *b)
{
	int64_t corner[4], lo, hi;
	uint64_t uhi;

	if (!__builtin_mul_overflow(a->umax, b->umax, &uhi)) {
		r->umin = a->umin * b->umin;
		r->umax = uhi;
	}
	if (__builtin_mul_overflow(a->smin, b->smin, &corner[0]) ||
	    __builtin_mul_overflow(a->smin, b->smax, &corner[1]) ||
	    __builtin_mul_overflow(a->smax, b->smin, &corner[2]) ||
	    __builtin_mul_overflow(a->smax, b->smax, &corner[3]))
		return;
	lo = hi = corner[0];
	for (int i = 1; i < 4; i++) {
		lo = corner[i] < lo ? corner[i] : lo;
		hi = corner[i] > hi ? corner[i] : hi;
	}
	r->smin = lo;
	r->smax = hi;
}

/* x / y <= x, and x / 0 = 0. */
static void udiv_bounds(struct scalar *r, const struct scalar *a,
			const struct scalar *b)
{
	r->umin = 0;
	r->umax = a->umax;
	if (b->umin > 0) {
		r->umin = a->umin / b->umax;
		r->umax = a->umax / b->umin;
	}
}

/* x % y <= x, x % 0 = x, and x % y < y when y > 0. */
static void umod_bounds(struct scalar *r, const struct scalar *a,
			const struct scalar *b)
{
	if (b->umin > a->umax) {
		*r = *a;
		return;
	}
	r->umin = 0;
	r->umax = a->umax;
	if (b->umin > 0)
		TIGHTEN_MAX(r->umax, b->umax - 1);
}

static int64_t sdiv_exact(int64_t a, int64_t b, bool mod)
{
	if (b == 0)
		return mod ? a : 0;
	if (a == INT64_MIN && b == -1)
		return mod ? 0 : INT64_MIN;
	return mod ? a % b : a / b;
}

/*
 * Signed quotients and remainders are no larger in magnitude than the
 * dividend, and remainders take its sign (or are zero).
 */
static void sdiv_bounds(struct scalar *r, const struct scalar *a,
			const struct scalar *b, bool mod)
{
	int64_t mag;

	if (sc_is_const(a) && sc_is_const(b)) {
		sc_const(r, (uint64_t)sdiv_exact((int64_t)a->t.value,
						 (int64_t)b->t.value, mod));
		return;
	}
	if (a->smin == INT64_MIN)
		return;
	mag = -a->smin > a->smax ? -a->smin : a->smax;
	if (mod) {
		r->smin = a->smin < 0 ? a->smin : 0;
		r->smax = a->smax > 0 ? a->smax : 0;
	} else {
		r->smin = -mag;
		r->smax = mag;
	}
}

/* The shift counts an unknown amount may take once masked to @width. */
static void shift_range(const struct scalar *b, unsigned int width,
			unsigned int *kmin, unsigned int *kmax)
{
	if (sc_is_const(b)) {
		*kmin = *kmax = b->t.value & (width - 1);
	} else if (b->umax < width) {
		*kmin = (unsigned int)b->umin;
		*kmax = (unsigned int)b->umax;
	} else {
		*kmin = 0;
		*kmax = width - 1;
	}
}

static void lsh_bounds(struct scalar *r, const struct scalar *a,
		       unsigned int kmin, unsigned int kmax)
{
	if (kmin == kmax)
		r->t = tnum_lsh(a->t, kmin);
	else
		r->t = (struct tnum){ 0, UINT64_MAX << kmin };
	if (a->umax <= UINT64_MAX >> kmax) {
		r->umin = a->umin << kmin;
		r->umax = a->umax << kmax;
	}
}

static void rsh_bounds(struct scalar *r, const struct scalar *a,
		       unsigned int kmin, unsigned int kmax)
{
	if (kmin == kmax)
		r->t = tnum_rsh(a->t, kmin);
	else
		r->t = (struct tnum){ 0, UINT64_MAX >> kmin };
	r->umin = a->umin >> kmax;
	r->umax = a->umax >> kmin;
}

static void arsh_bounds(struct scalar *r, const struct scalar *a,
			unsigned int kmin, unsigned int kmax)
{
	int64_t lo1 = a->smin >> kmin, lo2 = a->smin >> kmax;
	int64_t hi1 = a->smax >> kmin, hi2 = a->smax >> kmax;

	if (kmin == kmax)
		r->t = tnum_arsh(a->t, kmin);
	r->smin = lo1 < lo2 ? lo1 : lo2;
	r->smax = hi1 > hi2 ? hi1 : hi2;
}

static void bitwise_bounds(struct scalar *r, const struct scalar *a,
			   const struct scalar *b, uint8_t op)
{
	switch (op) {
	case BPF_AND:
		r->t = tnum_and(a->t, b->t);
		r->umax = a->umax < b->umax ? a->umax : b->umax;
		if (a->smin >= 0 || b->smin >= 0) {
			r->smin = 0;
			r->smax = INT64_MAX;
			if (a->smin >= 0)
				TIGHTEN_MAX(r->smax, a->smax);
			if (b->smin >= 0)
				TIGHTEN_MAX(r->smax, b->smax);
		}
		break;
	case BPF_OR:
		r->t = tnum_or(a->t, b->t);
		r->umin = a->umin > b->umin ? a->umin : b->umin;
		break;
	default:
		r->t = tnum_xor(a->t, b->t);
		break;
	}
}

static void shift(struct scalar *r, const struct scalar *a,
		  const struct scalar *b, uint8_t op)
{
	unsigned int kmin, kmax;

	shift_range(b, 64, &kmin, &kmax);
	if (op == BPF_LSH)
		lsh_bounds(r, a, kmin, kmax);
	else if (op == BPF_RSH)
		rsh_bounds(r, a, kmin, kmax);
	else
		arsh_bounds(r, a, kmin, kmax);
}

bool sc_alu64(struct scalar *dst, const struct scalar *src, uint8_t op,
	      bool sdiv)
{
	struct scalar a = *dst, r;

	sc_unknown(&r);
	switch (op) {
	case BPF_ADD:
		r.t = tnum_add(a.t, src->t);
		add_bounds(&r, &a, src);
		break;
	case BPF_SUB:
		r.t = tnum_sub(a.t, src->t);
		sub_bounds(&r, &a, src);
		break;
	case BPF_MUL:
		r.t = tnum_mul(a.t, src->t);
		mul_bounds(&r, &a, src);
		break;
	case BPF_DIV:
	case BPF_MOD:
		if (sdiv)
			sdiv_bounds(&r, &a, src, op == BPF_MOD);
		else if (op == BPF_DIV)
			udiv_bounds(&r, &a, src);
		else
			umod_bounds(&r, &a, src);
		break;
	case BPF_AND:
	case BPF_OR:
	case BPF_XOR:
		bitwise_bounds(&r, &a, src, op);
		break;
	case BPF_LSH:
	case BPF_RSH:
	case BPF_ARSH:
		shift(&r, &a, src, op);
		break;
	default:
		return false;
	}
	*dst = r;
	return sc_sync(dst);
}

/* The count of a 32-bit shift, masked to 31. */
static void shift_count32(struct scalar *b)
{
	sc_trunc(b, 32);
	if (sc_is_const(b))
		sc_const(b, b->t.value & 31);
	else if (b->umax >= 32)
		sc_unknown_bits(b, 5);
}

/*
 * Computed on 64 bits over the low halves, zero-extended, or sign-extended
 * for the signed operations, then truncated: the low 32 bits agree.
 */
bool sc_alu32(struct scalar *dst, const struct scalar *src, uint8_t op,
	      bool sdiv)
{
	struct scalar b = *src;
	bool sign = op == BPF_ARSH || ((op == BPF_DIV || op == BPF_MOD) && sdiv);

	if (sign)
		sc_sext(dst, 32);
	else
		sc_trunc(dst, 32);
	if (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH)
		shift_count32(&b);
	else if (sign)
		sc_sext(&b, 32);
	else
		sc_trunc(&b, 32);
	if (!sc_alu64(dst, &b, op, sdiv))
		return false;
	sc_trunc(dst, 32);
	return true;
}

void sc_bswap(struct scalar *s, unsigned int bits)
{
	struct tnum t = tnum_bswap(tnum_trunc(s->t, bits), bits);

	sc_unknown(s);
	s->t = t;
	sc_sync(s);
}

enum cmp_op cmp_negate(enum cmp_op op)
{
	static const enum cmp_op neg[] = {
		[CMP_EQ] = CMP_NE, [CMP_NE] = CMP_EQ,
		[CMP_GT] = CMP_LE, [CMP_GE] = CMP_LT,
		[CMP_LT] = CMP_GE, [CMP_LE] = CMP_GT,
		[CMP_SGT] = CMP_SLE, [CMP_SGE] = CMP_SLT,
		[CMP_SLT] = CMP_SGE, [CMP_SLE] = CMP_SGT,
		[CMP_SET] = CMP_NSET, [CMP_NSET] = CMP_SET,
	};

	return neg[op];
}

static bool refine_eq(struct scalar *a, struct scalar *b)
{
	TIGHTEN_MIN(a->umin, b->umin);
	TIGHTEN_MAX(a->umax, b->umax);
	TIGHTEN_MIN(a->smin, b->smin);
	TIGHTEN_MAX(a->smax, b->smax);
	TIGHTEN_MIN(a->u32min, b->u32min);
	TIGHTEN_MAX(a->u32max, b->u32max);
	TIGHTEN_MIN(a->s32min, b->s32min);
	TIGHTEN_MAX(a->s32max, b->s32max);
	if (!tnum_intersect(a->t, b->t, &a->t))
		return false;
	*b = *a;
	return true;
}

/* a != c for a constant c only bites at the edges of a's ranges. */
static bool refine_ne_const(struct scalar *a, uint64_t c)
{
	if (sc_is_const(a))
		return a->t.value != c;
	if (a->umin == c)
		a->umin++;
	if (a->umax == c)
		a->umax--;
	if (a->smin == (int64_t)c)
		a->smin++;
	if (a->smax == (int64_t)c)
		a->smax--;
	return true;
}

/* a > b (strict) or a >= b, unsigned. */
static bool refine_ugt(struct scalar *a, struct scalar *b, bool strict)
{
	uint64_t d = strict;

	if (strict && (b->umin == UINT64_MAX || a->umax == 0))
		return false;
	TIGHTEN_MIN(a->umin, b->umin + d);
	TIGHTEN_MAX(b->umax, a->umax - d);
	return true;
}

static bool refine_sgt(struct scalar *a, struct scalar *b, bool strict)
{
	int64_t d = strict;

	if (strict && (b->smin == INT64_MAX || a->smax == INT64_MIN))
		return false;
	TIGHTEN_MIN(a->smin, b->smin + d);
	TIGHTEN_MAX(b->smax, a->smax - d);
	return true;
}

static bool refine_set(struct scalar *a, struct scalar *b, bool set)
{
	uint64_t maybe_a = a->t.value | a->t.mask;
	uint64_t maybe_b = b->t.value | b->t.mask;

	if (set) {
		if (!(maybe_a & maybe_b))
			return false;
		/* a single possible bit must then be set */
		if (sc_is_const(b) && __builtin_popcountll(b->t.value) == 1)
			return tnum_intersect(a->t, (struct tnum){ b->t.value,
						~b->t.value }, &a->t);
		return true;
	}
	if (a->t.value & b->t.value)
		return false;
	if (sc_is_const(b))
		return tnum_intersect(a->t, (struct tnum){ 0, ~b->t.value },
				      &a->t);
	return true;
}

static bool refine64(struct scalar *a, struct scalar *b, enum cmp_op op)
{
	bool ok;

	switch (op) {
	case CMP_EQ:
		ok = refine_eq(a, b);
		break;
	case CMP_NE:
		ok = true;
		if (sc_is_const(b))
			ok = refine_ne_const(a, b->t.value);
		if (ok && sc_is_const(a))
			ok = refine_ne_const(b, a->t.value);
		break;
	case CMP_GT:
	case CMP_GE:
		ok = refine_ugt(a, b, op == CMP_GT);
		break;
	case CMP_LT:
	case CMP_LE:
		ok = refine_ugt(b, a, op == CMP_LT);
		break;
	case CMP_SGT:
	case CMP_SGE:
		ok = refine_sgt(a, b, op == CMP_SGT);
		break;
	case CMP_SLT:
	case CMP_SLE:
		ok = refine_sgt(b, a, op == CMP_SLT);
		break;
	default:
		ok = refine_set(a, b, op == CMP_SET);
		break;
	}
	return ok && sc_sync(a) && sc_sync(b);
}

static bool is_signed_cmp(enum cmp_op op)
{
	return op >= CMP_SGT && op <= CMP_SLE;
}

/* Put what a 32-bit view learnt back into the low half of @s. */
static bool merge_low(struct scalar *s, const struct scalar *view, bool sign)
{
	struct tnum low = tnum_low32(view->t);

	if (sign) {
		TIGHTEN_MIN(s->s32min, (int32_t)view->smin);
		TIGHTEN_MAX(s->s32max, (int32_t)view->smax);
	} else {
		TIGHTEN_MIN(s->u32min, (uint32_t)view->umin);
		TIGHTEN_MAX(s->u32max, (uint32_t)view->umax);
	}
	low.mask |= ~U32_LOW;
	return tnum_intersect(s->t, low, &s->t) && sc_sync(s);
}

bool sc_refine(struct scalar *a, struct scalar *b, enum cmp_op op,
	       bool jmp32)
{
	struct scalar va = *a, vb = *b;
	bool sign = is_signed_cmp(op);

	if (!jmp32)
		return refine64(a, b, op);
	if (sign) {
		sc_sext(&va, 32);
		sc_sext(&vb, 32);
	} else {
		sc_trunc(&va, 32);
		sc_trunc(&vb, 32);
	}
	return refine64(&va, &vb, op) && merge_low(a, &va, sign) &&
	       merge_low(b, &vb, sign);
}

bool sc_contains(const struct scalar *old, const struct scalar *cur)
{
	return old->umin <= cur->umin && cur->umax <= old->umax &&
	       old->smin <= cur->smin && cur->smax <= old->smax &&
	       old->u32min <= cur->u32min && cur->u32max <= old->u32max &&
	       old->s32min <= cur->s32min && cur->s32max <= old->s32max &&
	       tnum_contains(old->t, cur->t);
}

bool sc_equal(const struct scalar *a, const struct scalar *b)
{
	return !memcmp(a, b, sizeof(*a));
}

bool sc_in(const struct scalar *s, uint64_t v)
{
	return tnum_in(s->t, v) && s->umin <= v && v <= s->umax &&
	       s->smin <= (int64_t)v && (int64_t)v <= s->smax &&
	       s->u32min <= (uint32_t)v && (uint32_t)v <= s->u32max &&
	       s->s32min <= (int32_t)v && (int32_t)v <= s->s32max;
}

void sc_print(struct strbuf *sb, const struct scalar *s)
{
	const char *sep = "";

	if (sc_is_const(s)) {
		if ((int64_t)s->t.value >= -4096 && (int64_t)s->t.value < 4096)
			sb_printf(sb, "%" PRId64, (int64_t)s->t.value);
		else
			sb_printf(sb, "%#" PRIx64, s->t.value);
		return;
	}
	if (sc_equal(s, &(struct scalar){ .t = tnum_unknown(), .umax = UINT64_MAX,
		      .smin = INT64_MIN, .smax = INT64_MAX,
		      .u32max = UINT32_MAX, .s32min = INT32_MIN,
		      .s32max = INT32_MAX })) {
		sb_adds(sb, "scalar");
		return;
	}
	sb_adds(sb, "scalar(");
#define FIELD(cond, fmt, v) do {                                              \
		if (cond) {                                                   \
			sb_printf(sb, "%s" fmt, sep, v);                      \
			sep = ",";                                            \
		}                                                             \
	} while (0)
	FIELD(s->smin != INT64_MIN, "smin=%" PRId64, s->smin);
	FIELD(s->smax != INT64_MAX, "smax=%" PRId64, s->smax);
	FIELD(s->umin != 0, "umin=%" PRIu64, s->umin);
	FIELD(s->umax != UINT64_MAX, "umax=%" PRIu64, s->umax);
	FIELD(s->s32min != INT32_MIN, "smin32=%" PRId32, s->s32min);
	FIELD(s->s32max != INT32_MAX, "smax32=%" PRId32, s->s32max);
	FIELD(s->u32min != 0, "umin32=%" PRIu32, s->u32min);
	FIELD(s->u32max != UINT32_MAX, "umax32=%" PRIu32, s->u32max);
	if (s->t.mask != UINT64_MAX) {
		sb_printf(sb, "%svar_off=(%#" PRIx64 "; %#" PRIx64 ")", sep,
			  s->t.value, s->t.mask);
	}
#undef FIELD
	sb_adds(sb, ")");
}

/*
 * Widening, for loop heads: each bound of @s that moved past @old's goes
 * to its limit, the others keep @old's; unknown bits are those unknown or
 * different in either. The result holds every value of both, and a chain
 * of widenings stops growing within a few steps.
 */
void sc_widen(struct scalar *s, const struct scalar *old)
{
	uint64_t mask = s->t.mask | old->t.mask | (s->t.value ^ old->t.value);

	s->t = (struct tnum){ old->t.value & ~mask, mask };
	s->umin = s->umin < old->umin ? 0 : old->umin;
	s->umax = s->umax > old->umax ? UINT64_MAX : old->umax;
	s->smin = s->smin < old->smin ? INT64_MIN : old->smin;
	s->smax = s->smax > old->smax ? INT64_MAX : old->smax;
	s->u32min = s->u32min < old->u32min ? 0 : old->u32min;
	s->u32max = s->u32max > old->u32max ? UINT32_MAX : old->u32max;
	s->s32min = s->s32min < old->s32min ? INT32_MIN : old->s32min;
	s->s32max = s->s32max > old->s32max ? INT32_MAX : old->s32max;
	sc_sync(s);
}
