/* SPDX-License-Identifier: MIT */
/*
 * egpu memcheck's check in instrumented PTX (no GPU: an offline context):
 * the splicer's memcheck mode on written kernels (a predicated load
 * checked only under its predicate, a vector load's 16 bytes, a generic
 * access dispatched by isspacep, shared against the dynamic part's end,
 * local against the kernel's depot and not in a .func, const and param
 * accesses unchecked), containment (a bad load zeroes its destinations,
 * a bad store is skipped), a loop's global load keeping its range, a
 * group of shared loads checked at its head, the check after a memory
 * probe at one site, and the suite and the benchmark's kernels (nvcc
 * -lineinfo) accepted by ptxas for sm_90 and saved for ptxas -v
 * (docs/memcheck.md has the numbers).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egpu.h"
#include "test_util.h"

#define MEM_OBJ PTX_BPF_DIR "/mem.bpf.o"

static egpu_ctx *mc_ctx(bool contain)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true, .sm = "sm_90");
	EGPU_OPTS(egpu_memcheck_opts, mo, .index_cell = 0x7f0000001000ull,
		  .states = 0x7f0000002000ull, .counts = 0x7f0000003000ull,
		  .log = 0x7f0000004000ull, .hints = 0x7f0000005000ull,
		  .contain = contain);
	egpu_ctx *ctx = egpu_ctx_new(&co);

	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(egpu_memcheck_enable(ctx, &mo), 0);
	return ctx;
}

#define HEAD ".version 8.0\n.target sm_90\n.address_size 64\n\n"

static const char kernels[] = HEAD
	".extern .shared .align 4 .b8 dyn[];\n"
	".const .align 4 .b8 tab[64];\n"
	".func (.param .b32 r) f(.param .b64 p)\n{\n"
	"\t.local .align 4 .b8 __local_depot1[16];\n"
	"\t.reg .b64 %rd<3>;\n\t.reg .b32 %r<3>;\n"
	"\tld.param.u64 %rd1, [p];\n"
	"\tld.local.u32 %r1, [%rd1];\n"
	"\tst.param.b32 [r], %r1;\n\tret;\n}\n"
	".visible .entry k(.param .u64 k_p, .param .u32 k_n)\n{\n"
	"\t.local .align 4 .b8 __local_depot0[32];\n"
	"\t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .f32 %f<6>;\n"
	"\t.reg .b64 %rd<8>;\n"
	"\tld.param.u64 %rd1, [k_p];\n"
	"\tld.param.u32 %r1, [k_n];\n"
	"\tsetp.lt.u32 %p1, %r1, 10;\n"
	"\t@%p1 ld.global.f32 %f1, [%rd1];\n"
	"\tld.global.v4.f32 {%f2, %f3, %f4, %f5}, [%rd1+16];\n"
	"\tld.f32 %f1, [%rd1+4];\n"
	"\tmov.u32 %r2, dyn;\n"
	"\tst.shared.u32 [%r2+8], %r1;\n"
	"\tmov.u64 %rd2, __local_depot0;\n"
	"\tst.local.u32 [%rd2+28], %r1;\n"
	"\tld.const.u32 %r3, [tab];\n"
	"\tst.global.f32 [%rd1], %f1;\n"
	"\tatom.global.add.u32 %r4, [%rd1], 1;\n"
	"\t{\n\t.param .b64 a;\n\t.param .b32 b;\n"
	"\tst.param.b64 [a], %rd2;\n"
	"\tcall.uni (b), f, (a);\n"
	"\tld.param.b32 %r5, [b];\n\t}\n"
	"\tret;\n}\n"
	".visible .entry loop(.param .u64 l_p)\n{\n"
	"\t.reg .pred %p<2>;\n\t.reg .b32 %r<3>;\n\t.reg .f32 %f<2>;\n"
	"\t.reg .b64 %rd<3>;\n"
	"\tld.param.u64 %rd1, [l_p];\n"
	"\tmov.u32 %r1, 0;\n"
	"$L_top:\n"
	"\tld.global.f32 %f1, [%rd1];\n"
	"\tadd.s64 %rd1, %rd1, 4;\n"
	"\tadd.s32 %r1, %r1, 1;\n"
	"\tsetp.lt.u32 %p1, %r1, 100;\n"
	"\t@%p1 bra $L_top;\n"
	"\tst.global.f32 [%rd1], %f1;\n"
	"\tret;\n}\n"
	".visible .entry grp()\n{\n"
	"\t.reg .b32 %r<3>;\n\t.reg .f32 %f<5>;\n"
	"\tmov.u32 %r1, dyn;\n"
	"\tld.shared.f32 %f1, [%r1];\n"
	"\tld.shared.f32 %f2, [%r1+12];\n"
	"\tadd.f32 %f3, %f1, %f2;\n"
	"\tld.shared.f32 %f4, [%r1+4];\n"
	"\tadd.u32 %r1, %r1, 64;\n"
	"\tld.shared.f32 %f1, [%r1];\n"
	"\tret;\n}\n";

/* Whether a line of @s starts (after a tab) with @head and ends with
 * @tail. */
