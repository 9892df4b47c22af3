/* SPDX-License-Identifier: MIT */
/*
 * The splicer's trace mode in instrumented PTX (egpu_mem_trace_enable;
 * no GPU: an offline context): every global site gets the inline record
 * with the site's first word as a constant (core/span_record.h), the
 * leader's claim of a span inline (undone for the runtime's call where
 * it stops, which in a lossless ring waits for room), and the
 * runtime's call for the rest, the lanes' span registers set once at the
 * kernel's entry and the span published inline before every exit (a
 * guarded exit under its own guard; counted in a ring in GPU memory,
 * lossless or not, not in host memory), a .func's site a span of its own with the kernel's span
 * flushed before the call, a bulk copy's site through the runtime only,
 * a register cap on the kernels that set none;
 * the events and benchmark kernels accepted by ptxas for sm_90 and saved
 * as *.trace.ptx for ptxas -v (docs/events.md has the numbers); bad
 * arguments refused.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/span_record.h"
#include "egpu.h"
#include "egpu/ctx.h"
#include "test_util.h"

#define SPAN_OBJ EGPU_TEST_BUILD "/span.bpf.o"

static egpu_ctx *ctx;
static egpu_obj *obj;

static void setup(void)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true, .sm = "sm_90");

	ctx = egpu_ctx_new(&co);
	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, SPAN_OBJ, NULL);
	ck_assert_msg(obj, "%s: %s", SPAN_OBJ, egpu_errmsg());
	ck_assert_int_eq(egpu_mem_trace_enable(ctx, egpu_obj_map(obj, "strace"),
					       NULL), 0);
}

static void teardown(void)
{
	egpu_ctx_free(ctx);
}

static char *instrument(const char *ptx, struct egpu_report *rep)
{
	return tu_instrument(ctx, ptx, rep);
}

/* @ptx instrumented with the trace mode enabled again with @o. */
static char *traced(const struct egpu_mem_trace_opts *o, const char *ptx,
		    struct egpu_report *rep)
{
	ck_assert_int_eq(egpu_mem_trace_enable(ctx, egpu_obj_map(obj, "strace"),
					       o), 0);
	return instrument(ptx, rep);
}

/* The code before @insn, from the "// egpu trace" before it. */
static char *site_before(const char *out, const char *insn)
{
	return tu_text_before(out, "// egpu trace\n", insn);
}

#define HEAD ".version 8.0\n.target sm_90\n.address_size 64\n\n"

static const char kernels[] = HEAD
	".func (.param .b32 r) f(.param .b64 p)\n{\n"
	"\t.reg .b64 %rd<3>;\n\t.reg .b32 %r<3>;\n"
	"\tld.param.u64 %rd1, [p];\n"
	"\tld.global.u32 %r1, [%rd1];\n"
	"\tst.param.b32 [r], %r1;\n\tret;\n}\n"
	".visible .entry k(.param .u64 k_p, .param .u32 k_n)\n{\n"
	"\t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .f32 %f<6>;\n"
	"\t.reg .b64 %rd<8>;\n"
	"\tld.param.u64 %rd1, [k_p];\n"
	"\tld.param.u32 %r1, [k_n];\n"
	"\tsetp.lt.u32 %p1, %r1, 10;\n"
	"\tld.global.v4.f32 {%f2, %f3, %f4, %f5}, [%rd1+16];\n"
	"\t@%p1 ret;\n"
	"\tst.shared.u32 [%r1], %r1;\n"
	"\tcp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], %r1;\n"
	"\t{\n\t.reg .b32 temp_param_reg;\n\t.param .b64 a;\n\t.param .b32 b;\n"
	"\tst.param.b64 [a], %rd1;\n"
	"\tcall.uni (b), f, (a);\n"
	"\tld.param.b32 %r5, [b];\n\t}\n"
	"\tst.global.f32 [%rd1], %f2;\n"
	"\tret;\n}\n";

/* kernels instrumented with the trace mode into @ring. */
static char *kernels_into(const char *ring, struct egpu_report *rep)
{
	ck_assert_int_eq(egpu_mem_trace_enable(ctx, egpu_obj_map(obj, ring),
					       NULL), 0);
	return instrument(kernels, rep);
}

/*
 * Every inline publish of @out (there are some) stores its header's
 * flags as @flags, and adds its span's bytes to a published-bytes word
 * before it (after its fence) if @counted.
 */
static void assert_publishes(const char *out, unsigned flags, bool counted)
{
	int n = tu_count(out, "\tst.volatile.global.u64 \t[%egpu_px0], %egpu_px1;");
	char want[64];

	snprintf(want, sizeof(want), "\tmov.u32 \t%%egpu_pw1, %u;\n", flags);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(tu_count(out, want), n);
	ck_assert_int_eq(tu_count(out, "\tred.relaxed.gpu.global.add.u64 \t[%egpu_px2], %egpu_px3;\n"
				       "\tsub.u32 \t%egpu_pw2, %egpu_pw2, 8;\n"),
			 counted ? n : 0);
	ck_assert_ptr_null(strstr(out, "red.release"));
}

