/* SPDX-License-Identifier: MIT */
/*
 * User helpers on the CPU back end: every signature shape called directly
 * by the JIT, generic helpers through libffi closures, the libffi call the
 * GPU dispatcher makes, wrong calls refused by the verifier, and bad
 * registrations refused with a message.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "egpu.h"
#include "test_util.h"

#define OBJ EGPU_TEST_BUILD "/helpers.bpf.o"
#define GPU_OBJ EGPU_TEST_BUILD "/gpu_helpers.bpf.o"
#define GPU_PTX EGPU_TEST_BUILD "/kernels.ptx"

static uint64_t noted;

static uint64_t add5(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		     uint64_t e)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e;
}

static void note(uint64_t v)
{
	noted = v;
}

static uint64_t sum(const uint8_t *p, uint64_t extra)
{
	uint64_t s = extra;

	for (int i = 0; i < 16; i++)
		s += p[i];
	return s;
}

static uint64_t fill(uint8_t *p)
{
	memset(p, 0x11, 8);
	return 8;
}

static uint64_t none(void)
{
	return 42;
}

static egpu_ctx *ctx_with_helpers(void)
{
	egpu_ctx *ctx = egpu_ctx_new(NULL);

	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10000, "add5", (void *)add5,
		"u64 (u64, u64, u64, u64, u64)", NULL), 0);
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10001, "note", (void *)note,
		"void(u64)", NULL), 0);
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10002, "sum", (void *)sum,
		"u64 (const u8[16], u64)", NULL), 0);
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10003, "fill", (void *)fill,
		"u64 (u8[8])", NULL), 0);
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10004, "none", (void *)none,
		"u64 (void)", NULL), 0);
	return ctx;
}

static int run(egpu_obj *obj, const char *name, uint64_t *ret)
{
	EGPU_OPTS(egpu_run_opts, o);
	int err = egpu_prog_run(egpu_obj_prog(obj, name), &o);

	*ret = o.retval;
	return err;
}

START_TEST(every_shape_called)
{
	egpu_ctx *ctx = ctx_with_helpers();
	egpu_obj *obj = egpu_load(ctx, OBJ, NULL);
	uint64_t r;

	ck_assert_msg(obj, "%s", egpu_errmsg());
	ck_assert_int_eq(run(obj, "five", &r), 0);
	ck_assert_uint_eq(r, 1 + 4 + 9 + 16 + 25);
	ck_assert_int_eq(run(obj, "note", &r), 0);
	ck_assert_uint_eq(r, 1);
	ck_assert_uint_eq(noted, 7);
	ck_assert_int_eq(run(obj, "stack_buf", &r), 0);
	ck_assert_uint_eq(r, 120 + 100);
	ck_assert_int_eq(run(obj, "map_buf", &r), 0);
	ck_assert_uint_eq(r, 32);
	ck_assert_int_eq(run(obj, "out_buf", &r), 0);
	ck_assert_uint_eq(r, 1);
	ck_assert_int_eq(run(obj, "no_args", &r), 0);
	ck_assert_uint_eq(r, 42);
	egpu_ctx_free(ctx);
}
END_TEST

static uint64_t generic(void *user, uint32_t id, const uint64_t *args,
			uint32_t nargs)
{
	uint64_t s = 0;

	ck_assert_uint_eq(id, 0x10000);
	ck_assert_uint_eq(nargs, 5);
	for (uint32_t i = 0; i < nargs; i++)
		s += (i + 1) * args[i];
	return s * *(uint64_t *)user;
}

START_TEST(generic_helper_through_closure)
{
	egpu_ctx *ctx = egpu_ctx_new(NULL);
	uint64_t scale = 10, r;
	EGPU_OPTS(egpu_helper_opts, o, .generic = generic, .user = &scale);
	egpu_obj *obj;

	ck_assert_int_eq(egpu_helper_register(ctx, 0x10000, "add5", NULL,
		"u64 (u64, u64, u64, u64, u64)", &o), 0);
	/* The rest of the object needs its helpers too. */
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10001, "note", (void *)note,
		"void (u64)", NULL), 0);
	obj = egpu_load(ctx, OBJ, NULL);
	ck_assert_msg(obj, "%s", egpu_errmsg());
	ck_assert_int_eq(run(obj, "five", &r), 0);
	ck_assert_uint_eq(r, 550);
	egpu_ctx_free(ctx);
}
END_TEST

