/* SPDX-License-Identifier: MIT */
/*
 * Hand-written programs for the RFC 9669 corners: each runs on the host
 * (test_jit_host) and goes through ptxas (test_jit_ptxas). Registers r1 =
 * memory (the hex string) and r2 = its length on entry.
 */
#include "jit_test.h"

#define SDIV64_REG(d, s) INSN(BPF_ALU64 | BPF_DIV | BPF_X, d, s, 1, 0)
#define SMOD64_REG(d, s) INSN(BPF_ALU64 | BPF_MOD | BPF_X, d, s, 1, 0)
#define SDIV32_REG(d, s) INSN(BPF_ALU | BPF_DIV | BPF_X, d, s, 1, 0)
#define SMOD32_REG(d, s) INSN(BPF_ALU | BPF_MOD | BPF_X, d, s, 1, 0)
#define SDIV64_IMM(d, i) INSN(BPF_ALU64 | BPF_DIV | BPF_K, d, 0, 1, i)
#define SMOD32_IMM(d, i) INSN(BPF_ALU | BPF_MOD | BPF_K, d, 0, 1, i)
#define MOVSX64(d, s, w) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, w, 0)
#define MOVSX32(d, s, w) INSN(BPF_ALU | BPF_MOV | BPF_X, d, s, w, 0)
#define TO_LE(d, w) INSN(BPF_ALU | BPF_END | BPF_TO_LE, d, 0, 0, w)
#define TO_BE(d, w) INSN(BPF_ALU | BPF_END | BPF_TO_BE, d, 0, 0, w)
#define BSWAP(d, w) INSN(BPF_ALU64 | BPF_END, d, 0, 0, w)
#define GOTOL(i) INSN(BPF_JMP32 | BPF_JA, 0, 0, 0, i)

#define INT64_MIN_U 0x8000000000000000ULL
#define PATTERN 0x0123456789abcdefULL

