/* SPDX-License-Identifier: MIT */
/*
 * Memory-access probes: every form of memory instruction in a written
 * module (vector widths, guards, generic, .nc, atom/red, cp.async,
 * cp.async.bulk, 32-bit shared addresses, [sym+imm], kernel parameters,
 * .funcs shared by kernels) gets its site, kind, space and size; the ctx
 * fields become constants and registers; masks select subsets; the whole
 * nvcc corpus gets a probe before every memory instruction an independent
 * line count finds, its other bytes unchanged, and ptxas accepts it all.
 * Probes are the JIT's translation of tests/ptx/mem.bpf.c.
 */
#include <check.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"
#include "egpu.h"
#include "egpu/ctx.h"
#include "ptx_util.h"
#include "test_util.h"

#define MEM_OBJ PTX_BPF_DIR "/mem.bpf.o"

enum { P_EMPTY, P_COUNT, P_RECORD, P_BYTES, NPROBES };
static const char *const prog_names[NPROBES] = {
	"mem_empty", "mem_count", "mem_record", "mem_bytes",
};

/* The translated probes, then the device runtime. */
static struct ptx_text mods[NPROBES + 1];
static egpu_ctx *jit_ctx;

static void probes_load(void)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);
	egpu_obj *obj;

	jit_ctx = egpu_ctx_new(&co);
	ck_assert_ptr_nonnull(jit_ctx);
	obj = egpu_load(jit_ctx, MEM_OBJ, NULL);
	ck_assert_msg(obj, "%s: %s", MEM_OBJ, egpu_errmsg());
	for (int i = 0; i < NPROBES; i++) {
		egpu_prog *p = egpu_obj_prog(obj, prog_names[i]);
		EGPU_OPTS(egpu_jit_opts, jo, .func = prog_names[i]);
		char *ptx;
		size_t len;

		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(egpu_prog_attach_point(p), EGPU_ATTACH_MEM);
		ck_assert_msg(!egpu_prog_jit_ptx(p, &jo, &ptx, &len), "%s: %s",
			      prog_names[i], egpu_errmsg());
		mods[i] = (struct ptx_text){ prog_names[i], ptx, len };
	}
	mods[NPROBES] = (struct ptx_text){ "device runtime", device_runtime_ptx,
					   device_runtime_ptx_len };
}

static void probes_free(void)
{
	for (int i = 0; i < NPROBES; i++)
		free((char *)mods[i].text);
	egpu_ctx_free(jit_ctx);
}

static struct ptx_attach mem_req(const char *kernel, int probe)
{
	return (struct ptx_attach){ .kernel = kernel, .point = EGPU_ATTACH_MEM,
				    .func = prog_names[probe] };
}

/* Instrument @text; the output, which ptxas must accept as @tag (in the
 * plain build: tu_assemble_sm90). */
static char *mem_instrument(const char *text, const struct ptx_attach *reqs,
			    size_t nreq, struct ptx_report *rep,
			    const char *tag)
{
	size_t out_len;
	int err;
	char arch[32];
	char *out = instrument(text, strlen(text), reqs, nreq, mods,
			       NPROBES + 1, rep, &out_len, &err);

	ck_assert_msg(out, "%s: %s", tag, egpu_errmsg());
	if (!TU_SANITIZED && tu_have_ptxas())
		ck_assert_msg(!run_ptxas(out, out_len,
					 ptx_target(out, arch, sizeof(arch)), tag),
			      "ptxas rejects %s/%s.ptx", EGPU_TEST_BUILD, tag);
	return out;
}