/* What the GPU's dispatcher does with a record: a libffi call. */
START_TEST(libffi_call_of_each_shape)
{
	egpu_ctx *ctx = ctx_with_helpers();
	uint8_t bytes[16], out[8] = { 0 };
	uint64_t five[5] = { 1, 2, 3, 4, 5 }, one = 9;
	uint64_t buf_args[2] = { (uintptr_t)bytes, 1 };
	uint64_t out_args[1] = { (uintptr_t)out };

	for (int i = 0; i < 16; i++)
		bytes[i] = (uint8_t)i;
	ck_assert_uint_eq(helper_call(user_helper_find(ctx->helpers, 0x10000),
				      five), 55);
	helper_call(user_helper_find(ctx->helpers, 0x10001), &one);
	ck_assert_uint_eq(noted, 9);
	ck_assert_uint_eq(helper_call(user_helper_find(ctx->helpers, 0x10002),
				      buf_args), 121);
	ck_assert_uint_eq(helper_call(user_helper_find(ctx->helpers, 0x10003),
				      out_args), 8);
	ck_assert_uint_eq(out[7], 0x11);
	ck_assert_uint_eq(helper_call(user_helper_find(ctx->helpers, 0x10004),
				      NULL), 42);
	egpu_ctx_free(ctx);
}
END_TEST

static void expect_refused(egpu_obj *obj, const char *prog, const char *why)
{
	uint64_t r;

	ck_assert_int_eq(run(obj, prog, &r), EGPU_EVERIFY);
	ck_assert_msg(strstr(egpu_errmsg(), why), "%s: '%s' lacks '%s'", prog,
		      egpu_errmsg(), why);
}

START_TEST(wrong_calls_refused)
{
	egpu_ctx *ctx = ctx_with_helpers();
	egpu_obj *obj = egpu_load(ctx, OBJ, NULL);

	ck_assert_msg(obj, "%s", egpu_errmsg());
	expect_refused(obj, "scalar_for_buf", "r1 must point to 16 bytes of "
		       "the stack or a map value for sum (argument 1 is const "
		       "u8[16]), got");
	expect_refused(obj, "short_buf", "out-of-bounds access to stack");
	expect_refused(obj, "uninit_buf", "reading uninitialised stack bytes");
	expect_refused(obj, "void_result", "r0 is not initialised");
	expect_refused(obj, "write_read_only", "write into read-only map");
	expect_refused(obj, "unregistered", "user helper number the context "
		       "has not registered");
	egpu_ctx_free(ctx);
}
END_TEST

/* Objects see the helpers registered before they were loaded. */
START_TEST(registered_after_load_not_seen)
{
	egpu_ctx *ctx = egpu_ctx_new(NULL);
	egpu_obj *obj = egpu_load(ctx, OBJ, NULL);
	uint64_t r;

	ck_assert_msg(obj, "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10004, "none",
		(void *)none, "u64 ()", NULL), 0);
	expect_refused(obj, "no_args", "has not registered");
	obj = egpu_load(ctx, OBJ, NULL);
	ck_assert_int_eq(run(obj, "no_args", &r), 0);
	ck_assert_uint_eq(r, 42);
	egpu_ctx_free(ctx);
}
END_TEST

static void expect_bad(egpu_ctx *ctx, uint32_t id, const char *name,
		       void *fn, const char *sig, const char *why)
{
	ck_assert_int_eq(egpu_helper_register(ctx, id, name, fn, sig, NULL),
			 EGPU_EINVAL);
	ck_assert_msg(strstr(egpu_errmsg(), why), "'%s' lacks '%s'",
		      egpu_errmsg(), why);
}

