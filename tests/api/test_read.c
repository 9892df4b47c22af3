// SPDX-License-Identifier: MIT
/* Probes reading kernel arguments, accessed bytes and stored values
 * (bpf_egpu_read_param, bpf_egpu_read_mem, bpf_egpu_read_value), without a
 * GPU: the probes run on the CPU back end over a ctx built here, and their
 * PTX, instrumented offline, passes ptxas. Also examples/mem_trace's values
 * probe, on the CPU and in its example's kernel. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "egpu.h"
#include "egpu/ctx.h"
#include "mem_trace.h"
#include "test_util.h"

#define PARAMS_OBJ EGPU_TEST_BUILD "/params.bpf.o"
#define API_PTX EGPU_TEST_BUILD "/kernels.ptx"
#define MEM_PTX EGPU_TEST_BUILD "/memkernels.ptx"
#define VALUES_OBJ EGPU_TEST_BUILD "/mem_trace_values.bpf.o"
#define MEM_TRACE_PTX EGPU_TEST_BUILD "/kernels_mem_trace.ptx"

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

/* Run program @name of @o on the CPU with r1 = @c (the way it runs at its
 * site; egpu_prog_run refuses read_mem and read_value, which need one). */
static int64_t run_prog(egpu_obj *o, const char *name, void *c, size_t len)
{
	egpu_prog *p = egpu_obj_prog(o, name);
	struct jit_map maps[4];
	struct jit_input in;
	struct jit_host *host = NULL;
	int64_t r0;

	ck_assert_msg(p, "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_prog_verdict(p, NULL), 0);
	obj_host_jit_maps(o, maps);
	prog_jit_input(p, maps, &in);
	ck_assert_msg(!jit_host_new(&in, &host), "%s", egpu_errmsg());
	r0 = (int32_t)jit_host_call(host, c, len);
	jit_host_free(host);
	return r0;
}

static int64_t run_probe(const char *name, void *c, size_t len)
{
	return run_prog(obj, name, c, len);
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

/* An entry or exit probe through egpu_prog_run with @len parameter bytes. */
static int64_t run_with_params(const char *name, const void *params,
			       size_t len)
{
	EGPU_OPTS(egpu_run_opts, ro, .params = params, .params_len = len);
	egpu_prog *p = egpu_obj_prog(obj, name);

	ck_assert_msg(p, "%s", egpu_errmsg());
	ck_assert_msg(!egpu_prog_run(p, &ro), "%s: %s", name, egpu_errmsg());
	return (int32_t)ro.retval;
}

START_TEST(entry_probe_reads_an_argument)
{
	struct saxpy_params params = { .a = 2.0f, .n = 1000 };

	ck_assert_int_eq(run_with_params("record_n", &params, 28), 0);
	ck_assert_uint_eq(seen(0), 1000);
	ck_assert_int_eq(run_with_params("direct_n", &params, 28), 0);
	ck_assert_uint_eq(seen(4), 1000);
	/* The same read past the block's end: EFAULT, destination zeroed. */
	ck_assert_int_eq(run_with_params("read_past_end", &params, 28), -14);
	ck_assert_uint_eq(seen(1), 0);
	/* A kernel with a shorter block: n is not there. */
	ck_assert_int_eq(run_with_params("record_n", &params, 24), -14);
	ck_assert_uint_eq(seen(0), 0);
}
END_TEST

/* What egpu_prog_run refuses of a probe's parameters, saying why. */
START_TEST(probe_run_errors)
{
	struct saxpy_params params = { .n = 5 };
	egpu_prog *direct = egpu_obj_prog(obj, "direct_n");
	egpu_prog *mem = egpu_obj_prog(obj, "mem_values");
	EGPU_OPTS(egpu_run_opts, shorter, .params = &params, .params_len = 24);
	EGPU_OPTS(egpu_run_opts, no_bytes, .params_len = 28);
	EGPU_OPTS(egpu_run_opts, with_ctx, .ctx = &params, .ctx_len = 28,
		  .params = &params, .params_len = 28);
	EGPU_OPTS(egpu_run_opts, on_gpu, .params = &params, .params_len = 28,
		  .backend = EGPU_BACKEND_GPU);
	EGPU_OPTS(egpu_run_opts, plain);
	EGPU_OPTS(egpu_run_opts, mem_params, .params = &params, .params_len = 28);

	/* direct_n reads bytes 24..27 through ctx->params: 24 are too few */
	ck_assert_int_eq(egpu_prog_run(direct, &shorter), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "reads ctx->params up to byte 28; 24 parameter bytes given"));
	ck_assert_int_eq(egpu_prog_run(direct, &no_bytes), EGPU_EINVAL);
	ck_assert_int_eq(egpu_prog_run(direct, &with_ctx), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "either params"));
	ck_assert_int_eq(egpu_prog_run(direct, &on_gpu), EGPU_ENOTSUP);
	ck_assert_int_eq(egpu_prog_run(mem, &mem_params), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "params are for entry and exit probes"));
	/* record_n reads through the helper: no bytes is a run, -EFAULT */
	ck_assert_int_eq(egpu_prog_run(egpu_obj_prog(obj, "record_n"), &plain), 0);
	ck_assert_int_eq((int32_t)plain.retval, -14);
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

struct values {
	struct mt_value rec[4];
	int cnt;
};

static int keep_value(void *user, const void *data, size_t size)
{
	struct values *v = user;

	ck_assert_uint_eq(size, sizeof(struct mt_value));
	ck_assert_int_lt(v->cnt, 4);
	memcpy(&v->rec[v->cnt++], data, size);
	return 0;
}