static bool has_line(const char *s, const char *head, const char *tail)
{
	for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l), t = strlen(tail);

		if (*l == '\t' && !strncmp(l + 1, head, strlen(head)) &&
		    n >= t && !strncmp(l + n - t, tail, t))
			return true;
	}
	return false;
}

/* The instrumented text of kernel k, from "// begin egpu mem probes"
 * before @insn to @insn itself. */
static char *site_before(const char *out, const char *insn)
{
	return tu_text_before(out, "// begin egpu mem probes", insn);
}

START_TEST(sites_by_space)
{
	egpu_ctx *ctx = mc_ctx(false);
	struct egpu_report rep;
	char *out = tu_instrument(ctx, kernels, &rep), *s;

	/* every access but ld.param and ld.const: the predicated load, the
	 * vector, the generic, shared, local, the store, the atomic; and
	 * the .func's local load (a site, unchecked); not the call's */
	ck_assert_uint_eq(rep.mem_site_cnt, 8 + 2 + 4);
	/* the lookup copied into each global or generic site, never called */
	ck_assert_int_eq(tu_count(out, "// copied egpu_dev_mc_find"), 5 + 2);
	ck_assert_ptr_null(strstr(out, "egpu_dev_mc_find,"));
	ck_assert_ptr_null(strstr(out, "egpu_dev_mc_window,"));
	/* shared memory's end, once at the entry of k and grp */
	ck_assert_int_eq(tu_count(out, "%dynamic_smem_size"), 2);
	/* the predicated load: skipped, check included, when %p1 is false */
	s = site_before(out, "@%p1 ld.global.f32 %f1");
	ck_assert_ptr_nonnull(strstr(s, "@!%p1 bra"));
	ck_assert_ptr_nonnull(strstr(s, "egpu_dev_mc_find"));
	free(s);
	/* the vector: 16 bytes; the copy's ctx folded: the address from
	 * the site's register, 16 bytes, a load (1) of global memory (1),
	 * its answer in %egpu_mcr */
	s = site_before(out, "ld.global.v4.f32");
	ck_assert_ptr_nonnull(strstr(s, "mov.u64 \t%egpu_mc2, 16;"));
	ck_assert_msg(has_line(s, "mov.b64 \t%egpu_mck2f_", ", %egpu_m0;"), "%s", s);
	ck_assert(has_line(s, "mov.b32 \t%egpu_mck2f_", ", 16;"));
	ck_assert(has_line(s, "mov.b16 \t%egpu_mck2f_", ", 1;"));
	ck_assert(has_line(s, "mov.b64 \t%egpu_mcr, ", ";"));
	ck_assert_ptr_nonnull(strstr(s, "setp.eq.u64 \t%egpu_mcq, %egpu_mcr, 0;"));
	/* k keeps no range: its hint tests untag the hint, one load, with
	 * the tag read at entry (the cell's word after the index's) */
	ck_assert_ptr_nonnull(strstr(s, "ld.global.v2.u64 \t{%egpu_mc3, %egpu_mc4}, [%egpu_mc5];"));
	ck_assert_int_eq(tu_count(s, "xor.b32 \t%egpu_mcw1, %egpu_mcw1, %egpu_mctg;"), 2);
	ck_assert_ptr_nonnull(strstr(s, "setp.ge.or.u64 \t%egpu_mcq, %egpu_m0, 281474976710656, %egpu_mcq;"));
	free(s);
	ck_assert_int_eq(tu_count(out, "ld.global.u32 \t%egpu_mctg, [%egpu_mcta];"), 1);
	ck_assert_ptr_nonnull(strstr(out, "mov.u64 \t%egpu_mcta, 139637976731656;"));
	/* generic: each window by isspacep; the kernel's depot for local */
	s = site_before(out, "ld.f32 %f1, [%rd1+4]");
	ck_assert_ptr_nonnull(strstr(s, "isspacep.global"));
	ck_assert_ptr_nonnull(strstr(s, "isspacep.shared"));
	ck_assert_ptr_nonnull(strstr(s, "isspacep.local"));
	ck_assert_ptr_nonnull(strstr(s, "__local_depot0"));
	free(s);
	s = site_before(out, "st.shared.u32");
	ck_assert_ptr_nonnull(strstr(s, "%egpu_mcse"));
	ck_assert_ptr_null(strstr(s, "egpu_dev_mc_find"));
	free(s);
	/* 4 bytes at 28 of a 32-byte depot: bad past offset 28 */
	s = site_before(out, "st.local.u32 [%rd2+28]");
	ck_assert_msg(strstr(s, "setp.gt.u64 \t%egpu_mcq, %egpu_mc3, 28;"), "%s", s);
	/* the report's copy: its offset from %egpu_mc3 (a load nvcc makes
	 * at -8 from a pointer into the ctx), the frame's 32 bytes */
	ck_assert_msg(has_line(s, "mov.b64 \t%egpu_mck5l_", ", %egpu_mc3;"), "%s", s);
	ck_assert(has_line(s, "mov.b32 \t%egpu_mck5l_", ", 32;"));
	free(s);
	/* the .func's local load is not checked (its caller's frame) */
	s = site_before(out, "ld.local.u32 %r1, [%rd1]");
	ck_assert_ptr_null(strstr(s, "egpu memcheck"));
	free(s);
	/* in the loop, the load looks up only when it leaves the
	 * allocation it passed last; the store after it always does */
	s = site_before(out, "ld.global.f32 %f1, [%rd1];\n\tadd.s64");
	ck_assert_msg(strstr(s, "setp.gt.or.u64 \t%egpu_mcq, %egpu_mc5, %egpu_mch0, %egpu_mcq;"),
		      "%s", s);
	free(s);
	s = site_before(out, "st.global.f32 [%rd1], %f1;\n\tret;");
	ck_assert_ptr_null(strstr(s, "%egpu_mch"));
	/* loop keeps ranges: the tag is read where the hint is */
	ck_assert_ptr_nonnull(strstr(s, "ld.global.u32 \t%egpu_mcw2, [%egpu_mc3];"));
	ck_assert_int_eq(tu_count(s, "xor.b32 \t%egpu_mcw1, %egpu_mcw1, %egpu_mcw2;"), 2);
	free(s);
	ck_assert_ptr_nonnull(strstr(out, "\tmov.b64 \t%egpu_mch0, 0;\n"));
	/* grp: the loads at 0 and 12 off %r1 checked at the first, up to
	 * 16 bytes past it, a loop sending each member past the end as
	 * itself from one copy; the one at 4 breaks their step of 12 and
	 * starts a group; after %r1 changes, alone */
	s = site_before(out, "ld.shared.f32 %f1, [%r1];");
	ck_assert_msg(strstr(s, "add.s64 \t%egpu_mc5, %egpu_mc3, 16;"), "%s", s);
	ck_assert_int_eq(tu_count(s, "// copied egpu_dev_mc_window"), 1);
	ck_assert_ptr_nonnull(strstr(s, "add.s64 \t%egpu_mc4, %egpu_mc4, 12;"));
	ck_assert_ptr_nonnull(strstr(s, "add.u32 \t%egpu_mcw0, %egpu_mcw0, 1;"));
	free(s);
	s = site_before(out, "ld.shared.f32 %f2, [%r1+12]");
	ck_assert_ptr_null(strstr(s, "egpu memcheck"));
	free(s);
	/* a group of one is checked as a single access */
	s = site_before(out, "ld.shared.f32 %f4, [%r1+4]");
	ck_assert_msg(strstr(s, "add.u64 \t%egpu_mc5, %egpu_mc3, %egpu_mc2;"), "%s", s);
	ck_assert_ptr_null(strstr(s, "%egpu_mcw0"));
	free(s);
	s = site_before(out, "ld.shared.f32 %f1, [%r1];\n\tret;");
	ck_assert_msg(strstr(s, "add.u64 \t%egpu_mc5, %egpu_mc3, %egpu_mc2;"), "%s", s);
	free(s);
	ck_assert_ptr_null(strstr(out, "$egpu_mcx_")); /* no containment */
	tu_assemble_sm90(out, "written kernels");
	free(out);
	egpu_ctx_free(ctx);
}
END_TEST