START_TEST(written_kernels)
{
	EGPU_OPTS(egpu_mem_trace_opts, o, .mem_spaces = 1u << EGPU_SPACE_GLOBAL |
						       1u << EGPU_SPACE_SHARED);
	struct egpu_report rep;
	const char *call, *claim, *reserve, *room, *prod;
	char *out, *s;

	out = traced(&o, kernels, &rep);
	call = strstr(out, "// begin egpu trace call");
	/* global and shared accesses: f's load, the vector, the shared
	 * store, the bulk copy (from shared), the store */
	ck_assert_uint_eq(rep.mem_site_cnt, 5);
	ck_assert_int_eq(tu_count(out, "// egpu trace\n"), 5);
	/* the lanes' registers once, at k's entry; none in f */
	ck_assert_int_eq(tu_count(out, ".reg .b64 \t%egpu_tst, %egpu_tcur;"), 1);
	ck_assert_ptr_nonnull(strstr(out, "// begin egpu trace\n\t.reg"));
	/* f: a span of its own, no kernel registers */
	s = site_before(out, "ld.global.u32 %r1, [%rd1];");
	ck_assert_ptr_nonnull(strstr(s, "call \tegpu_dev_trace_alone, ("));
	ck_assert_ptr_null(strstr(s, "%egpu_tst"));
	free(s);
	/* the vector: 16 bytes, a load, site 1 (the module's numbers from
	 * 0 offline): the first word's constant; inline, else the call */
	s = site_before(out, "ld.global.v4.f32");
	ck_assert(rep.mem_sites[1].size == 16 && rep.mem_sites[1].kind == EGPU_MEM_LOAD);
	{
		char want[64];

		snprintf(want, sizeof(want), "mov.u32 \t%%egpu_tw10, %u;",
			 (uint32_t)span_word0(SPAN_AFFINE, 0, EGPU_MEM_LOAD, 16,
					      rep.mem_sites[1].site, 0));
		ck_assert_msg(strstr(s, want), "no '%s' in %s", want, s);
	}
	ck_assert_ptr_nonnull(strstr(s, "vote.sync.any.pred"));
	ck_assert_ptr_nonnull(strstr(s, "@%egpu_tp1 st.global.v2.u64 \t[%egpu_tcur], {%egpu_tx3, %egpu_tx4};"));
	/* may be short: first the test at the stride of 16 for the whole
	 * warp, then the short record, 8 bytes in the half slot the cursor
	 * is at, the slot counted in its first half; a group that fails it
	 * takes the test at the lanes' stride and stores the 16-byte record
	 * at the next slot (the cursor rounded up) only into a span its
	 * leader owns */
	{
		char want[80];
		const char *sh = strstr(s, "mul.wide.s32 \t%egpu_tx2, %egpu_tw6, 16;\n"
					   "\tsetp.ne.s64 \t%egpu_tp0, %egpu_tx1, %egpu_tx2;\n"
					   "\tsetp.ne.or.u32 \t%egpu_tp0, %egpu_tw0, -1, %egpu_tp0;\n");
		const char *gen = strstr(s, "bra.uni \t$egpu_tgen_");

		/* the record's low word: lane 0's address << 16 | the site's
		 * constant */
		snprintf(want, sizeof(want), "mad.lo.u32 \t%%egpu_tw11, %%egpu_tw3, 65536, %u;",
			 span_short_low(EGPU_MEM_LOAD, 16, rep.mem_sites[1].site));
		ck_assert_ptr_nonnull(sh);
		ck_assert_ptr_nonnull(gen);
		ck_assert_ptr_nonnull(strstr(sh, "@%egpu_tp0 bra.uni \t$egpu_tgen_"));
		gen = strstr(gen, "\n$egpu_tgen_"); /* the general test's label */
		ck_assert_ptr_nonnull(gen);
		ck_assert_msg(strstr(sh, want) && strstr(sh, want) < gen,
			      "no '%s' before the general test", want);
		ck_assert_ptr_nonnull(strstr(sh, "and.b32 \t%egpu_tw10, %egpu_tw10, 8;\n"
					     "\tsetp.eq.and.u32 \t%egpu_tp4, %egpu_tw10, 0, %egpu_tp1;\n"
					     "\tsetp.ne.and.u32 \t%egpu_tp2, %egpu_tw10, 0, %egpu_tp1;\n"
					     "\t@%egpu_tp1 st.global.u64 \t[%egpu_tcur], %egpu_tx3;\n"
					     "\tadd.s64 \t%egpu_tcur, %egpu_tcur, 8;\n"
					     "\t@%egpu_tp2 add.s32 \t%egpu_tleft, %egpu_tleft, -1;\n"
					     "\t@%egpu_tp4 add.s64 \t%egpu_tst, %egpu_tst, "));
		ck_assert_ptr_nonnull(strstr(gen, "shfl.sync.idx.b32 \t%egpu_tw5, %egpu_tw5, %egpu_tw6, 31, %egpu_tw0;"));
		ck_assert_ptr_nonnull(strstr(gen, "or.pred \t%egpu_tp0, %egpu_tp0, %egpu_tp2;\n"
					      "\t@%egpu_tp0 bra \t$egpu_tslow_"));
		/* a leader in a slot's second half with nothing after it
		 * takes the call; else that half is given up */
		ck_assert_ptr_nonnull(strstr(gen, "setp.eq.and.u32 \t%egpu_tp4, %egpu_tleft, 1, %egpu_tp4;\n"
					      "\tsetp.eq.and.u32 \t%egpu_tp4, %egpu_tw2, %egpu_tw1, %egpu_tp4;\n"
					      "\tor.pred \t%egpu_tp0, %egpu_tp0, %egpu_tp4;\n"));
		ck_assert_ptr_nonnull(strstr(gen, "setp.ne.and.u32 \t%egpu_tp4, %egpu_tw10, 0, %egpu_tp1;\n"
					      "\t@%egpu_tp4 add.s32 \t%egpu_tleft, %egpu_tleft, -1;\n"
					      "\t@%egpu_tp4 add.s64 \t%egpu_tcur, %egpu_tcur, 8;\n"));
		/* one claim: the short record's */
		ck_assert_int_eq(tu_count(s, "[%egpu_cx0+8], %egpu_cx5;"), 1);
	}
	/* a leader that owns no span claims one inline (the other lanes'
	 * floors then at its start), then stores the record inline: reserved
	 * before prod, the room checked between them against the cached
	 * consumer position, the rest through the runtime from where it
	 * stopped */
	ck_assert_ptr_null(strstr(s, "egpu_dev_trace_claim,"));
	claim = strstr(s, "ld.relaxed.gpu.global.u64 \t%egpu_cx1, [%egpu_cx0+16];");
	ck_assert_ptr_nonnull(claim);
	reserve = strstr(claim, "atom.global.add.u64 \t%egpu_cx2, [%egpu_cx0], %egpu_cx5;");
	room = strstr(claim, "setp.gt.u64 \t%egpu_cp, %egpu_cx3, ");
	prod = strstr(claim, "atom.global.add.u64 \t%egpu_cx4, [%egpu_cx0+8], %egpu_cx5;");
	ck_assert(reserve && room && prod && reserve < room && room < prod);
	ck_assert_ptr_nonnull(strstr(s, "mov.u32 \t%egpu_cw2, %smid;"));
	ck_assert_ptr_nonnull(strstr(claim, "st.global.v2.u64 \t[%egpu_tcur], {%egpu_cx3, %egpu_cx1};"));
	/* undone where it stops: reserved given back, or the position
	 * skipped; the group then calls */
	ck_assert_ptr_nonnull(strstr(claim, "neg.s64 \t%egpu_cx5, %egpu_cx5;\n\tred.global.add.u64 \t[%egpu_cx0], %egpu_cx5;"));
	ck_assert_ptr_nonnull(strstr(claim, "st.volatile.global.u64 \t[%egpu_tcur], %egpu_cx1;\n\tbra"));
	ck_assert_ptr_nonnull(strstr(claim, "@%egpu_tp4 bra \t$egpu_tslow_"));
	ck_assert_ptr_nonnull(strstr(s, "@!%egpu_tp1 or.b64 \t%egpu_tst, %egpu_tx0, %egpu_tx1;"));
	ck_assert(claim < strstr(s, "@%egpu_tp1 st.global.v2.u64"));
	/* the span the record filled published there, and let go */
	ck_assert_ptr_nonnull(strstr(s, "setp.eq.and.u32 \t%egpu_tp2, %egpu_tleft, 0, %egpu_tp1;\n\t@!%egpu_tp2 bra \t$egpu_tdone_"));
	/* a ring in GPU memory: the span's bytes added to the
	 * published-bytes word of the shard its address is in
	 * (span_shard_at: a multiply and a shift; the shards' lines 128
	 * bytes apart) after the fence, then the header RING_COUNTED (49:
	 * also COMMIT, SPAN) */
	ck_assert_ptr_nonnull(strstr(s, "\tmov.u32 \t%egpu_pw1, 49;\n"));
	ck_assert_ptr_nonnull(strstr(s, "\tshl.b32 \t%egpu_pw2, %egpu_pw2, 4;\n"
				     "\tcvt.u32.u64 \t%egpu_pw0, %egpu_px0;\n\tsub.u32 \t%egpu_pw0, %egpu_pw0, "));
	ck_assert_ptr_nonnull(strstr(s, "\tmul.wide.u32 \t%egpu_px2, %egpu_pw0, "));
	ck_assert_ptr_nonnull(strstr(s, "\tcvt.u32.u64 \t%egpu_pw0, %egpu_px2;\n"));
	ck_assert_ptr_nonnull(strstr(s, "\tcvt.u64.u32 \t%egpu_px3, %egpu_pw2;\n\tmul.wide.u32 \t%egpu_px2, %egpu_pw0, 128;\n"));
	ck_assert_ptr_nonnull(strstr(s, "\tred.relaxed.gpu.global.add.u64 \t[%egpu_px2], %egpu_px3;\n"
				     "\tsub.u32 \t%egpu_pw2, %egpu_pw2, 8;\n\tmov.u32 \t%egpu_pw1, 49;\n"
				     "\tmov.b64 \t%egpu_px1, {%egpu_pw2, %egpu_pw1};\n"
				     "\tst.volatile.global.u64 \t[%egpu_px0], %egpu_px1;\n\t}\n\tand.b64 \t%egpu_tst, %egpu_tst, "));
	ck_assert_ptr_nonnull(strstr(s, "), egpu_dev_trace_site, ("));
	free(s);
	/* the bulk copy: its size from a register, so the runtime's call */
	s = site_before(out, "cp.async.bulk");
	ck_assert_ptr_null(strstr(s, "st.global.v2.u64"));
	ck_assert_ptr_null(strstr(s, "egpu_dev_trace_claim"));
	ck_assert_ptr_nonnull(strstr(s, "cvt.u64.u32 \t%egpu_ta1, %r1;"));
	ck_assert_ptr_nonnull(strstr(s, "), egpu_dev_trace_site, ("));
	free(s);
	/* both exits flush; the guarded one under its guard */
	ck_assert_int_eq(tu_count(out, "// begin egpu trace exit"), 2);
	ck_assert_ptr_nonnull(strstr(out, "@!%p1 bra \t$egpu_tx_"));
	/* each publishes inline where the lane owns a span (the two exits
	 * and the call): a fence, the header at the cursor less the slots
	 * used; no runtime call */
	ck_assert_int_eq(tu_count(out, "setp.eq.u32 \t%egpu_tq, %egpu_tleft, 0;\n\t@%egpu_tq bra \t$egpu_tf"), 3);
	/* publishes: those and two where each of the 3 inline sites
	 * (vector, shared, last store; all may be short) may fill its span,
	 * after its short record and after its 16-byte one */
	ck_assert_int_eq(tu_count(out, "st.global.v2.u64 \t[%egpu_tcur], {%egpu_tx3"), 3);
	ck_assert_int_eq(tu_count(out, "st.global.u64 \t[%egpu_tcur], %egpu_tx3;"), 3);
	ck_assert_int_eq(tu_count(out, "\tmov.b64 \t{%egpu_pw0, %egpu_pw1}, %egpu_tst;"), 3 + 2 * 3);
	ck_assert_int_eq(tu_count(out, "\tst.volatile.global.u64 \t[%egpu_px0], %egpu_px1;"), 3 + 2 * 3);
	assert_publishes(out, 49, true);
	ck_assert_ptr_nonnull(strstr(out, "add.s64 \t%egpu_px1, %egpu_tcur, 8;\n"
				      "\tand.b64 \t%egpu_px1, %egpu_px1, -16;\n"
				      "\tsub.s64 \t%egpu_px0, %egpu_px1, %egpu_px0;"));
	ck_assert_int_eq(tu_count(out, "), egpu_dev_trace_span_flush, ("), 0);
	/* f traces: the call's span flushed and let go before its sequence */
	ck_assert_ptr_nonnull(call);
	ck_assert_msg(!strncmp(strstr(call, "// end egpu trace call"),
			       "// end egpu trace call\n\t{\n\t.reg .b32 temp_param_reg;", 49),
		      "%s", call);
	ck_assert_ptr_nonnull(strstr(call, "mov.u32 \t%egpu_tleft, 0;"));
	tu_assemble_sm90(out, "written kernels");
	free(out);
}
END_TEST

