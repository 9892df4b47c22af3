/* SPDX-License-Identifier: MIT */
/*
 * The trace mode's modules on a GPU, loaded with the device runtime
 * compiled apart (egpu_module_load, egpu_ptx_link; docs/events.md, "The
 * runtime compiled apart"): the benchmark's vecadd and sgemm_tiled take
 * fewer registers than the same module loaded as one program
 * (runtime_max_registers < 0; statically 32 and 48 against 76 and 64),
 * and the application's JIT options reach the linker (its register
 * limit binds kernels and runtime, its info log is written); by default
 * a traced kernel keeps its untraced blocks per SM. Exits 77
 * without a GPU. The traces of such modules are checked by span_gpu_trace
 * (egpu_module_load links them by default).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cu.h"
#include "egpu.h"
#include "test_util.h"

#define SPAN_OBJ EGPU_TEST_BUILD "/span.bpf.o"
#define WORKLOADS EGPU_TEST_BUILD "/workloads.ptx"

static egpu_ctx *ctx;
static egpu_obj *obj;

static void setup(void)
{
	ctx = egpu_ctx_new(NULL);
	ck_assert_msg(ctx, "%s", egpu_errmsg());
	obj = egpu_load(ctx, SPAN_OBJ, NULL);
	ck_assert_msg(obj, "%s: %s", SPAN_OBJ, egpu_errmsg());
}

static void teardown(void)
{
	egpu_ctx_free(ctx);
}

static void trace_capped(int32_t runtime_regs, uint32_t max_registers)
{
	EGPU_OPTS(egpu_mem_trace_opts, o, .runtime_max_registers = runtime_regs,
		  .max_registers = max_registers);

	ck_assert_msg(!egpu_mem_trace_enable(ctx, egpu_obj_map(obj, "strace"), &o),
		      "%s", egpu_errmsg());
}

static void trace(int32_t runtime_regs)
{
	trace_capped(runtime_regs, 0);
}

static int kernel_regs(CUmodule mod, const char *kernel)
{
	int n = 0;

	ck_assert_msg(!cu_func_regs(mod, kernel, &n), "%s: %s", kernel,
		      egpu_errmsg());
	return n;
}

/* @kernel's registers in the benchmark's module traced and loaded by
 * egpu_module_load with @runtime_regs. */
static int loaded_regs(int32_t runtime_regs, const char *kernel)
{
	size_t len;
	char *ptx = tu_read_file(WORKLOADS, &len);
	CUmodule mod;
	int n;

	trace(runtime_regs);
	ck_assert_msg(!egpu_module_load(ctx, &mod, ptx, len), "%s", egpu_errmsg());
	n = kernel_regs(mod, kernel);
	CK_CU(cu()->cuModuleUnload(mod));
	free(ptx);
	return n;
}

START_TEST(fewer_registers)
{
	static const char *const kernels[] = { "vecadd", "sgemm_tiled" };

	for (size_t i = 0; i < 2; i++) {
		int apart = loaded_regs(0, kernels[i]);
		int whole = loaded_regs(-1, kernels[i]);

		printf("%s: %d registers with the runtime apart, %d as one module\n",
		       kernels[i], apart, whole);
		ck_assert_int_lt(apart, whole);
	}
}
END_TEST

/* Blocks of @threads an SM holds at @regs a thread, by registers and
 * threads alone (the CUDA occupancy calculator's rule). */
static int sm_blocks(int regs, int threads)
{
	int sm_regs, sm_threads, by_regs;

	ck_assert_int_eq(cu_device_attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
					&sm_regs), 0);
	ck_assert_int_eq(cu_device_attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
					&sm_threads), 0);
	by_regs = sm_regs / ((regs + 7) / 8 * 8 * threads);
	return by_regs < sm_threads / threads ? by_regs : sm_threads / threads;
}

