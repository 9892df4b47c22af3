/* SPDX-License-Identifier: MIT */
/*
 * Every program with an expected value (the conformance vectors and
 * edge_cases.c) through jit_ptx() and `ptxas -arch=sm_90` (with -c where
 * the PTX calls extern device functions), and a call of every GPU helper
 * and atomic adds for every GPU target. Skipped (exit 77) where ptxas is
 * not installed.
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

/*
 * @check: whether ptxas checks this program. Under the sanitizers it
 * checks a sample (TU_SAMPLED), since there the time goes to ptxas (neither
 * ours nor sanitized); jit_ptx still runs for every program.
 */
static void assemble(const char *what, const struct jit_input *in, bool check)
{
	char *ptx = NULL, log[2048];
	int err = jit_ptx(in, "sm_90", true, &ptx, NULL, NULL);

	ck_assert_msg(!err, "%s: jit_ptx: %s", what, egpu_errmsg());
	ck_assert_msg(!check || tu_ptxas(ptx, strlen(ptx), "sm_90",
					 strstr(ptx, ".extern") != NULL, log,
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
	assemble(v->name, &in, TU_SAMPLED(_i));
}
END_TEST

START_TEST(edge_case)
{
	const struct edge_case *c = &edge_cases[_i];
	struct jit_input in = test_input("edge", c->insns, c->insn_cnt,
					 EGPU_HELPERS_GPU);
	char what[64];

	snprintf(what, sizeof(what), "edge_cases.c:%d", c->line);
	assemble(what, &in, TU_SAMPLED(_i));
}
END_TEST

/*
 * Whether this ptxas assembles for @sm: CUDA 13 dropped the targets before
 * sm_75. Their PTX is then assembled for sm_75 (a check of its syntax), and
 * must not use sm_70 instructions where @sm is older.
 */
static bool ptxas_knows(unsigned sm)
{
	/* PTX 9.0 names the GPUs after sm_90 */
	static const char empty[] = ".version %s\n.target sm_%u\n.address_size 64\n";
	char ptx[96], arch[16];

	snprintf(ptx, sizeof(ptx), empty, sm > 90 ? "9.0" : "6.3", sm);
	snprintf(arch, sizeof(arch), "sm_%u", sm);
	return tu_ptxas(ptx, strlen(ptx), arch, false, NULL, 0);
}

/* Whether @text was seen before (FNV-1a hashes of the texts seen). */
static bool seen_before(const char *text)
{
	static uint64_t seen[4096];
	static size_t seen_cnt;
	uint64_t h = 14695981039346656037ull;

	for (const char *c = text; *c; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ull;
	for (size_t i = 0; i < seen_cnt; i++)
		if (seen[i] == h)
			return true;
	if (seen_cnt < ARRAY_SIZE(seen))
		seen[seen_cnt++] = h;
	return false;
}

static void assemble_for(const char *what, unsigned sm, bool known,
			 const char *ptx, bool check)
{
	char arch[16], log[2048], *copy = strdup(ptx), *target;

	ck_assert_ptr_nonnull(copy);
	snprintf(arch, sizeof(arch), "sm_%u", known ? sm : 75);
	if (!known) {
		target = strstr(copy, ".target sm_");
		ck_assert_msg(target, "%s: no .target in\n%s", what, ptx);
		memcpy(target + 11, "75", 2);
		ck_assert_msg(sm >= 70 || (!strstr(ptx, "match.") &&
					   !strstr(ptx, "nanosleep")),
			      "%s: sm_70 instructions for sm_%u:\n%s", what, sm, ptx);
		/* The older targets mostly give the same text: assemble once. */
		if (!check || seen_before(copy)) {
			free(copy);
			return;
		}
	}
	ck_assert_msg(!check || tu_ptxas(copy, strlen(copy), arch,
					 strstr(copy, ".extern") != NULL, log,
					 sizeof(log)),
		      "%s: ptxas -arch=%s failed:\n%s\n%s", what, arch, log, copy);
	free(copy);
}

/*
 * @in for sm_@sm: PTX that ptxas accepts, or EGPU_ENOTSUP naming the
 * helper and the target (never an abort inside LLVM).
 */
static void jit_for(const char *what, unsigned sm, bool known,
		    const struct jit_input *in, const char *helper, bool check)
{
	char target[16], *ptx = NULL;
	int err;

	snprintf(target, sizeof(target), "sm_%u", sm);
	err = jit_ptx(in, target, true, &ptx, NULL, NULL);
	if (err == EGPU_ENOTSUP) {
		ck_assert_msg(helper && strstr(egpu_errmsg(), helper) &&
				      strstr(egpu_errmsg(), target),
			      "%s: message names neither helper nor target: %s",
			      what, egpu_errmsg());
		return;
	}
	ck_assert_msg(!err, "%s: jit_ptx: %s", what, egpu_errmsg());
	assemble_for(what, sm, known, ptx, check);
	free(ptx);
}

static const struct jit_map test_maps[] = {
	{ .addr = 0x1000, .value_addr = 0x8000, .type = EGPU_MAP_ARRAY,
	  .key_size = 4, .value_size = 8, .max_entries = 4 },
};

/*
 * Every helper with r1-r5 pointing into the stack, and atomic adds (with
 * and without fetch) on a map value, for every target jit_ptx() knows.
 */
static void every_helper_for(unsigned sm)
{
	bool known = ptxas_knows(sm);
	const struct bpf_insn atomics[] = {
		LDDW_SRC(1, BPF_PSEUDO_MAP_IDX_VALUE, 0, 0), MOV64(2, 1),
		ATOMIC(BPF_DW, 1, 2, 0, BPF_ADD),
		ATOMIC(BPF_W, 1, 2, 0, BPF_ADD | BPF_FETCH),
		ATOMIC(BPF_DW, 1, 2, 0, BPF_ADD | BPF_FETCH),
		MOV64_REG(0, 2), EXIT,
	};
	struct jit_input in = test_input("atomics", atomics, ARRAY_SIZE(atomics),
					 EGPU_HELPERS_GPU);
	char what[64];
	int found = 0;

	in.maps = test_maps;
	in.map_cnt = 1;
	snprintf(what, sizeof(what), "sm_%u atomics", sm);
	jit_for(what, sm, known, &in, NULL, true);
	for (int32_t id = 0; id < 1024; id++) {
		const struct helper_info *h = helper_find(id, EGPU_HELPERS_GPU);
		const struct bpf_insn p[] = {
			ST(BPF_DW, 10, -32, 0), ST(BPF_DW, 10, -24, 0),
			ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -8, 0),
			MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -8),
			MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -16),
			MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -24),
			MOV64_REG(4, 10), ALU64_IMM(BPF_ADD, 4, -32),
			MOV64(5, 8), CALL(id), EXIT,
		};

		if (!h)
			continue;
		in = test_input("helper", p, ARRAY_SIZE(p), EGPU_HELPERS_GPU);
		in.maps = test_maps;
		in.map_cnt = 1;
		snprintf(what, sizeof(what), "sm_%u helper %s", sm, h->name);
		jit_for(what, sm, known, &in, h->name, TU_SAMPLED(found));
		found++;
	}
	ck_assert_int_ge(found, 20);
}

