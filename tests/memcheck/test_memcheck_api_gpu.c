// SPDX-License-Identifier: MIT
/*
 * The in-process checker on a GPU, through the public API alone: a
 * context attached to an egpu_memcheck loads api_kernels.cu instrumented
 * (egpu_module_load), the buffer its kernels get is tracked, and
 *   - fill, correct, is clean;
 *   - fill_past, storing one element past the end, is reported once per
 *     site with the right line, kind, space, thread and words, counted for
 *     its one bad thread;
 *   - once untracked, fill's every store is a use after free;
 *   - contained, fill_past leaves the element past the end untouched;
 *   - a second context cannot take the checker.
 * Exits 77 (skipped) without a GPU.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cu.h"
#include "egpu.h"
#include "egpu/ctx.h"
#include "test_util.h"

#define KERNELS_CU EGPU_TEST_DATA "/api_kernels.cu"
#define KERNELS_PTX EGPU_TEST_BUILD "/api_kernels.ptx"
#define N 1000 /* elements tracked */
#define BLOCK 256

struct rig {
	egpu_ctx *ctx;
	egpu_memcheck *mc;
	CUfunction fill, fill_past;
	CUdeviceptr buf; /* N + BLOCK elements: the store past N lands here */
};

static void setup(struct rig *r, bool contain)
{
	EGPU_OPTS(egpu_memcheck_new_opts, o, .contain = contain);
	size_t len;
	char *ptx = tu_read_file(KERNELS_PTX, &len);
	CUcontext cu_ctx;
	CUmodule mod;

	tu_require_gpu();
	ck_assert_msg(cu_ctx_current(&cu_ctx) == 0, "%s", egpu_errmsg());
	r->ctx = egpu_ctx_new(NULL);
	ck_assert_ptr_nonnull(r->ctx);
	r->mc = egpu_memcheck_new(&o);
	ck_assert_msg(r->mc, "%s", egpu_errmsg());
	ck_assert_msg(!egpu_memcheck_attach(r->ctx, r->mc), "%s", egpu_errmsg());
	ck_assert_msg(!egpu_module_load(r->ctx, &mod, ptx, len), "%s",
		      egpu_errmsg());
	free(ptx);
	CK_CU(cu()->cuModuleGetFunction(&r->fill, mod, "fill"));
	CK_CU(cu()->cuModuleGetFunction(&r->fill_past, mod, "fill_past"));
	CK_CU(cu()->cuMemAlloc(&r->buf, (N + BLOCK) * sizeof(float)));
	CK_CU(cu()->cuMemsetD8(r->buf, 0, (N + BLOCK) * sizeof(float)));
	ck_assert_int_eq(egpu_memcheck_track(r->mc, r->buf, N * sizeof(float),
					     EGPU_MEMCHECK_ALLOC), 0);
}

static void launch(struct rig *r, CUfunction f)
{
	int n = N;
	void *args[] = { &r->buf, &n };

	CK_CU(cu()->cuLaunchKernel(f, (N + BLOCK) / BLOCK, 1, 1, BLOCK, 1, 1, 0,
				   NULL, args, NULL));
	CK_CU(cu()->cuCtxSynchronize());
}

static void teardown(struct rig *r)
{
	egpu_memcheck_free(r->mc);
	egpu_ctx_free(r->ctx);
	CK_CU(cu()->cuMemFree(r->buf));
}

START_TEST(bad_store_reported_on_its_line)
{
	EGPU_OPTS(egpu_memcheck_report, rep);
	struct rig r;
	char *text = NULL;

	setup(&r, false);
	launch(&r, r.fill);
	ck_assert_int_eq(egpu_memcheck_poll(r.mc), 0);
	ck_assert_uint_eq(egpu_memcheck_errors(r.mc), 0);
	launch(&r, r.fill_past);
	ck_assert_int_eq(egpu_memcheck_poll(r.mc), 1);
	ck_assert_int_eq(egpu_memcheck_report_at(r.mc, 0, &rep), 0);
	ck_assert_str_eq(rep.kernel, "fill_past");
	ck_assert_ptr_nonnull(rep.file);
	ck_assert_ptr_nonnull(strstr(rep.file, "api_kernels.cu"));
	ck_assert_uint_eq(rep.line, tu_marked_line(KERNELS_CU, "// BUG:past"));
	ck_assert_uint_eq(rep.kind, EGPU_MEM_STORE);
	ck_assert_uint_eq(rep.space, EGPU_SPACE_GLOBAL);
	ck_assert_uint_eq(rep.size, 4);
	ck_assert_uint_eq(rep.addr, r.buf + N * sizeof(float));
	/* thread N: block N / BLOCK, thread N % BLOCK */
	ck_assert_uint_eq(rep.block[0], N / BLOCK);
	ck_assert_uint_eq(rep.thread[0], N % BLOCK);
	ck_assert_str_eq(rep.where, "just past the end of a 4,000-byte cudaMalloc allocation");
	ck_assert_uint_eq(rep.count, 1);
	ck_assert_uint_eq(egpu_memcheck_errors(r.mc), 1);
	ck_assert_int_eq(egpu_memcheck_report_at(r.mc, 1, &rep), EGPU_ENOENT);
	ck_assert_int_eq(egpu_memcheck_text(r.mc, false, &text, NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "egpu memcheck: 1 error at 1 site"));
	free(text);
	/* untracked: every store of fill is a use after free */
	ck_assert_int_eq(egpu_memcheck_untrack(r.mc, r.buf), 0);
	launch(&r, r.fill);
	ck_assert_int_eq(egpu_memcheck_poll(r.mc), 2);
	ck_assert_int_eq(egpu_memcheck_report_at(r.mc, 1, &rep), 0);
	ck_assert_str_eq(rep.kernel, "fill");
	ck_assert_uint_eq(rep.count, N);
	ck_assert_ptr_nonnull(strstr(rep.where, "that was freed (use after free)"));
	teardown(&r);
}
END_TEST

START_TEST(contained_store_dropped)
{
	struct rig r;
	float past = -1.0f;
	egpu_ctx *other;

	setup(&r, true);
	other = egpu_ctx_new(NULL);
	ck_assert_int_eq(egpu_memcheck_attach(other, r.mc), EGPU_EBUSY);
	egpu_ctx_free(other);
	launch(&r, r.fill_past);
	ck_assert_int_eq(egpu_memcheck_poll(r.mc), 1);
	CK_CU(cu()->cuMemcpyDtoH(&past, r.buf + N * sizeof(float), sizeof(past)));
	ck_assert(past == 0.0f);
	teardown(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("memcheck_api_gpu");
	TCase *tc = tcase_create("gpu");

	tu_require_gpu();
	tcase_add_test(tc, bad_store_reported_on_its_line);
	tcase_add_test(tc, contained_store_dropped);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, false); /* CUDA does not survive the fork */
}
