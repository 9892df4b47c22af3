/* SPDX-License-Identifier: MIT */
/* Building instructions in C tables, one macro per instruction form. */
#ifndef EGPU_TEST_INSN_H
#define EGPU_TEST_INSN_H

#include "core/bpf.h"

/* A brace initializer, so tables of instructions stay constant. */
#define INSN(c, d, s, o, i)                                                   \
	{ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }

#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV32_IMM(d, i) INSN(BPF_ALU | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV32_REG(d, s) INSN(BPF_ALU | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOVSX64(d, s, bits) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, bits, 0)
#define ALU64_IMM(op, d, i) INSN(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define ALU64_REG(op, d, s) INSN(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define ALU32_IMM(op, d, i) INSN(BPF_ALU | (op) | BPF_K, d, 0, 0, i)
#define ALU32_REG(op, d, s) INSN(BPF_ALU | (op) | BPF_X, d, s, 0, 0)
#define SDIV64_REG(d, s) INSN(BPF_ALU64 | BPF_DIV | BPF_X, d, s, 1, 0)
#define NEG64(d) INSN(BPF_ALU64 | BPF_NEG, d, 0, 0, 0)
#define BSWAP(d, bits) INSN(BPF_ALU64 | BPF_END, d, 0, 0, bits)
#define ENDIAN(d, be, bits)                                                   \
	INSN(BPF_ALU | BPF_END | ((be) ? BPF_TO_BE : BPF_TO_LE), d, 0, 0, bits)

#define LDX(sz, d, s, o) INSN(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define LDXSX(sz, d, s, o) INSN(BPF_LDX | BPF_MEMSX | (sz), d, s, o, 0)
#define STX(sz, d, s, o) INSN(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, i) INSN(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define ATOMIC(sz, op, d, s, o) INSN(BPF_STX | BPF_ATOMIC | (sz), d, s, o, op)

#define LD_IMM64(d, v)                                                        \
	INSN(BPF_LD | BPF_DW | BPF_IMM, d, 0, 0, (int32_t)(uint32_t)(v)),     \
	INSN(0, 0, 0, 0, (int32_t)((uint64_t)(v) >> 32))
#define LD_MAP(d, idx)                                                        \
	INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_IDX, 0, idx),       \
	INSN(0, 0, 0, 0, 0)
#define LD_MAP_VALUE(d, idx, off)                                             \
	INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_IDX_VALUE, 0, idx), \
	INSN(0, 0, 0, 0, off)

#define JA(o) INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define JMP_IMM(op, d, i, o) INSN(BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define JMP_REG(op, d, s, o) INSN(BPF_JMP | (op) | BPF_X, d, s, o, 0)
#define JMP32_IMM(op, d, i, o) INSN(BPF_JMP32 | (op) | BPF_K, d, 0, o, i)
#define JMP32_REG(op, d, s, o) INSN(BPF_JMP32 | (op) | BPF_X, d, s, o, 0)
#define CALL(id) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define CALL_LOCAL(rel) INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, rel)
#define CALLX(r) INSN(BPF_JMP | BPF_CALL | BPF_X, r, 0, 0, 0)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

#endif