START_TEST(every_helper_every_sm)
{
	size_t n;
	const unsigned *sm = jit_ptx_targets(&n);

	for (size_t i = 0; i < n; i++)
		every_helper_for(sm[i]);
}
END_TEST

/* GPUs after the newest this LLVM knows: its code under their header. */
START_TEST(every_helper_newer_sm)
{
	every_helper_for(100);
	every_helper_for(120);
}
END_TEST

/* Targets LLVM does not know are refused before it sees them. */
START_TEST(unknown_sm)
{
	const struct bpf_insn p[] = { MOV64(0, 1), EXIT };
	struct jit_input in = test_input("p", p, ARRAY_SIZE(p), EGPU_HELPERS_GPU);
	static const char *const bad[] = { "sm_31", "sm_65", "sm_20", "compute_70",
					   "sm_1000", "sm_99999999999", "sm_101" };
	char *ptx = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		ck_assert_int_eq(jit_ptx(&in, bad[i], false, &ptx, NULL, NULL), EGPU_EINVAL);
		ck_assert_ptr_null(ptx);
		ck_assert_msg(strstr(egpu_errmsg(), bad[i]), "%s", egpu_errmsg());
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jit_ptxas");
	TCase *tc = tcase_create("ptxas"), *targets = tcase_create("targets");

	if (!tu_have_ptxas()) {
		fprintf(stderr, "ptxas not found (%s): skipped\n", EGPU_PTXAS);
		return 77;
	}
	vector_cnt = vectors_with_result(&vectors);
	tcase_add_loop_test(tc, conformance_row, 0, (int)vector_cnt);
	tcase_add_loop_test(tc, edge_case, 0, (int)edge_case_cnt);
	tcase_add_test(tc, unknown_sm);
	suite_add_tcase(s, tc);
	tcase_add_test(targets, every_helper_every_sm);
	tcase_add_test(targets, every_helper_newer_sm);
	suite_add_tcase(s, targets);
	return tu_run_suite(s, false);
}