/* Every form of memory instruction; the comments give the expected site. */
static const char forms_ptx[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	"\n"
	".global .align 4 .b8 gvar[64];\n"
	".const .align 4 .b8 cvar[16];\n"
	"\n"
	".func (.param .b32 ret) helper(.param .b64 helper_param_0)\n"
	"{\n"
	"\t.reg .b32 %r<3>;\n"
	"\t.reg .b64 %rd<2>;\n"
	"\tld.param.u64 %rd1, [helper_param_0];\n"        /* skipped */
	"\tld.u32 %r1, [%rd1+-4];\n"                      /* 0 */
	"\tst.param.b32 [ret], %r1;\n"                    /* skipped */
	"\tret;\n"
	"}\n"
	"\n"
	".func only_a(.param .b64 only_a_param_0)\n"
	"{\n"
	"\t.reg .b64 %rd<2>;\n"
	"\t.reg .b32 %r<2>;\n"
	"\tld.param.u64 %rd1, [only_a_param_0];\n"        /* skipped */
	"\tatom.global.add.u32 %r1, [%rd1], 1;\n"         /* 1 */
	"\tret;\n"
	"}\n"
	"\n"
	".visible .entry ka(.param .u64 ka_param_0, .param .u32 ka_param_1)\n"
	"{\n"
	"\t.reg .pred %p<3>;\n"
	"\t.reg .b32 %r<20>;\n"
	"\t.reg .b64 %rd<10>;\n"
	"\t.reg .f32 %f<8>;\n"
	"\t.shared .align 16 .b8 sbuf[1024];\n"
	"\t.local .align 8 .b8 lbuf[16];\n"
	"\n"
	"\tld.param.u64 %rd1, [ka_param_0];\n"            /* 2 */
	"\tld.param.u32 %r1, [ka_param_1];\n"             /* 3 */
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r2, %tid.x;\n"
	"\tsetp.lt.u32 %p1, %r2, %r1;\n"
	"\tld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd2+16];\n" /* 4 */
	"\t@%p1 st.global.f32 [%rd2], %f1;\n"             /* 5 */
	"\t@!%p1 ld.global.nc.u64 %rd3, [%rd2+8];\n"      /* 6 */
	"\tmov.u32 %r3, sbuf;\n"
	"\tshl.b32 %r4, %r2, 2;\n"
	"\tadd.s32 %r5, %r3, %r4;\n"
	"\tst.shared.u32 [%r5], %r2;\n"                   /* 7 */
	"\tld.shared.v2.u32 {%r6, %r7}, [%r5+8];\n"       /* 8 */
	"\tred.shared.add.u32 [%r5], 1;\n"                /* 9 */
	"\tld.global.u32 %r8, [gvar+8];\n"                /* 10 */
	"\tld.const.u32 %r9, [cvar+4];\n"                 /* 11 */
	"\tst.local.u32 [lbuf+4], %r9;\n"                 /* 12 */
	"\tld.u32 %r10, [%rd1];\n"                        /* 13 */
	"\tcp.async.ca.shared.global [%r5], [%rd2+32], 16;\n" /* 14 */
	"\tcp.async.commit_group;\n"
	"\tcp.async.wait_all;\n"
	"\tldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r11}, [%r5];\n" /* skipped */
	"\t{\n"
	"\t.reg .b32 t;\n"
	"\tld.param.b32 t, [ka_param_1];\n"               /* 15 */
	"\t}\n"
	"\t{\n"
	"\t.param .b64 param0;\n"
	"\tst.param.b64 [param0], %rd1;\n"                /* skipped */
	"\t.param .b32 retval0;\n"
	"\tcall.uni (retval0), helper, (param0);\n"
	"\tld.param.b32 %r12, [retval0];\n"               /* skipped */
	"\t}\n"
	"\t{\n"
	"\t.param .b64 param0;\n"
	"\tst.param.b64 [param0], %rd2;\n"                /* skipped */
	"\tcall.uni only_a, (param0);\n"
	"\t}\n"
	"\tatom.global.cas.b32 %r13, [%rd2+4], %r1, %r2;\n" /* 16 */
	"\tret;\n"
	"}\n"
	"\n"
	".visible .entry kb(.param .u64 kb_param_0)\n"
	"{\n"
	"\t.reg .b64 %rd<3>;\n"
	"\t.reg .b32 %r<3>;\n"
	"\t.shared .align 8 .b64 mbar;\n"
	"\t.shared .align 128 .b8 bulk[256];\n"
	"\tld.param.u64 %rd1, [kb_param_0];\n"            /* 17 */
	"\tmov.u32 %r1, 128;\n"
	"\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
	" [bulk], [%rd1], %r1, [mbar];\n"                 /* 18 */
	"\t{\n"
	"\t.param .b64 param0;\n"
	"\tst.param.b64 [param0], %rd1;\n"                /* skipped */
	"\t.param .b32 retval0;\n"
	"\tcall.uni (retval0), helper, (param0);\n"
	"\tld.param.b32 %r2, [retval0];\n"                /* skipped */
	"\t}\n"
	"\tret;\n"
	"}\n";

static const struct {
	const char *function;
	uint32_t kernel_id, size;
	uint16_t kind, space;
	const char *text;
} forms_sites[] = {
	{ "helper", EGPU_MEM_KERNEL_SHARED, 4, EGPU_MEM_LOAD, EGPU_SPACE_GENERIC, "ld.u32 %r1, [%rd1+-4];" },
	{ "only_a", 0, 4, EGPU_MEM_ATOMIC, EGPU_SPACE_GLOBAL, "atom.global.add.u32 %r1, [%rd1], 1;" },
	{ "ka", 0, 8, EGPU_MEM_LOAD, EGPU_SPACE_PARAM, "ld.param.u64 %rd1, [ka_param_0];" },
	{ "ka", 0, 4, EGPU_MEM_LOAD, EGPU_SPACE_PARAM, "ld.param.u32 %r1, [ka_param_1];" },
	{ "ka", 0, 16, EGPU_MEM_LOAD, EGPU_SPACE_GLOBAL, "ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd2+16];" },
	{ "ka", 0, 4, EGPU_MEM_STORE, EGPU_SPACE_GLOBAL, "@%p1 st.global.f32 [%rd2], %f1;" },
	{ "ka", 0, 8, EGPU_MEM_LOAD, EGPU_SPACE_GLOBAL, "@!%p1 ld.global.nc.u64 %rd3, [%rd2+8];" },
	{ "ka", 0, 4, EGPU_MEM_STORE, EGPU_SPACE_SHARED, "st.shared.u32 [%r5], %r2;" },
	{ "ka", 0, 8, EGPU_MEM_LOAD, EGPU_SPACE_SHARED, "ld.shared.v2.u32 {%r6, %r7}, [%r5+8];" },
	{ "ka", 0, 4, EGPU_MEM_ATOMIC, EGPU_SPACE_SHARED, "red.shared.add.u32 [%r5], 1;" },
	{ "ka", 0, 4, EGPU_MEM_LOAD, EGPU_SPACE_GLOBAL, "ld.global.u32 %r8, [gvar+8];" },
	{ "ka", 0, 4, EGPU_MEM_LOAD, EGPU_SPACE_CONST, "ld.const.u32 %r9, [cvar+4];" },
	{ "ka", 0, 4, EGPU_MEM_STORE, EGPU_SPACE_LOCAL, "st.local.u32 [lbuf+4], %r9;" },
	{ "ka", 0, 4, EGPU_MEM_LOAD, EGPU_SPACE_GENERIC, "ld.u32 %r10, [%rd1];" },
	{ "ka", 0, 16, EGPU_MEM_ASYNC, EGPU_SPACE_GLOBAL, "cp.async.ca.shared.global [%r5], [%rd2+32], 16;" },
	{ "ka", 0, 4, EGPU_MEM_LOAD, EGPU_SPACE_PARAM, "ld.param.b32 t, [ka_param_1];" },
	{ "ka", 0, 4, EGPU_MEM_ATOMIC, EGPU_SPACE_GLOBAL, "atom.global.cas.b32 %r13, [%rd2+4], %r1, %r2;" },
	{ "kb", 1, 8, EGPU_MEM_LOAD, EGPU_SPACE_PARAM, "ld.param.u64 %rd1, [kb_param_0];" },
	{ "kb", 1, 0, EGPU_MEM_ASYNC, EGPU_SPACE_GLOBAL, "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [bulk], [%rd1], %r1, [mbar];" },
};

#define FORMS_SKIPPED 9

START_TEST(every_form)
{
	struct ptx_attach req = mem_req("*", P_RECORD);
	struct ptx_report rep;
	char *out = mem_instrument(forms_ptx, &req, 1, &rep, "mem_forms");

	ck_assert_uint_eq(rep.nmem_sites, ARRAY_SIZE(forms_sites));
	ck_assert_uint_eq(rep.mem_skipped, FORMS_SKIPPED);
	for (size_t i = 0; i < rep.nmem_sites; i++) {
		const struct ptx_mem_site *s = &rep.mem_sites[i];

		ck_assert_str_eq(s->function, forms_sites[i].function);
		ck_assert_str_eq(s->text, forms_sites[i].text);
		ck_assert_msg(s->kernel_id == forms_sites[i].kernel_id &&
				      s->size == forms_sites[i].size &&
				      s->kind == forms_sites[i].kind &&
				      s->space == forms_sites[i].space,
			      "site %zu (%s): kernel %u size %u kind %u space %u",
			      i, s->text, s->kernel_id, s->size, s->kind,
			      s->space);
		ck_assert_uint_gt(s->ptx_line, 8);
		ck_assert_uint_eq(s->line, 0);
		ck_assert_ptr_null(s->file);
	}
	/* ka calls both .funcs, kb helper only. */
	ck_assert_uint_eq(rep.kernels[0].mem_points, 17);
	ck_assert_uint_eq(rep.kernels[1].mem_points, 3);
	ptx_report_free(&rep);
	free(out);
}
END_TEST

/* The address of each form, as the site computes it. */
START_TEST(addresses)
{
	static const char *const want[] = {
		/* [%rd1+-4] */
		"\tmov.b64 \t%egpu_m0, %rd1;\n\tadd.s64 \t%egpu_m0, %egpu_m0, -4;\n",
		/* kernel parameter */
		"\tmov.u64 \t%egpu_m0, ka_param_1;\n\tcvta.param.u64 \t%egpu_m0, %egpu_m0;\n",
		/* 32-bit shared register */
		"\tcvt.u64.u32 \t%egpu_m0, %r5;\n\tadd.s64 \t%egpu_m0, %egpu_m0, 8;\n"
		"\tcvta.shared.u64 \t%egpu_m0, %egpu_m0;\n",
		/* [sym+imm] */
		"\tmov.u64 \t%egpu_m0, gvar;\n\tadd.s64 \t%egpu_m0, %egpu_m0, 8;\n"
		"\tcvta.global.u64 \t%egpu_m0, %egpu_m0;\n",
		"\tmov.u64 \t%egpu_m0, cvar;\n\tadd.s64 \t%egpu_m0, %egpu_m0, 4;\n"
		"\tcvta.const.u64 \t%egpu_m0, %egpu_m0;\n",
		"\tmov.u64 \t%egpu_m0, lbuf;\n\tadd.s64 \t%egpu_m0, %egpu_m0, 4;\n"
		"\tcvta.local.u64 \t%egpu_m0, %egpu_m0;\n",
		/* cp.async: the source */
		"\tmov.b64 \t%egpu_m0, %rd2;\n\tadd.s64 \t%egpu_m0, %egpu_m0, 32;\n"
		"\tcvta.global.u64 \t%egpu_m0, %egpu_m0;\n",
		/* guards: the probes run when the instruction does */
		"\t@!%p1 bra \t$egpu_mskip_5;\n",
		"\t@%p1 bra \t$egpu_mskip_6;\n",
		"$egpu_mskip_6:\n\t// end egpu mem probes\n\t@!%p1 ld.global.nc.u64",
	};
	struct ptx_attach req = mem_req("*", P_COUNT);
	char *out = mem_instrument(forms_ptx, &req, 1, NULL, "mem_addresses");

	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		ck_assert_msg(strstr(out, want[i]), "missing:\n%s", want[i]);
	free(out);
}
END_TEST

/* The text of copy @probe at site @site, from its comment to its end. */
static char *site_copy(const char *out, unsigned site, unsigned probe)
{
	char label[48];
	const char *b, *e;

	snprintf(label, sizeof(label), "$egpu_m%u_%u:\n", site, probe);
	e = strstr(out, label);
	ck_assert_ptr_nonnull(e);
	b = e;
	while (b > out && strncmp(b, "// inlined", 10))
		b--;
	return strndup(b, (size_t)(e - b));
}

/* Every field but addr, text and a bulk size is a constant in the copy. */
START_TEST(fields_fold)
{
	struct ptx_attach req = mem_req("*", P_RECORD);
	struct ptx_report rep;
	char *out = mem_instrument(forms_ptx, &req, 1, &rep, "mem_fold");
	char *ld = site_copy(out, 4, 0), *bulk = site_copy(out, 18, 0);

	/* No load of the ctx is left; no ctx is built. */
	ck_assert_msg(!strstr(ld, "ld.u") && !strstr(ld, "ld.b"), "%s", ld);
	ck_assert_ptr_null(strstr(out, "st.local.v2.u64"));
	ck_assert_ptr_null(strstr(out, "_mctx"));
	ck_assert_ptr_nonnull(strstr(ld, ", %egpu_m0;"));     /* addr */
	ck_assert_ptr_nonnull(strstr(ld, ", $egpu_text_4;")); /* text */
	ck_assert_ptr_nonnull(strstr(ld, "cvta.global.u64"));
	ck_assert_ptr_nonnull(strstr(ld, ", 16;"));           /* size */
	ck_assert_ptr_nonnull(strstr(ld, ", 4;"));            /* site */
	ck_assert_ptr_nonnull(strstr(bulk, ", %r1;"));        /* size */
	/* The text of every site, NUL-terminated, in global memory. */
	ck_assert_ptr_nonnull(strstr(out,
		".global .align 1 .b8 $egpu_text_3[32] = {108, 100, 46, 112, "));
	ck_assert_ptr_nonnull(strstr(out, "// begin egpu mem texts\n"));
	free(ld);
	free(bulk);
	ptx_report_free(&rep);
	free(out);
}
END_TEST

/* Pointers the body derives into its ctx (ctx + 24) fold as well. */
START_TEST(derived_pointers_fold)
{
	static const char probe[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".visible .func (.param .b64 r) hp(.param .b64 hp_param_0, .param .b64 hp_param_1)\n"
		"{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<4>;\n"
		"\tld.param.u64 %rd1, [hp_param_0];\n"
		"\tadd.s64 %rd2, %rd1, 24;\n"
		"\tld.u32 %r1, [%rd2];\n"
		"\tld.u16 %r2, [%rd2+6];\n"
		"\tret;\n}\n";
	struct ptx_text mod = { "hp", probe, strlen(probe) };
	struct ptx_attach req = { .kernel = "ka", .point = EGPU_ATTACH_MEM,
				  .func = "hp" };
	size_t len;
	int err;
	char *out = instrument(forms_ptx, strlen(forms_ptx), &req, 1, &mod, 1,
			       NULL, &len, &err);
	char *copy;

	ck_assert_msg(out, "%s", egpu_errmsg());
	copy = site_copy(out, 4, 0); /* ld.global.v4.f32: 16 bytes, global */
	ck_assert_msg(strstr(copy, "\tmov.b32 \t%egpu_m4_0_r1, 16;") &&
			      strstr(copy, "\tmov.b32 \t%egpu_m4_0_r2, 1;") &&
			      !strstr(copy, "add.s64"), "%s", copy);
	free(copy);
	free(out);
}
END_TEST

/* A probe reading no text gets none; a called probe gets a built ctx. */
START_TEST(texts_and_built_ctx)
{
	struct ptx_attach req = mem_req("*", P_COUNT);
	char *out = mem_instrument(forms_ptx, &req, 1, NULL, "mem_notext");

	ck_assert_ptr_null(strstr(out, "$egpu_text_"));
	free(out);
	req.no_inline = true;
	out = mem_instrument(forms_ptx, &req, 1, NULL, "mem_called");
	ck_assert_ptr_nonnull(strstr(out, "\t.local .align 16 .b8 \t%egpu_0_mctx[72];\n"));
	ck_assert_ptr_nonnull(strstr(out, "\t.local .align 16 .b8 \t%egpu_f5_mctx[72];\n"));
	ck_assert_ptr_nonnull(strstr(out, "st.local.v2.u64 \t[%egpu_m1], {%egpu_m0, %egpu_m2};"));
	ck_assert_ptr_nonnull(strstr(out, "cvt.u64.u32 \t%egpu_m3, %r1;"));
	ck_assert_ptr_nonnull(strstr(out, "call \t(%egpu_m5), mem_count, (%egpu_m1, %egpu_m4);"));
	ck_assert_ptr_nonnull(strstr(out, "$egpu_text_18["));
	free(out);
}
END_TEST

static size_t count_of(const char *text, const char *what)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, what)); p++)
		n++;
	return n;
}