/*
 * mem_trace's values probe (examples/mem_trace/mem_trace_values.bpf.c): a
 * store's record holds the bytes at its address (what it overwrites) and
 * the value it writes, a load's the bytes it reads; accesses of other
 * sizes make none.
 */
START_TEST(values_probe_records_what_it_reads)
{
	float old = 1.5f, stored = -2.25f;
	uint64_t word = 0x1122334455667788ull;
	uint32_t old_bits, stored_bits;
	struct egpu_mem_ctx mc = { .addr = (uintptr_t)&old, .site = 2, .size = 4,
				   .kind = EGPU_MEM_STORE,
				   .space = EGPU_SPACE_GLOBAL,
				   .value = (uintptr_t)&stored };
	struct values v = { .cnt = 0 };
	egpu_obj *vo = egpu_load(ctx, VALUES_OBJ, NULL);
	egpu_ringbuf *rb;

	ck_assert_msg(vo, "%s", egpu_errmsg());
	rb = egpu_ringbuf_new(egpu_obj_map(vo, "values"), keep_value, &v);
	ck_assert_msg(rb, "%s", egpu_errmsg());
	ck_assert_int_eq(run_prog(vo, "trace_values", &mc, sizeof(mc)), 0);
	mc = (struct egpu_mem_ctx){ .addr = (uintptr_t)&word, .site = 3, .size = 8,
				    .kind = EGPU_MEM_LOAD,
				    .space = EGPU_SPACE_GLOBAL };
	ck_assert_int_eq(run_prog(vo, "trace_values", &mc, sizeof(mc)), 0);
	mc.size = 2;
	ck_assert_int_eq(run_prog(vo, "trace_values", &mc, sizeof(mc)), 0);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), 2);
	memcpy(&old_bits, &old, 4);
	memcpy(&stored_bits, &stored, 4);
	ck_assert_uint_eq(v.rec[0].addr, (uintptr_t)&old);
	ck_assert_uint_eq(v.rec[0].before, old_bits);
	ck_assert_uint_eq(v.rec[0].stored, stored_bits);
	ck_assert_uint_eq(v.rec[0].site, 2);
	ck_assert_uint_eq(v.rec[0].size, 4);
	ck_assert_uint_eq(v.rec[0].kind, EGPU_MEM_STORE);
	ck_assert_uint_eq(v.rec[1].addr, (uintptr_t)&word);
	ck_assert_uint_eq(v.rec[1].before, word);
	ck_assert_uint_eq(v.rec[1].stored, 0);
	ck_assert_uint_eq(v.rec[1].site, 3);
	ck_assert_uint_eq(v.rec[1].size, 8);
	ck_assert_uint_eq(v.rec[1].kind, EGPU_MEM_LOAD);
	egpu_ringbuf_free(rb);
	egpu_obj_close(vo);
}
END_TEST

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

/*
 * The values probe in mem_trace's kernel, from its section alone: the five
 * global loads and stores of add_and_gather (not its parameter loads), into
 * PTX that ptxas takes; each store's value read from its register, with no
 * .local copy of it.
 */
START_TEST(values_probe_in_mem_trace_kernel)
{
	static const uint16_t kinds[] = { EGPU_MEM_LOAD, EGPU_MEM_LOAD,
					  EGPU_MEM_STORE, EGPU_MEM_LOAD,
					  EGPU_MEM_STORE };
	EGPU_OPTS(egpu_report, rep);
	size_t len, out_len;
	char *ptx = tu_read_file(MEM_TRACE_PTX, &len), *out = NULL, log[4096];
	egpu_obj *vo = egpu_load(ctx, VALUES_OBJ, NULL);

	ck_assert_msg(vo, "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_attach_all(vo), 1);
	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, &rep),
		      "%s", egpu_errmsg());
	ck_assert_uint_eq(rep.kernels_patched, 1);
	ck_assert_uint_eq(rep.warning_cnt, 0);
	ck_assert_uint_eq(rep.mem_site_cnt, 5);
	for (uint32_t i = 0; i < rep.mem_site_cnt; i++) {
		ck_assert_uint_eq(rep.mem_sites[i].kind, kinds[i]);
		ck_assert_uint_eq(rep.mem_sites[i].space, EGPU_SPACE_GLOBAL);
		ck_assert_uint_eq(rep.mem_sites[i].size, 4);
	}
	ck_assert_uint_eq(count(out, "cvt.u64.u32 \t%egpu_mb, %egpu_mw;"), 2);
	ck_assert_ptr_null(strstr(out, "_mv["));
	if (tu_have_ptxas())
		ck_assert_msg(tu_ptxas(out, out_len, "sm_90", false, log, sizeof(log)),
			      "ptxas refused it: %s", log);
	free(out);
	free(ptx);
	egpu_obj_close(vo);
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
	tcase_add_test(tc, probe_run_errors);
	tcase_add_test(tc, mem_probe_reads_the_accessed_value);
	tcase_add_test(tc, mem_probe_reads_the_stored_value);
	tcase_add_test(tc, stored_values_stay_in_registers);
	tcase_add_test(tc, reading_probes_assemble);
	tcase_add_test(tc, reading_probes_assemble_mem);
	tcase_add_test(tc, helpers_only_where_their_window_is);
	tcase_add_test(tc, values_probe_records_what_it_reads);
	tcase_add_test(tc, values_probe_in_mem_trace_kernel);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
