/* SPDX-License-Identifier: MIT */
/*
 * Every program with an expected value (the conformance vectors and
 * edge_cases.c), and a call of every GPU helper, through jit_ptx() and
 * `ptxas -arch=sm_90` (with -c where the PTX calls extern device
 * functions). Skipped (exit 77) where ptxas is not installed.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/helpers.h"
#include "jit_test.h"
#include "test_util.h"

static struct vector *vectors;
static size_t vector_cnt;

static void assemble(const char *what, const struct jit_input *in)
{
	char *ptx = NULL, log[2048];
	int err = jit_ptx(in, "sm_90", true, &ptx, NULL);

	ck_assert_msg(!err, "%s: jit_ptx: %s", what, egpu_errmsg());
	ck_assert_msg(tu_ptxas(ptx, strlen(ptx), "sm_90", strstr(ptx, ".extern") != NULL, log,
			       sizeof(log)),
		      "%s: ptxas failed:\n%s\n%s", what, log, ptx);
	free(ptx);
}

START_TEST(conformance_row)
{
	const struct vector *v = &vectors[_i];
	struct jit_input in;

	in = test_input("conformance", v->insns, v->insn_cnt,
			EGPU_HELPERS_CONFORMANCE);
	assemble(v->name, &in);
}
END_TEST

START_TEST(edge_case)
{
	const struct edge_case *c = &edge_cases[_i];
	struct jit_input in = test_input("edge", c->insns, c->insn_cnt,
					 EGPU_HELPERS_GPU);
	char what[64];

	snprintf(what, sizeof(what), "edge_cases.c:%d", c->line);
	assemble(what, &in);
}
END_TEST

/* Each helper with r1-r5 pointing into the stack, r0 returned. */
START_TEST(every_helper)
{
	static const struct jit_map maps[] = {
		{ .addr = 0x1000, .value_addr = 0x8000, .type = EGPU_MAP_ARRAY,
		  .key_size = 4, .value_size = 8, .max_entries = 4 },
	};
	const struct helper_info *h = NULL;
	int found = 0;

	for (int32_t id = 0; id < 1024; id++) {
		const struct bpf_insn p[] = {
			ST(BPF_DW, 10, -32, 0), ST(BPF_DW, 10, -24, 0),
			ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -8, 0),
			MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -8),
			MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -16),
			MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -24),
			MOV64_REG(4, 10), ALU64_IMM(BPF_ADD, 4, -32),
			MOV64(5, 8), CALL(id), EXIT,
		};
		struct jit_input in = test_input("helper", p, ARRAY_SIZE(p),
						 EGPU_HELPERS_GPU);
		char what[64];

		h = helper_find(id, EGPU_HELPERS_GPU);
		if (!h)
			continue;
		in.maps = maps;
		in.map_cnt = 1;
		snprintf(what, sizeof(what), "helper %s", h->name);
		assemble(what, &in);
		found++;
	}
	ck_assert_int_ge(found, 20);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jit_ptxas");
	TCase *tc = tcase_create("ptxas");

	if (!tu_have_ptxas()) {
		fprintf(stderr, "ptxas not found (%s): skipped\n", EGPU_PTXAS);
		return 77;
	}
	vector_cnt = vectors_with_result(&vectors);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, conformance_row, 0, (int)vector_cnt);
	tcase_add_loop_test(tc, edge_case, 0, (int)edge_case_cnt);
	tcase_add_test(tc, every_helper);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
