// SPDX-License-Identifier: MIT
/* Probes reading kernel arguments, accessed bytes and stored values
 * (bpf_egpu_read_param, bpf_egpu_read_mem, bpf_egpu_read_value), without a GPU: the probes run on the CPU back end
 * over a ctx built here, and their PTX, instrumented offline, passes ptxas. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "egpu.h"
#include "egpu/ctx.h"
#include "test_util.h"

#define PARAMS_OBJ EGPU_TEST_BUILD "/params.bpf.o"
#define API_PTX EGPU_TEST_BUILD "/kernels.ptx"
#define MEM_PTX EGPU_TEST_BUILD "/memkernels.ptx"

static egpu_ctx *ctx;
static egpu_obj *obj;

static void setup(void)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);

	ctx = egpu_ctx_new(&co);
	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, PARAMS_OBJ, NULL);
	ck_assert_msg(obj, "load: %s", egpu_errmsg());
}

static void teardown(void)
{
	egpu_ctx_free(ctx);
}

/* Run probe @name on the CPU with r1 = @c (the way it runs at its site). */
static int64_t run_probe(const char *name, void *c, size_t len)
{
	egpu_prog *p = egpu_obj_prog(obj, name);
	struct jit_map maps[4];
	struct jit_input in;
	struct jit_host *host = NULL;
	int64_t r0;

	ck_assert_msg(p, "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_prog_verdict(p, NULL), 0);
	obj_host_jit_maps(obj, maps);
	prog_jit_input(p, maps, &in);
	ck_assert_msg(!jit_host_new(&in, &host), "%s", egpu_errmsg());
	r0 = (int32_t)jit_host_call(host, c, len);
	jit_host_free(host);
	return r0;
}

static uint64_t seen(uint32_t key)
{
	uint64_t v = 0;

	ck_assert_int_eq(egpu_map_lookup(egpu_obj_map(obj, "seen"), &key, &v), 0);
	return v;
}

/* saxpy's parameter block: float a, x, y, int n (28 bytes). */
struct saxpy_params {
	float a;
	uint32_t pad;
	uint64_t x, y;
	int32_t n;
};

START_TEST(entry_probe_reads_an_argument)
{
	struct saxpy_params params = { .a = 2.0f, .n = 1000 };
	struct egpu_kernel_ctx kc = {
		.params = (uint64_t)(uintptr_t)&params, .params_size = 28,
		.attach = EGPU_CTX_ENTRY,
	};

	ck_assert_int_eq(run_probe("record_n", &kc, sizeof(kc)), 0);
	ck_assert_uint_eq(seen(0), 1000);
	ck_assert_int_eq(run_probe("direct_n", &kc, sizeof(kc)), 0);
	ck_assert_uint_eq(seen(4), 1000);
	/* The same read past the block's end: EFAULT, destination zeroed. */
	ck_assert_int_eq(run_probe("read_past_end", &kc, sizeof(kc)), -14);
	ck_assert_uint_eq(seen(1), 0);
	/* A kernel with a shorter block: n is not there. */
	kc.params_size = 24;
	ck_assert_int_eq(run_probe("record_n", &kc, sizeof(kc)), -14);
	ck_assert_uint_eq(seen(0), 0);
}
END_TEST

START_TEST(mem_probe_reads_the_accessed_value)
{
	uint32_t word = 0xdeadbeef;
	struct egpu_mem_ctx mc = {
		.addr = (uint64_t)(uintptr_t)&word, .size = 4,
		.kind = EGPU_MEM_STORE, .space = EGPU_SPACE_GLOBAL,
	};

	ck_assert_int_eq(run_probe("mem_values", &mc, sizeof(mc)), 0);
	ck_assert_uint_eq(seen(2), 0xdeadbeef);
	mc.kind = EGPU_MEM_LOAD;
	word = 7;
	ck_assert_int_eq(run_probe("mem_values", &mc, sizeof(mc)), 0);
	ck_assert_uint_eq(seen(3), 7);
}
END_TEST

START_TEST(mem_probe_reads_the_stored_value)
{
	uint32_t old = 1, stored = 0x7fc00000; /* a NaN */
	struct egpu_mem_ctx mc = {
		.addr = (uint64_t)(uintptr_t)&old, .size = 4,
		.kind = EGPU_MEM_STORE, .space = EGPU_SPACE_GLOBAL,
		.value = (uint64_t)(uintptr_t)&stored,
	};

	ck_assert_int_eq(run_probe("store_values", &mc, sizeof(mc)), 0);
	ck_assert_uint_eq(seen(5), 0x7fc00000);
	ck_assert_uint_eq(seen(6), 0);
	/* A load has no value: -14, counted in seen[6]. */
	mc.kind = EGPU_MEM_LOAD;
	mc.value = 0;
	ck_assert_int_eq(run_probe("store_values", &mc, sizeof(mc)), 0);
	ck_assert_uint_eq(seen(5), 0x7fc00000);
	ck_assert_uint_eq(seen(6), 1);
}
END_TEST

/* Instrumented offline, with the helpers inlined into the sites: ptxas. */
static void instrument(const char *path, struct egpu_report *rep)
{
	size_t len, out_len;
	char *ptx = tu_read_file(path, &len), *out = NULL, log[4096];

	ck_assert_int_eq(egpu_attach_all(obj), 5);
	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, rep),
		      "instrument %s: %s", path, egpu_errmsg());
	ck_assert_uint_ge(rep->kernels_patched, 1);
	if (tu_have_ptxas())
		ck_assert_msg(tu_ptxas(out, out_len, "sm_90", false, log, sizeof(log)),
			      "ptxas refused it: %s", log);
	free(out);
	free(ptx);
}

