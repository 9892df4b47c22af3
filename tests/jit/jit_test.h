/* SPDX-License-Identifier: MIT */
/* Shared by the JIT tests: a tiny assembler, vectors, running, ptxas. */
#ifndef EGPU_JIT_TEST_H
#define EGPU_JIT_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bpf.h"
#include "jit/jit.h"

/* Brace initializers; I(...) makes one an expression. */
#define INSN(c, d, s, o, i)                                                    \
	{ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define I(...) ((struct bpf_insn)__VA_ARGS__)
#define ALU64_IMM(op, d, i) INSN(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define ALU64_REG(op, d, s) INSN(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define ALU32_IMM(op, d, i) INSN(BPF_ALU | (op) | BPF_K, d, 0, 0, i)
#define ALU32_REG(op, d, s) INSN(BPF_ALU | (op) | BPF_X, d, s, 0, 0)
#define MOV64(d, i) ALU64_IMM(BPF_MOV, d, i)
#define MOV64_REG(d, s) ALU64_REG(BPF_MOV, d, s)
#define LDDW_SRC(d, src, lo, hi)                                               \
	INSN(BPF_LD | BPF_IMM | BPF_DW, d, src, 0, lo), INSN(0, 0, 0, 0, hi)
#define LDDW(d, v)                                                             \
	LDDW_SRC(d, 0, (int32_t)(uint32_t)(uint64_t)(v),                       \
		 (int32_t)((uint64_t)(v) >> 32))
#define LDX(size, d, s, o) INSN(BPF_LDX | BPF_MEM | (size), d, s, o, 0)
#define LDSX(size, d, s, o) INSN(BPF_LDX | BPF_MEMSX | (size), d, s, o, 0)
#define STX(size, d, s, o) INSN(BPF_STX | BPF_MEM | (size), d, s, o, 0)
#define ST(size, d, o, i) INSN(BPF_ST | BPF_MEM | (size), d, 0, o, i)
#define ATOMIC(size, d, s, o, op) INSN(BPF_STX | BPF_ATOMIC | (size), d, s, o, op)
#define JMP_IMM(op, d, i, o) INSN(BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define JMP_REG(op, d, s, o) INSN(BPF_JMP | (op) | BPF_X, d, s, o, 0)
#define JMP32_IMM(op, d, i, o) INSN(BPF_JMP32 | (op) | BPF_K, d, 0, o, i)
#define JA(o) INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define CALL(id) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define CALL_LOCAL(rel) INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, rel)
#define EXIT INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* A hand-written program, its memory (hex, may be empty) and its r0. */
struct edge_case {
	int line;
	const struct bpf_insn *insns;
	size_t insn_cnt;
	const char *mem;
	uint64_t expected;
};

#define EDGE_MEM(want, hex, ...)                                               \
	{ __LINE__, (const struct bpf_insn[]){ __VA_ARGS__ },                  \
	  sizeof((const struct bpf_insn[]){ __VA_ARGS__ }) /                   \
		  sizeof(struct bpf_insn),                                     \
	  hex, (uint64_t)(want) }
#define EDGE(want, ...) EDGE_MEM(want, "", __VA_ARGS__)

/* The table in edge_cases.c: every opcode class and RFC 9669 corner. */
extern const struct edge_case edge_cases[];
extern const size_t edge_case_cnt;

/* One row of shared/conformance/vectors.tsv. */
struct vector {
	char name[96];
	struct bpf_insn *insns;
	size_t insn_cnt;
	uint8_t *mem;
	size_t mem_len;
	uint64_t expected;
};

/*
 * The rows with an expected result (the others are programs the loader
 * must refuse); the array lives until the process exits.
 */
size_t vectors_with_result(struct vector **out);

/* A jit_input named @name for @n instructions with the given helper set. */
struct jit_input test_input(const char *name, const struct bpf_insn *insns,
			    size_t n, int helpers);

/*
 * JIT @in for the host and run it once on a private copy of @mem.
 * Returns r0; fails the current test if translation fails. The copy is
 * written back to @mem so tests can look at stores.
 */
uint64_t run_host(const struct jit_input *in, void *mem, size_t len);


#endif
