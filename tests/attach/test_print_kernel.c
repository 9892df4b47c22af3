// SPDX-License-Identifier: MIT
/*
 * Print lines name their kernel: a probe's bpf_printk passes the kernel id
 * from its ctx to the device runtime, which a copy of the probe in a
 * kernel folds to that kernel's id. Checked offline on evapp's PTX
 * instrumented with events.bpf.o: the inlined call's last argument is
 * the constant id egpu_kernel_info() names vec_scale by, and ptxas takes
 * the module. (attach_gpu checks the printed lines on a GPU.)
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egpu.h"
#include "test_util.h"

#define EVENTS_OBJ EGPU_TEST_BUILD "/events.bpf.o"
#define EVAPP_PTX EGPU_TEST_BUILD "/evapp.ptx"

/* The register a call's argument @n is stored from, before @call. */
static char *arg_reg(const char *text, const char *call, int n)
{
	char want[32], reg[64];
	const char *p = NULL, *q;

	snprintf(want, sizeof(want), "[param%d+0], ", n);
	for (q = text; (q = strstr(q, want)) && q < call; q++)
		p = q;
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p + strlen(want), "%63[^;]", reg), 1);
	return strdup(reg);
}

START_TEST(inlined_printk_passes_its_kernel_id)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true, .sm = "sm_90");
	EGPU_OPTS(egpu_report, rep);
	struct egpu_kernel_info k = { .sz = sizeof(k) };
	egpu_ctx *ctx = egpu_ctx_new(&co);
	egpu_obj *obj = ctx ? egpu_load(ctx, EVENTS_OBJ, NULL) : NULL;
	char *ptx = tu_read_file(EVAPP_PTX, NULL), *out, *body, *reg, mov[96], log[4096];
	const char *call;
	size_t len;

	ck_assert_msg(obj, "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_attach_all(obj), 2);
	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, 0, &out, &len, &rep), "%s",
		      egpu_errmsg());
	ck_assert_uint_eq(rep.kernel_cnt, 1);
	ck_assert_int_eq(egpu_kernel_info(ctx, rep.kernels[0].kernel_id, &k), 0);
	ck_assert_ptr_nonnull(strstr(k.demangled, "vec_scale"));
	body = tu_kernel_text(out, rep.kernels[0].name);
	/* trace_printk(fmt, size, a, b, c, kernel): its copy in the kernel */
	call = strstr(body, "egpu_dev_trace_printk,");
	ck_assert_msg(call, "no inlined printk call in:\n%s", body);
	reg = arg_reg(body, call, 5);
	snprintf(mov, sizeof(mov), "mov.b64 \t%s, %u;", reg, k.kernel_id);
	ck_assert_msg(strstr(body, mov), "'%s' not in the kernel", mov);
	if (tu_have_ptxas())
		ck_assert_msg(tu_ptxas(out, len, "sm_90", true, log, sizeof(log)), "%s", log);
	free(reg);
	free(body);
	free(out);
	free(ptx);
	egpu_ctx_free(ctx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attach_print_kernel");
	TCase *tc = tcase_create("print");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, inlined_printk_passes_its_kernel_id);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