/* No .func traces: no flush before calls. */
START_TEST(no_flush_before_calls_without_traced_funcs)
{
	EGPU_OPTS(egpu_mem_trace_opts, o, .kernel = "k");
	struct egpu_report rep;
	char *out;

	/* f's load is global: limit the trace to stores (global: one) */
	o.mem_kinds = 1u << EGPU_MEM_STORE;
	out = traced(&o, kernels, &rep);
	ck_assert_int_eq(tu_count(out, "// egpu trace\n"), 1);
	ck_assert_ptr_null(strstr(out, "// begin egpu trace call"));
	ck_assert_ptr_null(strstr(out, "egpu_dev_trace_alone, ("));
	tu_assemble_sm90(out, "stores of k");
	free(out);
}
END_TEST

/*
 * A lossless ring's claim inline too, as in a ring that drops (reserved,
 * the room, prod); without room its reservation is never given back
 * (bytes given back would stay in later reservations' checks, which could
 * then wait for room never handed out): the leader hands it on to the
 * runtime's claim (reserved's value before it), which waits for room.
 */
START_TEST(lossless_claims_inline)
{
	struct egpu_report rep;
	char *out;

	out = kernels_into("slossless", &rep);
	ck_assert_int_eq(tu_count(out, "atom.global.add.u64 \t%egpu_cx2, [%egpu_cx0], %egpu_cx5;"), 2);
	ck_assert_int_eq(tu_count(out, "atom.global.add.u64 \t%egpu_cx4, [%egpu_cx0+8], %egpu_cx5;"), 2);
	ck_assert_ptr_null(strstr(out, "neg.s64 \t%egpu_cx5, %egpu_cx5;"));
	/* handed on with its slots, which the runtime's claim keeps */
	ck_assert_int_eq(tu_count(out, "mov.u64 \t%egpu_ta1, %egpu_cx2;\n"
				       "\tmov.u32 \t%egpu_ta2, %egpu_cw1;\n"), 2);
	ck_assert_int_eq(tu_count(out, "), egpu_dev_trace_claim, (%egpu_ta0, %egpu_tst, %egpu_ta1, %egpu_ta2);"), 2);
	ck_assert_ptr_nonnull(strstr(out, "), egpu_dev_trace_site, ("));
	/* its inline publishes are counted all the same */
	assert_publishes(out, 49, true);
	tu_assemble_sm90(out, "lossless");
	free(out);
}
END_TEST

