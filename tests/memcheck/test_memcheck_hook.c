// SPDX-License-Identifier: MIT
/*
 * egpu memcheck's hooks without a GPU: which wrapper a lookup gets (a
 * second function under one name, the per-thread stream variant, gets the
 * second wrapper; a third is left alone; our own wrapper handed back stays
 * ours), cuGetProcAddress's unversioned names mapped to the _v2 the
 * wrappers are, nothing wrapped with EGPU_MEMCHECK unset, and a wrapper
 * always calling the driver's function it stands for, even when the table
 * cannot be made (no GPU here: memcheck turns itself off and says so).
 * The module variables a load adds come from the PTX's declarations.
 * hook.c stays out: the exports have no driver lookup here.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "attach/attach.h"
#include "memcheck/memcheck_globals.h"
#include "attach/memcheck_hook.h"
#include "test_util.h"

static int calls;
static CUdeviceptr given;

static CUresult fake_alloc_async(CUdeviceptr *p, size_t n, CUstream s)
{
	(void)s;
	calls++;
	*p = given += n;
	return CUDA_SUCCESS;
}

static CUresult fake_alloc_async_ptsz(CUdeviceptr *p, size_t n, CUstream s)
{
	return fake_alloc_async(p, n, s);
}

static CUresult fake_third(CUdeviceptr *p, size_t n, CUstream s)
{
	return fake_alloc_async(p, n, s);
}

static CUresult fake_free(CUdeviceptr p)
{
	(void)p;
	calls++;
	return CUDA_ERROR_INVALID_VALUE;
}

/* Each test runs in a process of its own: the hooks read EGPU_MEMCHECK
 * once. */
START_TEST(unset_wraps_nothing)
{
	unsetenv("EGPU_MEMCHECK");
	ck_assert_ptr_null(memcheck_wrap("cuMemAlloc_v2", (void *)fake_free));
}
END_TEST

START_TEST(lookups)
{
	typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t, CUstream);
	void *a, *b, *f;
	CUdeviceptr p = 0;

	setenv("EGPU_MEMCHECK", "1", 1);
	ck_assert_ptr_null(memcheck_wrap("cuMemAlloc_v2", NULL));
	ck_assert_ptr_null(memcheck_wrap("cuMemAlloc", (void *)fake_free));
	ck_assert_ptr_null(memcheck_wrap("cuLaunchKernel", (void *)fake_free));
	a = memcheck_wrap("cuMemAllocAsync", (void *)fake_alloc_async);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_ne(a, (void *)fake_alloc_async);
	ck_assert_ptr_eq(memcheck_wrap("cuMemAllocAsync", (void *)fake_alloc_async), a);
	ck_assert_ptr_eq(memcheck_wrap("cuMemAllocAsync", a), a);
	b = memcheck_wrap("cuMemAllocAsync", (void *)fake_alloc_async_ptsz);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_ne(a, b);
	ck_assert_ptr_eq(memcheck_wrap("cuMemAllocAsync_ptsz",
				       (void *)fake_alloc_async_ptsz), b);
	ck_assert_ptr_null(memcheck_wrap("cuMemAllocAsync", (void *)fake_third));
	f = memcheck_wrap("cuMemFree_v2", (void *)fake_free);
	ck_assert_ptr_nonnull(f);
	/* each wrapper calls its own driver function; the table cannot be
	 * made without a GPU, and the call still goes through */
	calls = 0;
	ck_assert_int_eq(((alloc_fn)a)(&p, 64, NULL), CUDA_SUCCESS);
	ck_assert_int_eq(calls, 1);
	ck_assert_uint_eq(p, given);
	ck_assert_int_eq(((alloc_fn)b)(&p, 64, NULL), CUDA_SUCCESS);
	ck_assert_int_eq(calls, 2);
	ck_assert_ptr_null(memcheck_table());
	/* off now: later lookups are left alone, wrappers handed out before
	 * still pass through, a failing call's result is the driver's */
	ck_assert_ptr_null(memcheck_wrap("cuMemMap", (void *)fake_free));
	ck_assert_int_eq(((CUresult(*)(CUdeviceptr))f)(p), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(calls, 3);
}
END_TEST

START_TEST(proc_names)
{
	ck_assert_str_eq(memcheck_proc_name("cuMemAlloc", 13000), "cuMemAlloc_v2");
	ck_assert_str_eq(memcheck_proc_name("cuMemAlloc", 2000), "cuMemAlloc");
	ck_assert_str_eq(memcheck_proc_name("cuMemHostRegister", 6000),
			 "cuMemHostRegister");
	ck_assert_str_eq(memcheck_proc_name("cuMemHostRegister", 6050),
			 "cuMemHostRegister_v2");
	ck_assert_str_eq(memcheck_proc_name("cuModuleGetGlobal", 12000),
			 "cuModuleGetGlobal_v2");
	ck_assert_str_eq(memcheck_proc_name("cuMemAllocAsync", 12000),
			 "cuMemAllocAsync");
}
END_TEST

/* The variables a module defines in global and constant memory; extern
 * declarations, shared variables, functions and the device runtime's
 * own variables (memcheck's buffers) are not. */
START_TEST(module_variables)
{
	static const char ptx[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".extern .global .align 4 .b8 elsewhere[16];\n"
		".visible .global .align 4 .b8 table[400];\n"
		".global .align 8 .u64 counter;\n"
		".visible .global .align 8 .u64 egpu_dev_mc_cell = 4096;\n"
		".visible .const .align 4 .f32 coef[16] = {0f3F800000};\n"
		".shared .align 4 .b8 tile[1024];\n"
		".visible .entry k(.param .u64 k_param_0)\n{\n\tret;\n}\n";
	char **names = NULL;
	size_t n = 0;

	ck_assert_int_eq(mc_ptx_globals(ptx, sizeof(ptx), &names, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(names[0], "table");
	ck_assert_str_eq(names[1], "counter");
	ck_assert_str_eq(names[2], "coef");
	mc_globals_free(names, n);
	ck_assert_int_eq(mc_ptx_globals("not ptx {", 9, &names, &n), EGPU_EFORMAT);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("memcheck_hook");
	TCase *tc = tcase_create("hook");

	tcase_add_test(tc, unset_wraps_nothing);
	tcase_add_test(tc, lookups);
	tcase_add_test(tc, proc_names);
	tcase_add_test(tc, module_variables);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite(), true) ? 1 : 0;
}
