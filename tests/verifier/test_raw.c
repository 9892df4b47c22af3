/* SPDX-License-Identifier: MIT */
/* The raw-instruction corpus (raw_cases.h), one check per program. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "raw_cases.h"
#include "verifier/verifier.h"

static int run_case(const struct raw_case *c, struct strbuf *log)
{
	struct bpf_prog_spec spec = {
		.name = (char *)c->name,
		.insns = (struct bpf_insn *)c->insns,
		.insn_cnt = c->cnt,
	};
	struct verifier_opts o = {
		.abi = c->abi, .attach = c->attach, .ctx_size = c->ctx_size,
		.ctx_writable = c->writable, .verbose = log ? 1 : 0,
		.log = log,
	};

	return verifier_run(&spec, raw_maps, ARRAY_SIZE(raw_maps), &o, NULL);
}

START_TEST(raw_case)
{
	const struct raw_case *c = &raw_cases[_i];
	int err = run_case(c, NULL);
	const char *msg = egpu_errmsg();
	bool ok = c->expect ? err == EGPU_EVERIFY && strstr(msg, c->expect) :
		  err == 0;

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

/* The verbose log shows the failing path step by step. */
START_TEST(verbose_log)
{
	const struct raw_case *c = NULL;
	struct strbuf log;

	for (size_t i = 0; i < ARRAY_SIZE(raw_cases); i++)
		if (!strcmp(raw_cases[i].name, "reservation leaked on one path"))
			c = &raw_cases[i];
	ck_assert_ptr_nonnull(c);
	sb_init(&log);
	ck_assert_int_eq(run_case(c, &log), EGPU_EVERIFY);
	ck_assert_ptr_nonnull(log.buf);
	ck_assert_ptr_nonnull(strstr(log.buf, "5: call ringbuf_reserve#131 ; "));
	ck_assert_ptr_nonnull(strstr(log.buf, "r0=ringbuf_record_or_null("));
	ck_assert_ptr_nonnull(strstr(log.buf, "10: if r2 == 0 goto +3 ;"));
	ck_assert_ptr_nonnull(strstr(log.buf, "r2=0"));
	ck_assert_ptr_nonnull(strstr(log.buf, "neither submitted nor discarded"));
	/* the path that submits is not the failing one */
	ck_assert_ptr_null(strstr(log.buf, "13: call ringbuf_submit"));
	sb_free(&log);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verifier_raw");
	TCase *tc = tcase_create("raw");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, raw_case, 0, (int)ARRAY_SIZE(raw_cases));
	tcase_add_test(tc, message_format);
	tcase_add_test(tc, verbose_log);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
