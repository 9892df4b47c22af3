/* SPDX-License-Identifier: MIT */
/*
 * The memory-probe examples' programs (examples/mem_trace, memlatency)
 * through the public API without a GPU: loaded, verified for memory probes,
 * translated to PTX that ptxas accepts, and, where they need no GPU-only
 * helper, run on the CPU with a struct egpu_mem_ctx (mem_trace's values
 * probe: tests/api/test_read.c). And the exit probe of test_simt_gpu,
 * instrumented offline.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "egpu.h"
#include "egpu/ctx.h"
#include "test_util.h"

static const char *const probes[] = {
	EGPU_TEST_BUILD "/mem_count.bpf.o",
	EGPU_TEST_BUILD "/mem_trace.bpf.o",
	EGPU_TEST_BUILD "/memlatency.bpf.o",
	EGPU_TEST_BUILD "/mem_trace_values.bpf.o",
};

static egpu_ctx *ctx;

static egpu_prog *only_prog(const char *path, egpu_obj **obj)
{
	egpu_prog *p;

	*obj = egpu_load(ctx, path, NULL);
	ck_assert_msg(*obj, "%s: %s", path, egpu_errmsg());
	p = egpu_obj_next_prog(*obj, NULL);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(egpu_prog_attach_point(p), EGPU_ATTACH_MEM);
	return p;
}

START_TEST(verified_translated_assembled)
{
	EGPU_OPTS(egpu_verify_opts, vo);
	EGPU_OPTS(egpu_jit_opts, jo, .sm = "sm_90");
	char *ptx = NULL, log[2048];
	egpu_obj *obj;
	egpu_prog *p = only_prog(probes[_i], &obj);
	size_t len;

	ck_assert_msg(!egpu_prog_verify(p, &vo), "%s", egpu_errmsg());
	free(vo.log);
	ck_assert_msg(!egpu_prog_jit_ptx(p, &jo, &ptx, &len), "%s", egpu_errmsg());
	if (tu_have_ptxas())
		ck_assert_msg(tu_ptxas(ptx, len, "sm_90", true, log, sizeof(log)),
			      "%s:\n%s", probes[_i], log);
	free(ptx);
	egpu_obj_close(obj);
}
END_TEST

/*
 * On the CPU (one lane) the counting probe adds one access to its site's
 * counter, and nothing for other state spaces.
 */
