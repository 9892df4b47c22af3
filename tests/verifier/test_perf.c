/* SPDX-License-Identifier: MIT */
/*
 * Verification time of a 4096-instruction probe: 256 blocks that each look
 * up a map value, bound an index read from the ctx, and update the value
 * on one of two paths, with a bounded loop every 32 blocks. The budget is
 * 50 ms in optimised builds; other builds only print the time.
 */
#include <check.h>
#include <stdio.h>

#include "core/core.h"
#include "raw_cases.h"
#include "verifier/verifier.h"
#include "test_util.h"

#define BLOCKS 256
#define BUDGET_MS 50.0

static const struct bpf_insn prologue[] = {
	MOV64_REG(6, 1), MOV64_IMM(7, 0),
};

/* 16 instructions; falls through to the next block. */
#define BLOCK(k)                                                              \
	ST(BPF_W, 10, -4, (k) & 7), LD_MAP(1, M_ARR), MOV64_REG(2, 10),      \
	ALU64_IMM(BPF_ADD, 2, -4), CALL(1), JMP_IMM(BPF_JEQ, 0, 0, 9),       \
	LDX(BPF_DW, 3, 6, 0), ALU64_IMM(BPF_AND, 3, 12),                     \
	ALU64_REG(BPF_ADD, 0, 3), LDX(BPF_W, 4, 0, 0),                       \
	JMP_IMM(BPF_JGT, 4, 1000, 2), ALU64_IMM(BPF_ADD, 4, (k)), JA(1),      \
	MOV64_IMM(4, 0), STX(BPF_W, 0, 4, 0)

/* 16 instructions: sum 8 words of the stack. */
static const struct bpf_insn loop_block[] = {
	ST(BPF_DW, 10, -16, 1), ST(BPF_DW, 10, -24, 2), MOV64_IMM(8, 0),
	MOV64_IMM(9, 0), MOV64_REG(3, 9), ALU64_IMM(BPF_AND, 3, 8),
	MOV64_REG(4, 10), ALU64_IMM(BPF_ADD, 4, -24), ALU64_REG(BPF_ADD, 4, 3),
	LDX(BPF_DW, 5, 4, 0), ALU64_REG(BPF_ADD, 8, 5),
	ALU64_IMM(BPF_ADD, 9, 1), JMP_IMM(BPF_JLT, 9, 8, -9),
	ALU64_REG(BPF_ADD, 7, 8), MOV64_IMM(8, 0), MOV64_IMM(9, 0),
};

static struct bpf_insn prog[2 + 16 * BLOCKS + 2];

static size_t build(void)
{
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(prologue); i++)
		prog[n++] = prologue[i];
	for (int k = 0; k < BLOCKS; k++) {
		const struct bpf_insn block[] = { BLOCK(k) };
		const struct bpf_insn *src = k % 32 == 31 ? loop_block : block;

		ck_assert_uint_eq(ARRAY_SIZE(block), 16);
		ck_assert_uint_eq(ARRAY_SIZE(loop_block), 16);
		for (int i = 0; i < 16; i++)
			prog[n++] = src[i];
	}
	prog[n++] = (struct bpf_insn)MOV64_REG(0, 7);
	prog[n++] = (struct bpf_insn)EXIT();
	return n;
}

START_TEST(verify_4096_instructions)
{
	struct prog_spec spec = { .name = "perf", .insns = prog };
	struct verifier_opts o = { .attach = EGPU_ATTACH_ENTRY };
	struct verifier_stats st;
	struct strbuf line;
	double best = 1e9;

	spec.insn_cnt = build();
	ck_assert_uint_ge(spec.insn_cnt, 4096);
	for (int run = 0; run < 5; run++) {
		ck_assert_msg(verifier_run(&spec, raw_maps,
					   ARRAY_SIZE(raw_maps), &o, &st) == 0,
			      "%s", egpu_errmsg());
		best = st.ms < best ? st.ms : best;
	}
	sb_init(&line);
	verifier_report(&line, &spec, 0, &st);
	printf("%zu instructions: best of 5 %.3f ms; %s", spec.insn_cnt, best,
	       line.buf);
	sb_free(&line);
#if defined(__OPTIMIZE__)
	if (!TU_SANITIZED)
		ck_assert_msg(best <= BUDGET_MS, "%.3f ms > %.0f ms", best, BUDGET_MS);
#endif
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verifier_perf");
	TCase *tc = tcase_create("perf");

	tcase_add_test(tc, verify_4096_instructions);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