/*
 * Past mem_inline_limit bytes of copies, the functions with the most sites
 * call the probe: 1 byte calls it everywhere, building a ctx without the
 * text the probe never reads; a doubling limit first copies into the
 * three small functions (4 sites) and calls in ka (15 sites), then copies
 * everywhere. ptxas accepts every mix.
 */
START_TEST(copy_limit)
{
	struct ptx_attach req = mem_req("*", P_COUNT);
	struct ptx_report rep;
	size_t prev = SIZE_MAX;
	bool mixed = false;
	char tag[48], *out;

	req.mem_inline_limit = 1;
	out = mem_instrument(forms_ptx, &req, 1, &rep, "mem_limit_1");
	ck_assert_uint_eq(rep.mem_called, ARRAY_SIZE(forms_sites));
	ck_assert_uint_eq(count_of(out, "// inlined"), 0);
	ck_assert_uint_eq(count_of(out, "call \t(%egpu_m5), mem_count,"),
			  ARRAY_SIZE(forms_sites));
	ck_assert_ptr_null(strstr(out, "$egpu_text_"));
	ck_assert_ptr_nonnull(strstr(out, "mov.u64 \t%egpu_m2, 0;"));
	ptx_report_free(&rep);
	free(out);
	for (size_t limit = 1024; limit <= (1u << 22); limit *= 2) {
		req.mem_inline_limit = limit;
		snprintf(tag, sizeof(tag), "mem_limit_%zu", limit);
		out = mem_instrument(forms_ptx, &req, 1, &rep, tag);
		ck_assert_uint_le(rep.mem_called, prev);
		ck_assert_uint_eq(count_of(out, "// inlined") + rep.mem_called,
				  ARRAY_SIZE(forms_sites));
		if (rep.mem_called == 15) {
			mixed = true;
			ck_assert_uint_eq(count_of(out, "call \t(%egpu_m5), mem_count,"), 15);
		}
		prev = rep.mem_called;
		ptx_report_free(&rep);
		free(out);
	}
	ck_assert_msg(mixed, "no limit copied into the small functions only");
	ck_assert_uint_eq(prev, 0);
	/* A probe reading the text gets it in its built ctx. */
	req = mem_req("*", P_RECORD);
	req.mem_inline_limit = 1;
	out = mem_instrument(forms_ptx, &req, 1, &rep, "mem_limit_record");
	ck_assert_uint_eq(rep.mem_called, ARRAY_SIZE(forms_sites));
	ck_assert_ptr_nonnull(strstr(out, "$egpu_text_18["));
	ptx_report_free(&rep);
	free(out);
}
END_TEST