START_TEST(contain)
{
	egpu_ctx *ctx = mc_ctx(true);
	struct egpu_report rep;
	char *out = tu_instrument(ctx, kernels, &rep);
	const char *ld = strstr(out, "ld.global.v4.f32 {%f2, %f3, %f4, %f5}, [%rd1+16];");
	const char *st = strstr(out, "st.global.f32 [%rd1], %f1;");
	const char *at = strstr(out, "atom.global.add.u32 %r4, [%rd1], 1;");

	ck_assert_ptr_nonnull(ld);
	ck_assert_ptr_nonnull(st);
	ck_assert_ptr_nonnull(at);
	/* a bad load zeroes each destination, a bad atomic its result */
	ck_assert_msg(!strncmp(strchr(ld, '\n'), "\n$egpu_mcx_2:\n"
			       "\t@%egpu_mcb mov.b32 \t%f2, 0;\n"
			       "\t@%egpu_mcb mov.b32 \t%f3, 0;\n"
			       "\t@%egpu_mcb mov.b32 \t%f4, 0;\n"
			       "\t@%egpu_mcb mov.b32 \t%f5, 0;\n\t}", 120),
		      "%.200s", ld);
	ck_assert_ptr_nonnull(strstr(at, "@%egpu_mcb mov.b32 \t%r4, 0;"));
	/* a bad store is only skipped */
	ck_assert_msg(!strncmp(strchr(st, '\n'), "\n$egpu_mcx_6:\n\t}", 15),
		      "%.80s", st);
	ck_assert_ptr_nonnull(strstr(out, "@%egpu_mcb bra \t$egpu_mcx_6;"));
	tu_assemble_sm90(out, "contained kernels");
	free(out);
	egpu_ctx_free(ctx);
}
END_TEST