START_TEST(bad_registrations_refused)
{
	egpu_ctx *ctx = ctx_with_helpers();
	EGPU_OPTS(egpu_helper_opts, o, .generic = generic);
	void *fn = (void *)none;

	expect_bad(ctx, 501, "x", fn, "u64 ()", "outside the user helper range");
	expect_bad(ctx, 0x20000, "x", fn, "u64 ()", "outside");
	expect_bad(ctx, 0x10000, "x", fn, "u64 ()", "already registered (as 'add5')");
	expect_bad(ctx, 0x10010, NULL, fn, "u64 ()", "name");
	expect_bad(ctx, 0x10010, "a b", fn, "u64 ()", "not an identifier");
	expect_bad(ctx, 0x10010, "x", NULL, "u64 ()", "neither");
	expect_bad(ctx, 0x10010, "x", fn, NULL, "NULL signature");
	expect_bad(ctx, 0x10010, "x", fn, "u32 ()", "return type");
	expect_bad(ctx, 0x10010, "x", fn, "u64 (u64", "expected ',' or ')'");
	expect_bad(ctx, 0x10010, "x", fn, "u64 (u8[0])", "between 1 and 256");
	expect_bad(ctx, 0x10010, "x", fn, "u64 (u8[257])", "between 1 and 256");
	expect_bad(ctx, 0x10010, "x", fn, "u64 (u8)", "expected '['");
	expect_bad(ctx, 0x10010, "x", fn, "u64 (const u64)", "u8[N] after const");
	expect_bad(ctx, 0x10010, "x", fn, "u64 (u64,u64,u64,u64,u64,u64)",
		   "more than 5");
	expect_bad(ctx, 0x10010, "x", fn, "u64 () x", "after ')'");
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10010, "x", fn, "u64 ()",
					      &o), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "both"));
	ck_assert_int_eq(egpu_helper_register(NULL, 0x10010, "x", fn, "u64 ()",
					      NULL), EGPU_EINVAL);
	ck_assert_int_eq(egpu_helper_set_dispatch(ctx, 7), EGPU_EINVAL);
	/* Nothing queued without a GPU. */
	ck_assert_int_eq(egpu_helper_poll(ctx, 10), 0);
	ck_assert_uint_eq(egpu_helper_drops(ctx), 0);
	egpu_ctx_free(ctx);
}
END_TEST

/* Offline PTX of a probe's call: one runtime call with the call's shape. */
START_TEST(gpu_lowering_is_one_ring_call)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);
	egpu_ctx *ctx = egpu_ctx_new(&co);
	EGPU_OPTS(egpu_jit_opts, jo);
	egpu_obj *obj;
	char *ptx = NULL;
	size_t len;

	ck_assert_int_eq(egpu_helper_register(ctx, 0x10002, "sum", (void *)sum,
		"u64 (const u8[16], u64)", NULL), 0);
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10000, "add5", (void *)add5,
		"u64 (u64, u64, u64, u64, u64)", NULL), 0);
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10001, "note", (void *)note,
		"void (u64)", NULL), 0);
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10003, "fill", (void *)fill,
		"u64 (u8[8])", NULL), 0);
	ck_assert_int_eq(egpu_helper_register(ctx, 0x10004, "none", (void *)none,
		"u64 ()", NULL), 0);
	obj = egpu_load(ctx, OBJ, NULL);
	ck_assert_msg(obj, "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_prog_jit_ptx(egpu_obj_prog(obj, "stack_buf"), &jo,
					   &ptx, &len), 0);
	ck_assert_msg(tu_ptxas(ptx, len, "sm_90", true, NULL, 0),
		      "ptxas refused the call");
	ck_assert_ptr_nonnull(strstr(ptx, "egpu_dev_user_call"));
	free(ptx);
	egpu_ctx_free(ctx);
}
END_TEST

/* The GPU test's probes spliced into its kernels, the call ring linked. */
START_TEST(instrumented_module_assembles)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);
	egpu_ctx *ctx = egpu_ctx_new(&co);
	char *ptx, *out = NULL, log[4096] = "";
	size_t len, out_len;
	egpu_obj *obj;

	for (uint32_t id = 0x10000; id <= 0x10003; id++)
		ck_assert_int_eq(egpu_helper_register(ctx, id, id == 0x10001 ?
			"buf" : "scalar", (void *)sum, id == 0x10001 ?
			"u64 (const u8[16])" : id == 0x10000 ? "u64 (u64, u64)" :
			"u64 (u64)", NULL), 0);
	obj = egpu_load(ctx, GPU_OBJ, NULL);
	ck_assert_msg(obj, "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_attach_all(obj), 3);
	ptx = tu_read_file(GPU_PTX, &len);
	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, NULL),
		      "%s", egpu_errmsg());
	ck_assert_ptr_nonnull(strstr(out, "egpu_dev_call_ring"));
	if (tu_have_ptxas())
		ck_assert_msg(tu_ptxas(out, out_len, "sm_90", false, log,
				       sizeof(log)), "ptxas: %s", log);
	free(out);
	free(ptx);
	egpu_ctx_free(ctx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("helpers");
	TCase *tc = tcase_create("cpu");

	tcase_add_test(tc, every_shape_called);
	tcase_add_test(tc, generic_helper_through_closure);
	tcase_add_test(tc, libffi_call_of_each_shape);
	tcase_add_test(tc, wrong_calls_refused);
	tcase_add_test(tc, registered_after_load_not_seen);
	tcase_add_test(tc, bad_registrations_refused);
	tcase_add_test(tc, gpu_lowering_is_one_ring_call);
	tcase_add_test(tc, instrumented_module_assembles);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