static size_t count_space(const struct ptx_report *rep, int field, unsigned v)
{
	size_t n = 0;

	for (size_t i = 0; i < rep->nmem_sites; i++)
		n += (field ? rep->mem_sites[i].kind : rep->mem_sites[i].space) == v;
	return n;
}

START_TEST(masks_select)
{
	struct ptx_attach reqs[2] = { mem_req("ka", P_COUNT), mem_req("kb", P_BYTES) };
	struct ptx_report rep;
	char *out;

	reqs[0].mem_spaces = 1u << EGPU_SPACE_GLOBAL;
	out = mem_instrument(forms_ptx, reqs, 1, &rep, "mem_mask_global");
	/* ka's global accesses, its .funcs' included */
	ck_assert_uint_eq(rep.nmem_sites, 7);
	ck_assert_uint_eq(count_space(&rep, 0, EGPU_SPACE_GLOBAL), 7);
	ptx_report_free(&rep);
	free(out);

	reqs[0].mem_spaces = 0;
	reqs[0].mem_kinds = 1u << EGPU_MEM_STORE | 1u << EGPU_MEM_ATOMIC;
	out = mem_instrument(forms_ptx, reqs, 1, &rep, "mem_mask_kind");
	ck_assert_uint_eq(rep.nmem_sites, 6);
	ck_assert_uint_eq(count_space(&rep, 1, EGPU_MEM_STORE) +
				  count_space(&rep, 1, EGPU_MEM_ATOMIC), 6);
	ptx_report_free(&rep);
	free(out);

	/*
	 * Two requests: ka's async copies, everything kb runs. helper, which
	 * both call, gets kb's probe only: ka's mask leaves its load out.
	 */
	reqs[0].mem_kinds = 1u << EGPU_MEM_ASYNC;
	out = mem_instrument(forms_ptx, reqs, 2, &rep, "mem_mask_two");
	ck_assert_uint_eq(rep.nmem_sites, 4);
	ck_assert_str_eq(rep.mem_sites[0].function, "helper");
	ck_assert_uint_eq(rep.mem_sites[1].kind, EGPU_MEM_ASYNC);
	ck_assert_ptr_nonnull(strstr(out, "// inlined mem_bytes\n"));
	ck_assert_ptr_nonnull(strstr(out, "$egpu_m0_0:"));
	ck_assert_ptr_null(strstr(out, "$egpu_m0_1:"));
	ptx_report_free(&rep);
	free(out);
}
END_TEST

