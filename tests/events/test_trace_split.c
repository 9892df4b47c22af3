/* SPDX-License-Identifier: MIT */
/*
 * A traced module cut in two for the device runtime compiled apart
 * (ptx_split_runtime; docs/events.md, "The runtime compiled apart"), no
 * GPU: a written module's halves exactly (the application's .extern
 * declarations, the runtime's .visible definitions); the benchmark's
 * kernels instrumented in trace mode, both halves accepted by ptxas -c
 * for sm_90 (the runtime with --maxrregcount 32) and linked by nvlink,
 * as the driver's linker links them (skipped where ptxas or nvlink is
 * missing); modules that stay whole (no traced call, no linked block, a
 * linked block that uses the application's symbols); egpu_ptx_link's
 * bad arguments.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "egpu.h"
#include "ptx/ptx.h"
#include "test_util.h"

#define SPAN_OBJ EGPU_TEST_BUILD "/span.bpf.o"
#define HEAD ".version 8.0\n.target sm_90\n.address_size 64\n"

struct halves {
	struct strbuf app, rt;
};

static int split(const char *ptx, struct halves *h)
{
	sb_init(&h->app);
	sb_init(&h->rt);
	return ptx_split_runtime(ptx, strlen(ptx), &h->app, &h->rt);
}

static void halves_free(struct halves *h)
{
	sb_free(&h->app);
	sb_free(&h->rt);
}

/* `@argv[0] @argv[1..]` run; true when it exits 0. */
static bool run(const char *const *argv)
{
	int status = -1;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Both halves compiled apart and linked as trace_regs.py does. */
static void link_halves(const struct halves *h, const char *name)
{
	char app[512], rt[512], app_o[520], rt_o[520], out[512];

	if (!tu_have_ptxas() || access(EGPU_NVLINK, X_OK)) {
		printf("%s: no ptxas or nvlink, not linked\n", name);
		return;
	}
	snprintf(app, sizeof(app), "%s/%s.app.ptx", EGPU_TEST_BUILD, name);
	snprintf(rt, sizeof(rt), "%s/%s.rt.ptx", EGPU_TEST_BUILD, name);
	snprintf(app_o, sizeof(app_o), "%s.o", app);
	snprintf(rt_o, sizeof(rt_o), "%s.o", rt);
	snprintf(out, sizeof(out), "%s/%s.linked.cubin", EGPU_TEST_BUILD, name);
	tu_save(h->app.buf, app);
	tu_save(h->rt.buf, rt);
	ck_assert_msg(run((const char *const[]){ EGPU_PTXAS, "-c", "-arch=sm_90",
						 app, "-o", app_o, NULL }),
		      "%s: ptxas -c refused the application's half", app);
	ck_assert_msg(run((const char *const[]){ EGPU_PTXAS, "-c", "-arch=sm_90",
						 "--maxrregcount", "32", rt,
						 "-o", rt_o, NULL }),
		      "%s: ptxas -c refused the runtime's half", rt);
	ck_assert_msg(run((const char *const[]){ EGPU_NVLINK, "-arch=sm_90",
						 app_o, rt_o, "-o", out, NULL }),
		      "%s: nvlink refused the halves", out);
}

/* A linked block as link_emit.c writes one: a variable and a runtime
 * function the application uses, a helper it does not. */
static const char written[] = HEAD
	".global .align 4 .u32 app_v;\n"
	"\n\n// begin egpu linked code (1 modules)\n"
	".func (.param .b32 r) egpu_dev_trace_alone(.param .b64 p);\n"
	".func helper();\n"
	".global .align 4 .u32 egpu_v[2] = {1, 2};\n"
	".func helper()\n{\n\tret;\n}\n"
	".func (.param .b32 r) egpu_dev_trace_alone(.param .b64 p)\n{\n"
	"\t.reg .b32 %r<2>;\n\tld.global.u32 %r1, [egpu_v];\n"
	"\tcall.uni helper, ();\n\tst.param.b32 [r], %r1;\n\tret;\n}\n"
	"// end egpu linked code\n"
	".visible .entry k(.param .u64 k_p)\n{\n"
	"\t.reg .b64 %rd<3>;\n\t.reg .b32 %r<3>;\n"
	"\tld.param.u64 %rd1, [k_p];\n\tmov.u64 %rd2, egpu_v;\n"
	"\tld.global.u32 %r2, [app_v];\n"
	"\t{\n\t.param .b64 a;\n\t.param .b32 b;\n"
	"\tst.param.b64 [a], %rd1;\n"
	"\tcall.uni (b), egpu_dev_trace_alone, (a);\n"
	"\tld.param.b32 %r1, [b];\n\t}\n"
	"\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n";

START_TEST(written_module)
{
	struct halves h;

	ck_assert_msg(!split(written, &h), "%s", egpu_errmsg());
	/* the application: its own code whole, the block's symbols it
	 * uses declared, nothing of the block's code */
	ck_assert_ptr_nonnull(strstr(h.app.buf, HEAD ".global .align 4 .u32 app_v;\n"));
	ck_assert_ptr_nonnull(strstr(h.app.buf,
		"\n.extern .func (.param .b32 r) egpu_dev_trace_alone(.param .b64 p);\n"));
	ck_assert_ptr_nonnull(strstr(h.app.buf, "\n.extern .global .align 4 .u32 egpu_v[2];\n"));
	ck_assert_ptr_null(strstr(h.app.buf, "helper"));
	ck_assert_ptr_null(strstr(h.app.buf, "begin egpu linked code"));
	ck_assert_ptr_nonnull(strstr(h.app.buf, "call.uni (b), egpu_dev_trace_alone, (a);"));
	ck_assert_int_eq(tu_count(h.app.buf, ".visible .entry k("), 1);
	/* the runtime: the header, the block, what the application uses
	 * .visible (prototype and definition), the rest internal */
	ck_assert_ptr_nonnull(strstr(h.rt.buf, HEAD "// begin egpu linked code"));
	ck_assert_int_eq(tu_count(h.rt.buf,
		".visible .func (.param .b32 r) egpu_dev_trace_alone("), 2);
	ck_assert_ptr_nonnull(strstr(h.rt.buf,
		"\n.visible .global .align 4 .u32 egpu_v[2] = {1, 2};\n"));
	ck_assert_int_eq(tu_count(h.rt.buf, "\n.func helper()"), 2);
	ck_assert_ptr_null(strstr(h.rt.buf, ".entry"));
	ck_assert_ptr_null(strstr(h.rt.buf, "app_v"));
	tu_assemble_sm90(h.app.buf, "application's half");
	tu_assemble_sm90(h.rt.buf, "runtime's half");
	link_halves(&h, "split_written");
	halves_free(&h);
}
END_TEST

/* The benchmark's kernels traced: every kernel in the application's
 * half, the runtime's trace functions in the other, both linked. */
START_TEST(bench_kernels)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true, .sm = "sm_90");
	egpu_ctx *ctx = egpu_ctx_new(&co);
	struct egpu_report rep;
	struct halves h;
	egpu_obj *obj;
	char *ptx, *out;

	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, SPAN_OBJ, NULL);
	ck_assert_msg(obj, "%s: %s", SPAN_OBJ, egpu_errmsg());
	ck_assert_int_eq(egpu_mem_trace_enable(ctx, egpu_obj_map(obj, "strace"),
					       NULL), 0);
	ptx = tu_read_file(EGPU_TEST_BUILD "/workloads.ptx", NULL);
	out = tu_instrument(ctx, ptx, &rep);
	ck_assert_msg(!split(out, &h), "%s", egpu_errmsg());
	ck_assert_int_eq(tu_count(h.app.buf, ".visible .entry"),
			 (int)rep.kernel_cnt);
	ck_assert_int_eq(tu_count(h.rt.buf, ".entry"), 0);
	/* the runtime's site function: declared on one side, defined and
	 * .visible on the other */
	ck_assert_int_eq(tu_count(h.app.buf, " egpu_dev_trace_site(\n"), 1);
	ck_assert_ptr_nonnull(strstr(h.app.buf, "\n.extern .func  (.param .align 8 .b8 func_retval0[24]) egpu_dev_trace_site(\n"));
	ck_assert_ptr_nonnull(strstr(h.rt.buf, "\n.visible .func  (.param .align 8 .b8 func_retval0[24]) egpu_dev_trace_site(\n"));
	ck_assert_ptr_null(strstr(h.app.buf, "begin egpu linked code"));
	printf("workloads: %u kernels, halves of %zu and %zu bytes\n",
	       rep.kernel_cnt, h.app.len, h.rt.len);
	link_halves(&h, "split_workloads");
	halves_free(&h);
	free(out);
	free(ptx);
	egpu_ctx_free(ctx);
}
END_TEST

