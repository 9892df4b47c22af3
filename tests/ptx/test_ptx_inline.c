/* SPDX-License-Identifier: MIT */
/*
 * Probe bodies copied into their sites: the renaming of registers and
 * labels per site, parameter loads, returns, .uni, the shared stack, the
 * linker's renames, and the fallback to a call for bodies that cannot be
 * copied. Outputs are checked by ptxas where it is installed.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptx/instr.h"
#include "ptx_util.h"
#include "test_util.h"

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

static bool have_ptxas(void)
{
	return !access(EGPU_PTXAS, X_OK);
}

/* exits_ptx (a guarded ret, an exit, a labelled ret) for sm_90. */
static char *exits_sm90(void)
{
	char *app = strdup(exits_ptx);

	memcpy(strstr(app, ".target sm_80"), ".target sm_90", 13);
	return app;
}

/* The body of kernel @name in @out, as its own string. */
static char *kernel_text(const char *out, const char *name)
{
	char head[128];
	const char *b, *e;

	snprintf(head, sizeof(head), ".entry %s(", name);
	b = strstr(out, head);
	e = b ? strstr(b, "\n}\n") : NULL;
	return e ? strndup(b, (size_t)(e - b) + 3) : NULL;
}

/* Every label defined in @text ("NAME:" ending a line) is defined once. */
static void labels_unique(const char *text)
{
	const char *line = text;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);

		if (n > 1 && line[n - 1] == ':' && line[0] == '$') {
			char *label = strndup(line, n);
			char *want = malloc(n + 3);

			sprintf(want, "\n%s\n", label);
			ck_assert_msg(count(text, want) == 1,
				      "label %s defined %zu times", label,
				      count(text, want));
			free(want);
			free(label);
		}
		line = nl ? nl + 1 : NULL;
	}
}

static void assemble(const char *out, size_t len, const char *tag)
{
	if (have_ptxas())
		ck_assert_msg(run_ptxas(out, len, "sm_90", tag) == 0,
			      "ptxas rejects %s/%s.ptx", EGPU_TEST_BUILD, tag);
}

