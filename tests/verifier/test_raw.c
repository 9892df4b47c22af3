/* SPDX-License-Identifier: MIT */
/* The raw-instruction corpus (raw_cases.h), one check per program. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "raw_cases.h"
#include "verifier/verifier.h"
#include "test_util.h"

static int run_case_with(const struct raw_case *c, struct strbuf *log,
			 bool all_states)
{
	struct prog_spec spec = {
		.name = (char *)c->name,
		.insns = (struct bpf_insn *)c->insns,
		.insn_cnt = c->cnt,
	};
	struct verifier_opts o = {
		.abi = c->abi, .attach = c->attach, .ctx_size = c->ctx_size,
		.ctx_writable = c->writable, .verbose = log ? 1 : 0,
		.log = log, .all_states = all_states,
	};

	return verifier_run(&spec, raw_maps, ARRAY_SIZE(raw_maps), &o, NULL);
}

static int run_case(const struct raw_case *c, struct strbuf *log)
{
	return run_case_with(c, log, false);
}

static bool as_expected(const struct raw_case *c, int err)
{
	const char *msg = egpu_errmsg();

	return c->expect ? err == EGPU_EVERIFY && strstr(msg, c->expect) :
	       err == 0;
}

/*
 * Each case twice: as usual, and storing a state at every prune point so
 * that pruning decides as much as it can (under the sanitizers, a sample
 * of the cases: TU_SAMPLED).
 */
START_TEST(raw_case)
{
	const struct raw_case *c = &raw_cases[_i];
	int err = run_case(c, NULL);
	const char *msg = egpu_errmsg();
	bool ok = as_expected(c, err);

	if (ok && TU_SAMPLED(_i)) {
		err = run_case_with(c, NULL, true);
		ok = as_expected(c, err);
	}

	if (!ok) {
		struct strbuf log;

		sb_init(&log);
		run_case(c, &log);
		fprintf(stderr, "case '%s': expected %s%s%s, got %s\n%s",
			c->name, c->expect ? "refusal \"" : "acceptance",
			c->expect ? c->expect : "", c->expect ? "\"" : "",
			err ? msg : "acceptance", log.buf ? log.buf : "");
		sb_free(&log);
	}
	ck_assert_msg(ok, "case '%s'", c->name);
}
END_TEST

/* Refusals carry the program, the instruction and its text. */
START_TEST(message_format)
{
	const struct raw_case *c = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(raw_cases); i++)
		if (!strcmp(raw_cases[i].name, "unchecked lookup"))
			c = &raw_cases[i];
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(run_case(c, NULL), EGPU_EVERIFY);
	ck_assert_str_eq(egpu_errmsg(),
			 "prog 'unchecked lookup': insn 6 (r0 = *(u64 *)(r0 + 0)): "
			 "r0 may be NULL (result of map_lookup_elem at insn 5 "
			 "not checked)");
}
END_TEST

static const struct raw_case *find_case(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(raw_cases); i++)
		if (!strcmp(raw_cases[i].name, name))
			return &raw_cases[i];
	ck_abort_msg("no raw case '%s'", name);
	return NULL;
}

/* The verbose log shows the failing path step by step. */
START_TEST(verbose_log)
{
	const struct raw_case *c = find_case("reservation leaked on one path");
	struct strbuf log;

	sb_init(&log);
	ck_assert_int_eq(run_case(c, &log), EGPU_EVERIFY);
	ck_assert_ptr_nonnull(log.buf);
	ck_assert_ptr_nonnull(strstr(log.buf, "5: call ringbuf_reserve#131 ; "));
	ck_assert_ptr_nonnull(strstr(log.buf, "r0=ringbuf_record_or_null("));
	ck_assert_ptr_nonnull(strstr(log.buf, "10: if r2 == 0 goto +3 ;"));
	/* registers as narrowed by the branch (the NULL check) */
	ck_assert_ptr_nonnull(strstr(log.buf, "r0=ringbuf_record(size=16"));
	ck_assert_ptr_nonnull(strstr(log.buf, "neither submitted nor discarded"));
	/* the path that submits is not the failing one */
	ck_assert_ptr_null(strstr(log.buf, "13: call ringbuf_submit"));
	sb_free(&log);
}
END_TEST