/*
 * A ring in host memory has no published-bytes words: its spans are
 * published uncounted (17: COMMIT, SPAN), with no add after the header.
 */
START_TEST(host_ring_spans_not_counted)
{
	struct egpu_report rep;
	char *out;

	out = kernels_into("shost", &rep);
	assert_publishes(out, 17, false);
	ck_assert_ptr_nonnull(strstr(out, "fence.acq_rel.sys;"));
	tu_assemble_sm90(out, "host ring");
	free(out);
}
END_TEST

/*
 * The inline claim's span, sized as span_claim's first try sizes it
 * (span_fold_sizes): twice the last one's where it filled (used ==
 * slots), else the slots the state keeps, at least 2 slots (the header
 * and a record's: it claims only where a span starts a slot), at most
 * 256 and half a shard; for a fresh state, 2 in k, which has no loop: its
 * warps' first spans hold a header and its two short records (the
 * vector load's, the store's). ssmall: one shard of 4 KiB, so at most
 * 128 slots.
 */
START_TEST(inline_claim_sizes_follow_span_claim)
{
	static const char *const rings[] = { "strace", "ssmall" };
	static const unsigned most[] = { 256, 128 };
	struct egpu_report rep;

	for (int i = 0; i < 2; i++) {
		char want[480], *out;

		out = kernels_into(rings[i], &rep);
		snprintf(want, sizeof(want), "\tbfe.u32 \t%%egpu_cw2, %%egpu_cw1, 4, 9;\n"
			 "\tbfe.u32 \t%%egpu_cw0, %%egpu_cw1, 13, 9;\n"
			 "\tsetp.eq.u32 \t%%egpu_cp, %%egpu_cw2, %%egpu_cw0;\n"
			 "\tshl.b32 \t%%egpu_cw1, %%egpu_cw0, 1;\n"
			 "\t@!%%egpu_cp mov.b32 \t%%egpu_cw1, %%egpu_cw0;\n"
			 "\tmax.u32 \t%%egpu_cw1, %%egpu_cw1, 2;\n"
			 "\tmin.u32 \t%%egpu_cw1, %%egpu_cw1, %u;\n"
			 "\tsetp.eq.u32 \t%%egpu_cp, %%egpu_cw0, 0;\n"
			 "\tselp.b32 \t%%egpu_cw1, 2, %%egpu_cw1, %%egpu_cp;\n",
			 most[i]);
		ck_assert_msg(tu_count(out, want) == 2, "%s: %s", rings[i], want);
		free(out);
	}
}
END_TEST