/* A tile loop: %r2 is not written in it, %r5 is. */
static const char tile[] = HEAD
	".extern .shared .align 4 .b8 dyn[];\n"
	".visible .entry tile(.param .u32 t_n)\n{\n"
	"\t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .f32 %f<4>;\n"
	"\tld.param.u32 %r1, [t_n];\n"
	"\tmov.u32 %r2, dyn;\n"
	"\tmov.u32 %r5, dyn;\n"
	"\tmov.u32 %r4, 0;\n"
	"$L_t:\n"
	"\tld.shared.f32 %f1, [%r2];\n"
	"\tst.shared.f32 [%r2+8], %f1;\n"
	"\tld.shared.f32 %f2, [%r5];\n"
	"\tadd.u32 %r5, %r5, 4;\n"
	"\tadd.u32 %r4, %r4, 1;\n"
	"\tsetp.lt.u32 %p1, %r4, %r1;\n"
	"\t@%p1 bra $L_t;\n"
	"\tld.shared.f32 %f3, [%r2+4];\n"
	"\tret;\n}\n";

/* The shared sites of a loop whose bases it does not write: tested once
 * (their run's predicate), again after a base is written; not with
 * containment. */
START_TEST(hoisted)
{
	egpu_ctx *ctx = mc_ctx(false);
	struct egpu_report rep;
	char *out = tu_instrument(ctx, tile, &rep), *s;

	ck_assert_ptr_nonnull(strstr(out, "\t.reg .pred \t%egpu_mcv<1>;\n"
				     "\tsetp.ne.u32 \t%egpu_mcv0, 0, 0;\n"));
	/* cleared after %r2 is written (and not after %r5 is) */
	ck_assert_ptr_nonnull(strstr(out, "mov.u32 %r2, dyn;\n"
				     "\tsetp.ne.u32 \t%egpu_mcv0, 0, 0;\n"
				     "\tmov.u32 %r5, dyn;\n"));
	ck_assert_int_eq(tu_count(out, "setp.ne.u32 \t%egpu_mcv0, 0, 0;"), 2);
	/* the run's first site tests both of its sites, then skips while
	 * they passed */
	s = site_before(out, "ld.shared.f32 %f1, [%r2];");
	ck_assert_msg(strstr(s, "\t@%egpu_mcv0 bra \t$egpu_mcr_0;\n"), "%s", s);
	ck_assert_ptr_nonnull(strstr(s, "cvt.u64.u32 \t%egpu_mct, %r2;\n"
				     "\tcvta.shared.u64 \t%egpu_mct, %egpu_mct;\n"
				     "\tcvta.to.shared.u64 \t%egpu_mct, %egpu_mct;\n"
				     "\tadd.s64 \t%egpu_mct, %egpu_mct, 4;\n"));
	ck_assert_ptr_nonnull(strstr(s, "\tadd.s64 \t%egpu_mct, %egpu_mct, 8;\n"
				     "\tcvta.shared.u64"));
	ck_assert_int_eq(tu_count(s, "setp.gt.or.u64 \t%egpu_mctq, %egpu_mct, %egpu_mcse, %egpu_mctq;"), 2);
	ck_assert_ptr_nonnull(strstr(s, "not.pred \t%egpu_mcv0, %egpu_mctq;\n"
				     "\t}\n$egpu_mcr_0:\n"
				     "\t@%egpu_mcv0 bra \t$egpu_mcv_0;\n"));
	/* its own check follows, for a run that did not pass */
	ck_assert_int_eq(tu_count(s, "// copied egpu_dev_mc_window"), 1);
	free(s);
	s = site_before(out, "st.shared.f32 [%r2+8], %f1;");
	ck_assert_msg(strstr(s, "\t@%egpu_mcv0 bra \t$egpu_mcv_1;\n"), "%s", s);
	ck_assert_ptr_null(strstr(s, "%egpu_mct"));
	ck_assert_int_eq(tu_count(s, "// copied egpu_dev_mc_window"), 1);
	free(s);
	/* %r5 changes in the loop; the last load is after it */
	s = site_before(out, "ld.shared.f32 %f2, [%r5];");
	ck_assert_msg(!strstr(s, "%egpu_mcv"), "%s", s);
	free(s);
	s = site_before(out, "ld.shared.f32 %f3, [%r2+4];");
	ck_assert_msg(!strstr(s, "%egpu_mcv"), "%s", s);
	free(s);
	tu_assemble_sm90(out, "a tile loop");
	free(out);
	egpu_ctx_free(ctx);
	ctx = mc_ctx(true);
	out = tu_instrument(ctx, tile, &rep);
	ck_assert_ptr_null(strstr(out, "%egpu_mcv"));
	tu_assemble_sm90(out, "a tile loop, contained");
	free(out);
	egpu_ctx_free(ctx);
}
END_TEST