START_TEST(reading_probes_assemble)
{
	EGPU_OPTS(egpu_report, rep);

	instrument(API_PTX, &rep);
}
END_TEST

/* The section's /global: a[i], b[i], out[i], the flag; not the tile. */
START_TEST(reading_probes_assemble_mem)
{
	EGPU_OPTS(egpu_report, rep);

	instrument(MEM_PTX, &rep);
	ck_assert_uint_eq(rep.mem_site_cnt, 4);
	/* (instrument() ran ptxas over the stores' value copies, the flag's
	 * immediate under its predicate included.) */
	for (uint32_t i = 0; i < rep.mem_site_cnt; i++)
		ck_assert_uint_eq(rep.mem_sites[i].space, EGPU_SPACE_GLOBAL);
}
END_TEST

/*
 * store_values reads each 4-byte store's value with read_value: its copies
 * get the bytes in a register (%egpu_mb, core/mem_ctx.h), so vadd_mem's
 * instrumented code keeps nothing in local memory: no .local copy of the
 * value, no probe stack, no ctx.
 */
START_TEST(stored_values_stay_in_registers)
{
	EGPU_OPTS(egpu_report, rep);
	size_t len, out_len;
	char *ptx = tu_read_file(MEM_PTX, &len), *out = NULL, log[4096];

	ck_assert_ptr_nonnull(egpu_attach_kernel(egpu_obj_prog(obj, "store_values"),
						  "vadd_mem", EGPU_ATTACH_MEM, NULL));
	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, &rep),
		      "%s", egpu_errmsg());
	ck_assert_ptr_nonnull(strstr(out, "cvt.u64.u32 \t%egpu_mb, %egpu_mw;"));
	ck_assert_ptr_null(strstr(out, "_mv["));
	ck_assert_msg(!strstr(out, ".local .align") && !strstr(out, "st.local"),
		      "%s", out);
	if (tu_have_ptxas())
		ck_assert_msg(tu_ptxas(out, out_len, "sm_90", false, log, sizeof(log)),
			      "ptxas refused it: %s", log);
	free(out);
	free(ptx);
}
END_TEST

/*
 * direct_n reads ctx->params bytes 24..27: fill<int> (16 bytes of
 * parameters) gets no probe and a warning naming both, or with strict an
 * error; saxpy (28 bytes) gets it.
 */
START_TEST(direct_params_read_needs_the_bytes)
{
	egpu_prog *p = egpu_obj_prog(obj, "direct_n");
	EGPU_OPTS(egpu_attach_opts, strict, .strict = true);
	EGPU_OPTS(egpu_report, rep);
	size_t len, out_len;
	char *ptx = tu_read_file(API_PTX, &len), *out = NULL;
	egpu_link *l;

	ck_assert_ptr_nonnull(egpu_attach_kernel(p, "saxpy", EGPU_ATTACH_ENTRY, NULL));
	l = egpu_attach_kernel(p, "fill", EGPU_ATTACH_ENTRY, NULL);
	ck_assert_ptr_nonnull(l);
	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, &rep),
		      "%s", egpu_errmsg());
	ck_assert_uint_eq(rep.kernels_patched, 1);
	ck_assert_uint_eq(rep.warning_cnt, 1);
	ck_assert_ptr_nonnull(strstr(rep.warnings[0],
		"prog 'direct_n' reads ctx->params up to byte 28; kernel 'fill<int>' has 16 bytes of parameters"));
	free(out);
	egpu_link_destroy(l);
	ck_assert_ptr_nonnull(egpu_attach_kernel(p, "fill", EGPU_ATTACH_ENTRY, &strict));
	ck_assert_int_eq(egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, &rep),
			 EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "kernel 'fill<int>' has 16 bytes"));
	free(ptx);
}
END_TEST

static const char *refusal(const char *src_prog, int at)
{
	EGPU_OPTS(egpu_verify_opts, vo, .at = at, .at_set = true);
	egpu_prog *p = egpu_obj_prog(obj, src_prog);

	ck_assert_int_eq(egpu_prog_verify(p, &vo), EGPU_EVERIFY);
	free(vo.log);
	return egpu_errmsg();
}

/* Each helper where its window exists, and nowhere else. */
START_TEST(helpers_only_where_their_window_is)
{
	ck_assert_ptr_nonnull(strstr(refusal("record_n", EGPU_ATTACH_MEM),
				     "read_param#518 is not allowed in memory probes"));
	ck_assert_ptr_nonnull(strstr(refusal("mem_values", EGPU_ATTACH_ENTRY),
				     "read_mem#519 is not allowed in entry probes"));
	ck_assert_ptr_nonnull(strstr(refusal("store_values", EGPU_ATTACH_EXIT),
				     "read_value#520 is not allowed in exit probes"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("api_read");
	TCase *tc = tcase_create("read");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, direct_params_read_needs_the_bytes);
	tcase_add_test(tc, entry_probe_reads_an_argument);
	tcase_add_test(tc, mem_probe_reads_the_accessed_value);
	tcase_add_test(tc, mem_probe_reads_the_stored_value);
	tcase_add_test(tc, stored_values_stay_in_registers);
	tcase_add_test(tc, reading_probes_assemble);
	tcase_add_test(tc, reading_probes_assemble_mem);
	tcase_add_test(tc, helpers_only_where_their_window_is);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