/*
 * A fresh state's first span: in a kernel with no loop, a header and one
 * record of each traced site, in order (short ones two to a slot, a
 * 16-byte one at the next slot); in a loop the ring's first size, 4. A
 * kernel with no site that may store a short record has no code for half
 * slots.
 */
START_TEST(first_span_fits_a_straight_kernel)
{
	static const char ptx[] = HEAD
		".visible .entry flat(.param .u64 p)\n{\n"
		"\t.reg .b16 %h<8>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
		"\tld.param.u64 %rd1, [p];\n"
		"\tld.global.u32 %r1, [%rd1];\n"    /* short: half 1 */
		"\tld.global.u16 %h1, [%rd1+64];\n" /* 16 bytes: 2-3 */
		"\tld.global.u32 %r2, [%rd1+128];\n" /* short: 5 */
		"\tld.global.u32 %r3, [%rd1+192];\n" /* short: 6 */
		"\tld.global.u16 %h2, [%rd1+256];\n" /* 16 bytes: 7-8 */
		"\tst.global.u16 [%rd1], %h2;\n"    /* 16 bytes: 9-10 */
		"\tret;\n}\n"
		".visible .entry loop(.param .u64 p)\n{\n"
		"\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
		"\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, 0;\n"
		"$L:\n\tld.global.u32 %r2, [%rd1];\n"
		"\tadd.u32 %r1, %r1, 1;\n\tsetp.lt.u32 %p1, %r1, 8;\n"
		"\t@%p1 bra $L;\n\tret;\n}\n"
		".visible .entry halves(.param .u64 p)\n{\n"
		"\t.reg .b16 %h<4>;\n\t.reg .b64 %rd<4>;\n"
		"\tld.param.u64 %rd1, [p];\n"
		"\tld.global.u16 %h1, [%rd1];\n\tst.global.u16 [%rd1], %h1;\n"
		"\tret;\n}\n";
	struct egpu_report rep;
	char *out = traced(NULL, ptx, &rep), *flat, *loop, *halves;

	loop = strstr(out, ".entry loop");
	ck_assert_ptr_nonnull(loop);
	flat = strndup(out, (size_t)(loop - out));
	/* 1 + 10 / 2 slots in flat, at each of its six sites */
	ck_assert_int_eq(tu_count(flat, "selp.b32 \t%egpu_cw1, 6, %egpu_cw1, %egpu_cp;"), 6);
	halves = strstr(out, ".entry halves");
	ck_assert_ptr_nonnull(halves);
	ck_assert_int_eq(tu_count(loop, "selp.b32 \t%egpu_cw1, 4, %egpu_cw1, %egpu_cp;"), 1);
	/* no short records in halves (2-byte lanes): no half slots either */
	ck_assert_int_eq(tu_count(halves, "selp.b32 \t%egpu_cw1, 3, %egpu_cw1, %egpu_cp;"), 2);
	ck_assert_ptr_null(strstr(halves, "%egpu_tw10, 8;"));
	ck_assert_ptr_nonnull(strstr(flat, "%egpu_tw10, 8;"));
	tu_assemble_sm90(out, "first spans");
	free(flat);
	free(out);
}
END_TEST