/* A memory probe and the check at the same sites: the probe first. */
START_TEST(beside_a_probe)
{
	egpu_ctx *ctx = mc_ctx(false);
	egpu_obj *obj = egpu_load(ctx, MEM_OBJ, NULL);
	struct egpu_report rep;
	char *out, *s;

	ck_assert_msg(obj, "%s: %s", MEM_OBJ, egpu_errmsg());
	ck_assert_ptr_nonnull(egpu_attach_kernel(egpu_obj_prog(obj, "mem_count"),
						 "k", EGPU_ATTACH_MEM, NULL));
	out = tu_instrument(ctx, kernels, &rep);
	s = site_before(out, "ld.global.v4.f32");
	ck_assert_ptr_nonnull(strstr(s, "// inlined "));
	ck_assert_ptr_nonnull(strstr(s, "// egpu memcheck"));
	ck_assert(strstr(s, "// inlined ") < strstr(s, "// egpu memcheck"));
	free(s);
	tu_assemble_sm90(out, "kernels with a probe");
	free(out);
	egpu_ctx_free(ctx);
}
END_TEST

START_TEST(bad_opts)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);
	EGPU_OPTS(egpu_memcheck_opts, mo, .index_cell = 8, .states = 8);
	egpu_ctx *ctx = egpu_ctx_new(&co);

	ck_assert_int_eq(egpu_memcheck_enable(ctx, &mo), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "counts, log and hints"));
	ck_assert_int_eq(egpu_memcheck_enable(ctx, NULL), EGPU_EINVAL);
	egpu_ctx_free(ctx);
}
END_TEST

