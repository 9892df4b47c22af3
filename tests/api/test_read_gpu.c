// SPDX-License-Identifier: MIT
/* Probes reading kernel arguments and accessed bytes on a GPU (ctest label
 * gpu; skipped without one): an entry probe records saxpy's n, a memory
 * probe sums the values vadd_mem's global loads read and its stores
 * overwrite, another the values its stores write (bpf_egpu_read_value),
 * compared with the host's sums of the same bytes. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cu.h"
#include "egpu.h"
#include "test_util.h"

#define PARAMS_OBJ EGPU_TEST_BUILD "/params.bpf.o"
#define API_PTX EGPU_TEST_BUILD "/kernels.ptx"
#define MEM_PTX EGPU_TEST_BUILD "/memkernels.ptx"
#define BLOCK 256 /* as memkernels.cu */
#define GRID 4
#define N (GRID * BLOCK)

static egpu_ctx *ctx;
static egpu_obj *obj;

static void setup(void)
{
	ctx = egpu_ctx_new(NULL);
	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, PARAMS_OBJ, NULL);
	ck_assert_msg(obj, "load: %s", egpu_errmsg());
	ck_assert_int_eq(egpu_attach_all(obj), 5);
}

static void teardown(void)
{
	egpu_ctx_free(ctx);
}

static uint64_t seen(uint32_t key)
{
	uint64_t v = 0;

	ck_assert_int_eq(egpu_map_lookup(egpu_obj_map(obj, "seen"), &key, &v), 0);
	return v;
}

static CUmodule load(const char *path)
{
	size_t len;
	char *ptx = tu_read_file(path, &len);
	CUmodule mod;

	ck_assert_msg(!egpu_module_load(ctx, &mod, ptx, len), "%s", egpu_errmsg());
	free(ptx);
	return mod;
}

/* A device copy of @n words of @host. */
static CUdeviceptr upload(const void *host, size_t n)
{
	CUdeviceptr d;

	CK_CU(cu()->cuMemAlloc(&d, n * 4));
	CK_CU(cu()->cuMemcpyHtoD(d, host, n * 4));
	return d;
}

START_TEST(entry_probe_records_n)
{
	const struct cu_driver *d = cu();
	CUmodule mod = load(API_PTX);
	static float x[N];
	CUdeviceptr dx = upload(x, N), dy = upload(x, N);
	float a = 2.0f;
	int n = 777;
	void *args[] = { &a, &dx, &dy, &n };
	CUfunction f;

	CK_CU(d->cuModuleGetFunction(&f, mod, "saxpy"));
	CK_CU(d->cuLaunchKernel(f, GRID, 1, 1, BLOCK, 1, 1, 0, NULL, args, NULL));
	CK_CU(d->cuCtxSynchronize());
	ck_assert_uint_eq(seen(0), 777);
	ck_assert_uint_eq(seen(4), 777); /* read through ctx->params */
	ck_assert_uint_eq(seen(1), 0); /* read past the block: zeroed */
	d->cuMemFree(dx);
	d->cuMemFree(dy);
}
END_TEST

START_TEST(mem_probe_sums_values)
{
	const struct cu_driver *d = cu();
	CUmodule mod = load(MEM_PTX);
	static uint32_t a[N], b[N], out[N];
	uint32_t flag = 12345;
	uint64_t loads = 0, stores = flag, written = 1; /* the flag's 1 */
	CUdeviceptr da, db, dout, dflag;
	CUfunction f;

	for (uint32_t i = 0; i < N; i++) {
		a[i] = i;              /* tiny floats: the bits are what count */
		b[i] = 3 * i + 1;
		out[i] = 100000 + i;   /* overwritten by the kernel's stores */
		loads += a[i] + b[i];
		stores += out[i];
		written += a[i] + b[i]; /* denormal floats add as integers */
	}
	da = upload(a, N);
	db = upload(b, N);
	dout = upload(out, N);
	dflag = upload(&flag, 1);
	void *args[] = { &da, &db, &dout, &dflag };

	CK_CU(d->cuModuleGetFunction(&f, mod, "vadd_mem"));
	CK_CU(d->cuLaunchKernel(f, GRID, 1, 1, BLOCK, 1, 1, 0, NULL, args, NULL));
	CK_CU(d->cuCtxSynchronize());
	ck_assert_uint_eq(seen(3), loads);
	ck_assert_uint_eq(seen(2), stores);
	ck_assert_uint_eq(seen(5), written);
	ck_assert_uint_eq(seen(6), 2 * N); /* the loads: no value */
	d->cuMemFree(da);
	d->cuMemFree(db);
	d->cuMemFree(dout);
	d->cuMemFree(dflag);
}
END_TEST

int main(void)
{
	Suite *s;
	TCase *tc;

	tu_require_gpu();
	s = suite_create("api_read_gpu");
	tc = tcase_create("gpu");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, entry_probe_records_n);
	tcase_add_test(tc, mem_probe_sums_values);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, false);
}
