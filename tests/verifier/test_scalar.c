/* SPDX-License-Identifier: MIT */
/*
 * Soundness of the scalar domain: for random abstract values and concrete
 * values drawn from them, the concrete result of every ALU operation lies
 * in the abstract result, and refining on a branch keeps every pair of
 * values for which the branch is taken.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>

#include "ref_isa.h"
#include "verifier/scalar.h"
#include "test_util.h"

#define ROUNDS 4000
#define SAMPLES 12

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Values near the edges where range arithmetic goes wrong. */
static uint64_t interesting(void)
{
	static const uint64_t edges[] = {
		0, 1, 2, 3, 7, 8, 31, 32, 63, 64, 255, 256, 4096,
		0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL,
		0x7fffffffffffffffULL, 0x8000000000000000ULL,
		0xffffffffffffffffULL, 0xfffffffffffffffeULL,
		0xffffffff80000000ULL, 0xfffffffffffffff0ULL,
	};
	uint64_t r = next();

	switch (r % 4) {
	case 0:
		return edges[(r >> 8) % (sizeof(edges) / sizeof(edges[0]))];
	case 1:
		return (r >> 8) % 300;
	case 2:
		return edges[(r >> 8) % (sizeof(edges) / sizeof(edges[0]))] +
		       ((r >> 40) % 5) - 2;
	default:
		return next();
	}
}

static void random_scalar(struct scalar *s)
{
	uint64_t a = interesting(), b = interesting();
	uint64_t lo = a < b ? a : b, hi = a < b ? b : a;

	sc_unknown(s);
	switch (next() % 6) {
	case 0:
		sc_const(s, a);
		return;
	case 1:
		s->umin = lo;
		s->umax = hi;
		break;
	case 2:
		s->smin = (int64_t)a < (int64_t)b ? (int64_t)a : (int64_t)b;
		s->smax = (int64_t)a < (int64_t)b ? (int64_t)b : (int64_t)a;
		break;
	case 3:
		s->t.mask = next() & next();
		s->t.value = a & ~s->t.mask;
		break;
	case 4:
		s->u32min = (uint32_t)lo < (uint32_t)hi ? (uint32_t)lo : (uint32_t)hi;
		s->u32max = (uint32_t)lo < (uint32_t)hi ? (uint32_t)hi : (uint32_t)lo;
		s->umax = next() % 3 ? UINT32_MAX : UINT64_MAX;
		break;
	default:
		break;
	}
	ck_assert(sc_sync(s));
}

/* A concrete value the abstract one admits (the description is non-empty). */
static uint64_t sample(const struct scalar *s)
{
	const uint64_t edges[] = { s->umin, s->umax, (uint64_t)s->smin,
				   (uint64_t)s->smax };

	for (int tries = 0; tries < 200; tries++) {
		uint64_t v;

		uint64_t span32 = (uint64_t)s->u32max - s->u32min + 1;

		switch (next() % 4) {
		case 0:
			v = edges[next() % 4];
			break;
		case 3:
			v = ((s->t.value | (next() & s->t.mask)) & ~0xffffffffULL) |
			    (s->u32min + next() % span32);
			if (next() & 1)
				v = (s->umin & ~0xffffffffULL) | (v & 0xffffffff);
			break;
		case 1:
			v = s->umin + next() % (s->umax - s->umin + 1 ?
						s->umax - s->umin + 1 : 1);
			break;
		default:
			v = s->t.value | (next() & s->t.mask);
			break;
		}
		if (sc_in(s, v))
			return v;
	}
	/* Fall back to the known bits alone, forced into range. */
	ck_assert_msg(sc_in(s, s->t.value) || sc_in(s, s->umin),
		      "no sample found: umin %#" PRIx64 " umax %#" PRIx64
		      " smin %" PRId64 " smax %" PRId64 " u32 %#x..%#x s32 %d..%d"
		      " var (%#" PRIx64 ";%#" PRIx64 ")", s->umin, s->umax,
		      s->smin, s->smax, s->u32min, s->u32max, s->s32min,
		      s->s32max, s->t.value, s->t.mask);
	return sc_in(s, s->t.value) ? s->t.value : s->umin;
}

static const uint8_t binops[] = {
	BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_MOD, BPF_OR, BPF_AND,
	BPF_XOR, BPF_LSH, BPF_RSH, BPF_ARSH,
};

static void check_binop(uint8_t op, bool wide, bool sdiv)
{
	struct scalar a, b, r;

	random_scalar(&a);
	random_scalar(&b);
	r = a;
	ck_assert(wide ? sc_alu64(&r, &b, op, sdiv) :
		  sc_alu32(&r, &b, op, sdiv));
	for (int i = 0; i < SAMPLES; i++) {
		uint64_t x = sample(&a), y = sample(&b);
		uint64_t z = wide ? ref_alu64(op, x, y, sdiv) :
			     ref_alu32(op, x, y, sdiv);

		ck_assert_msg(sc_in(&r, z),
			      "op %#x%s%s: %#" PRIx64 " op %#" PRIx64 " = %#"
			      PRIx64 " not in umin %#" PRIx64 " umax %#"
			      PRIx64 " smin %" PRId64 " smax %" PRId64
			      " var (%#" PRIx64 ";%#" PRIx64 ")", op,
			      wide ? "" : " (32)", sdiv ? " signed" : "", x,
			      y, z, r.umin, r.umax, r.smin, r.smax,
			      r.t.value, r.t.mask);
	}
}

