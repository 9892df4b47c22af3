/* SPDX-License-Identifier: MIT */
/*
 * Concrete eBPF semantics (RFC 9669) of ALU operations and jump
 * conditions, written independently of the verifier to check it against.
 */
#ifndef EGPU_TEST_REF_ISA_H
#define EGPU_TEST_REF_ISA_H

#include <stdbool.h>
#include <stdint.h>

#include "core/bpf.h"

static inline uint64_t ref_alu64(uint8_t op, uint64_t a, uint64_t b, bool sdiv)
{
	switch (op) {
	case BPF_ADD: return a + b;
	case BPF_SUB: return a - b;
	case BPF_MUL: return a * b;
	case BPF_DIV:
		if (!b)
			return 0;
		if (!sdiv)
			return a / b;
		if ((int64_t)a == INT64_MIN && (int64_t)b == -1)
			return a;
		return (uint64_t)((int64_t)a / (int64_t)b);
	case BPF_MOD:
		if (!b)
			return a;
		if (!sdiv)
			return a % b;
		if ((int64_t)b == -1)
			return 0;
		return (uint64_t)((int64_t)a % (int64_t)b);
	case BPF_OR: return a | b;
	case BPF_AND: return a & b;
	case BPF_XOR: return a ^ b;
	case BPF_LSH: return a << (b & 63);
	case BPF_RSH: return a >> (b & 63);
	case BPF_ARSH: return (uint64_t)((int64_t)a >> (b & 63));
	case BPF_MOV: return b;
	case BPF_NEG: return -a;
	default: return 0;
	}
}

static inline uint64_t ref_alu32(uint8_t op, uint64_t a64, uint64_t b64,
				 bool sdiv)
{
	uint32_t a = (uint32_t)a64, b = (uint32_t)b64;

	switch (op) {
	case BPF_DIV:
	case BPF_MOD:
		if (!sdiv)
			return op == BPF_DIV ? (b ? a / b : 0) : (b ? a % b : a);
		if (!b)
			return op == BPF_DIV ? 0 : a;
		if ((int32_t)a == INT32_MIN && (int32_t)b == -1)
			return op == BPF_DIV ? a : 0;
		return (uint32_t)(op == BPF_DIV ? (int32_t)a / (int32_t)b :
				  (int32_t)a % (int32_t)b);
	case BPF_LSH: return (uint32_t)(a << (b & 31));
	case BPF_RSH: return a >> (b & 31);
	case BPF_ARSH: return (uint32_t)((int32_t)a >> (b & 31));
	default: return (uint32_t)ref_alu64(op, a, b, false);
	}
}

static inline uint64_t ref_sext(uint64_t v, unsigned int bits)
{
	unsigned int s = 64 - bits;

	return (uint64_t)((int64_t)(v << s) >> s);
}

/* op is BPF_JEQ .. BPF_JSLE; @j32 compares the low halves. */
static inline bool ref_cond(uint8_t op, uint64_t a, uint64_t b, bool j32)
{
	int64_t sa = (int64_t)a, sb = (int64_t)b;

	if (j32) {
		a = (uint32_t)a;
		b = (uint32_t)b;
		sa = (int32_t)a;
		sb = (int32_t)b;
	}
	switch (op) {
	case BPF_JEQ: return a == b;
	case BPF_JNE: return a != b;
	case BPF_JGT: return a > b;
	case BPF_JGE: return a >= b;
	case BPF_JLT: return a < b;
	case BPF_JLE: return a <= b;
	case BPF_JSGT: return sa > sb;
	case BPF_JSGE: return sa >= sb;
	case BPF_JSLT: return sa < sb;
	case BPF_JSLE: return sa <= sb;
	case BPF_JSET: return (a & b) != 0;
	default: return false;
	}
}

static inline uint64_t ref_bswap(uint64_t v, int bits)
{
	switch (bits) {
	case 16: return __builtin_bswap16((uint16_t)v);
	case 32: return __builtin_bswap32((uint32_t)v);
	default: return __builtin_bswap64(v);
	}
}

#endif
