/* SPDX-License-Identifier: MIT */
/*
 * Rewriter, kernel selection and linker on hand-written PTX: where probes
 * go, what the report says, how modules merge, and the errors.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/instr.h"
#include "ptx_util.h"
#include "test_util.h"

/* A probe function @name for @target in a module of PTX ISA @version. */
static char *probe_module(const char *version, const char *target,
			  const char *name)
{
	char *text = malloc(1024);

	snprintf(text, 1024,
		 ".version %s\n.target %s\n.address_size 64\n\n"
		 ".visible .func (.param .b64 r) %s(.param .b64 c, .param .b64 n)\n"
		 "{\n\t.reg .b64 %%rd<3>;\n\tld.param.u64 %%rd1, [c];\n"
		 "\tld.u64 %%rd2, [%%rd1];\n\tst.param.b64 [r], %%rd2;\n\tret;\n}\n",
		 version, target, name);
	return text;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

START_TEST(entry_and_exits)
{
	char *probe = probe_module("7.0", "sm_80", "pa");
	struct ptx_text mod = { "pa", probe, strlen(probe) };
	struct ptx_attach reqs[] = {
		{ "k", EGPU_ATTACH_ENTRY, "pa", false, true, 0, 0, NULL, false, false, 0, 0, NULL, NULL }, { "k", EGPU_ATTACH_EXIT, "pa", false, true, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
	};
	struct ptx_report rep;
	unsigned entries, exits;
	size_t len;
	int err;
	char *out = instrument(exits_ptx, strlen(exits_ptx), reqs, 2, &mod, 1,
			       &rep, &len, &err), *back;

	ck_assert_msg(out, "%s", egpu_errmsg());
	ck_assert_uint_eq(rep.nkernels, 1);
	ck_assert_str_eq(rep.kernels[0].name, "k");
	ck_assert_uint_eq(rep.kernels[0].entry_points, 1);
	ck_assert_uint_eq(rep.kernels[0].exit_points, 3);
	ck_assert_uint_eq(rep.kernels[0].programs, 2);
	ck_assert_uint_eq(rep.linked_funcs, 1);
	/* cvta.param needs PTX ISA 7.7. */
	ck_assert_uint_eq(rep.version_major, 7);
	ck_assert_uint_eq(rep.version_minor, 7);
	ck_assert_ptr_nonnull(strstr(out, "\n.version 7.7\n.target sm_80\n"));
	/* Entry: after the declarations, before the first instruction. */
	ck_assert_ptr_nonnull(strstr(out, "\t.reg .b32 %r<4>;\n\n\t// begin egpu entry probes\n"));
	ck_assert_ptr_nonnull(strstr(out, "// end egpu entry probes\n\tld.param.u32 %r1, [k_n];\n"));
	ck_assert_uint_eq(count(out, "call.uni \t(%egpu_rd5), pa, (%egpu_rd1, %egpu_rd4);"), 1);
	ck_assert_uint_eq(count(out, "call \t(%egpu_rd5), pa, (%egpu_rd1, %egpu_rd4);"), 3);
	/* A guarded exit is skipped over with the inverse guard. */
	ck_assert_ptr_nonnull(strstr(out, "\t@!%p1 bra \t$egpu_skip_0_0;\n\t{\n"));
	ck_assert_ptr_nonnull(strstr(out, "$egpu_skip_0_0:\n\t// end egpu exit probes\n\t@%p1 ret;\n"));
	ck_assert_ptr_nonnull(strstr(out, "// end egpu exit probes\n\texit;\n"));
	/* A labelled exit: the label still leads to the probe. */
	ck_assert_ptr_nonnull(strstr(out, "$L_end:\n\t// begin egpu exit probes\n"));
	ck_assert_ptr_nonnull(strstr(out, "// end egpu exit probes\n\tret;\n}\n"));
	/* ctx: kernel id 0, params at k_p, 12 bytes, attach and site. */
	ck_assert_ptr_nonnull(strstr(out, "mov.u64 \t%egpu_rd2, 0;\n\tmov.u64 \t%egpu_rd3, k_p;\n\tcvta.param.u64 \t%egpu_rd3, %egpu_rd3;\n\tst.shared.v2.u64 \t[%egpu_rd0+0], {%egpu_rd2, %egpu_rd3};\n"));
	ck_assert_ptr_nonnull(strstr(out, "mov.u64 \t%egpu_rd2, 4294967308;\n")); /* 12 | 1 << 32 */
	ck_assert_uint_eq(count(out, "mov.u64 \t%egpu_rd2, 8589934604;\n"), 3); /* 12 | 2 << 32 */
	ck_assert_ptr_nonnull(strstr(out, "mov.u64 \t%egpu_rd3, 2;\n\tst.shared.v2.u64 \t[%egpu_rd0+16]"));
	/* Outside the inserted blocks, the input byte for byte (but .version). */
	back = strip_inserted(out, &len, &entries, &exits);
	ck_assert_uint_eq(entries, 1);
	ck_assert_uint_eq(exits, 3);
	memcpy(strstr(back, ".version 7.7"), ".version 7.0", 12);
	ck_assert_str_eq(back, exits_ptx);
	free(back);
	free(out);
	free(probe);
	ptx_report_free(&rep);
}
END_TEST

START_TEST(programs_in_attach_order)
{
	char *a = probe_module("7.8", "sm_90", "pa");
	char *b = probe_module("7.8", "sm_90", "pb");
	char *c = probe_module("7.8", "sm_90", "pc");
	struct ptx_text mods[] = {
		{ "a", a, strlen(a) }, { "b", b, strlen(b) }, { "c", c, strlen(c) },
	};
	struct ptx_attach reqs[] = {
		{ "k", EGPU_ATTACH_ENTRY, "pb", false, true, 0, 0, NULL, false, false, 0, 0, NULL, NULL }, { "k", EGPU_ATTACH_EXIT, "pc", false, true, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
		{ "k", EGPU_ATTACH_ENTRY, "pa", false, true, 0, 0, NULL, false, false, 0, 0, NULL, NULL }, { "k", EGPU_ATTACH_EXIT, "pa", false, true, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
	};
	static const char app[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
				  ".entry k()\n{\n\tret;\n}\n";
	struct ptx_report rep;
	size_t len;
	int err;
	char *out = instrument(app, strlen(app), reqs, 4, mods, 3, &rep, &len, &err);
	const char *pb, *pa, *pc, *pa2;

	ck_assert_msg(out, "%s", egpu_errmsg());
	pb = strstr(out, "call.uni \t(%egpu_rd5), pb,");
	pa = strstr(out, "call.uni \t(%egpu_rd5), pa,");
	pc = strstr(out, "call \t(%egpu_rd5), pc,");
	pa2 = strstr(out, "call \t(%egpu_rd5), pa,");
	ck_assert(pb && pa && pc && pa2);
	ck_assert(pb < pa && pa < pc && pc < pa2);
	/* No parameters: ctx.params is 0 and the size too. */
	ck_assert_ptr_null(strstr(out, "cvta.param"));
	ck_assert_ptr_nonnull(strstr(out, "mov.u64 \t%egpu_rd2, 4294967296;\n"));
	ck_assert_uint_eq(rep.kernels[0].programs, 4);
	ck_assert_uint_eq(rep.kernels[0].exit_points, 1);
	ck_assert_uint_eq(rep.linked_funcs, 3);
	/* The three prototypes come before the first definition. */
	ck_assert(strstr(out, "pc(.param .b64 c, .param .b64 n);\n") <
		  strstr(out, "pa(.param .b64 c, .param .b64 n)\n{"));
	/* The module headers are dropped: one .version, .target, .address_size. */
	ck_assert_uint_eq(count(out, ".version"), 1);
	ck_assert_uint_eq(count(out, ".target"), 1);
	ck_assert_uint_eq(count(out, ".address_size"), 1);
	free(out);
	free(a);
	free(b);
	free(c);
	ptx_report_free(&rep);
}
END_TEST

static const char names_app[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry _ZN2ns9vectorAddEPKfS1_Pfi(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)\n{\n\tret;\n}\n"
	".visible .entry _Z9vectorAddPKiS0_Pii(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)\n{\n\tret;\n}\n"
	".visible .entry _Z5scaleIfEvPT_S0_i(.param .u64 p, .param .f32 s, .param .u32 n)\n{\n\tret;\n}\n"
	".visible .entry saxpy(.param .u32 n)\n{\n\tret;\n}\n"
	".entry _ZN47_GLOBAL__N__dee26bd1_14_grid_stride_cu_62ec2d634fillEPddm(.param .u64 p, .param .f64 v, .param .u64 n)\n{\n\tret;\n}\n";

/* Which kernels (bit i = kernel id i) the pattern selects. */
static unsigned selected(const char *pattern)
{
	char *probe = probe_module("8.0", "sm_90", "p");
	struct ptx_text mod = { "p", probe, strlen(probe) };
	struct ptx_attach req = { pattern, EGPU_ATTACH_ENTRY, "p", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL };
	struct ptx_report rep;
	unsigned bits = 0;
	size_t len, i;
	int err;
	char *out = instrument(names_app, strlen(names_app), &req, 1, &mod, 1,
			       &rep, &len, &err);

	free(probe);
	if (!out)
		return 0;
	for (i = 0; i < rep.nkernels; i++)
		if (rep.kernels[i].programs)
			bits |= 1u << i;
	free(out);
	ptx_report_free(&rep);
	return bits;
}

START_TEST(kernel_selection)
{
	ck_assert_uint_eq(selected("vectorAdd"), 0x3);
	ck_assert_uint_eq(selected("ns::vectorAdd"), 0x1);
	ck_assert_uint_eq(selected("ns::vectorAdd(float const*, float const*, float*, int)"), 0x1);
	ck_assert_uint_eq(selected("vectorAdd(int const*, int const*, int*, int)"), 0x2);
	ck_assert_uint_eq(selected("_Z9vectorAddPKiS0_Pii"), 0x2);
	ck_assert_uint_eq(selected("_Z5scaleIfEvPT_S0_i"), 0x4);
	ck_assert_uint_eq(selected("scale<float>"), 0x4);
	ck_assert_uint_eq(selected("scale"), 0x4);
	ck_assert_uint_eq(selected("void scale<float>(float*, float, int)"), 0x4);
	ck_assert_uint_eq(selected("saxpy"), 0x8);
	ck_assert_uint_eq(selected("sax?y"), 0x8);
	ck_assert_uint_eq(selected("ns::*"), 0x1);
	ck_assert_uint_eq(selected("*Add*"), 0x3);
	ck_assert_uint_eq(selected("*"), 0x1f);
	ck_assert_uint_eq(selected("(anonymous namespace)::fill"), 0x10);
	ck_assert_uint_eq(selected("fill"), 0x10);
	ck_assert_uint_eq(selected("_Z*"), 0x17);
}
END_TEST

START_TEST(kernel_names_forms)
{
	struct kernel_names kn;
	static const char name[] = "_ZN5outer5inner9transformIfN3ops3AddELi4EEEvPKT_S6_PS4_iT0_";

	ck_assert_int_eq(kernel_names_init(&kn, name, strlen(name)), 0);
	ck_assert_str_eq(kn.demangled, "void outer::inner::transform<float, ops::Add, 4>(float const*, float const*, float*, int, ops::Add)");
	ck_assert_str_eq(kn.qualified, "outer::inner::transform<float, ops::Add, 4>");
	ck_assert_str_eq(kn.plain, "outer::inner::transform");
	ck_assert_str_eq(kn.base, "transform");
	ck_assert(kernel_names_match(&kn, "outer::*::transform"));
	ck_assert(!kernel_names_match(&kn, "outer::transform"));
	kernel_names_free(&kn);
	/* Not a C++ name: every form is the name itself. */
	ck_assert_int_eq(kernel_names_init(&kn, "_Zbad", 5), 0);
	ck_assert_str_eq(kn.demangled, "_Zbad");
	ck_assert_str_eq(kn.base, "_Zbad");
	kernel_names_free(&kn);
}
END_TEST

START_TEST(unknown_pattern)
{
	char *probe = probe_module("8.0", "sm_90", "p");
	struct ptx_text mod = { "p", probe, strlen(probe) };
	struct ptx_attach req = { .kernel = "nope*", .point = EGPU_ATTACH_EXIT,
				  .func = "p", .strict_match = true };
	struct ptx_report rep;
	struct strbuf sb;

	sb_init(&sb);
	ck_assert_int_eq(ptx_instrument(names_app, strlen(names_app), &req, 1,
					&mod, 1, &sb, NULL),
			 EGPU_ENOENT);
	ck_assert_str_eq(egpu_errmsg(),
			 "prog 'p': no kernel matches 'nope*'; kernels: ns::vectorAdd, vectorAdd, scale<float>, saxpy, (anonymous namespace)::fill");
	/* Not strict: the module is unchanged and the report warns. */
	req.strict_match = false;
	req.label = "probe";
	sb_free(&sb);
	sb_init(&sb);
	ck_assert_int_eq(ptx_instrument(names_app, strlen(names_app), &req, 1,
					&mod, 1, &sb, &rep), 0);
	ck_assert_uint_eq(rep.nwarnings, 1);
	ck_assert_str_eq(rep.warnings[0],
			 "prog 'probe': no kernel matches 'nope*'; kernels: ns::vectorAdd, vectorAdd, scale<float>, saxpy, (anonymous namespace)::fill");
	ptx_report_free(&rep);
	sb_free(&sb);
	free(probe);
}
END_TEST

/* Instrument @app with "p" at every kernel's entry, linking @texts. */
static int link_case(const char *app, const char *const *texts, size_t n,
		     char **out)
{
	struct ptx_text mods[4];
	struct ptx_attach req = { "*", EGPU_ATTACH_ENTRY, "p", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL };
	size_t i, len;
	int err;

	for (i = 0; i < n; i++) {
		mods[i].name = i ? "b" : "a";
		mods[i].text = texts[i];
		mods[i].len = strlen(texts[i]);
	}
	*out = instrument(app, strlen(app), &req, 1, mods, n, NULL, &len, &err);
	return err;
}

static const char plain_app[] =
	".version 8.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry k(.param .u64 k_p)\n{\n\tret;\n}\n";

static const char probe_calls_runtime[] =
	".version 7.8\n.target sm_90\n.address_size 64\n"
	".extern .func (.param .b64 r) egpu_dev_x(.param .b64 a);\n"
	".extern .global .align 8 .u64 egpu_dev_g;\n"
	".extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n"
	".func (.param .b64 r) helper(.param .b64 a)\n{\n\tret;\n}\n"
	".file 1 \"probe.c\"\n"
	".visible .func (.param .b64 r) p(.param .b64 c, .param .b64 n)\n{\n"
	"\t.reg .b64 %rd<3>;\n\t.loc 1 3 0\n\tld.param.u64 %rd1, [c];\n"
	"\tmov.u64 %rd2, egpu_dev_g;\n"
	"\t{\n\t.param .b64 a0;\n\tst.param.b64 [a0], %rd1;\n\t.param .b64 r0;\n"
	"\tcall.uni (r0), egpu_dev_x, (a0);\n\t}\n\tret;\n}\n"
	".section .debug_info { .b32 1 }\n";

static const char runtime[] =
	".version 9.0\n.target sm_90\n.address_size 64\n"
	".visible .global .align 8 .u64 egpu_dev_g;\n"
	".extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n"
	".func (.param .b64 r) helper(.param .b64 a)\n{\n\tret;\n}\n"
	".visible .func (.param .b64 r) egpu_dev_x(.param .b64 a)\n{\n\tret;\n}\n";

START_TEST(link_probe_and_runtime)
{
	const char *texts[] = { probe_calls_runtime, runtime };
	char *out;
	const char *proto, *use;

	ck_assert_int_eq(link_case(plain_app, texts, 2, &out), 0);
	/* Externs of defined symbols are gone; vprintf is kept once. */
	ck_assert_ptr_null(strstr(out, ".extern .func (.param .b64 r) egpu_dev_x"));
	ck_assert_ptr_null(strstr(out, ".extern .global"));
	ck_assert_uint_eq(count(out, "vprintf"), 1);
	/* Each module keeps its own local helper, renamed apart. */
	ck_assert_uint_eq(count(out, ".func (.param .b64 r) helper_egpu1(.param .b64 a)\n{"), 1);
	ck_assert_uint_eq(count(out, ".func (.param .b64 r) helper_egpu2(.param .b64 a)\n{"), 1);
	ck_assert_ptr_null(strstr(out, " helper("));
	/* egpu_dev_x is declared before its use, internal (linked
	 * functions are compiled for their callers' register bounds). */
	ck_assert_ptr_null(strstr(out, ".visible .func (.param .b64 r) egpu_dev_x"));
	proto = strstr(out, "\n.func (.param .b64 r) egpu_dev_x(.param .b64 a);\n");
	use = strstr(out, "call.uni (r0), egpu_dev_x");
	ck_assert(proto && use && proto < use);
	ck_assert(strstr(out, ".visible .global .align 8 .u64 egpu_dev_g;") < use);
	/* Debug data of linked modules is dropped. */
	ck_assert_ptr_null(strstr(out, "\t.loc "));
	ck_assert_ptr_null(strstr(out, ".file"));
	ck_assert_ptr_null(strstr(out, ".section"));
	/* Highest .version, the application's .target. */
	ck_assert_ptr_nonnull(strstr(out, ".version 9.0\n.target sm_90a\n"));
	/* Linked code sits between the header and the first kernel. */
	ck_assert(strstr(out, "// end egpu linked code\n") < strstr(out, ".entry k"));
	free(out);
}
END_TEST

START_TEST(link_renames_locals)
{
	static const char app[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".func sub()\n{\n\tret;\n}\n"
		".visible .entry k()\n{\n\tcall.uni sub, ();\n\tret;\n}\n";
	static const char a[] =
		".version 7.8\n.target sm_90\n.address_size 64\n"
		".func sub();\n"
		".visible .func (.param .b64 r) p(.param .b64 c, .param .b64 n)\n{\n\tcall.uni sub, ();\n\tret;\n}\n"
		".func sub()\n{\n\tret;\n}\n"
		".global .u32 sub_egpu1;\n";
	static const char b[] =
		".version 7.8\n.target sm_90\n.address_size 64\n"
		".func sub()\n{\n\texit;\n}\n"
		".visible .func (.param .b64 r) q(.param .b64 c, .param .b64 n)\n{\n\tcall.uni sub, ();\n\tret;\n}\n";
	const char *texts[] = { a, b };
	char *out;

	ck_assert_int_eq(link_case(app, texts, 2, &out), 0);
	/* The application's sub stays; a's is renamed past a's own global. */
	ck_assert_uint_eq(count(out, ".func sub()\n{\n\tret;"), 1);
	ck_assert_uint_eq(count(out, ".func sub_egpu1_1()\n{\n\tret;"), 1);
	ck_assert_uint_eq(count(out, ".func sub_egpu2()\n{\n\texit;"), 1);
	ck_assert_ptr_nonnull(strstr(out, "p(.param .b64 c, .param .b64 n)\n{\n\tcall.uni sub_egpu1_1, ();"));
	ck_assert_ptr_nonnull(strstr(out, "q(.param .b64 c, .param .b64 n)\n{\n\tcall.uni sub_egpu2, ();"));
	ck_assert_ptr_nonnull(strstr(out, ".global .u32 sub_egpu1;"));
	ck_assert_ptr_nonnull(strstr(out, "\tcall.uni sub, ();\n\tret;\n}\n"));
	free(out);
}
END_TEST

/* Linked code calling application functions sees their prototypes. */
START_TEST(link_uses_application_functions)
{
	const char *texts[] = { weak_probe_ptx };
	char *out;
	const char *proto, *def;

	ck_assert_int_eq(link_case(weak_app_ptx, texts, 1, &out), 0);
	/* The application's weak w wins over the module's; helper is used. */
	ck_assert_uint_eq(count(out, ".weak .func (.param .b32 r) w(.param .b32 x)\n{"), 1);
	ck_assert_uint_eq(count(out, "\tadd.u32 %r2, %r1, 1;"), 1);
	proto = strstr(out, ".weak .func (.param .b32 r) w(.param .b32 x);\n");
	def = strstr(out, ".weak .func (.param .b32 r) w(.param .b32 x)\n{");
	ck_assert(proto && def && proto < strstr(out, "call.uni (r0), w,") &&
		  strstr(out, "call.uni (r0), w,") < def);
	ck_assert_ptr_nonnull(strstr(out, ".visible .func (.param .b64 r) app_helper(.param .b64 a);\n"));
	free(out);
}
END_TEST

START_TEST(link_errors)
{
	static const char other_p[] =
		".version 7.8\n.target sm_90\n.address_size 64\n"
		".visible .func (.param .b64 r) p(.param .b64 c, .param .b64 n)\n{\n\tret;\n}\n";
	static const char app_helper[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".func (.param .b64 r) helper(.param .b64 a)\n{\n\texit;\n}\n"
		".visible .func (.param .b64 r) egpu_dev_x(.param .b64 a)\n{\n\texit;\n}\n"
		".visible .entry k(.param .u64 k_p)\n{\n\tret;\n}\n";
	static const char uses_app_var[] =
		".version 7.8\n.target sm_90\n.address_size 64\n"
		".extern .global .u32 table;\n";
	static const char app_var[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".visible .global .u32 table;\n"
		".visible .entry k(.param .u64 k_p)\n{\n\tret;\n}\n";
	static const char low_app[] =
		".version 8.0\n.target sm_80\n.address_size 64\n.entry k()\n{\n\tret;\n}\n";
	static const char addr32[] =
		".version 7.8\n.target sm_80\n.address_size 32\n";
	const char *texts[2];
	char *out;

	texts[0] = probe_calls_runtime;
	texts[1] = other_p;
	ck_assert_int_eq(link_case(plain_app, texts, 2, &out), EGPU_EEXIST);
	ck_assert_str_eq(egpu_errmsg(),
			 "symbol 'p' is defined differently by module 'a' (line 12) and module 'b' (line 4)");
	texts[0] = runtime;
	ck_assert_int_eq(link_case(app_helper, texts, 2, &out), EGPU_EEXIST);
	ck_assert_str_eq(egpu_errmsg(),
			 "symbol 'egpu_dev_x' is defined differently by application (line 8) and module 'a' (line 10)");
	texts[0] = other_p;
	texts[1] = uses_app_var;
	ck_assert_int_eq(link_case(app_var, texts, 2, &out), EGPU_ENOTSUP);
	ck_assert_str_eq(egpu_errmsg(), "module 'b' uses variable 'table' of the application; linked code may not");
	ck_assert_int_eq(link_case(low_app, texts, 1, &out), EGPU_ENOTSUP);
	ck_assert_str_eq(egpu_errmsg(),
			 "module 'a' targets sm_90 but the application targets sm_80; translate it for sm_80");
	texts[1] = addr32;
	ck_assert_int_eq(link_case(plain_app, texts, 2, &out), EGPU_EINVAL);
	ck_assert_str_eq(egpu_errmsg(), "module 'b' has .address_size 32, the application 64");
}
END_TEST

START_TEST(request_errors)
{
	static const char bad_sig[] =
		".version 7.8\n.target sm_90\n.address_size 64\n"
		".visible .func p(.param .b64 c)\n{\n\tret;\n}\n";
	static const char local_probe[] =
		".version 7.8\n.target sm_90\n.address_size 64\n"
		".func (.param .b64 r) p(.param .b64 c, .param .b64 n)\n{\n\tret;\n}\n";
	char *probe = probe_module("7.8", "sm_90", "p");
	struct ptx_text mod = { "p", probe, strlen(probe) };
	struct ptx_attach req = { "k", EGPU_ATTACH_ENTRY, "q", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL };
	struct strbuf sb;

	sb_init(&sb);
	ck_assert_int_eq(ptx_instrument(plain_app, strlen(plain_app), &req, 1,
					&mod, 1, &sb, NULL), EGPU_ENOENT);
	ck_assert_str_eq(egpu_errmsg(), "probe function 'q' is not defined by any linked module");
	req.func = "p";
	req.point = 7;
	ck_assert_int_eq(ptx_instrument(plain_app, strlen(plain_app), &req, 1,
					&mod, 1, &sb, NULL), EGPU_EINVAL);
	ck_assert_str_eq(egpu_errmsg(), "attach request 0 (p): attach point 7 is not entry, exit or mem");
	req.point = EGPU_ATTACH_EXIT;
	mod.text = bad_sig;
	mod.len = strlen(bad_sig);
	ck_assert_int_eq(ptx_instrument(plain_app, strlen(plain_app), &req, 1,
					&mod, 1, &sb, NULL), EGPU_EINVAL);
	ck_assert_str_eq(egpu_errmsg(), "probe function 'p' (module 'p' line 4) must take (ctx, ctx_len) and return one value");
	mod.text = local_probe;
	mod.len = strlen(local_probe);
	ck_assert_int_eq(ptx_instrument(plain_app, strlen(plain_app), &req, 1,
					&mod, 1, &sb, NULL), EGPU_EINVAL);
	ck_assert_str_eq(egpu_errmsg(), "probe function 'p' (module 'p' line 4) must be .visible");
	mod.text = "garbage";
	mod.len = 7;
	ck_assert_int_eq(ptx_instrument(plain_app, strlen(plain_app), &req, 1,
					&mod, 1, &sb, NULL), EGPU_EFORMAT);
	ck_assert_str_eq(egpu_errmsg(), "module 'p': PTX line 1 col 1: expected a module-level directive, found 'garbage'");
	ck_assert_int_eq(ptx_instrument("\n .version 8.0\n{", 16, &req, 1,
					&mod, 1, &sb, NULL), EGPU_EFORMAT);
	ck_assert_str_eq(egpu_errmsg(), "application: PTX line 3 col 1: expected a module-level directive, found '{'");
	ck_assert_int_eq(ptx_instrument(NULL, 0, NULL, 0, NULL, 0, &sb, NULL), EGPU_EINVAL);
	ck_assert_uint_eq(sb.len, 0);
	sb_free(&sb);
	free(probe);
}
END_TEST

START_TEST(identity_without_requests)
{
	static const char app[] =
		"// comment /* not a block */\n.version 8.0 /* v */\n.target sm_90\n"
		".entry k()\n{\n\t/* inside */ ret; // done\n}\n\n\n";
	size_t len;
	int err;
	char *out = instrument(app, strlen(app), NULL, 0, NULL, 0, NULL, &len, &err);

	ck_assert_msg(out, "%s", egpu_errmsg());
	ck_assert_uint_eq(len, strlen(app));
	ck_assert_str_eq(out, app);
	free(out);
}
END_TEST

START_TEST(sm_70_needed_for_params)
{
	static const char old[] =
		".version 7.0\n.target sm_60\n.address_size 64\n"
		".entry k(.param .u32 n)\n{\n\tret;\n}\n.entry j()\n{\n\tret;\n}\n";
	char *probe = probe_module("7.0", "sm_60", "p");
	struct ptx_text mod = { "p", probe, strlen(probe) };
	struct ptx_attach req = { "k", EGPU_ATTACH_ENTRY, "p", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL };
	struct strbuf sb;

	sb_init(&sb);
	ck_assert_int_eq(ptx_instrument(old, strlen(old), &req, 1, &mod, 1, &sb,
					NULL), EGPU_ENOTSUP);
	ck_assert_str_eq(egpu_errmsg(), "application: kernel k: probes need sm_70 or later to address kernel parameters; the module targets sm_60");
	req.kernel = "j";
	ck_assert_int_eq(ptx_instrument(old, strlen(old), &req, 1, &mod, 1, &sb,
					NULL), 0);
	sb_free(&sb);
	free(probe);
}
END_TEST

/*
 * An entry probe that may end threads: a barrier waiting for all threads
 * (released by exits) is fine, one counting arrivals, in the kernel or a
 * .func of its module, would hang the threads left: refused.
 */
START_TEST(early_exit_and_barriers)
{
	static const char *const cases[][2] = {
		{ "\tbar.sync 0;\n", NULL },
		{ "\tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n", NULL },
		{ "\tbar.sync 1, 64;\n", "'bar.sync 1, 64' (PTX line 7, in k)" },
		{ "\tbar.arrive 2, 64;\n", "'bar.arrive 2, 64' (PTX line 7, in k)" },
		{ "\tcall f;\n", "'mbarrier.init.shared.b64 [bar], 32' (PTX line 12, in f)" },
	};
	char *probe = probe_module("7.8", "sm_90", "p");
	struct ptx_text mod = { "p", probe, strlen(probe) };
	struct ptx_attach req = { "k", EGPU_ATTACH_ENTRY, "p", false, false, 0, 0, NULL, false, true, 0, 0, NULL, NULL };
	struct strbuf sb, app;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		sb_init(&app);
		sb_printf(&app, ".version 7.8\n.target sm_90\n.address_size 64\n"
			  ".shared .b64 bar;\n.entry k()\n{\n%s\tret;\n}\n"
			  ".func f()\n{\n\tmbarrier.init.shared.b64 [bar], 32;\n\tret;\n}\n",
			  cases[i][0]);
		sb_init(&sb);
		if (!cases[i][1]) {
			ck_assert_int_eq(ptx_instrument(app.buf, app.len, &req, 1, &mod,
							1, &sb, NULL), 0);
		} else {
			ck_assert_int_eq(ptx_instrument(app.buf, app.len, &req, 1, &mod,
							1, &sb, NULL), EGPU_ENOTSUP);
			ck_assert_msg(strstr(egpu_errmsg(), cases[i][1]) &&
				      strstr(egpu_errmsg(), "probe 'p' may end threads"),
				      "%s", egpu_errmsg());
		}
		sb_free(&sb);
		sb_free(&app);
	}
	/* Exit probes, and probes that never end threads, are not concerned. */
	req.may_exit = false;
	static const char counted[] =
		".version 7.8\n.target sm_90\n.address_size 64\n"
		".entry k()\n{\n\tbar.sync 1, 64;\n\tret;\n}\n";
	sb_init(&sb);
	ck_assert_int_eq(ptx_instrument(counted, strlen(counted), &req, 1, &mod,
					1, &sb, NULL), 0);
	sb_free(&sb);
	free(probe);
}
END_TEST

START_TEST(falling_off_the_end)
{
	char *probe = probe_module("7.8", "sm_90", "p");
	struct ptx_text mod = { "p", probe, strlen(probe) };
	struct ptx_attach reqs[] = {
		{ "*", EGPU_ATTACH_ENTRY, "p", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL }, { "*", EGPU_ATTACH_EXIT, "p", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
	};
	struct ptx_report rep;
	size_t len;
	int err;
	char *out = instrument(fall_off_ptx, strlen(fall_off_ptx), reqs, 2, &mod, 1,
			       &rep, &len, &err);
	const char *empty;

	ck_assert_msg(out, "%s", egpu_errmsg());
	ck_assert_uint_eq(rep.kernels[0].exit_points, 1);
	ck_assert_uint_eq(rep.kernels[1].exit_points, 1);
	ck_assert_uint_eq(rep.kernels[2].exit_points, 1);
	ck_assert_ptr_nonnull(strstr(out, "\tmov.u32 %r1, 1;\n// begin egpu exit probes\n"));
	ck_assert_ptr_nonnull(strstr(out, "// end egpu exit probes\n\tret;\n$L__tmp1:\n$L__func_end0:\n}\n"));
	/* Entry then exit at the same place in the empty kernel. */
	empty = strstr(out, ".entry empty()\n{\n// begin egpu entry probes\n");
	ck_assert_ptr_nonnull(empty);
	ck_assert_ptr_nonnull(strstr(empty, "// end egpu entry probes\n\t// begin egpu exit probes\n"));
	ck_assert_ptr_nonnull(strstr(empty, "// end egpu exit probes\n\t}\n"));
	free(out);
	free(probe);
	ptx_report_free(&rep);
}
END_TEST

START_TEST(names_avoid_application_names)
{
	static const char app[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".entry k()\n{\n\t.reg .b64 %egpu_rd<2>;\n$egpu1_x:\n\tret;\n}\n";
	char *probe = probe_module("7.8", "sm_90", "p");
	struct ptx_text mod = { "p", probe, strlen(probe) };
	struct ptx_attach req = { "k", EGPU_ATTACH_ENTRY, "p", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL };
	size_t len;
	int err;
	char *out = instrument(app, strlen(app), &req, 1, &mod, 1, NULL, &len, &err);

	ck_assert_msg(out, "%s", egpu_errmsg());
	ck_assert_ptr_nonnull(strstr(out, ".reg .b64 \t%egpu2_rd<6>;"));
	ck_assert_ptr_nonnull(strstr(out, "\n$egpu2_0_e0_0:\n"));
	ck_assert_ptr_null(strstr(out, "%egpu_rd<6>"));
	ck_assert_ptr_null(strstr(out, "$egpu_0"));
	free(out);
	free(probe);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ptx_instrument");
	TCase *tc = tcase_create("instrument");

	tcase_add_test(tc, entry_and_exits);
	tcase_add_test(tc, programs_in_attach_order);
	tcase_add_test(tc, kernel_selection);
	tcase_add_test(tc, kernel_names_forms);
	tcase_add_test(tc, unknown_pattern);
	tcase_add_test(tc, link_probe_and_runtime);
	tcase_add_test(tc, link_renames_locals);
	tcase_add_test(tc, link_uses_application_functions);
	tcase_add_test(tc, link_errors);
	tcase_add_test(tc, request_errors);
	tcase_add_test(tc, identity_without_requests);
	tcase_add_test(tc, sm_70_needed_for_params);
	tcase_add_test(tc, falling_off_the_end);
	tcase_add_test(tc, early_exit_and_barriers);
	tcase_add_test(tc, names_avoid_application_names);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
