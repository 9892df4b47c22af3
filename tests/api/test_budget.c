// SPDX-License-Identifier: MIT
/*
 * The verifier's cost on loops it cannot bound: at its 1 M-instruction
 * budget (spin) or its states' memory budget (fat_spin, a full stack in
 * every queued state), at every verbosity, the process stays under 512 MB,
 * and the log shows the failing path's last steps (the loop's back edge
 * among them) under one header, the verdict once.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egpu.h"
#include "test_util.h"

#define UNBOUNDED_OBJ EGPU_TEST_BUILD "/unbounded.bpf.o"
#define RSS_LIMIT_MB 512

static void check_rss(const char *what)
{
	long mb = tu_peak_rss_mb();

	/* AddressSanitizer's shadow and quarantine are not the verifier's:
	 * the bound is checked in builds without it. */
	if (TU_SANITIZED)
		return;
	ck_assert_msg(mb < RSS_LIMIT_MB, "%s: peak RSS %ld MB", what, mb);
}

static egpu_prog *load_prog(egpu_ctx **ctx, const char *name)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true,
		  .log_level = EGPU_LOG_ERROR);
	egpu_obj *obj;
	const char *why;
	egpu_prog *p;

	*ctx = egpu_ctx_new(&co);
	ck_assert_ptr_nonnull(*ctx);
	obj = egpu_load(*ctx, UNBOUNDED_OBJ, NULL);
	ck_assert_msg(obj, "load: %s", egpu_errmsg());
	p = egpu_obj_prog(obj, name);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_ne(egpu_prog_verdict(p, &why), 0);
	ck_assert_ptr_nonnull(strstr(why, "not proven to terminate"));
	check_rss("loading");
	return p;
}

/* The line before the last one of @log (the last step of the path). */
static const char *step_before_verdict(const char *log)
{
	const char *end = log + strlen(log) - 1, *p = end;

	while (p > log && p[-1] != '\n')
		p--; /* start of the verdict line */
	ck_assert_ptr_ne(p, log);
	p--;
	while (p > log && p[-1] != '\n')
		p--;
	return p;
}

static const struct {
	const char *prog, *limit;
} cases[] = {
	{ "spin", "1000000 instructions processed (limit 1000000)" },
	{ "fat_spin", "its states take 128 MiB (the limit)" },
};

START_TEST(unbounded_loop_is_cheap)
{
	int verbose = _i % 3;
	const char *name = cases[_i / 3].prog;
	egpu_ctx *ctx;
	egpu_prog *p = load_prog(&ctx, name);
	EGPU_OPTS(egpu_verify_opts, vo, .verbose = verbose);
	const char *verdict;
	char head[64];

	ck_assert_int_eq(egpu_prog_verify(p, &vo), EGPU_EVERIFY);
	ck_assert_ptr_nonnull(vo.log);
	check_rss("verifying");
	ck_assert_msg(strstr(vo.log, cases[_i / 3].limit), "%s", vo.log);
	/* One header, then the path's last steps, then the verdict once. */
	ck_assert_int_eq(tu_count(vo.log, "failing path, "), 1);
	ck_assert_int_eq(tu_count(vo.log, "refused: "), 1);
	ck_assert_int_eq(tu_count(vo.log, "not proven to terminate"), 1);
	snprintf(head, sizeof(head), "prog '%s': refused: ", name);
	verdict = strstr(vo.log, head);
	ck_assert_ptr_nonnull(verdict);
	ck_assert_ptr_nonnull(strstr(verdict, "(back edge: insn "));
	ck_assert_ptr_nonnull(strstr(vo.log, "steps omitted\n"));
	/* The steps follow the omission: the last is logged, the loop's
	 * backward jump ("goto -N") among those before it. */
	ck_assert_msg(strchr("0123456789", *step_before_verdict(vo.log)),
		      "no step before the verdict:\n%s",
		      step_before_verdict(vo.log));
	ck_assert_ptr_nonnull(strstr(strstr(vo.log, "steps omitted"), "goto -"));
	if (verbose == 2 && !strcmp(name, "spin"))
		ck_assert_ptr_nonnull(strstr(vo.log, "the log of every step stops here"));
	free(vo.log);
	egpu_ctx_free(ctx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verifier_budget");
	TCase *tc = tcase_create("budget");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, unbounded_loop_is_cheap, 0,
			    3 * (int)(sizeof(cases) / sizeof(cases[0])));
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