/* @out saved as EGPU_TEST_BUILD/@name.memcheck[.contain].ptx (for
 * ptxas -v by hand: docs/memcheck.md). */
static void save(const char *out, const char *name, int contain)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s.memcheck%s.ptx", EGPU_TEST_BUILD,
		 name, contain ? ".contain" : "");
	tu_save(out, path);
}

/* Every kernel of @name's PTX instrumented (with and without
 * containment) and accepted by ptxas. */
static void whole_module(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s.ptx", EGPU_TEST_BUILD, name);
	char *ptx = tu_read_file(path, NULL);

	for (int contain = 0; contain < 2; contain++) {
		egpu_ctx *ctx = mc_ctx(contain);
		struct egpu_report rep;
		char *out = tu_instrument(ctx, ptx, &rep);

		for (uint32_t k = 0; k < rep.kernel_cnt; k++)
			ck_assert_msg(rep.kernels[k].mem_points > 0,
				      "%s: no site in %s", path,
				      rep.kernels[k].demangled);
		printf("%s%s: %u kernels, %u sites, PTX %d -> %d lines\n", path,
		       contain ? " (contain)" : "", rep.kernel_cnt,
		       rep.mem_site_cnt, tu_count(ptx, "\n"),
		       tu_count(out, "\n"));
		tu_assemble_sm90(out, path);
		save(out, name, contain);
		free(out);
		egpu_ctx_free(ctx);
	}
	free(ptx);
}

START_TEST(suite_kernels)
{
	whole_module("suite");
}
END_TEST

START_TEST(bench_kernels)
{
	whole_module("workloads");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("memcheck_instrument");
	TCase *tc = tcase_create("instrument");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, sites_by_space);
	tcase_add_test(tc, contain);
	tcase_add_test(tc, hoisted);
	tcase_add_test(tc, beside_a_probe);
	tcase_add_test(tc, bad_opts);
	tcase_add_test(tc, suite_kernels);
	tcase_add_test(tc, bench_kernels);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite(), true) ? 1 : 0;
}