/* What Triton's matmul writes: inline-assembly copies, ldmatrix. */
static const char triton_ptx[] =
	".version 8.0\n"
	".target sm_90a\n"
	".address_size 64\n"
	".extern .shared .align 16 .b8 global_smem[];\n"
	"\n"
	".visible .entry tk(.param .u64 tk_param_0, .param .u64 tk_param_1)\n"
	"{\n"
	"\t.reg .pred %p<3>;\n"
	"\t.reg .b32 %r<40>;\n"
	"\t.reg .b64 %rd<8>;\n"
	"\tld.param.u64 %rd1, [tk_param_0];\n"
	"\tld.param.u64 %rd2, [tk_param_1];\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tsetp.lt.s32 %p1, %r1, 64;\n"
	"\tmov.u32 %r2, global_smem;\n"
	"\tshl.b32 %r3, %r1, 4;\n"
	"\tadd.s32 %r4, %r2, %r3;\n"
	"\tmul.wide.s32 %rd3, %r1, 16;\n"
	"\tadd.s64 %rd4, %rd1, %rd3;\n"
	"\tselp.b32 %r5, 16, 0, %p1;\n"
	"\t// begin inline asm\n"
	"\tcp.async.cg.shared.global.L2::128B [ %r4 + 0 ], [ %rd4 + 0 ], 0x10, %r5;\n"
	"\t// end inline asm\n"
	"\t// begin inline asm\n"
	"\tcp.async.commit_group ;\n"
	"\t// end inline asm\n"
	"\t// begin inline asm\n"
	"\tcp.async.wait_group 0x0;\n"
	"\t// end inline asm\n"
	"\tbar.sync 0;\n"
	"\t// begin inline asm\n"
	"\tldmatrix.sync.aligned.m8n8.x4.shared.b16 { %r6, %r7, %r8, %r9 }, [ %r4 + 0 ];\n"
	"\t// end inline asm\n"
	"\tld.shared.v4.b32 { %r10, %r11, %r12, %r13 }, [%r4+1024];\n"
	"\tadd.s64 %rd5, %rd2, %rd3;\n"
	"\t// begin inline asm\n"
	"\t@%p1 st.global.v4.b32 [ %rd5 + 0 ], { %r6, %r7, %r10, %r11 };\n"
	"\t// end inline asm\n"
	"\t// begin inline asm\n"
	"\tmov.u32 %r14, 0x0;\n"
	"\t@%p1 ld.global.v4.b32 { %r14, %r15, %r16, %r17 }, [ %rd4 + 0 ];\n"
	"\t// end inline asm\n"
	"\tret;\n"
	"}\n";