/* probe_ptx at the entry and twice at each of the three exits. */
START_TEST(copies_per_site)
{
	char *app = exits_sm90(), *body, *back;
	struct ptx_text mod = { "probe_ptx", probe_ptx, strlen(probe_ptx) };
	struct ptx_attach reqs[] = {
		{ "k", EGPU_ATTACH_ENTRY, "probe_ptx", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
		{ "k", EGPU_ATTACH_EXIT, "probe_ptx", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
		{ "k", EGPU_ATTACH_EXIT, "probe_ptx", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
	};
	static const char *const sites[] = {
		"e0_0", "x0_0", "x0_1", "x1_0", "x1_1", "x2_0", "x2_1",
	};
	struct ptx_report rep;
	unsigned entries, exits;
	size_t len, i;
	int err;
	char *out = instrument(app, strlen(app), reqs, 3, &mod, 1, &rep, &len,
			       &err);

	ck_assert_msg(out, "%s", egpu_errmsg());
	ck_assert_uint_eq(rep.kernels[0].inlined, 7);
	body = kernel_text(out, "k");
	ck_assert_ptr_nonnull(body);
	/* No call, no parameter access, no ret of the probe is left. */
	ck_assert_ptr_null(strstr(body, "probe_ptx,"));
	ck_assert_ptr_null(strstr(body, "[ctx]"));
	ck_assert_ptr_null(strstr(body, "st.param"));
	ck_assert_uint_eq(count(body, "ret;"), 2); /* the kernel's own */
	/* It reads its ctx by loads only: no ctx is built, values are moved. */
	ck_assert_ptr_null(strstr(body, "%egpu_ctx"));
	for (i = 0; i < ARRAY_SIZE(sites); i++) {
		char want[256];

		snprintf(want, sizeof(want),
			 "\tmov.b64 \t%%egpu_0_%s_rd2, 0;           // kernel_id\n"
			 "\tmov.b32 \t%%egpu_0_%s_r1, 12;         /* params_size */\n",
			 sites[i], sites[i]);
		ck_assert_msg(count(body, want) == 1, "no %s", want);
		snprintf(want, sizeof(want),
			 "\tmov.u64 \t%%egpu_0_%s_rd3, k_p;\n"
			 "\tcvta.param.u64 \t%%egpu_0_%s_rd3, %%egpu_0_%s_rd3;\n",
			 sites[i], sites[i], sites[i]);
		ck_assert_msg(count(body, want) == 1, "no %s", want);
		snprintf(want, sizeof(want),
			 "@%%egpu_0_%s_p1 bra $egpu_0_%s_L_no_params;\n",
			 sites[i], sites[i]);
		ck_assert_msg(count(body, want) == 1, "no %s", want);
		snprintf(want, sizeof(want), "\n$egpu_0_%s_L_no_params:\n",
			 sites[i]);
		ck_assert_msg(count(body, want) == 1, "no %s", want);
		snprintf(want, sizeof(want), "\tbra \t$egpu_0_%s;\n$egpu_0_%s:\n",
			 sites[i], sites[i]);
		ck_assert_msg(count(body, want) == 1, "no %s", want);
	}
	labels_unique(out);
	/* The probe function itself is still linked, untouched. */
	ck_assert_ptr_nonnull(strstr(out, "\tld.param.u64 %rd1, [ctx];\n"));
	/* Outside the inserted blocks, the input byte for byte (but .version). */
	back = strip_inserted(out, &len, &entries, &exits);
	ck_assert_uint_eq(entries, 1);
	ck_assert_uint_eq(exits, 3);
	memcpy(strstr(back, ".version 7.8"), ".version 7.0", 12);
	ck_assert_str_eq(back, app);
	assemble(out, strlen(out), "inline_sites");
	free(back);
	free(body);
	free(out);
	free(app);
	ptx_report_free(&rep);
}
END_TEST

/* A body with a stack, a guarded ret, .uni branches, a call, exit, .loc. */
static const char stack_probe[] =
	".version 7.8\n.target sm_90\n.address_size 64\n"
	".file 1 \"probe.c\"\n"
	".func (.param .b64 r) helper(.param .b64 x)\n{\n"
	"\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [x];\n"
	"\tadd.u64 %rd2, %rd1, 1;\n\tst.param.b64 [r], %rd2;\n\tret;\n}\n"
	".visible .func (.param .b64 func_retval0) q(\n"
	"\t.param .b64 q_param_0,\n\t.param .b64 q_param_1\n)\n{\n"
	"\t.local .align 8 .b8 \t__local_depot0[16];\n"
	"\t.reg .b64 \t%SP;\n\t.reg .b64 \t%SPL;\n"
	"\t.reg .pred \t%p<3>;\n\t.reg .b64 \t%rd<6>;\n\n"
	"\t.loc 1 3 0\n"
	"\tmov.u64 \t%SPL, __local_depot0;\n"
	"\tcvta.local.u64 \t%SP, %SPL;\n"
	"\tld.param.u64 \t%rd1, [q_param_0+0];\n"
	"\tld.param.b64 \t%rd2, [q_param_1];\n"
	"\tst.u64 \t[%SP+8], %rd2;\n"
	"\tsetp.eq.s64 \t%p1, %rd1, 0;\n"
	"\t@%p1 ret;\n"
	"\tsetp.gt.u64 \t%p2, %rd2, 64;\n"
	"\t@!%p2 bra.uni \t$L__BB0_2;\n"
	"\texit;\n"
	"$L__BB0_2:\n"
	"\tld.u64 \t%rd3, [%SP+8];\n"
	"\t{ // callseq 0, 0\n"
	"\t.param .b64 param0;\n\tst.param.b64 \t[param0+0], %rd3;\n"
	"\t.param .b64 retval0;\n"
	"\tcall.uni (retval0), \n\thelper, \n\t(\n\tparam0\n\t);\n"
	"\tld.param.b64 \t%rd4, [retval0+0];\n"
	"\t} // callseq 0\n"
	"\tbra.uni \t$L__BB0_3;\n"
	"$L__BB0_3:\n"
	"\tst.param.b64 \t[func_retval0+0], %rd4;\n"
	"\tret;\n\n}\n";

START_TEST(stack_returns_and_uni)
{
	char *app = exits_sm90(), *body;
	struct ptx_text mod = { "q", stack_probe, strlen(stack_probe) };
	struct ptx_attach reqs[] = {
		{ "k", EGPU_ATTACH_ENTRY, "q", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
		{ "k", EGPU_ATTACH_EXIT, "q", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
	};
	struct ptx_report rep;
	struct ptxas_usage use;
	size_t len;
	int err;
	char *out = instrument(app, strlen(app), reqs, 2, &mod, 1, &rep, &len,
			       &err);

	ck_assert_msg(out, "%s", egpu_errmsg());
	ck_assert_uint_eq(rep.kernels[0].inlined, 4);
	body = kernel_text(out, "k");
	/* One stack for every copy, declared before the entry probes. */
	ck_assert_uint_eq(count(body, "\t.local "), 1);
	ck_assert_ptr_nonnull(strstr(body, "// begin egpu probe stack\n"
				     "\t.local .align 8 .b8 \t%egpu_0_depot[16];\n"
				     "\t// end egpu probe stack\n"
				     "\t// begin egpu entry probes\n"));
	ck_assert_ptr_nonnull(strstr(body, "\tmov.u64 \t%egpu_0_x2_0_SPL, %egpu_0_depot;\n"));
	ck_assert_ptr_null(strstr(body, "__local_depot0"));
	/* Both parameters, +0 or not; the guarded ret keeps its guard. */
	ck_assert_ptr_nonnull(strstr(body, "\tmov.u64 \t%egpu_0_x1_0_rd1, %egpu_rd1;\n"
				     "\tmov.b64 \t%egpu_0_x1_0_rd2, %egpu_rd4;\n"));
	ck_assert_ptr_nonnull(strstr(body, "\t@%egpu_0_x1_0_p1 bra \t$egpu_0_x1_0;\n"));
	/* .uni goes from the guarded bra and the call, not the plain bra. */
	ck_assert_ptr_nonnull(strstr(body, "\t@!%egpu_0_x1_0_p2 bra \t$egpu_0_x1_0_L__BB0_2;\n"));
	ck_assert_ptr_nonnull(strstr(body, "\tbra.uni \t$egpu_0_x1_0_L__BB0_3;\n"));
	ck_assert_uint_eq(count(body, "\tcall (retval0), \n\thelper, "), 4);
	ck_assert_ptr_null(strstr(body, "call.uni"));
	/* exit stays: the probe ends the thread on purpose. */
	ck_assert_uint_eq(count(body, "\texit;\n"), 5);
	ck_assert_ptr_null(strstr(body, "\t.loc "));
	ck_assert_ptr_null(strstr(body, "func_retval0"));
	labels_unique(out);
	if (have_ptxas()) {
		ck_assert_int_eq(ptxas_usage(out, strlen(out), "sm_90",
					     "inline_stack", "k", &use), 0);
		/* Four copies share one 16-byte stack. */
		ck_assert_uint_eq(use.stack, 16);
	}
	free(body);
	free(out);
	free(app);
	ptx_report_free(&rep);
}
END_TEST

/* A probe reading every field of its ctx, in several widths. */
static char *ctx_probe(const char *extra)
{
	char *text = malloc(2048);

	snprintf(text, 2048,
		 ".version 7.8\n.target sm_90\n.address_size 64\n"
		 ".visible .global .align 8 .u64 sink[8];\n"
		 ".visible .func (.param .b64 r) c(.param .b64 c_param_0, .param .b64 c_param_1)\n{\n"
		 "\t.reg .b16 %%rs<2>;\n\t.reg .b32 %%r<3>;\n\t.reg .b64 %%rd<9>;\n"
		 "\tld.param.u64 %%rd1, [c_param_0];\n"
		 "\tld.param.u64 %%rd2, [c_param_1];\n"
		 "\tld.u16 %%r1, [%%rd1+20];\n"
		 "\tld.s32 %%rd3, [%%rd1+24];\n"
		 "\tld.b64 %%rd4, [%%rd1+16];\n"
		 "\tld.u8 %%rs1, [%%rd1];\n"
		 "\tld.u64 %%rd5, [%%rd1+8];\n"
		 "%s"
		 "\tmov.u64 %%rd6, sink;\n"
		 "\tst.global.u32 [%%rd6], %%r1;\n\tst.global.u64 [%%rd6+8], %%rd3;\n"
		 "\tst.global.u64 [%%rd6+16], %%rd4;\n\tst.global.u16 [%%rd6+24], %%rs1;\n"
		 "\tst.global.u64 [%%rd6+32], %%rd5;\n\tst.global.u64 [%%rd6+40], %%rd2;\n"
		 "\tst.param.b64 [r], 0;\n\tret;\n}\n",
		 extra);
	return text;
}

static char *ctx_case(const char *extra, bool no_ctx, struct ptx_report *rep)
{
	char *app = exits_sm90(), *text = ctx_probe(extra), *out, *body;
	struct ptx_text mod = { "c", text, strlen(text) };
	struct ptx_attach req = { "k", EGPU_ATTACH_EXIT, "c", no_ctx, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL };
	size_t len;
	int err;

	out = instrument(app, strlen(app), &req, 1, &mod, 1, rep, &len, &err);
	ck_assert_msg(out, "%s", egpu_errmsg());
	assemble(out, len, "inline_ctx");
	body = kernel_text(out, "k");
	free(out);
	free(text);
	free(app);
	return body;
}

START_TEST(ctx_loads_become_constants)
{
	struct ptx_report rep;
	/* A pointer into the ctx folds with the loads through it. */
	char *body = ctx_case("\tadd.s64 %rd7, %rd1, 16;\n\tld.u32 %r2, [%rd7+8];\n"
			      "\tst.global.u32 [sink+48], %r2;\n", false, &rep);

	ck_assert_uint_eq(rep.kernels[0].inlined, 3);
	ck_assert_ptr_null(strstr(body, "%egpu_ctx"));
	ck_assert_ptr_nonnull(strstr(body, "\tmov.b32 \t%egpu_0_x1_0_r2, 1;"));
	ck_assert_ptr_null(strstr(body, "%egpu_rd1;"));
	ck_assert_ptr_null(strstr(body, "add.s64 %egpu_0_x1_0_rd7"));
	/* Exit 1 of kernel 0, 12 parameter bytes, attach 2; ctx_len 32. */
	ck_assert_ptr_nonnull(strstr(body,
		"\tmov.u64 %egpu_0_x1_0_rd2, 32;\n"
		"\tmov.b32 \t%egpu_0_x1_0_r1, 2;\n"
		"\tmov.b64 \t%egpu_0_x1_0_rd3, 1;\n"
		"\tmov.b64 \t%egpu_0_x1_0_rd4, 8589934604;\n"
		"\tmov.b16 \t%egpu_0_x1_0_rs1, 0;\n"
		"\tmov.u64 \t%egpu_0_x1_0_rd5, k_p;\n"
		"\tcvta.param.u64 \t%egpu_0_x1_0_rd5, %egpu_0_x1_0_rd5;\n"));
	free(body);
	ptx_report_free(&rep);
}
END_TEST

/* Other uses of the ctx register keep the ctx in memory. */
START_TEST(ctx_kept_when_used_otherwise)
{
	static const char *const extras[] = {
		"\tld.b32 %rd7, [%rd1];\n",      /* .b into a wider register */
		"\tld.u32 %r2, [%rd1+12];\n",    /* half of ctx.params */
		"\tadd.u64 %rd7, %rd1, %rd5;\n",  /* arithmetic on it */
		/* a pointer into it used but for loads */
		"\tadd.u64 %rd7, %rd1, 8;\n\tst.global.u64 [sink+48], %rd7;\n",
		"\tld.u32 %r2, [%rd1+30];\n",    /* past its end */
		"\tst.u32 [%rd1+28], %r1;\n",    /* a store */
	};
	struct ptx_report rep;

	for (size_t i = 0; i < ARRAY_SIZE(extras); i++) {
		char *body = ctx_case(extras[i], false, &rep);

		ck_assert_uint_eq(rep.kernels[0].inlined, 3);
		ck_assert_ptr_nonnull(strstr(body, "%egpu_ctx"));
		ck_assert_ptr_nonnull(strstr(body,
			"\tmov.u64 %egpu_0_x1_0_rd1, %egpu_rd1;\n"
			"\tmov.u64 %egpu_0_x1_0_rd2, %egpu_rd4;\n"
			"\tld.u16 %egpu_0_x1_0_r1, [%egpu_0_x1_0_rd1+20];\n"));
		free(body);
		ptx_report_free(&rep);
	}
}
END_TEST

/* no_ctx: the site passes (0, 0) and the copy reads those. */
START_TEST(ctx_not_folded_under_no_ctx)
{
	struct ptx_report rep;
	char *body = ctx_case("", true, &rep);

	ck_assert_ptr_null(strstr(body, "%egpu_ctx"));
	ck_assert_ptr_nonnull(strstr(body, "\tmov.u64 \t%egpu_rd1, 0;\n"));
	ck_assert_ptr_nonnull(strstr(body, "\tmov.u64 %egpu_0_x1_0_rd1, %egpu_rd1;\n"));
	free(body);
	ptx_report_free(&rep);
}
END_TEST

/* The linker's renames of module-local symbols reach the copies. */
START_TEST(copies_follow_link_renames)
{
	static const char app[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".func sub()\n{\n\tret;\n}\n"
		".visible .entry k()\n{\n\tcall.uni sub, ();\n\tret;\n}\n";
	static const char probe[] =
		".version 7.8\n.target sm_90\n.address_size 64\n"
		".func sub();\n"
		".global .align 8 .u64 counter;\n"
		".visible .func (.param .b64 r) p(.param .b64 c, .param .b64 n)\n{\n"
		"\t.reg .b64 %rd<3>;\n"
		"\tcall.uni sub, ();\n\tmov.u64 %rd1, counter;\n"
		"\tatom.global.add.u64 %rd2, [%rd1], 1;\n\tret;\n}\n"
		".func sub()\n{\n\tret;\n}\n";
	struct ptx_text mods[] = {
		{ "a", probe, strlen(probe) }, { "b", probe, strlen(probe) },
	};
	struct ptx_attach req = { "k", EGPU_ATTACH_EXIT, "p", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL };
	size_t len;
	int err;
	char *out = instrument(app, strlen(app), &req, 1, mods, 2, NULL, &len,
			       &err), *body;

	ck_assert_msg(out, "%s", egpu_errmsg());
	body = kernel_text(out, "k");
	ck_assert_ptr_nonnull(strstr(body, "\tcall sub_egpu1, ();\n"
				     "\tmov.u64 %egpu_0_x0_0_rd1, counter_egpu1;\n"));
	ck_assert_ptr_nonnull(strstr(body, "\n{\n\tcall.uni sub, ();\n"));
	assemble(out, len, "inline_renames");
	free(body);
	free(out);
}
END_TEST

/* Bodies that cannot be copied are called: why, and the call. */
static const struct {
	const char *body;
	const char *why;
} uncopyable[] = {
	{ "\t.reg .b64 %rd<3>;\n\tmov.u64 %rd1, c;\n\tld.u64 %rd2, [%rd1];\n",
	  "parameter" },
	{ "\t.reg .b32 %r<3>;\n\tld.param.u32 %r1, [c];\n", "parameter" },
	{ "\t.reg .b32 %r<3>;\n\tld.param.v2.u32 {%r1, %r2}, [c];\n", "parameter" },
	{ "\t.reg .pred %p<2>;\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n"
	  "\tmov.u32 %r1, %laneid;\n\tsetp.eq.u32 %p1, %r1, 0;\n"
	  "\t@%p1 ld.param.u64 %rd1, [c];\n",
	  "parameter" },
	{ "\t.shared .align 8 .b8 buf[8];\n", ".shared" },
	{ "\t.local .align 8 .b8 a[8];\n\t.local .align 8 .b8 b[8];\n",
	  "more than one .local" },
	{ "\t.reg .b64 %rd<3>;\n\tmov.u64 %rd1, g;\n\t{\n\t.param .b64 r0;\n"
	  "\tproto: .callprototype (.param .b64 _) _ ();\n"
	  "\tcall (r0), %rd1, (), proto;\n\t}\n",
	  "pointer" },
};

static char *uncopyable_module(size_t i)
{
	char *text = malloc(1024);

	snprintf(text, 1024,
		 ".version 7.8\n.target sm_90\n.address_size 64\n"
		 ".visible .func (.param .b64 r) g()\n{\n\tst.param.b64 [r], 0;\n\tret;\n}\n"
		 ".visible .func (.param .b64 r) p(.param .b64 c, .param .b64 n)\n{\n"
		 "%s\tst.param.b64 [r], 0;\n\tret;\n}\n",
		 uncopyable[i].body);
	return text;
}

START_TEST(uncopyable_bodies_are_called)
{
	char *text = uncopyable_module((size_t)_i), *out, tag[32];
	struct ptx_text mod = { "p", text, strlen(text) };
	struct ptx_attach req = { "open_end", EGPU_ATTACH_EXIT, "p", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL };
	struct ptx_module *m;
	struct inline_func *fn;
	struct ptx_report rep;
	const char *why;
	size_t len;
	int err;

	ck_assert_int_eq(ptx_parse("p", text, strlen(text), &m), 0);
	ck_assert_int_eq(inline_prepare(m, &m->items[m->nitems - 1], NULL,
					&ctx_layout_kernel, &fn, &why), 0);
	ck_assert_ptr_null(fn);
	ck_assert_msg(why && strstr(why, uncopyable[_i].why), "%zu: %s",
		      (size_t)_i, why ? why : "(copied)");
	ptx_module_free(m);
	out = instrument(fall_off_ptx, strlen(fall_off_ptx), &req, 1, &mod, 1,
			 &rep, &len, &err);
	ck_assert_msg(out, "%s", egpu_errmsg());
	ck_assert_uint_eq(rep.kernels[0].inlined, 0);
	ck_assert_ptr_nonnull(strstr(out, "\tcall \t(%egpu_rd5), p, (%egpu_rd1, %egpu_rd4);\n"));
	snprintf(tag, sizeof(tag), "inline_uncopyable%d", _i);
	assemble(out, len, tag);
	ptx_report_free(&rep);
	free(out);
	free(text);
}
END_TEST

/* no_inline asks for the call; a copyable body is then called too. */
START_TEST(no_inline_calls)
{
	char *app = exits_sm90(), *body;
	struct ptx_text mod = { "q", stack_probe, strlen(stack_probe) };
	struct ptx_attach reqs[] = {
		{ "k", EGPU_ATTACH_ENTRY, "q", false, true, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
		{ "k", EGPU_ATTACH_EXIT, "q", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
	};
	struct ptx_report rep;
	size_t len;
	int err;
	char *out = instrument(app, strlen(app), reqs, 2, &mod, 1, &rep, &len,
			       &err);

	ck_assert_msg(out, "%s", egpu_errmsg());
	ck_assert_uint_eq(rep.kernels[0].inlined, 3);
	body = kernel_text(out, "k");
	ck_assert_uint_eq(count(body, "call.uni \t(%egpu_rd5), q, (%egpu_rd1, %egpu_rd4);"), 1);
	ck_assert_uint_eq(count(body, "// inlined q\n"), 3);
	assemble(out, len, "inline_mixed");
	free(body);
	free(out);
	free(app);
	ptx_report_free(&rep);
}
END_TEST

/* A damaged probe module fails cleanly or gives output that parses. */
static void fuzz_probe(const char *app, const char *probe, size_t len,
		       const char *func)
{
	struct ptx_text mod = { "p", probe, len };
	struct ptx_attach reqs[] = {
		{ "*", EGPU_ATTACH_ENTRY, func, false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
		{ "*", EGPU_ATTACH_EXIT, func, false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
	};
	struct ptx_module *m;
	size_t out_len;
	int err;
	char *out = instrument(app, strlen(app), reqs, 2, &mod, 1, NULL,
			       &out_len, &err);

	ck_assert_msg(err == 0 || err == EGPU_EFORMAT || err == EGPU_ENOENT ||
			      err == EGPU_EINVAL || err == EGPU_ENOTSUP ||
			      err == EGPU_EEXIST,
		      "unexpected error %d: %s", err, egpu_errmsg());
	if (!out)
		return;
	ck_assert_msg(!ptx_parse("output", out, out_len, &m),
		      "output does not parse: %s", egpu_errmsg());
	ptx_module_free(m);
	free(out);
}

START_TEST(damaged_probes)
{
	static const char bytes[] = "{}()[];,:@!%.$<>+-0a_\n ";
	char *app = exits_sm90(), *ctx = ctx_probe("");
	const struct {
		const char *text;
		const char *func;
	} probes[] = {
		{ probe_ptx, "probe_ptx" }, { stack_probe, "q" }, { ctx, "c" },
	};
	unsigned seed = 4242;

	for (size_t i = 0; i < ARRAY_SIZE(probes); i++) {
		size_t len = strlen(probes[i].text);
		char *copy = malloc(len + 1);

		for (size_t cut = 1; cut < len; cut += 3)
			fuzz_probe(app, probes[i].text, cut, probes[i].func);
		for (int round = 0; round < 300; round++) {
			memcpy(copy, probes[i].text, len + 1);
			for (int k = 1 + rand_r(&seed) % 3; k > 0; k--)
				copy[(size_t)rand_r(&seed) % len] =
					bytes[rand_r(&seed) % (sizeof(bytes) - 1)];
			fuzz_probe(app, copy, len, probes[i].func);
		}
		free(copy);
	}
	free(ctx);
	free(app);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ptx_inline");
	TCase *tc = tcase_create("inline");

	if (!have_ptxas())
		fprintf(stderr, "no ptxas at '%s': outputs not assembled\n",
			EGPU_PTXAS);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, copies_per_site);
	tcase_add_test(tc, stack_returns_and_uni);
	tcase_add_test(tc, ctx_loads_become_constants);
	tcase_add_test(tc, ctx_kept_when_used_otherwise);
	tcase_add_test(tc, ctx_not_folded_under_no_ctx);
	tcase_add_test(tc, copies_follow_link_renames);
	tcase_add_loop_test(tc, uncopyable_bodies_are_called, 0,
			    (int)ARRAY_SIZE(uncopyable));
	tcase_add_test(tc, no_inline_calls);
	tcase_add_test(tc, damaged_probes);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
