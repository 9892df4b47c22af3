// SPDX-License-Identifier: MIT
/*
 * The in-process checker's public API without a GPU (api/memcheck_api.c):
 * refused arguments and options, no checker where there is no GPU, and
 * the names of the sites an attached context instruments (what its
 * reports say: kernel, file, line), handed over and let go when the
 * context stops checking for the checker.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "egpu.h"
#include "egpu/ctx.h"
#include "memcheck/memcheck_names.h"
#include "test_util.h"

#define KERNELS_CU EGPU_TEST_DATA "/api_kernels.cu"
#define KERNELS_PTX EGPU_TEST_BUILD "/api_kernels.ptx"

START_TEST(null_arguments)
{
	struct egpu_memcheck_report r = { .sz = sizeof(r) };
	char *text = NULL;

	ck_assert_int_eq(egpu_memcheck_track(NULL, 0x1000, 16, EGPU_MEMCHECK_ALLOC),
			 EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "egpu_memcheck_track"));
	ck_assert_int_eq(egpu_memcheck_track_async(NULL, 0x1000, 16,
						   EGPU_MEMCHECK_ASYNC, NULL),
			 EGPU_EINVAL);
	ck_assert_int_eq(egpu_memcheck_untrack(NULL, 0x1000), EGPU_EINVAL);
	ck_assert_int_eq(egpu_memcheck_untrack_async(NULL, 0x1000, NULL),
			 EGPU_EINVAL);
	ck_assert_int_eq(egpu_memcheck_untrack_range(NULL, 0x1000, 16),
			 EGPU_EINVAL);
	ck_assert_int_eq(egpu_memcheck_attach(NULL, NULL), EGPU_EINVAL);
	ck_assert_int_eq(egpu_memcheck_track_globals(NULL, 1, "", 0), EGPU_EINVAL);
	ck_assert_int_eq(egpu_memcheck_poll(NULL), EGPU_EINVAL);
	ck_assert_int_eq(egpu_memcheck_report_at(NULL, 0, &r), EGPU_EINVAL);
	ck_assert_int_eq(egpu_memcheck_text(NULL, false, &text, NULL),
			 EGPU_EINVAL);
	ck_assert_ptr_null(text);
	ck_assert_uint_eq(egpu_memcheck_errors(NULL), 0);
	egpu_memcheck_free(NULL);
}
END_TEST

START_TEST(refused_options)
{
	struct {
		struct egpu_memcheck_new_opts o;
		uint64_t newer; /* a field this build does not know */
	} big = { .o = { .sz = sizeof(big) }, .newer = 1 };

	ck_assert_ptr_null(egpu_memcheck_new(&big.o));
	ck_assert_int_eq(egpu_errcode(), EGPU_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "egpu_memcheck_new"));
}
END_TEST

/* Where there is a GPU (a CPU run on a GPU machine) the checker is made;
 * elsewhere its absence is an error naming the driver, not a crash. */
START_TEST(no_gpu_no_checker)
{
	EGPU_OPTS(egpu_memcheck_new_opts, o, .max_allocs = 16);
	egpu_memcheck *mc = egpu_memcheck_new(&o);

	if (egpu_gpu_available()) {
		ck_assert_msg(mc, "%s", egpu_errmsg());
		ck_assert_int_eq(egpu_memcheck_poll(mc), 0);
		egpu_memcheck_free(mc);
		return;
	}
	ck_assert_ptr_null(mc);
	ck_assert_int_eq(egpu_errcode(), EGPU_ENODEV);
}
END_TEST

/* The bad store of fill_past: its site in @rep. */
static const struct egpu_mem_site *past_store(const struct egpu_report *rep)
{
	for (uint32_t i = 0; i < rep->mem_site_cnt; i++) {
		const struct egpu_mem_site *s = &rep->mem_sites[i];

		if (!strcmp(s->function, "fill_past") && s->kind == EGPU_MEM_STORE)
			return s;
	}
	ck_abort_msg("fill_past has no store site");
	return NULL;
}

START_TEST(sites_named_for_the_checker)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true, .sm = "sm_90");
	EGPU_OPTS(egpu_memcheck_opts, mo, .index_cell = 0x7f0000001000ull,
		  .states = 0x7f0000002000ull, .counts = 0x7f0000003000ull,
		  .log = 0x7f0000004000ull, .hints = 0x7f0000005000ull);
	EGPU_OPTS(egpu_report, rep);
	struct mc_names names = { 0 };
	egpu_ctx *ctx = egpu_ctx_new(&co), *user_ctx;
	struct memcheck_user user = { .names = &names, .ctx = &user_ctx };
	size_t len;
	char *ptx = tu_read_file(KERNELS_PTX, &len), *out = NULL;
	const struct egpu_mem_site *s;
	struct mc_site name;

	ck_assert_ptr_nonnull(ctx);
	user_ctx = ctx;
	ck_assert_int_eq(memcheck_enable_for(ctx, &mo, &user), 0);
	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, len, &out, &len, &rep),
		      "%s", egpu_errmsg());
	if (tu_have_ptxas()) { /* what the GPU test loads */
		char log[4096] = "";

		ck_assert_msg(tu_ptxas(out, strlen(out), "sm_90", true, log,
				       sizeof(log)), "ptxas: %s", log);
	}
	s = past_store(&rep);
	ck_assert(mc_names_site(&names, s->site, &name));
	ck_assert_str_eq(name.kernel, "fill_past");
	ck_assert_ptr_nonnull(name.file);
	ck_assert_ptr_nonnull(strstr(name.file, "api_kernels.cu"));
	ck_assert_uint_eq(name.line, tu_marked_line(KERNELS_CU, "// BUG:past"));
	ck_assert(!mc_names_site(&names, rep.site_base + rep.mem_site_cnt, &name));
	/* enabled for another (no checker): this one is let go */
	ck_assert_int_eq(egpu_memcheck_enable(ctx, &mo), 0);
	ck_assert_ptr_null(user_ctx);
	/* and when the context goes */
	user_ctx = ctx;
	ck_assert_int_eq(memcheck_enable_for(ctx, &mo, &user), 0);
	egpu_ctx_free(ctx);
	ck_assert_ptr_null(user_ctx);
	mc_names_clear(&names);
	free(out);
	free(ptx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("memcheck_api");
	TCase *tc = tcase_create("api");

	tcase_add_test(tc, null_arguments);
	tcase_add_test(tc, refused_options);
	tcase_add_test(tc, no_gpu_no_checker);
	tcase_add_test(tc, sites_named_for_the_checker);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