START_TEST(count_probe_on_the_cpu)
{
	struct egpu_mem_ctx mc = { .addr = 0x1000, .site = 3, .size = 16,
				   .kind = EGPU_MEM_LOAD,
				   .space = EGPU_SPACE_GLOBAL };
	EGPU_OPTS(egpu_run_opts, ro, .ctx = &mc, .ctx_len = sizeof(mc));
	egpu_obj *obj;
	egpu_prog *p = only_prog(probes[0], &obj);
	egpu_map *counts = egpu_obj_map(obj, "counts");
	static uint64_t v[4096]; /* struct mt_site_counts: 1024 x (accesses, pad) */
	uint32_t site = 3;

	ck_assert_ptr_nonnull(counts);
	ck_assert_uint_eq(egpu_map_value_size(counts), sizeof(v));
	for (int i = 0; i < 2; i++)
		ck_assert_msg(!egpu_prog_run(p, &ro), "%s", egpu_errmsg());
	mc.space = EGPU_SPACE_SHARED;
	ck_assert_msg(!egpu_prog_run(p, &ro), "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_map_lookup(counts, &site, v), 0);
	ck_assert_uint_eq(v[0], 2); /* SM 0, warp 0 on the CPU: slot 0 */
	for (int i = 1; i < 4096; i++)
		ck_assert_uint_eq(v[i], 0);
	egpu_obj_close(obj);
}
END_TEST

static double run_ms(egpu_prog *p, struct egpu_mem_ctx *mc)
{
	EGPU_OPTS(egpu_run_opts, ro, .ctx = mc, .ctx_len = sizeof(*mc));

	ck_assert_msg(!egpu_prog_run(p, &ro), "%s", egpu_errmsg());
	return ro.run_ns / 1e6;
}

/* memlatency's probe sleeps the map's delay before loads, not stores. */
START_TEST(latency_probe_on_the_cpu)
{
	struct egpu_mem_ctx mc = { .addr = 0x1000, .size = 4,
				   .kind = EGPU_MEM_LOAD,
				   .space = EGPU_SPACE_GLOBAL };
	egpu_obj *obj;
	egpu_prog *p = only_prog(probes[2], &obj);
	uint64_t ns = 400000;
	uint32_t zero = 0;

	ck_assert_int_eq(egpu_map_update(egpu_obj_map(obj, "delay"), &zero, &ns, 0), 0);
	ck_assert_double_ge(run_ms(p, &mc), 0.4);
	mc.kind = EGPU_MEM_STORE;
	ck_assert_double_lt(run_ms(p, &mc), 0.4);
	egpu_obj_close(obj);
}
END_TEST

/* The exit probe calling every SIMT helper, copied into a kernel. */
START_TEST(exit_probe_inlined_and_assembled)
{
	EGPU_OPTS(egpu_report, rep);
	size_t len, out_len;
	char *ptx = tu_read_file(EGPU_TEST_BUILD "/kernels.ptx", &len), *out = NULL;
	char log[2048];
	egpu_obj *obj = egpu_load(ctx, EGPU_TEST_BUILD "/simt_exit.bpf.o", NULL);

	ck_assert_msg(obj, "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_attach_all(obj), 1);
	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, &rep),
		      "%s", egpu_errmsg());
	ck_assert_uint_eq(rep.kernels_patched, 1);
	ck_assert_uint_ge(rep.kernels[0].inlined, 1);
	ck_assert_ptr_nonnull(strstr(out, "shfl.sync.idx.b32"));
	if (tu_have_ptxas())
		ck_assert_msg(tu_ptxas(out, out_len, "sm_90", false, log, sizeof(log)),
			      "%s", log);
	free(out);
	free(ptx);
	egpu_obj_close(obj);
}
END_TEST

/*
 * Each example's memory probe copied into every access of a kernel reads
 * its ctx as constants and registers: no site builds a ctx in memory.
 */
START_TEST(mem_probe_ctx_folded)
{
	EGPU_OPTS(egpu_report, rep);
	size_t len, out_len;
	char *ptx = tu_read_file(EGPU_TEST_BUILD "/kernels.ptx", &len), *out = NULL;
	egpu_obj *obj;
	egpu_prog *p = only_prog(probes[_i], &obj);

	ck_assert_ptr_nonnull(egpu_attach_kernel(p, "*", EGPU_ATTACH_MEM, NULL));
	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, &rep),
		      "%s", egpu_errmsg());
	ck_assert_uint_gt(rep.mem_site_cnt, 0);
	ck_assert_msg(!strstr(out, "_mctx"), "%s: a site builds its ctx in memory",
		      probes[_i]);
	free(out);
	free(ptx);
	egpu_obj_close(obj);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("simt_probes");
	TCase *tc = tcase_create("probes");
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);
	int rc;

	ctx = egpu_ctx_new(&co);
	if (!ctx)
		return 1;
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, verified_translated_assembled, 0,
			    (int)(sizeof(probes) / sizeof(probes[0])));
	tcase_add_test(tc, count_probe_on_the_cpu);
	tcase_add_test(tc, latency_probe_on_the_cpu);
	tcase_add_test(tc, exit_probe_inlined_and_assembled);
	tcase_add_loop_test(tc, mem_probe_ctx_folded, 0,
			    (int)(sizeof(probes) / sizeof(probes[0])));
	suite_add_tcase(s, tc);
	rc = tu_run_suite(s, false);
	egpu_ctx_free(ctx);
	return rc;
}
