// SPDX-License-Identifier: MIT
/*
 * User helpers called from the GPU (ctest label gpu; skipped without one):
 * every call arrives exactly once and in the order its thread made it,
 * buffer arguments arrive as copied, a full call ring drops and counts,
 * and the time of a kernel calling a helper from every warp beside the
 * same kernel without probes.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cu.h"
#include "egpu.h"
#include "test_util.h"

#define OBJ EGPU_TEST_BUILD "/gpu_helpers.bpf.o"
#define PTX EGPU_TEST_BUILD "/kernels.ptx"
#define BLOCK 256

static egpu_ctx *ctx;
static CUmodule mod;
static char *ptx;
static size_t ptx_len;

/* What the helpers saw; they run on one consumer at a time. */
static uint8_t *next_k;         /* per thread: the call number expected */
static uint64_t calls, wrong;   /* calls made; calls out of order or bad */
static uint8_t *seen;           /* per thread: flood calls made */

static uint64_t on_seq(uint64_t t, uint64_t k)
{
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (next_k[t] != k)
		wrong++;
	next_k[t] = (uint8_t)(k + 1);
	return 0;
}

static uint64_t on_buf(const uint64_t *b)
{
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (b[1] != ~b[0] || next_k[b[0]] != 2)
		wrong++;
	return 0;
}

static uint64_t on_warp(uint64_t warp)
{
	(void)warp;
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	return 0;
}

static uint64_t on_flood(uint64_t t)
{
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (seen[t]++)
		wrong++;
	return 0;
}

static void setup(void)
{
	egpu_obj *obj;

	ctx = egpu_ctx_new(NULL);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10000, "on_seq",
		(void *)on_seq, "u64 (u64, u64)", NULL), 0);
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10001, "on_buf",
		(void *)on_buf, "u64 (const u8[16])", NULL), 0);
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10002, "on_warp",
		(void *)on_warp, "u64 (u64)", NULL), 0);
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10003, "on_flood",
		(void *)on_flood, "u64 (u64)", NULL), 0);
	obj = egpu_load(ctx, OBJ, NULL);
	ck_assert_msg(obj, "load: %s", egpu_errmsg());
	ck_assert_int_eq(egpu_attach_all(obj), 3);
	ptx = tu_read_file(PTX, &ptx_len);
	ck_assert_msg(!egpu_module_load(ctx, &mod, ptx, ptx_len), "%s",
		      egpu_errmsg());
	calls = wrong = 0;
}

static void teardown(void)
{
	cu()->cuModuleUnload(mod);
	egpu_ctx_free(ctx);
	free(ptx);
}

static void launch(CUmodule m, const char *name, unsigned grid, void **args)
{
	const struct cu_driver *d = cu();
	CUfunction f;

	CK_CU(d->cuModuleGetFunction(&f, m, name));
	CK_CU(d->cuLaunchKernel(f, grid, 1, 1, BLOCK, 1, 1, 0, NULL, args,
				NULL));
	CK_CU(d->cuCtxSynchronize());
}

/* Poll until @want calls were made or 10 s passed. */
static void wait_calls(uint64_t want)
{
	for (int i = 0; i < 1000 && __atomic_load_n(&calls, __ATOMIC_RELAXED) <
	     want; i++)
		ck_assert_int_ge(egpu_helper_poll(ctx, 10), 0);
}

START_TEST(calls_once_in_order_per_thread)
{
	enum { GRID = 64, THREADS = GRID * BLOCK };
	CUdeviceptr out;
	void *args[] = { &out };

	next_k = calloc(THREADS, 1);
	CK_CU(cu()->cuMemAlloc(&out, THREADS * sizeof(float)));
	launch(mod, "ordered", GRID, args);
	wait_calls(4 * THREADS);
	ck_assert_int_eq(egpu_helper_poll(ctx, 0), 0); /* nothing more */
	ck_assert_uint_eq(calls, 4 * THREADS);
	ck_assert_uint_eq(wrong, 0);
	for (int t = 0; t < THREADS; t++)
		ck_assert_uint_eq(next_k[t], 3);
	ck_assert_uint_eq(egpu_helper_drops(ctx), 0);
	cu()->cuMemFree(out);
	free(next_k);
}
END_TEST