/* A module the trace mode left alone stays whole. */
START_TEST(stays_whole)
{
	struct halves h;
	char *uses_app = strdup(written);
	char *p = strstr(uses_app, "[egpu_v];");

	/* no linked block */
	ck_assert_int_eq(split(HEAD ".visible .entry k()\n{\n\tret;\n}\n", &h),
			 EGPU_ENOENT);
	halves_free(&h);
	/* a linked block no traced site calls (a probe's) */
	ck_assert_int_eq(split(HEAD "// begin egpu linked code (1 modules)\n"
				    ".func p()\n{\n\tret;\n}\n"
				    "// end egpu linked code\n"
				    ".visible .entry k()\n{\n\tcall.uni p, ();\n\tret;\n}\n",
			       &h), EGPU_ENOENT);
	halves_free(&h);
	/* the block's code reading the application's variable */
	ck_assert_ptr_nonnull(p);
	memcpy(p, "[app_v ]", strlen("[app_v ]"));
	ck_assert_msg(split(uses_app, &h) == EGPU_ENOTSUP, "%s", egpu_errmsg());
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "'app_v'"));
	halves_free(&h);
	free(uses_app);
}
END_TEST

/* egpu_ptx_link's bad arguments, refused before the driver is asked. */
START_TEST(link_arguments)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true, .sm = "sm_90");
	EGPU_OPTS(egpu_ptx_link_opts, no_keys, .jit_cnt = 1);
	struct {
		struct egpu_ptx_link_opts o;
		uint64_t newer; /* a field this build does not know */
	} big = { { .sz = sizeof(big) }, 1 };
	egpu_ctx *ctx = egpu_ctx_new(&co);
	void *cubin = (void *)1;
	size_t size;

	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(egpu_ptx_link(NULL, written, NULL, &cubin, &size), EGPU_EINVAL);
	ck_assert_int_eq(egpu_ptx_link(ctx, NULL, NULL, &cubin, &size), EGPU_EINVAL);
	ck_assert_int_eq(egpu_ptx_link(ctx, written, NULL, NULL, &size), EGPU_EINVAL);
	ck_assert_int_eq(egpu_ptx_link(ctx, written, &no_keys, &cubin, &size), EGPU_EINVAL);
	ck_assert_ptr_null(cubin);
	ck_assert_int_eq(egpu_ptx_link(ctx, written, &big.o, &cubin, &size), EGPU_EINVAL);
	ck_assert_int_eq(egpu_ptx_link(ctx, written, NULL, &cubin, &size), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "offline"));
	egpu_ctx_free(ctx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("trace_split");
	TCase *tc = tcase_create("split");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, written_module);
	tcase_add_test(tc, bench_kernels);
	tcase_add_test(tc, stays_whole);
	tcase_add_test(tc, link_arguments);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
