// SPDX-License-Identifier: MIT
/*
 * Clock calibration without a GPU: argument checks, offline contexts, the
 * error where no driver is, GPU-to-host conversion arithmetic, and the
 * embedded calibration kernel.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "device/clock_sync.h"
#include "egpu.h"
#include "test_util.h"

START_TEST(null_and_unsized_arguments_are_refused)
{
	egpu_ctx *ctx = egpu_ctx_new(NULL);
	struct egpu_clock c = { 0 };

	ck_assert_ptr_nonnull(ctx);
	c.sz = sizeof(c);
	ck_assert_int_eq(egpu_clock_sync(NULL, &c), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "egpu_clock_sync"));
	ck_assert_int_eq(egpu_clock_get(NULL, &c), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "egpu_clock_get"));
	ck_assert_int_eq(egpu_clock_sync(ctx, NULL), EGPU_EINVAL);
	ck_assert_int_eq(egpu_clock_get(ctx, NULL), EGPU_EINVAL);
	c.sz = 0;
	ck_assert_int_eq(egpu_clock_sync(ctx, &c), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "sz"));
	ck_assert_int_eq(egpu_clock_get(ctx, &c), EGPU_EINVAL);
	egpu_ctx_free(ctx);
}
END_TEST

START_TEST(offline_contexts_have_no_gpu_clock)
{
	EGPU_OPTS(egpu_ctx_opts, o, .offline = true);
	EGPU_OPTS(egpu_clock, c);
	egpu_ctx *ctx = egpu_ctx_new(&o);

	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(egpu_clock_sync(ctx, &c), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "offline"));
	ck_assert_int_eq(egpu_clock_get(ctx, &c), EGPU_EINVAL);
	egpu_ctx_free(ctx);
}
END_TEST

/* Without a driver the call says why; with a GPU it calibrates. */
START_TEST(sync_needs_a_gpu)
{
	EGPU_OPTS(egpu_clock, c);
	egpu_ctx *ctx = egpu_ctx_new(NULL);
	bool gpu = egpu_gpu_available();
	int err;

	ck_assert_ptr_nonnull(ctx);
	err = egpu_clock_get(ctx, &c);
	if (gpu) {
		ck_assert_msg(err == 0, "%s", egpu_errmsg());
		ck_assert_uint_gt(c.rounds, 0);
	} else {
		ck_assert_int_eq(err, EGPU_ENODEV);
		ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "egpu_clock_sync"));
		ck_assert_uint_eq(c.rounds, 0);
	}
	egpu_ctx_free(ctx);
}
END_TEST

static struct egpu_clock clock_at(int64_t offset)
{
	EGPU_OPTS(egpu_clock, c, .offset_ns = offset);

	return c;
}

START_TEST(gpu_to_host_subtracts_the_offset)
{
	struct egpu_clock ahead = clock_at(1700000000000000000ll);
	struct egpu_clock behind = clock_at(-5000);
	struct egpu_clock same = clock_at(0);

	ck_assert_uint_eq(egpu_clock_gpu_to_host(&ahead, 1700000000123456789ull),
			  123456789ull);
	ck_assert_uint_eq(egpu_clock_gpu_to_host(&behind, 1000), 6000);
	ck_assert_uint_eq(egpu_clock_gpu_to_host(&same, 42), 42);
}
END_TEST

START_TEST(gpu_to_host_clamps_instead_of_wrapping)
{
	struct egpu_clock ahead = clock_at(1000);
	struct egpu_clock behind = clock_at(-1000);
	struct egpu_clock most_behind = clock_at(INT64_MIN);
	struct egpu_clock most_ahead = clock_at(INT64_MAX);

	/* A reading from before the host clock's zero, and past its end. */
	ck_assert_uint_eq(egpu_clock_gpu_to_host(&ahead, 999), 0);
	ck_assert_uint_eq(egpu_clock_gpu_to_host(&ahead, 1000), 0);
	ck_assert_uint_eq(egpu_clock_gpu_to_host(&behind, UINT64_MAX - 999), UINT64_MAX);
	ck_assert_uint_eq(egpu_clock_gpu_to_host(&behind, UINT64_MAX - 1000),
			  UINT64_MAX);
	ck_assert_uint_eq(egpu_clock_gpu_to_host(&behind, UINT64_MAX - 1001),
			  UINT64_MAX - 1);
	ck_assert_uint_eq(egpu_clock_gpu_to_host(&most_behind, 5),
			  (uint64_t)1 << 63 | 5);
	ck_assert_uint_eq(egpu_clock_gpu_to_host(&most_behind, UINT64_MAX),
			  UINT64_MAX);
	ck_assert_uint_eq(egpu_clock_gpu_to_host(&most_ahead, UINT64_MAX),
			  (uint64_t)1 << 63);
	ck_assert_uint_eq(egpu_clock_gpu_to_host(NULL, 12345), 0);
}
END_TEST

/* The kernel is embedded as a fatbin that defines it by name. */
START_TEST(calibration_kernel_is_embedded)
{
	static const unsigned char magic[] = { 0x50, 0xed, 0x55, 0xba };

	ck_assert_uint_gt(clock_kernel_image_len, 1024);
	ck_assert_mem_eq(clock_kernel_image, magic, sizeof(magic));
	ck_assert_ptr_nonnull(memmem(clock_kernel_image, clock_kernel_image_len,
				     CLOCK_KERNEL_NAME, strlen(CLOCK_KERNEL_NAME)));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("clock_api");
	TCase *tc = tcase_create("clock_api");

	tcase_add_test(tc, null_and_unsized_arguments_are_refused);
	tcase_add_test(tc, offline_contexts_have_no_gpu_clock);
	tcase_add_test(tc, sync_needs_a_gpu);
	tcase_add_test(tc, gpu_to_host_subtracts_the_offset);
	tcase_add_test(tc, gpu_to_host_clamps_instead_of_wrapping);
	tcase_add_test(tc, calibration_kernel_is_embedded);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, false);
}
