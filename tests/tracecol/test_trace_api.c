// SPDX-License-Identifier: MIT
/*
 * egpu_trace_* without a GPU: argument and option errors, libcupti that
 * cannot be opened or is not libcupti, no driver.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "egpu.h"
#include "test_util.h"

START_TEST(null_handles)
{
	struct egpu_trace_stats st = { .sz = sizeof(st) };

	ck_assert_int_eq(egpu_trace_stop(NULL), EGPU_EINVAL);
	egpu_trace_free(NULL);
	ck_assert_int_eq(egpu_trace_write(NULL, EGPU_TRACE_FOLDED, "-"),
			 EGPU_EINVAL);
	ck_assert_int_eq(egpu_trace_stats(NULL, &st), EGPU_EINVAL);
	ck_assert_uint_eq(egpu_trace_kernel_cnt(NULL), 0);
	ck_assert_ptr_null(egpu_trace_kernel(NULL, 0));
}
END_TEST

START_TEST(bad_options)
{
	struct egpu_trace_opts o = { .sz = 1 };

	ck_assert_ptr_null(egpu_trace_start(&o));
	ck_assert_int_eq(egpu_errcode(), EGPU_EINVAL);
	o = (struct egpu_trace_opts){ .sz = sizeof(o), .buffer_size = 1000 };
	ck_assert_ptr_null(egpu_trace_start(&o));
	ck_assert_int_eq(egpu_errcode(), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "buffer_size 1000"));
	o = (struct egpu_trace_opts){ .sz = sizeof(o), .max_frames = 5000 };
	ck_assert_ptr_null(egpu_trace_start(&o));
	ck_assert_int_eq(egpu_errcode(), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "max_frames 5000"));
}
END_TEST

START_TEST(cupti_missing)
{
	setenv("EGPU_CUPTI_LIB", "/nonexistent/libcupti.so", 1);
	ck_assert_ptr_null(egpu_trace_start(NULL));
	ck_assert_int_eq(egpu_errcode(), EGPU_ENODEV);
	ck_assert_msg(strstr(egpu_errmsg(), "/nonexistent/libcupti.so") &&
		      strstr(egpu_errmsg(), "EGPU_CUPTI_LIB"),
		      "message: %s", egpu_errmsg());
}
END_TEST

START_TEST(cupti_not_cupti)
{
	setenv("EGPU_CUPTI_LIB", "libc.so.6", 1);
	ck_assert_ptr_null(egpu_trace_start(NULL));
	ck_assert_int_eq(egpu_errcode(), EGPU_ENODEV);
	ck_assert_msg(strstr(egpu_errmsg(), "libcupti lacks cuptiGetVersion"),
		      "message: %s", egpu_errmsg());
}
END_TEST

/* Where CUPTI loads but no driver or GPU is present, start says so. */
START_TEST(no_gpu_no_trace)
{
	egpu_trace *t;

	if (egpu_gpu_available())
		return;
	unsetenv("EGPU_CUPTI_LIB");
	t = egpu_trace_start(NULL);
	ck_assert_ptr_null(t);
	ck_assert_msg(egpu_errcode() == EGPU_ENODEV ||
		      egpu_errcode() == EGPU_ENOTSUP,
		      "code %d: %s", egpu_errcode(), egpu_errmsg());
	ck_assert_str_ne(egpu_errmsg(), "");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tracecol_api");
	TCase *tc = tcase_create("api");

	tcase_add_test(tc, null_handles);
	tcase_add_test(tc, bad_options);
	tcase_add_test(tc, cupti_missing);
	tcase_add_test(tc, cupti_not_cupti);
	tcase_add_test(tc, no_gpu_no_trace);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite(), true);
}