START_TEST(full_ring_drops_and_counts)
{
	enum { GRID = 2048, THREADS = GRID * BLOCK };
	CUdeviceptr out;
	void *args[] = { &out };
	int n;

	seen = calloc(THREADS, 1);
	ck_assert_int_eq(egpu_helper_set_dispatch(ctx, EGPU_DISPATCH_POLL), 0);
	CK_CU(cu()->cuMemAlloc(&out, THREADS * sizeof(float)));
	launch(mod, "flood", GRID, args);
	while ((n = egpu_helper_poll(ctx, 0)) > 0)
		;
	ck_assert_int_eq(n, 0);
	printf("flood: %d calls, %" PRIu64 " made, %" PRIu64 " dropped\n",
	       THREADS, calls, egpu_helper_drops(ctx));
	ck_assert_uint_gt(egpu_helper_drops(ctx), 0);
	ck_assert_uint_eq(calls + egpu_helper_drops(ctx), THREADS);
	ck_assert_uint_eq(wrong, 0);
	cu()->cuMemFree(out);
	free(seen);
}
END_TEST

/* Best of @runs launches of kernel "timed" of @m, in ms. */
static float best_ms(CUmodule m, unsigned grid, CUdeviceptr out, int runs)
{
	const struct cu_driver *d = cu();
	int iters = 2000;
	void *args[] = { &out, &iters };
	float best = 1e30f, ms;
	CUevent a, b;
	CUfunction f;

	CK_CU(d->cuModuleGetFunction(&f, m, "timed"));
	CK_CU(d->cuEventCreate(&a, 0));
	CK_CU(d->cuEventCreate(&b, 0));
	for (int i = 0; i < runs; i++) {
		CK_CU(d->cuEventRecord(a, NULL));
		CK_CU(d->cuLaunchKernel(f, grid, 1, 1, BLOCK, 1, 1, 0, NULL,
					args, NULL));
		CK_CU(d->cuEventRecord(b, NULL));
		CK_CU(d->cuEventSynchronize(b));
		CK_CU(d->cuEventElapsedTime(&ms, a, b));
		best = ms < best ? ms : best;
	}
	d->cuEventDestroy(a);
	d->cuEventDestroy(b);
	return best;
}

START_TEST(kernel_time_with_calls_from_every_warp)
{
	enum { GRID = 4096, THREADS = GRID * BLOCK, RUNS = 5 };
	const struct cu_driver *d = cu();
	CUmodule plain;
	CUdeviceptr out;
	float base, probed;

	CK_CU(d->cuModuleLoadDataEx(&plain, ptx, 0, NULL, NULL));
	CK_CU(d->cuMemAlloc(&out, THREADS * sizeof(float)));
	best_ms(plain, GRID, out, 1); /* warm up both */
	best_ms(mod, GRID, out, 1);
	base = best_ms(plain, GRID, out, RUNS);
	probed = best_ms(mod, GRID, out, RUNS);
	wait_calls((uint64_t)(RUNS + 1) * THREADS / 32);
	printf("kernel 'timed' (%d threads): plain %.3f ms, one user helper "
	       "call per warp %.3f ms: %.3fx; %" PRIu64 " calls made, %"
	       PRIu64 " dropped\n", THREADS, base, probed, probed / base,
	       calls, egpu_helper_drops(ctx));
	ck_assert_uint_eq(calls + egpu_helper_drops(ctx),
			  (uint64_t)(RUNS + 1) * THREADS / 32);
	d->cuMemFree(out);
	d->cuModuleUnload(plain);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("helpers_gpu");
	TCase *tc = tcase_create("gpu");

	tu_require_gpu();
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, calls_once_in_order_per_thread);
	tcase_add_test(tc, full_ring_drops_and_counts);
	tcase_add_test(tc, kernel_time_with_calls_from_every_warp);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, false); /* CUDA does not survive fork */
}