START_TEST(triton_forms)
{
	static const struct { uint16_t kind, space; uint32_t size; } want[] = {
		{ EGPU_MEM_LOAD, EGPU_SPACE_PARAM, 8 },
		{ EGPU_MEM_LOAD, EGPU_SPACE_PARAM, 8 },
		{ EGPU_MEM_ASYNC, EGPU_SPACE_GLOBAL, 16 },
		{ EGPU_MEM_LOAD, EGPU_SPACE_SHARED, 16 },
		{ EGPU_MEM_STORE, EGPU_SPACE_GLOBAL, 16 },
		{ EGPU_MEM_LOAD, EGPU_SPACE_GLOBAL, 16 },
	};
	struct ptx_attach reqs[] = { mem_req("tk", P_COUNT), mem_req("tk", P_RECORD) };
	struct ptx_report rep;
	char *out = mem_instrument(triton_ptx, reqs, 2, &rep, "mem_triton");

	ck_assert_uint_eq(rep.nmem_sites, ARRAY_SIZE(want));
	ck_assert_uint_eq(rep.mem_skipped, 1); /* ldmatrix */
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		ck_assert_msg(rep.mem_sites[i].kind == want[i].kind &&
				      rep.mem_sites[i].space == want[i].space &&
				      rep.mem_sites[i].size == want[i].size,
			      "site %zu: %s", i, rep.mem_sites[i].text);
	ck_assert_ptr_nonnull(strstr(out, "\t@!%p1 bra \t$egpu_mskip_4;\n"));
	ptx_report_free(&rep);
	free(out);
}
END_TEST

/* Entry, exit and memory probes in one kernel share its stack. */
START_TEST(with_entry_and_exit)
{
	struct ptx_attach reqs[] = {
		{ .kernel = "ka", .point = EGPU_ATTACH_ENTRY, .func = "mem_record" },
		mem_req("*", P_RECORD),
		{ .kernel = "*", .point = EGPU_ATTACH_EXIT, .func = "mem_count" },
	};
	struct ptx_report rep;
	char *out = mem_instrument(forms_ptx, reqs, 3, &rep, "mem_entry_exit");
	const char *depot = strstr(out, "%egpu_0_depot[");

	ck_assert_ptr_nonnull(depot);
	ck_assert_ptr_null(strstr(depot + 1, "%egpu_0_depot["));
	ck_assert_uint_eq(rep.kernels[0].entry_points, 1);
	ck_assert_uint_eq(rep.kernels[0].exit_points, 1);
	ck_assert_uint_eq(rep.kernels[0].programs, 3);
	ck_assert_uint_eq(rep.nmem_sites, ARRAY_SIZE(forms_sites));
	/* The entry probes run before the first instruction's mem probes. */
	ck_assert_ptr_nonnull(strstr(out, "// end egpu entry probes\n\t"
					  "// begin egpu mem probes\n"));
	ptx_report_free(&rep);
	free(out);
}
END_TEST