/*
 * By default a traced kernel keeps its untraced blocks per SM: SGEMM's
 * 1,024-thread blocks (its .maxntid) two to an SM at its 32 registers,
 * where ptxas left free (EGPU_MAX_REGISTERS_ANY) took 48 and one block
 * on the H200 (printed).
 */
START_TEST(untraced_occupancy)
{
	static const struct { const char *name; int threads; } k[] = {
		{ "vecadd", 256 }, { "sgemm_tiled", 1024 },
	};
	size_t len;
	char *ptx = tu_read_file(WORKLOADS, &len);
	CUmodule plain, capped, free_;

	CK_CU(cu()->cuModuleLoadDataEx(&plain, ptx, 0, NULL, NULL));
	trace(0);
	ck_assert_msg(!egpu_module_load(ctx, &capped, ptx, len), "%s", egpu_errmsg());
	trace_capped(0, EGPU_MAX_REGISTERS_ANY);
	ck_assert_msg(!egpu_module_load(ctx, &free_, ptx, len), "%s", egpu_errmsg());
	for (size_t i = 0; i < 2; i++) {
		int p = kernel_regs(plain, k[i].name);
		int c = kernel_regs(capped, k[i].name);
		int f = kernel_regs(free_, k[i].name);

		printf("%s: %d registers untraced, %d traced (%d blocks of %d a SM, as untraced %d), %d left to ptxas (%d blocks)\n",
		       k[i].name, p, c, sm_blocks(c, k[i].threads), k[i].threads,
		       sm_blocks(p, k[i].threads), f, sm_blocks(f, k[i].threads));
		ck_assert_int_eq(sm_blocks(c, k[i].threads),
				 sm_blocks(p, k[i].threads));
	}
	/* no cap: never fewer registers than capped */
	ck_assert_int_ge(kernel_regs(free_, "sgemm_tiled"),
			 kernel_regs(capped, "sgemm_tiled"));
	CK_CU(cu()->cuModuleUnload(plain));
	CK_CU(cu()->cuModuleUnload(capped));
	CK_CU(cu()->cuModuleUnload(free_));
	free(ptx);
}
END_TEST

START_TEST(application_jit_options)
{
	char info[4096] = "";
	CUjit_option keys[] = { CU_JIT_MAX_REGISTERS, CU_JIT_INFO_LOG_BUFFER,
				CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE };
	void *vals[] = { (void *)(uintptr_t)24, info,
			 (void *)(uintptr_t)sizeof(info), (void *)(uintptr_t)1 };
	EGPU_OPTS(egpu_ptx_link_opts, o, .jit_cnt = 4, .jit_keys = keys,
		  .jit_vals = vals);
	size_t len, size;
	char *ptx = tu_read_file(WORKLOADS, &len), *out;
	void *cubin;
	CUmodule mod;
	struct egpu_report rep;

	trace(0);
	out = tu_instrument(ctx, ptx, &rep);
	ck_assert_msg(!egpu_ptx_link(ctx, out, &o, &cubin, &size), "%s",
		      egpu_errmsg());
	ck_assert_uint_gt(size, 0);
	ck_assert_msg(info[0], "the application's info log stayed empty");
	CK_CU(cu()->cuModuleLoadDataEx(&mod, cubin, 0, NULL, NULL));
	/* sgemm_tiled's own launch bounds (.maxntid) take precedence over
	 * a register limit given to the compiler (the H200 run: 48) */
	ck_assert_int_le(kernel_regs(mod, "vecadd"), 24);
	CK_CU(cu()->cuModuleUnload(mod));
	/* nothing to link apart: the application's PTX untraced */
	ck_assert_int_eq(egpu_ptx_link(ctx, ptx, NULL, &cubin, &size), EGPU_ENOENT);
	ck_assert_ptr_null(cubin);
	free(out);
	free(ptx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("trace_link_gpu");
	TCase *tc = tcase_create("link");

	tu_require_gpu();
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, fewer_registers);
	tcase_add_test(tc, untraced_occupancy);
	tcase_add_test(tc, application_jit_options);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, false); /* CUDA does not survive the fork */
}
