// SPDX-License-Identifier: MIT
/* Thread-local and per-SM maps without a GPU: thread-local values copied
 * into a kernel are registers (no load, store or .local for them in its
 * PTX), what cannot be kept in registers is refused with a reason, the
 * host cannot read them. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egpu.h"
#include "test_util.h"

#define TL_OBJ EGPU_TEST_BUILD "/tlocal.bpf.o"
#define API_PTX EGPU_TEST_BUILD "/kernels.ptx"

static const char *const probes[] = { "tl_entry", "tl_mem", "tl_exit" };

static egpu_ctx *ctx;
static egpu_obj *obj;

static egpu_obj *load_in(egpu_ctx *c)
{
	egpu_obj *o = egpu_load(c, TL_OBJ, NULL);

	ck_assert_msg(o, "load: %s", egpu_errmsg());
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		egpu_prog *p = egpu_obj_prog(o, probes[i]);

		ck_assert_msg(p, "%s", probes[i]);
		ck_assert_msg(egpu_attach_kernel(p, "saxpy",
						 egpu_prog_attach_point(p), NULL),
			      "attach %s: %s", probes[i], egpu_errmsg());
	}
	return o;
}

static void setup(void)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);

	ctx = egpu_ctx_new(&co);
	ck_assert_ptr_nonnull(ctx);
	obj = load_in(ctx);
}

static void teardown(void)
{
	egpu_ctx_free(ctx);
}

START_TEST(thread_local_values_are_registers)
{
	EGPU_OPTS(egpu_report, rep);
	size_t len, out_len;
	char *ptx = tu_read_file(API_PTX, &len), *out = NULL, *before, *after;

	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, &rep),
		      "instrument: %s", egpu_errmsg());
	ck_assert_uint_eq(rep.kernels_patched, 1);
	before = tu_kernel_text(ptx, "saxpy");
	after = tu_kernel_text(out, "saxpy");
	/* Three probes were copied in and share the kernel's registers. */
	ck_assert_ptr_nonnull(strstr(after, ".reg .b64 \t%egpu_tl_"));
	ck_assert_int_ge(tu_count(after, "%egpu_tl_"), 6);
	/* No memory for them: no stack, no store, no local access. */
	ck_assert_int_eq(tu_count(before, ".local"), 0);
	ck_assert_int_eq(tu_count(after, "\t.local"), 0); /* declarations */
	ck_assert_int_eq(tu_count(after, "cvta.local"), 0);
	ck_assert_int_eq(tu_count(after, "depot"), 0);
	ck_assert_int_eq(tu_count(after, "st.local"), 0);
	ck_assert_int_eq(tu_count(after, "ld.local"), 0);
	ck_assert_int_eq(tu_count(after, "\tst."), tu_count(before, "\tst."));
	ck_assert_int_eq(tu_count(after, "st.global"), tu_count(before, "st.global"));
	if (tu_have_ptxas()) {
		char log[4096];

		ck_assert_msg(tu_ptxas(out, out_len, "sm_90", false, log, sizeof(log)),
			      "ptxas: %s", log);
	}
	free(before);
	free(after);
	free(out);
	free(ptx);
}
END_TEST

START_TEST(host_cannot_read_thread_local)
{
	egpu_map *m = egpu_obj_map(obj, "tl");
	uint32_t k = 0;
	uint8_t v[16];

	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(egpu_map_type_str(egpu_map_type(m)), "thread_local");
	ck_assert_int_eq(egpu_map_lookup(m, &k, v), EGPU_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "registers"));
	ck_assert_int_eq(egpu_map_update(m, &k, v, 0), EGPU_ENOTSUP);
	ck_assert_int_eq(egpu_map_lookup_sum(m, &k, v), EGPU_ENOTSUP);
	ck_assert_int_eq(egpu_map_next_key(m, NULL, &k), EGPU_ENOTSUP);
}
END_TEST

static void assert_refused(const char *prog, const char *why)
{
	EGPU_OPTS(egpu_verify_opts, vo, .ctx_len = 8);
	egpu_prog *p = egpu_obj_prog(obj, prog);

	ck_assert_msg(p, "%s", prog);
	ck_assert_int_eq(egpu_prog_verify(p, &vo), EGPU_EVERIFY);
	ck_assert_msg(strstr(egpu_errmsg(), why), "%s: %s", prog, egpu_errmsg());
	free(vo.log);
}

START_TEST(what_registers_cannot_hold_is_refused)
{
	EGPU_OPTS(egpu_verify_opts, vo);

	assert_refused("bad_variable_key", "must be a constant");
	assert_refused("bad_escape", "cannot be passed to");
	assert_refused("bad_atomic", "atomic operation on thread-local map 'tl'");
	assert_refused("bad_update", "can only be looked up");
	/* A constant key in range: never NULL, used without a check. */
	ck_assert_int_eq(egpu_prog_verify(egpu_obj_prog(obj, "tl_entry"), &vo), 0);
	free(vo.log);
}
END_TEST

START_TEST(called_probes_refused)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true, .no_inline = true);
	egpu_ctx *c = egpu_ctx_new(&co);
	size_t len;
	char *ptx = tu_read_file(API_PTX, &len), *out = NULL;

	load_in(c);
	ck_assert_int_eq(egpu_instrument_ptx(c, ptx, len, &out, NULL, NULL),
			 EGPU_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "thread-local"));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "copied"));
	free(ptx);
	egpu_ctx_free(c);
}
END_TEST

/* Before the GPU an SM array has one copy, read as any array. */
START_TEST(sm_array_on_the_host)
{
	egpu_map *m = egpu_obj_map(obj, "per_sm");
	uint32_t k = 4;
	uint64_t v = 9, sum = 0;

	ck_assert_str_eq(egpu_map_type_str(egpu_map_type(m)), "sm_array");
	ck_assert_uint_eq(egpu_map_values_per_key(m), 1);
	ck_assert_int_eq(egpu_map_update(m, &k, &v, 0), 0);
	ck_assert_int_eq(egpu_map_lookup(m, &k, &sum), 0);
	ck_assert_uint_eq(sum, 9);
	ck_assert_int_eq(egpu_map_lookup_values(m, &k, &sum), 0);
	ck_assert_uint_eq(sum, 9);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tlocal");
	TCase *tc = tcase_create("tlocal");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, thread_local_values_are_registers);
	tcase_add_test(tc, host_cannot_read_thread_local);
	tcase_add_test(tc, what_registers_cannot_hold_is_refused);
	tcase_add_test(tc, called_probes_refused);
	tcase_add_test(tc, sm_array_on_the_host);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