const struct edge_case edge_cases[] = {
	/* Division and modulo by zero, both widths, register and imm. */
	EDGE(0, MOV64(0, 7), MOV64(1, 0), ALU64_REG(BPF_DIV, 0, 1), EXIT),
	EDGE(0, MOV64(0, 7), ALU64_IMM(BPF_DIV, 0, 0), EXIT),
	EDGE(0, LDDW(0, 0xffffffff00000007), MOV64(1, 0),
	     ALU32_REG(BPF_DIV, 0, 1), EXIT),
	EDGE(0x1234567890, LDDW(0, 0x1234567890), MOV64(1, 0),
	     ALU64_REG(BPF_MOD, 0, 1), EXIT),
	EDGE(0x1234567890, LDDW(0, 0x1234567890), ALU64_IMM(BPF_MOD, 0, 0),
	     EXIT),
	/* 32-bit modulo by zero keeps the dividend, zero-extended. */
	EDGE(5, LDDW(0, 0xffffffff00000005), MOV64(1, 0),
	     ALU32_REG(BPF_MOD, 0, 1), EXIT),
	EDGE(5, LDDW(0, 0xffffffff00000005), ALU32_IMM(BPF_MOD, 0, 0), EXIT),
	EDGE(0, MOV64(0, -7), MOV64(1, 0), SDIV64_REG(0, 1), EXIT),
	EDGE(-7, MOV64(0, -7), MOV64(1, 0), SMOD64_REG(0, 1), EXIT),
	EDGE(0xfffffff9, MOV64(0, -7), MOV64(1, 0), SMOD32_REG(0, 1), EXIT),
	/* Unsigned division uses all 64 (or the low 32) bits. */
	EDGE(0x7fffffffffffffff, MOV64(0, -1), MOV64(1, 2),
	     ALU64_REG(BPF_DIV, 0, 1), EXIT),
	EDGE(5, MOV64(0, 10), LDDW(1, 0x100000002), ALU32_REG(BPF_DIV, 0, 1),
	     EXIT),
	EDGE(0x7fffffff, MOV64(0, -1), ALU32_IMM(BPF_DIV, 0, 2), EXIT),
	/* INT_MIN / -1 wraps, INT_MIN % -1 is 0. */
	EDGE(INT64_MIN_U, LDDW(0, INT64_MIN_U), MOV64(1, -1),
	     SDIV64_REG(0, 1), EXIT),
	EDGE(INT64_MIN_U, LDDW(0, INT64_MIN_U), SDIV64_IMM(0, -1), EXIT),
	EDGE(0, LDDW(0, INT64_MIN_U), MOV64(1, -1), SMOD64_REG(0, 1), EXIT),
	EDGE(0x80000000, LDDW(0, 0xffffffff80000000), MOV64(1, -1),
	     SDIV32_REG(0, 1), EXIT),
	EDGE(0, LDDW(0, 0xffffffff80000000), MOV64(1, -1), SMOD32_REG(0, 1),
	     EXIT),
	EDGE(0, LDDW(0, 0x80000000), SMOD32_IMM(0, -1), EXIT),
	/* Signed results truncate toward zero; the remainder takes the
	 * dividend's sign. */
	EDGE(-3, MOV64(0, -7), MOV64(1, 2), SDIV64_REG(0, 1), EXIT),
	EDGE(-1, MOV64(0, -7), MOV64(1, 2), SMOD64_REG(0, 1), EXIT),
	EDGE(1, MOV64(0, 7), MOV64(1, -2), SMOD64_REG(0, 1), EXIT),
	EDGE(0xfffffffd, MOV64(0, -7), MOV64(1, 2), SDIV32_REG(0, 1), EXIT),
	EDGE(-1, MOV64(0, -1), MOV64(1, 2), ALU64_REG(BPF_MUL, 0, 1),
	     ALU64_IMM(BPF_ADD, 0, 1), EXIT),
	/* Shift counts are masked to the operand width. */
	EDGE(2, MOV64(0, 1), MOV64(1, 65), ALU64_REG(BPF_LSH, 0, 1), EXIT),
	EDGE(2, LDDW(0, 0xffffffff00000001), MOV64(1, 33),
	     ALU32_REG(BPF_LSH, 0, 1), EXIT),
	EDGE(0x08000000, MOV64(0, INT32_MIN), MOV64(1, 36),
	     ALU32_REG(BPF_RSH, 0, 1), EXIT),
	EDGE(0xf8000000, LDDW(0, 0x80000000), MOV64(1, 4),
	     ALU32_REG(BPF_ARSH, 0, 1), EXIT),
	EDGE(0xf800000000000000, LDDW(0, INT64_MIN_U), MOV64(1, 68),
	     ALU64_REG(BPF_ARSH, 0, 1), EXIT),
	EDGE(0x0800000000000000, LDDW(0, INT64_MIN_U), ALU64_IMM(BPF_RSH, 0, 4),
	     EXIT),
	EDGE(1, LDDW(0, INT64_MIN_U), ALU64_IMM(BPF_RSH, 0, 63), EXIT),
	/* 32-bit operations zero-extend; 64-bit immediates sign-extend. */
	EDGE(0, LDDW(0, 0xffffffff), ALU32_IMM(BPF_ADD, 0, 1), EXIT),
	EDGE(6, LDDW(0, 0x100000005), ALU32_IMM(BPF_ADD, 0, 1), EXIT),
	EDGE(0, MOV64(0, 0x10000), ALU32_REG(BPF_MUL, 0, 0), EXIT),
	EDGE(0xffffffff, ALU32_IMM(BPF_MOV, 0, -1), EXIT),
	EDGE(-1, MOV64(0, -1), EXIT),
	EDGE(0xffffffff, MOV64(0, -1), ALU32_REG(BPF_MOV, 0, 0), EXIT),
	EDGE(0xffffffff, MOV64(0, 1), ALU32_IMM(BPF_SUB, 0, 2), EXIT),
	EDGE(0xffffffff00000000, MOV64(0, -1), ALU64_IMM(BPF_XOR, 0, -1),
	     ALU64_IMM(BPF_XOR, 0, -1), ALU64_IMM(BPF_XOR, 0, -1),
	     ALU64_IMM(BPF_AND, 0, 0), ALU64_IMM(BPF_OR, 0, -1),
	     ALU64_IMM(BPF_LSH, 0, 32), EXIT),
	EDGE(-5, MOV64(0, 5), ALU64_IMM(BPF_NEG, 0, 0), EXIT),
	EDGE(0xfffffffb, MOV64(0, 5), ALU32_IMM(BPF_NEG, 0, 0), EXIT),
	/* movsx, both classes. */
	EDGE(0xffffffffffffff80, MOV64(1, 0x180), MOVSX64(0, 1, 8), EXIT),
	EDGE(0xffffffffffff8000, MOV64(1, 0x18000), MOVSX64(0, 1, 16), EXIT),
	EDGE(0xffffffff80000000, LDDW(1, 0x180000000), MOVSX64(0, 1, 32), EXIT),
	EDGE(0x7f, MOV64(1, 0x17f), MOVSX64(0, 1, 8), EXIT),
	EDGE(0xffffff80, MOV64(1, 0x180), MOVSX32(0, 1, 8), EXIT),
	EDGE(0xffff8000, LDDW(1, 0xf00ff8000), MOVSX32(0, 1, 16), EXIT),
	/* Byte order: le truncates, be and bswap swap. */
	EDGE(0xcdef, LDDW(0, PATTERN), TO_LE(0, 16), EXIT),
	EDGE(0x89abcdef, LDDW(0, PATTERN), TO_LE(0, 32), EXIT),
	EDGE(PATTERN, LDDW(0, PATTERN), TO_LE(0, 64), EXIT),
	EDGE(0xefcd, LDDW(0, PATTERN), TO_BE(0, 16), EXIT),
	EDGE(0xefcdab89, LDDW(0, PATTERN), TO_BE(0, 32), EXIT),
	EDGE(0xefcdab8967452301, LDDW(0, PATTERN), TO_BE(0, 64), EXIT),
	EDGE(0xefcd, LDDW(0, PATTERN), BSWAP(0, 16), EXIT),
	EDGE(0xefcdab89, LDDW(0, PATTERN), BSWAP(0, 32), EXIT),
	EDGE(0xefcdab8967452301, LDDW(0, PATTERN), BSWAP(0, 64), EXIT),
	/* JMP32 looks at the low half only; JMP at all 64 bits. */
	EDGE(1, LDDW(1, 0x100000000), MOV64(0, 1), JMP32_IMM(BPF_JEQ, 1, 0, 1),
	     MOV64(0, 2), EXIT),
	EDGE(2, LDDW(1, 0x100000000), MOV64(0, 1), JMP_IMM(BPF_JEQ, 1, 0, 1),
	     MOV64(0, 2), EXIT),
	EDGE(1, MOV64(1, 0xff), MOV64(0, 1), JMP32_IMM(BPF_JSLT, 1, 0, 1),
	     EXIT, MOV64(0, 2), EXIT),
	EDGE(2, LDDW(1, 0xffffffff), MOV64(0, 1), JMP32_IMM(BPF_JSLT, 1, 0, 1),
	     EXIT, MOV64(0, 2), EXIT),
	EDGE(2, MOV64(1, 6), MOV64(0, 1), JMP_IMM(BPF_JSET, 1, 2, 1), EXIT,
	     MOV64(0, 2), EXIT),
	EDGE(1, MOV64(1, 6), MOV64(0, 1), JMP_IMM(BPF_JSET, 1, 9, 1), EXIT,
	     MOV64(0, 2), EXIT),
	EDGE(1, MOV64(1, -1), MOV64(0, 1), JMP_IMM(BPF_JSGT, 1, 0, 1), EXIT,
	     MOV64(0, 2), EXIT),
	EDGE(2, MOV64(1, -1), MOV64(0, 1), JMP_IMM(BPF_JGT, 1, 0, 1), EXIT,
	     MOV64(0, 2), EXIT),
	EDGE(2, MOV64(1, -1), MOV64(0, 1), JMP_IMM(BPF_JEQ, 1, -1, 1), EXIT,
	     MOV64(0, 2), EXIT),
	EDGE(2, MOV64(1, 3), MOV64(2, 3), MOV64(0, 1),
	     JMP_REG(BPF_JLE, 1, 2, 1), EXIT, MOV64(0, 2), EXIT),
	EDGE(3, MOV64(0, 3), GOTOL(1), MOV64(0, 4), EXIT),
	/* A backward loop: 1 + 2 + ... + 10. */
	EDGE(55, MOV64(0, 0), MOV64(1, 10), ALU64_REG(BPF_ADD, 0, 1),
	     ALU64_IMM(BPF_SUB, 1, 1), JMP_IMM(BPF_JNE, 1, 0, -3), EXIT),
	/* Loads: zero- and sign-extending, unaligned, from memory. */
	EDGE_MEM(0xff, "ffffffffffffffff", LDX(BPF_B, 0, 1, 0), EXIT),
	EDGE_MEM(-1, "ffffffffffffffff", LDSX(BPF_B, 0, 1, 0), EXIT),
	EDGE_MEM(-1, "ffffffffffffffff", LDSX(BPF_H, 0, 1, 2), EXIT),
	EDGE_MEM(-1, "ffffffffffffffff", LDSX(BPF_W, 0, 1, 4), EXIT),
	EDGE_MEM(0x7f, "7f00000000000000", LDSX(BPF_B, 0, 1, 0), EXIT),
	EDGE_MEM(0xffffffff, "ffffffffffffffff", LDX(BPF_W, 0, 1, 4), EXIT),
	EDGE_MEM(0x0807060504030201, "00010203040506070809", LDX(BPF_DW, 0, 1, 1),
	     EXIT),
	EDGE_MEM(0x04030201, "00010203040506070809", LDX(BPF_W, 0, 1, 1), EXIT),
	EDGE_MEM(0x0201, "00010203040506070809", LDX(BPF_H, 0, 1, 1), EXIT),
	/* Stores: imm and register, truncated, unaligned, read back. */
	EDGE_MEM(0xff, "0000000000000000", ST(BPF_B, 1, 0, 0x1ff),
	     LDX(BPF_DW, 0, 1, 0), EXIT),
	EDGE_MEM(0xffffffffffffff00, "0000000000000000000000",
	     ST(BPF_DW, 1, 1, -1), LDX(BPF_DW, 0, 1, 0), EXIT),
	EDGE_MEM(0x0000beef00, "0000000000000000", MOV64(2, 0x1beef),
	     STX(BPF_H, 1, 2, 1), LDX(BPF_DW, 0, 1, 0), EXIT),
	EDGE_MEM(10, "0000000000000000", STX(BPF_W, 1, 2, 0), LDX(BPF_DW, 0, 1, 0),
	     ALU64_IMM(BPF_ADD, 0, 2), EXIT),
	/* Atomics on memory (global memory on the GPU). */
	EDGE_MEM(0x25, "1000000000000000", MOV64(2, 5),
	     ATOMIC(BPF_DW, 1, 2, 0, BPF_ADD | BPF_FETCH), LDX(BPF_DW, 0, 1, 0),
	     ALU64_REG(BPF_ADD, 0, 2), EXIT),
	EDGE_MEM(0x0700000010, "1000000000000000", MOV64(2, 7), MOV64(0, 0x10),
	     ATOMIC(BPF_W, 1, 2, 0, BPF_CMPXCHG), LDX(BPF_W, 1, 1, 0),
	     ALU64_IMM(BPF_LSH, 1, 32), ALU64_REG(BPF_OR, 0, 1), EXIT),
	EDGE_MEM(0xff0f, "0f00000000000000", MOV64(2, 0xff00),
	     ATOMIC(BPF_W, 1, 2, 0, BPF_OR), LDX(BPF_DW, 0, 1, 0), EXIT),
	EDGE_MEM(0x0f, "0f00000000000000", MOV64(2, 0xff00),
	     ATOMIC(BPF_DW, 1, 2, 0, BPF_XCHG), MOV64_REG(0, 2), EXIT),
	/* The stack: r10 is its top, 512 bytes below are ours. */
	EDGE(0x1122334455667788, LDDW(1, 0x1122334455667788),
	     STX(BPF_DW, 10, 1, -8), LDX(BPF_DW, 0, 10, -8), EXIT),
	EDGE(0x55667788, LDDW(1, 0x1122334455667788), STX(BPF_DW, 10, 1, -512),
	     LDX(BPF_W, 0, 10, -512), EXIT),
	EDGE(0x4455, LDDW(1, 0x1122334455667788), STX(BPF_DW, 10, 1, -8),
	     LDX(BPF_H, 0, 10, -5), EXIT),
	EDGE(0x7788, LDDW(1, 0x1122334455667788), MOV64_REG(2, 10),
	     STX(BPF_DW, 2, 1, -16), LDX(BPF_H, 0, 10, -16), EXIT),
	/* Atomics on the stack, with and without fetch. */
	EDGE(0x10 + 0x5, MOV64(1, 0x10), STX(BPF_DW, 10, 1, -8), MOV64(2, 5),
	     ATOMIC(BPF_DW, 10, 2, -8, BPF_ADD), LDX(BPF_DW, 0, 10, -8), EXIT),
	EDGE(0x10, MOV64(1, 0x10), STX(BPF_DW, 10, 1, -8), MOV64(2, 5),
	     ATOMIC(BPF_W, 10, 2, -8, BPF_ADD | BPF_FETCH), MOV64_REG(0, 2), EXIT),
	/* The same through a stack pointer the lifter lost track of (the
	 * jump starts a new block): the GPU tests the address at run time. */
	EDGE(0x15, MOV64(1, 0x10), STX(BPF_DW, 10, 1, -8), MOV64_REG(2, 10),
	     ALU64_IMM(BPF_ADD, 2, -8), JA(0), MOV64(3, 5),
	     ATOMIC(BPF_DW, 2, 3, 0, BPF_ADD), LDX(BPF_DW, 0, 10, -8), EXIT),
	EDGE(0x10000007, MOV64(1, 0x10), STX(BPF_DW, 10, 1, -8), MOV64_REG(2, 10),
	     ALU64_IMM(BPF_ADD, 2, -8), JA(0), MOV64(3, 7), MOV64(0, 0x10),
	     ATOMIC(BPF_W, 2, 3, 0, BPF_CMPXCHG), LDX(BPF_DW, 1, 10, -8),
	     ALU64_IMM(BPF_LSH, 0, 24), ALU64_REG(BPF_OR, 0, 1), EXIT),
	/* Local calls: own frame, own r6-r9, arguments in r1-r5. */
	EDGE(0x2211, MOV64(6, 0x11), STX(BPF_DW, 10, 6, -8), MOV64(1, 0x22),
	     CALL_LOCAL(4), ALU64_IMM(BPF_LSH, 0, 8), LDX(BPF_DW, 1, 10, -8),
	     ALU64_REG(BPF_OR, 0, 1), EXIT,
	     /* sub: writes its own r10-8 and r6 */
	     STX(BPF_DW, 10, 1, -8), MOV64(6, 0), LDX(BPF_DW, 0, 10, -8), EXIT),
	EDGE(15, MOV64(1, 1), MOV64(2, 2), MOV64(3, 3), MOV64(4, 4), MOV64(5, 5),
	     CALL_LOCAL(1), EXIT,
	     MOV64_REG(0, 1), ALU64_REG(BPF_ADD, 0, 2), ALU64_REG(BPF_ADD, 0, 3),
	     ALU64_REG(BPF_ADD, 0, 4), ALU64_REG(BPF_ADD, 0, 5), EXIT),
	/* Recursion through a subprogram: 5! = 120. */
	EDGE(120, MOV64(1, 5), CALL_LOCAL(1), EXIT,
	     MOV64(0, 1), JMP_IMM(BPF_JLE, 1, 1, 5), MOV64_REG(6, 1),
	     ALU64_IMM(BPF_SUB, 1, 1), CALL_LOCAL(-5), ALU64_REG(BPF_MUL, 0, 6),
	     EXIT, EXIT),
};

const size_t edge_case_cnt = sizeof(edge_cases) / sizeof(edge_cases[0]);