START_TEST(alu_results_contain_concrete_results)
{
	for (int round = 0; round < ROUNDS; round++) {
		for (size_t i = 0; i < sizeof(binops); i++) {
			bool sdiv = (binops[i] == BPF_DIV ||
				     binops[i] == BPF_MOD) && (next() & 1);

			check_binop(binops[i], true, sdiv);
			check_binop(binops[i], false, sdiv);
		}
	}
}
END_TEST

START_TEST(unary_results_contain_concrete_results)
{
	static const unsigned int widths[] = { 8, 16, 32 };

	for (int round = 0; round < ROUNDS; round++) {
		struct scalar a, t, s, w;
		unsigned int bits = widths[next() % 3];
		int swap = 16 << (next() % 3);

		random_scalar(&a);
		t = s = w = a;
		sc_trunc(&t, bits);
		sc_sext(&s, bits);
		sc_bswap(&w, (unsigned int)swap);
		for (int i = 0; i < SAMPLES; i++) {
			uint64_t x = sample(&a);
			uint64_t keep = (1ULL << bits) - 1;

			ck_assert(sc_in(&t, x & keep));
			ck_assert(sc_in(&s, ref_sext(x, bits)));
			ck_assert(sc_in(&w, ref_bswap(x, swap)));
		}
	}
}
END_TEST

static const uint8_t jops[] = {
	BPF_JEQ, BPF_JNE, BPF_JGT, BPF_JGE, BPF_JLT, BPF_JLE,
	BPF_JSGT, BPF_JSGE, BPF_JSLT, BPF_JSLE, BPF_JSET,
};

static const enum cmp_op cmps[] = {
	CMP_EQ, CMP_NE, CMP_GT, CMP_GE, CMP_LT, CMP_LE,
	CMP_SGT, CMP_SGE, CMP_SLT, CMP_SLE, CMP_SET,
};

START_TEST(branch_refinement_keeps_taken_values)
{
	for (int round = 0; round < ROUNDS * 4; round++) {
		size_t k = next() % sizeof(jops);
		bool j32 = next() & 1;
		struct scalar a, b, ta, tb, fa, fb;
		bool can_take, can_fall;

		random_scalar(&a);
		random_scalar(&b);
		if (next() % 4 == 0)
			b = a;
		ta = fa = a;
		tb = fb = b;
		can_take = sc_refine(&ta, &tb, cmps[k], j32);
		can_fall = sc_refine(&fa, &fb, cmp_negate(cmps[k]), j32);
		for (int i = 0; i < SAMPLES; i++) {
			uint64_t x = sample(&a), y = sample(&b);
			bool taken = ref_cond(jops[k], x, y, j32);

			if (taken)
				ck_assert_msg(can_take && sc_in(&ta, x) &&
					      sc_in(&tb, y),
					      "jmp %#x%s %#" PRIx64 " %#" PRIx64
					      " taken but refined away",
					      jops[k], j32 ? "32" : "", x, y);
			else
				ck_assert_msg(can_fall && sc_in(&fa, x) &&
					      sc_in(&fb, y),
					      "jmp %#x%s %#" PRIx64 " %#" PRIx64
					      " not taken but refined away",
					      jops[k], j32 ? "32" : "", x, y);
		}
	}
}
END_TEST

/* Refining by a constant narrows the range (loops need this). */
START_TEST(refinement_narrows)
{
	struct scalar a, c;

	sc_unknown(&a);
	sc_const(&c, 10);
	ck_assert(sc_refine(&a, &c, CMP_LT, false));
	ck_assert_uint_eq(a.umax, 9);
	sc_const(&a, 10);
	ck_assert(!sc_refine(&a, &c, CMP_LT, false));
	sc_unknown(&a);
	sc_const(&c, 10);
	ck_assert(sc_refine(&a, &c, CMP_LE, true));
	ck_assert_uint_eq(a.u32max, 10);
	sc_unknown_bits(&a, 32);
	sc_const(&c, 10);
	ck_assert(sc_refine(&a, &c, CMP_LE, true));
	ck_assert_uint_eq(a.umax, 10);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verifier_scalar");
	TCase *tc = tcase_create("scalar");

	tcase_add_test(tc, alu_results_contain_concrete_results);
	tcase_add_test(tc, unary_results_contain_concrete_results);
	tcase_add_test(tc, branch_refinement_keeps_taken_values);
	tcase_add_test(tc, refinement_narrows);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