/*
 * A kernel that falls off its end after a guarded statement: the flush
 * goes before the closing brace, after that statement and not under its
 * guard (a lane whose guard is false ends there too).
 */
START_TEST(end_flush_not_under_a_guarded_last_statement)
{
	static const char ends[] = HEAD
		".visible .entry e(.param .u64 e_p)\n{\n\t.reg .pred %p<2>;\n"
		"\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n"
		"\tld.param.u64 %rd1, [e_p];\n\tmov.u32 %r1, %tid.x;\n"
		"\tsetp.lt.u32 %p1, %r1, 5;\n"
		"\t@%p1 st.global.u32 [%rd1], %r1;\n}\n";
	struct egpu_report rep;
	const char *store, *flush;
	char *out;

	out = instrument(ends, &rep);
	store = strstr(out, "@%p1 st.global.u32 [%rd1], %r1;");
	flush = strstr(out, "// begin egpu trace exit");
	ck_assert(store && flush && store < flush);
	ck_assert_int_eq(tu_count(out, "// begin egpu trace exit"), 1);
	ck_assert_ptr_null(strstr(out, "bra \t$egpu_tx_"));
	ck_assert_ptr_nonnull(strstr(flush, "// end egpu trace exit\n\t}"));
	tu_assemble_sm90(out, "guarded end");
	free(out);
}
END_TEST

/*
 * A lossless ring: the lane's span let go of before each instruction that
 * waits for other threads and each call; before a guarded bra only when
 * the active lanes' predicates differ (a vote); not before an arrive, a
 * warp collective or a bra.uni (trace_wait.c); a group of fewer than 32
 * lanes never takes the inline record (its span could stay open). A ring
 * that drops when full needs none of it.
 */