/* The assembler syntax of every instruction form. */
START_TEST(disassembly)
{
	static const struct {
		struct bpf_insn insn[2];
		const char *text;
	} forms[] = {
		{ { MOV64_IMM(1, -5) }, "r1 = -5" },
		{ { MOV32_REG(2, 3) }, "w2 = w3" },
		{ { ALU64_IMM(BPF_ADD, 10, -8) }, "r10 += -8" },
		{ { ALU32_REG(BPF_ARSH, 4, 5) }, "w4 s>>= w5" },
		{ { SDIV64_REG(1, 2) }, "r1 s/= r2" },
		{ { MOVSX64(1, 2, 16) }, "r1 = (s16)r2" },
		{ { NEG64(3) }, "r3 = -r3" },
		{ { ENDIAN(1, 1, 16) }, "r1 = be16 r1" },
		{ { BSWAP(1, 64) }, "r1 = bswap64 r1" },
		{ { LDX(BPF_DW, 0, 1, 8) }, "r0 = *(u64 *)(r1 + 8)" },
		{ { LDXSX(BPF_B, 0, 1, -1) }, "r0 = *(s8 *)(r1 - 1)" },
		{ { ST(BPF_W, 10, -4, 7) }, "*(u32 *)(r10 - 4) = 7" },
		{ { STX(BPF_H, 2, 3, 0) }, "*(u16 *)(r2 + 0) = r3" },
		{ { ATOMIC(BPF_DW, BPF_ADD, 1, 2, 0) },
		  "lock *(u64 *)(r1 + 0) += r2" },
		{ { ATOMIC(BPF_W, BPF_OR | BPF_FETCH, 1, 2, 4) },
		  "w2 = atomic_fetch_or((u32 *)(r1 + 4), w2)" },
		{ { ATOMIC(BPF_DW, BPF_CMPXCHG, 1, 2, 0) },
		  "r0 = cmpxchg((u64 *)(r1 + 0), r0, r2)" },
		{ { LD_IMM64(3, 0x100000002ULL) }, "r3 = 0x100000002 ll" },
		{ { LD_MAP(1, M_COUNTS) }, "r1 = map[counts]" },
		{ { LD_MAP_VALUE(1, M_DATA, 16) }, "r1 = map_value[.data] + 16" },
		{ { JA(-3) }, "goto -3" },
		{ { INSN(BPF_JMP32 | BPF_JA, 0, 0, 0, 70000) }, "gotol +70000" },
		{ { JMP_IMM(BPF_JGT, 1, 16, 3) }, "if r1 > 0x10 goto +3" },
		{ { JMP32_REG(BPF_JSLE, 1, 2, -2) }, "if w1 s<= w2 goto -2" },
		{ { JMP_IMM(BPF_JSET, 1, -1, 1) }, "if r1 & -1 goto +1" },
		{ { CALL(1) }, "call map_lookup_elem#1" },
		{ { CALL(9999) }, "call #9999" },
		{ { CALL_LOCAL(5) }, "call pc+5" },
		{ { CALLX(2) }, "callx r2" },
		{ { EXIT() }, "exit" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(forms); i++) {
		struct strbuf sb;

		sb_init(&sb);
		verifier_disasm(&sb, forms[i].insn, 2, 0, raw_maps,
				ARRAY_SIZE(raw_maps), EGPU_HELPERS_GPU);
		ck_assert_str_eq(sb.buf, forms[i].text);
		sb_free(&sb);
	}
}
END_TEST

/* The line a command-line tool prints. */
START_TEST(report_line)
{
	const struct bpf_insn insns[] = { RET0 };
	struct prog_spec spec = { .name = "tiny",
				      .insns = (struct bpf_insn *)insns,
				      .insn_cnt = 2 };
	struct verifier_stats st;
	struct strbuf sb;

	ck_assert_int_eq(verifier_run(&spec, NULL, 0, NULL, &st), 0);
	ck_assert_uint_eq(st.insns_processed, 2);
	sb_init(&sb);
	verifier_report(&sb, &spec, 0, &st);
	ck_assert_ptr_nonnull(strstr(sb.buf, "prog 'tiny': accepted (2 insns "
					    "processed, 1 states"));
	sb_free(&sb);
	spec.insn_cnt = 1;
	sb_init(&sb);
	verifier_report(&sb, &spec, verifier_run(&spec, NULL, 0, NULL, &st),
			&st);
	ck_assert_str_eq(sb.buf, "prog 'tiny': refused: insn 0 "
			 "(r0 = 0): execution falls off the end of the "
			 "function (the last instruction must be exit or a "
			 "jump)\n");
	sb_free(&sb);
}
END_TEST

/* After the failing path, the verdict line ends the log in place of the
 * message, and names the program once (egpu verify prints this log). */
START_TEST(report_after_log)
{
	const struct raw_case *c = find_case("reservation leaked on one path");
	struct prog_spec spec = { .name = (char *)c->name };
	struct strbuf log;
	const char *first;

	sb_init(&log);
	verifier_report(&log, &spec, run_case(c, &log), NULL);
	ck_assert_ptr_nonnull(log.buf);
	first = strstr(log.buf, "prog '");
	ck_assert_ptr_nonnull(first);
	ck_assert_str_eq(first - 1, "\nprog 'reservation leaked on one path': "
			 "refused: insn 15 (exit): ring buffer record reserved "
			 "at insn 5 is neither submitted nor discarded at exit\n");
	sb_free(&log);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verifier_raw");
	TCase *tc = tcase_create("raw");

	tcase_add_loop_test(tc, raw_case, 0, (int)ARRAY_SIZE(raw_cases));
	tcase_add_test(tc, message_format);
	tcase_add_test(tc, verbose_log);
	tcase_add_test(tc, disassembly);
	tcase_add_test(tc, report_line);
	tcase_add_test(tc, report_after_log);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, false);
}
