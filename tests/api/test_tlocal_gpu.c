// SPDX-License-Identifier: MIT
/* Thread-local and per-SM maps on a GPU (ctest label gpu; skipped without
 * one): the probes of saxpy share each thread's registers from entry
 * through its memory accesses to exit, every thread lands in the per-SM
 * timing histogram once, and each SM's copy equals a reference counted
 * in an ARRAY at index %smid. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cu.h"
#include "egpu.h"
#include "egpu/ctx.h"
#include "test_util.h"

#define TL_OBJ EGPU_TEST_BUILD "/tlocal.bpf.o"
#define API_PTX EGPU_TEST_BUILD "/kernels.ptx"
#define BLOCK 256
#define GRID 4100 /* 1,049,600 threads, 1,000 return early */
#define N (GRID * BLOCK - 1000)
#define REF_SMS 1024
#define BUCKETS 32

static void run_saxpy(CUmodule mod)
{
	const struct cu_driver *d = cu();
	CUdeviceptr dx, dy;
	CUfunction f;
	float a = 2.0f;
	int n = N;
	void *args[] = { &a, &dx, &dy, &n };

	CK_CU(d->cuModuleGetFunction(&f, mod, "saxpy"));
	CK_CU(d->cuMemAlloc(&dx, N * sizeof(float)));
	CK_CU(d->cuMemAlloc(&dy, N * sizeof(float)));
	CK_CU(d->cuMemsetD8(dx, 0, N * sizeof(float)));
	CK_CU(d->cuMemsetD8(dy, 0, N * sizeof(float)));
	CK_CU(d->cuLaunchKernel(f, GRID, 1, 1, BLOCK, 1, 1, 0, NULL, args, NULL));
	CK_CU(d->cuCtxSynchronize());
	d->cuMemFree(dx);
	d->cuMemFree(dy);
}

static uint64_t sum_of(egpu_map *m, uint32_t key)
{
	uint64_t v = 0;

	ck_assert_msg(!egpu_map_lookup(m, &key, &v), "%s", egpu_errmsg());
	return v;
}

START_TEST(thread_local_and_per_sm)
{
	EGPU_OPTS(egpu_attach_opts, global, .mem_spaces = 1u << EGPU_SPACE_GLOBAL);
	egpu_ctx *ctx = egpu_ctx_new(NULL);
	egpu_obj *obj = egpu_load(ctx, TL_OBJ, NULL);
	egpu_map *per_sm, *ref;
	uint64_t *vals, refs[REF_SMS], hist = 0, k0;
	const char *names[] = { "tl_entry", "tl_mem", "tl_exit" };
	uint32_t slots, k;
	size_t len;
	char *ptx;
	CUmodule mod;

	ck_assert_msg(obj, "%s", egpu_errmsg());
	for (int i = 0; i < 3; i++) {
		egpu_prog *p = egpu_obj_prog(obj, names[i]);
		enum egpu_attach_point at = egpu_prog_attach_point(p);

		ck_assert_msg(egpu_attach_kernel(p, "saxpy", at,
						 at == EGPU_ATTACH_MEM ? &global : NULL),
			      "%s", egpu_errmsg());
	}
	ptx = tu_read_file(API_PTX, &len);
	ck_assert_msg(!egpu_module_load(ctx, &mod, ptx, len), "%s", egpu_errmsg());
	run_saxpy(mod);
	per_sm = egpu_obj_map(obj, "per_sm");
	ref = egpu_obj_map(obj, "ref_sm");
	/* Every thread saw its own entry's values at exit, once. */
	ck_assert_uint_eq(sum_of(per_sm, 0), GRID * BLOCK);
	ck_assert_uint_eq(sum_of(per_sm, 1), 0);
	/* ld x[i], ld y[i], st y[i] counted in a register by the mem probe */
	ck_assert_uint_eq(sum_of(per_sm, 2), 3ull * N);
	for (k = 3; k < 3 + BUCKETS; k++)
		hist += sum_of(per_sm, k);
	ck_assert_uint_eq(hist, GRID * BLOCK);
	/* Each SM's copy against the reference counted at %smid. */
	slots = egpu_map_values_per_key(per_sm);
	ck_assert_uint_ge(slots, 2);
	ck_assert_uint_eq(slots & (slots - 1), 0);
	vals = calloc(slots, sizeof(*vals));
	k = 0;
	ck_assert_int_eq(egpu_map_lookup_values(per_sm, &k, vals), 0);
	for (k = 0; k < REF_SMS; k++)
		ck_assert_int_eq(egpu_map_lookup(ref, &k, &refs[k]), 0);
	k0 = 0;
	for (k = 0; k < REF_SMS; k++) {
		if (k < slots)
			ck_assert_msg(vals[k] == refs[k], "SM %u: %llu, reference %llu",
				      k, (unsigned long long)vals[k],
				      (unsigned long long)refs[k]);
		else
			ck_assert_uint_eq(refs[k], 0);
		k0 += refs[k];
	}
	ck_assert_uint_eq(k0, GRID * BLOCK);
	free(vals);
	cu()->cuModuleUnload(mod);
	free(ptx);
	egpu_ctx_free(ctx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tlocal_gpu");
	TCase *tc = tcase_create("tlocal_gpu");

	tu_require_gpu();
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, thread_local_and_per_sm);
	suite_add_tcase(s, tc);
	/* One process: CUDA, started by tu_require_gpu, does not survive fork. */
	return tu_run_suite(s, false);
}