START_TEST(lossless_publishes_before_waits)
{
	static const char waits[] = HEAD
		".func g()\n{\n\tret;\n}\n"
		".visible .entry w(.param .u64 w_p)\n{\n"
		"\t.reg .pred %p<3>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<3>;\n"
		"\t.shared .b64 bar0;\n"
		"\tld.param.u64 %rd1, [w_p];\n"
		"$L_top:\n"
		"\tld.global.u32 %r1, [%rd1];\n"
		"\tbar.sync 0;\n"
		"\tbarrier.cta.red.and.pred %p2, 1, %p1;\n"
		"\tbar.arrive 1, 64;\n"
		"\tbar.warp.sync -1;\n"
		"\tshfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;\n"
		"\tmbarrier.try_wait.parity.shared::cta.b64 %p2, [bar0], 0;\n"
		"\tcall.uni g, ();\n"
		"\tsetp.lt.u32 %p1, %r1, 10;\n"
		"\t@%p1 bra.uni $L_top;\n"
		"\t@!%p1 bra $L_top;\n"
		"\tst.global.u32 [%rd1], %r1;\n"
		"\tret;\n}\n";
	EGPU_OPTS(egpu_mem_trace_opts, o);
	struct egpu_report rep;
	char *out, *s;

	ck_assert_int_eq(egpu_mem_trace_enable(ctx, egpu_obj_map(obj, "slossless"),
					       &o), 0);
	out = instrument(waits, &rep);
	/* bar.sync, barrier.cta.red, mbarrier.try_wait, the bra */
	ck_assert_int_eq(tu_count(out, "// begin egpu trace wait"), 4);
	s = tu_text_before(out, "// begin egpu trace wait", "bar.sync 0;");
	ck_assert_ptr_nonnull(strstr(s, "@%egpu_tq bra \t$egpu_tfw_"));
	ck_assert_ptr_nonnull(strstr(s, "st.volatile.global.u64"));
	/* let go: owned no more, its slots the slots it used, %tleft 0;
	 * then every lane's used slots 0 */
	ck_assert_ptr_nonnull(strstr(s, "bfe.u32 \t%egpu_lw2, %egpu_lw1, 4, 9;\n"
				     "\tbfi.b32 \t%egpu_lw1, %egpu_lw2, %egpu_lw1, 13, 9;"));
	ck_assert_ptr_nonnull(strstr(s, "mov.u32 \t%egpu_tleft, 0;"));
	ck_assert_ptr_nonnull(strstr(s, ":\n\tand.b64 \t%egpu_tst, %egpu_tst, 18446708958056939519;\n\t}"));
	free(s);
	s = tu_text_before(out, "// begin egpu trace wait", "barrier.cta.red");
	ck_assert_ptr_nonnull(strstr(s, "$egpu_tfw_"));
	free(s);
	s = tu_text_before(out, "// begin egpu trace wait", "mbarrier.try_wait");
	ck_assert_ptr_nonnull(strstr(s, "$egpu_tfw_"));
	free(s);
	s = tu_text_before(out, "// begin egpu trace wait", "@!%p1 bra $L_top;");
	ck_assert_ptr_nonnull(strstr(s, "vote.sync.uni.pred \t%egpu_tu, %p1, %egpu_tm;"));
	ck_assert_ptr_nonnull(strstr(s, "$egpu_tfw_"));
	free(s);
	/* none before the arrive, the warp sync, the shfl, the bra.uni */
	s = tu_text_before(out, "bar.arrive 1, 64;", "mbarrier.try_wait");
	ck_assert_int_eq(tu_count(s, "// begin egpu trace wait"), 1);
	free(s);
	s = tu_text_before(out, "setp.lt.u32 %p1", "@!%p1 bra $L_top;");
	ck_assert_int_eq(tu_count(s, "// begin egpu trace wait"), 1);
	free(s);
	/* every call (g does not trace), the exit */
	ck_assert_int_eq(tu_count(out, "// begin egpu trace call"), 1);
	ck_assert_int_eq(tu_count(out, "// begin egpu trace exit"), 1);
	/* lossless sites (both may be short): a group of fewer than 32
	 * lanes calls, from the short record's test and the general one */
	ck_assert_int_eq(tu_count(out, "setp.ne.or.u32 \t%egpu_tp0, %egpu_tw0, -1, %egpu_tp0;"), 2 * 2);
	tu_assemble_sm90(out, "lossless waits");
	free(out);
	/* setmaxnreg (sm_90a: not assembled here): a warpgroup meets there */
	{
		static const char wg[] = ".version 8.0\n.target sm_90a\n"
			".address_size 64\n\n"
			".visible .entry g(.param .u64 g_p)\n{\n\t.reg .b64 %rd<2>;\n"
			"\tld.param.u64 %rd1, [g_p];\n\tst.global.u32 [%rd1], 1;\n"
			"\tsetmaxnreg.inc.sync.aligned.u32 232;\n\tret;\n}\n";
		char *o2 = instrument(wg, &rep);

		s = tu_text_before(o2, "// begin egpu trace wait", "setmaxnreg");
		ck_assert_ptr_nonnull(strstr(s, "$egpu_tfw_"));
		free(s);
		free(o2);
	}
	/* the same into a ring that drops: none of it */
	ck_assert_int_eq(egpu_mem_trace_enable(ctx, egpu_obj_map(obj, "strace"),
					       &o), 0);
	out = instrument(waits, &rep);
	ck_assert_ptr_null(strstr(out, "// begin egpu trace wait"));
	ck_assert_ptr_null(strstr(out, "// begin egpu trace call"));
	/* (the short records' tests ask for the whole warp all the same) */
	ck_assert_int_eq(tu_count(out, "setp.ne.or.u32 \t%egpu_tp0, %egpu_tw0, -1"), 2);
	free(out);
}
END_TEST

/* max_registers: .maxnreg on each traced kernel without a limit. */
START_TEST(register_cap)
{
	static const char two[] = HEAD
		".visible .entry a(.param .u64 a_p)\n{\n\t.reg .b64 %rd<3>;\n"
		"\tld.param.u64 %rd1, [a_p];\n\tst.global.u32 [%rd1], 1;\n\tret;\n}\n"
		".visible .entry b(.param .u64 b_p)\n.maxnreg 64\n{\n\t.reg .b64 %rd<3>;\n"
		"\tld.param.u64 %rd1, [b_p];\n\tst.global.u32 [%rd1], 1;\n\tret;\n}\n";
	EGPU_OPTS(egpu_mem_trace_opts, o, .max_registers = 40);
	struct egpu_report rep;
	char *out;

	out = traced(&o, two, &rep);
	ck_assert_int_eq(tu_count(out, ".maxnreg"), 2);
	ck_assert_ptr_nonnull(strstr(out, "a(.param .u64 a_p)\n.maxnreg 40 // egpu trace\n{"));
	ck_assert_ptr_nonnull(strstr(out, ".maxnreg 64\n{"));
	tu_assemble_sm90(out, "capped kernels");
	free(out);
}
END_TEST