START_TEST(bad_input)
{
	static const char no_access[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n"
		"\tmov.u32 %r1, %tid.x;\n\tret;\n}\n";
	static const char addr32[] =
		".version 8.0\n.target sm_90\n.address_size 32\n"
		".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n"
		"\tld.u32 %r1, [%r1];\n\tret;\n}\n";
	static const char q32[] =
		".version 8.0\n.target sm_90\n.address_size 32\n"
		".visible .func (.param .b64 r) q(.param .b64 a, .param .b64 b)\n"
		"{\n\tret;\n}\n";
	static const char q60[] =
		".version 8.0\n.target sm_60\n.address_size 64\n"
		".visible .func (.param .b64 r) q(.param .b64 a, .param .b64 b)\n"
		"{\n\tret;\n}\n";
	struct ptx_text probe32 = { "q", q32, sizeof(q32) - 1 };
	struct ptx_text probe60 = { "q", q60, sizeof(q60) - 1 };
	size_t len;
	int err;
	static const char sm60[] =
		".version 8.0\n.target sm_60\n.address_size 64\n"
		".visible .entry k(.param .u64 k_p)\n{\n\t.reg .b64 %rd<3>;\n"
		"\tld.param.u64 %rd1, [k_p];\n\tld.global.u64 %rd2, [%rd1];\n"
		"\tret;\n}\n";
	struct ptx_attach req = mem_req("nosuch", P_COUNT);
	struct ptx_report rep;

	req.strict_match = true;
	req.label = "count";
	struct strbuf sb;
	char *out;

	sb_init(&sb);
	ck_assert_int_eq(ptx_instrument(forms_ptx, strlen(forms_ptx), &req, 1,
					mods, NPROBES + 1, &sb, NULL), EGPU_ENOENT);
	ck_assert_str_eq(egpu_errmsg(), "prog 'count': no kernel matches 'nosuch'; kernels: ka, kb");
	/* Nothing to probe is no error: the report says so. */
	req.kernel = "k";
	out = mem_instrument(no_access, &req, 1, &rep, "mem_none");
	ck_assert_uint_eq(rep.nmem_sites, 0);
	ck_assert_uint_eq(rep.kernels[0].mem_points, 0);
	ck_assert_uint_eq(rep.kernels[0].programs, 1);
	ck_assert_ptr_null(strstr(out, "egpu mem"));
	ptx_report_free(&rep);
	free(out);
	/* Generic addresses of 32 bits cannot be formed. */
	req.func = "q";
	ck_assert_int_eq(ptx_instrument(addr32, strlen(addr32), &req, 1, &probe32,
					1, &sb, NULL), EGPU_ENOTSUP);
	ck_assert_str_eq(egpu_errmsg(), "memory probes need .address_size 64; the module has 32");
	/* Below sm_70 kernel parameters have no generic address. */
	out = instrument(sm60, strlen(sm60), &req, 1, &probe60, 1, &rep,
			 &len, &err);
	ck_assert_msg(out, "%s", egpu_errmsg());
	ck_assert_uint_eq(rep.nmem_sites, 1);
	ck_assert_uint_eq(rep.mem_skipped, 1);
	ptx_report_free(&rep);
	free(out);
	sb_free(&sb);
}
END_TEST

/* "sgemm.ptx" -> "mem_sgemm" */
static void tag_of(const char *path, const char *what, char *tag, size_t n)
{
	snprintf(tag, n, "mem_%s_%s", what, strrchr(path, '/') + 1);
	tag[strlen(tag) - 4] = '\0';
}

/* The function whose header line @line is, into @name; false if none. */
static bool function_header(const char *line, char *name, size_t n)
{
	const char *p = strstr(line, ".entry ");

	if (!p && !(p = strstr(line, ".func ")))
		return false;
	p = strchr(p, ' ') + 1;
	while (*p == ' ')
		p++;
	if (*p == '(') /* return parameter */
		p = strchr(p, ')') + 1;
	while (*p == ' ')
		p++;
	snprintf(name, n, "%.*s", (int)strcspn(p, "( \n"), p);
	return true;
}

/* One counted line: opcode class by regular expression, not the parser. */
struct oracle {
	regex_t insn;
	char func[256];
	bool entry;
	unsigned plain;  /* memory instructions but .param ones */
	unsigned param;  /* ld.param of this kernel's parameters */
};

static void oracle_line(struct oracle *o, const char *line)
{
	regmatch_t mt[4];
	char param[300];

	if (regexec(&o->insn, line, 4, mt, 0))
		return;
	if (!strncmp(line + mt[2].rm_so, "cp.async.", 9) &&
	    (strstr(line, "commit_group") || strstr(line, "wait_") ||
	     strstr(line, "mbarrier.arrive") || strstr(line, ".tensor")))
		return;
	if (!strstr(line + mt[2].rm_so, ".param")) {
		o->plain++;
		return;
	}
	snprintf(param, sizeof(param), "[%s_param_", o->func);
	o->param += o->entry && strstr(line, param) != NULL;
}

static void report_counts(const struct ptx_report *rep, const char *func,
			  unsigned *plain, unsigned *param)
{
	*plain = *param = 0;
	for (size_t i = 0; i < rep->nmem_sites; i++) {
		if (strcmp(rep->mem_sites[i].function, func))
			continue;
		if (rep->mem_sites[i].space == EGPU_SPACE_PARAM)
			(*param)++;
		else
			(*plain)++;
	}
}

/* Compare the oracle's counts of the function that ends at @line. */
static void oracle_check(const struct oracle *o, const struct ptx_report *rep,
			 const char *text, const char *path)
{
	unsigned plain, param;
	char call[300];

	report_counts(rep, o->func, &plain, &param);
	snprintf(call, sizeof(call), " %s, (", o->func);
	/* A .func no kernel calls gets no probe (rdc modules). */
	if (!o->entry && !plain && !strstr(text, call))
		return;
	ck_assert_msg(plain == o->plain && param == o->param,
		      "%s: %s: %u+%u sites, the lines say %u+%u", path, o->func,
		      plain, param, o->plain, o->param);
}

static void oracle_file(const char *text, const struct ptx_report *rep,
			const char *path)
{
	struct oracle o = { .func = "" };
	const char *line = text;

	ck_assert_int_eq(regcomp(&o.insn,
				 "^[[:space:]]*(@!?%[[:alnum:]_]+[[:space:]]+)?"
				 "((ld|ldu|st|atom|red)\\.|cp\\.async\\.)",
				 REG_EXTENDED), 0);
	for (; line && *line; line = strchr(line, '\n'), line += line != NULL) {
		char l[1024];

		snprintf(l, sizeof(l), "%.*s", (int)strcspn(line, "\n"), line);
		if (function_header(l, o.func, sizeof(o.func))) {
			o.entry = strstr(l, ".entry ") != NULL;
			o.plain = o.param = 0;
		} else if (!strcmp(l, "}") && *o.func) {
			oracle_check(&o, rep, text, path);
			o.func[0] = '\0';
		} else if (*o.func) {
			oracle_line(&o, l);
		}
	}
	regfree(&o.insn);
}

/*
 * Every memory instruction of the corpus, all four probes at each. In
 * kernels using setmaxnreg (sm_90a), a probe using the eBPF stack
 * (mem_record) makes ptxas fail register allocation, as it does at
 * entry and exit (docs/ptx.md): those get the other three.
 */
START_TEST(corpus_every_access)
{
	static const int order[NPROBES] = { P_EMPTY, P_COUNT, P_BYTES, P_RECORD };
	struct ptx_attach reqs[NPROBES];
	char **paths;
	size_t n = corpus_list(&paths), total = 0;

	for (int i = 0; i < NPROBES; i++)
		reqs[i] = mem_req("*", order[i]);
	for (size_t i = 0; i < n; i++) {
		size_t len, back_len;
		char *text = tu_read_file(paths[i], &len), *out, *back, tag[256];
		bool maxnreg = strstr(text, "setmaxnreg") != NULL;
		struct ptx_report rep;
		unsigned e, x;

		tag_of(paths[i], "corpus", tag, sizeof(tag));
		out = mem_instrument(text, reqs, NPROBES - maxnreg, &rep, tag);
		oracle_file(text, &rep, paths[i]);
		back_len = strlen(out);
		back = strip_inserted(out, &back_len, &e, &x);
		ck_assert_ptr_nonnull(back);
		ck_assert_msg(!strcmp(strstr(back, "\n.target"),
				      strstr(text, "\n.target")),
			      "%s: text outside the inserted blocks changed",
			      paths[i]);
		total += rep.nmem_sites;
		free(back);
		free(out);
		free(text);
		ptx_report_free(&rep);
	}
	printf("corpus: %zu memory sites in %zu modules\n", total, n);
	ck_assert_uint_gt(total, 100);
	free_list(paths, n);
}
END_TEST

/* -lineinfo: sites know their source line and file. */
START_TEST(source_lines)
{
	size_t len;
	char *text = tu_read_file(PTX_CORPUS_DIR "/sgemm.lineinfo.ptx", &len);
	struct ptx_attach req = mem_req("*", P_COUNT);
	struct ptx_report rep;
	char *out = mem_instrument(text, &req, 1, &rep, "mem_lines");

	ck_assert_uint_gt(rep.nmem_sites, 0);
	for (size_t i = 0; i < rep.nmem_sites; i++) {
		const struct ptx_mem_site *s = &rep.mem_sites[i];

		if (s->space == EGPU_SPACE_PARAM)
			continue; /* nvcc loads parameters before any .loc */
		ck_assert_msg(s->line > 0 && s->file &&
				      strstr(s->file, "sgemm.cu"),
			      "site %zu (%s): line %u file %s", i, s->text,
			      s->line, s->file ? s->file : "(none)");
	}
	ptx_report_free(&rep);
	free(out);
	free(text);
}
END_TEST

/* A probe that reads nothing costs nothing: ptxas -v as without it. */
START_TEST(empty_probe_is_free)
{
	size_t len, out_len;
	char *text = tu_read_file(PTX_CORPUS_DIR "/grid_stride.ptx", &len), *out;
	struct ptx_attach req = mem_req("*", P_EMPTY);
	struct ptxas_usage plain, probed;
	struct ptx_report rep;
	int err;

	if (!tu_have_ptxas()) {
		free(text);
		return;
	}
	out = instrument(text, len, &req, 1, mods, NPROBES + 1, &rep, &out_len,
			 &err);
	ck_assert_ptr_nonnull(out);
	ck_assert_uint_gt(rep.nmem_sites, 0);
	for (size_t k = 0; k < rep.nkernels; k++) {
		const char *name = rep.kernels[k].name;

		ck_assert(!ptxas_usage(text, len, "sm_90", "mem_empty_plain",
				       name, &plain));
		ck_assert(!ptxas_usage(out, out_len, "sm_90", "mem_empty_probed",
				       name, &probed));
		ck_assert_uint_eq(probed.regs, plain.regs);
		ck_assert_uint_eq(probed.stack, plain.stack);
	}
	ptx_report_free(&rep);
	free(out);
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ptx_mem");
	TCase *tc = tcase_create("mem");

	tcase_add_unchecked_fixture(tc, probes_load, probes_free);
	tcase_set_timeout(tc, 900);
	tcase_add_test(tc, every_form);
	tcase_add_test(tc, addresses);
	tcase_add_test(tc, fields_fold);
	tcase_add_test(tc, derived_pointers_fold);
	tcase_add_test(tc, texts_and_built_ctx);
	tcase_add_test(tc, copy_limit);
	tcase_add_test(tc, masks_select);
	tcase_add_test(tc, triton_forms);
	tcase_add_test(tc, with_entry_and_exit);
	tcase_add_test(tc, bad_input);
	if (PTX_CORPUS_COUNT) {
		tcase_add_test(tc, corpus_every_access);
		tcase_add_test(tc, source_lines);
		tcase_add_test(tc, empty_probe_is_free);
	}
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