/* Every kernel of @name's PTX traced, each exit flushing, ptxas happy;
 * saved as @name@suffix.trace.ptx. */
static void whole_module(const char *name, const char *suffix)
{
	char path[512];
	struct egpu_report rep;
	char *ptx, *out;

	snprintf(path, sizeof(path), "%s/%s.ptx", EGPU_TEST_BUILD, name);
	ptx = tu_read_file(path, NULL);
	out = instrument(ptx, &rep);
	ck_assert_uint_gt(rep.mem_site_cnt, 0);
	ck_assert_int_eq(tu_count(out, "// egpu trace\n"), (int)rep.mem_site_cnt);
	ck_assert_int_ge(tu_count(out, "// begin egpu trace exit"),
			 (int)rep.kernel_cnt);
	printf("%s: %u kernels, %u traced sites, PTX %d -> %d lines\n", path,
	       rep.kernel_cnt, rep.mem_site_cnt, tu_count(ptx, "\n"),
	       tu_count(out, "\n"));
	tu_assemble_sm90(out, path);
	/* for ptxas -v by hand: docs/events.md */
	snprintf(path, sizeof(path), "%s/%s%s.trace.ptx", EGPU_TEST_BUILD, name,
		 suffix);
	tu_save(out, path);
	free(out);
	free(ptx);
}

/* Also into a lossless ring (its publishes before barriers and splits:
 * barrier_rounds, sgemm_tiled), saved as @name.lossless.trace.ptx. */
static void whole_module_twice(const char *name)
{
	whole_module(name, "");
	ck_assert_int_eq(egpu_mem_trace_enable(ctx, egpu_obj_map(obj, "slossless"),
					       NULL), 0);
	whole_module(name, ".lossless");
}

START_TEST(events_kernels)
{
	whole_module_twice("kernels");
}
END_TEST

START_TEST(bench_kernels)
{
	whole_module_twice("workloads");
}
END_TEST

START_TEST(bad_arguments)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);
	struct {
		struct egpu_mem_trace_opts o;
		uint64_t newer; /* a field this build does not know */
	} big = { { .sz = sizeof(big) }, 1 };
	egpu_ctx *other = egpu_ctx_new(&co);

	ck_assert_int_eq(egpu_mem_trace_enable(NULL, egpu_obj_map(obj, "strace"),
					       NULL), EGPU_EINVAL);
	ck_assert_int_eq(egpu_mem_trace_enable(ctx, NULL, NULL), EGPU_EINVAL);
	/* a thread-local map is no ring */
	ck_assert_int_eq(egpu_mem_trace_enable(ctx, egpu_obj_map(obj, "span"),
					       NULL), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "'span' is not a ring map"));
	/* another context's ring */
	ck_assert_ptr_nonnull(other);
	ck_assert_int_eq(egpu_mem_trace_enable(other, egpu_obj_map(obj, "strace"),
					       NULL), EGPU_EINVAL);
	ck_assert_int_eq(egpu_mem_trace_enable(ctx, egpu_obj_map(obj, "strace"),
					       &big.o), EGPU_EINVAL);
	egpu_ctx_free(other);
}
END_TEST

/* More registers than a thread may have is refused; no cap at all is not. */
START_TEST(register_cap_bounds)
{
	static const uint32_t too_many[] = { 256, EGPU_MAX_REGISTERS_ANY - 1 };
	EGPU_OPTS(egpu_mem_trace_opts, any, .max_registers = EGPU_MAX_REGISTERS_ANY);

	for (size_t i = 0; i < 2; i++) {
		EGPU_OPTS(egpu_mem_trace_opts, o, .max_registers = too_many[i]);

		ck_assert_int_eq(egpu_mem_trace_enable(ctx, egpu_obj_map(obj, "strace"),
						       &o), EGPU_EINVAL);
		ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "max_registers"));
	}
	ck_assert_int_eq(egpu_mem_trace_enable(ctx, egpu_obj_map(obj, "strace"),
					       &any), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mem_trace_instrument");
	TCase *tc = tcase_create("trace");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, written_kernels);
	tcase_add_test(tc, no_flush_before_calls_without_traced_funcs);
	tcase_add_test(tc, lossless_claims_inline);
	tcase_add_test(tc, host_ring_spans_not_counted);
	tcase_add_test(tc, inline_claim_sizes_follow_span_claim);
	tcase_add_test(tc, first_span_fits_a_straight_kernel);
	tcase_add_test(tc, end_flush_not_under_a_guarded_last_statement);
	tcase_add_test(tc, register_cap);
	tcase_add_test(tc, lossless_publishes_before_waits);
	tcase_add_test(tc, events_kernels);
	tcase_add_test(tc, bench_kernels);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, register_cap_bounds);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true) ? 1 : 0;
}
