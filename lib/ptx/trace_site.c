/* SPDX-License-Identifier: MIT */
/*
 * The splicer's trace mode (docs/events.md, "The splicer's trace mode"):
 * every selected access a compact record in a span of one ring, as
 * bpf_egpu_trace_span makes it, with the common case in the site's own
 * code instead of a helper call. Emitted by memsite.c where a request asks
 * for it, after the site's generic address is in %P_m0.
 *
 * A kernel keeps each lane's span in three registers the splicer owns
 * (P: the prefix), set at its entry: %P_tst, the state of core/span_record.h (0: none);
 * %P_tcur, where the next record of a span the lane owns goes; %P_tleft,
 * the slots with room left in it (0: it owns none; one whose first half a
 * short record filled counts, and the state's used slots count it too).
 * At a site the warp's active lanes (the group) vote; the record is
 * stored inline, by the leader (the lowest lane) with one 16-byte store
 * (8 for a short record), when
 * - every lane's address is the leader's + (lane - leader) * stride, for
 *   the 16-bit stride the next lane's offset gives, and the leader's
 *   address fits 48 bits (an affine record);
 * - no other lane owns a span (span_trace would publish it);
 * - the leader owns a span (one with no room left is published at once:
 *   the record that fills it publishes it here, a fence and the header)
 *   and each other lane's state starts where it does (its floor:
 *   per-thread order needs no other vote); or the leader owns none, and
 *   then claims one alone, inline as span_claim's first try does when
 *   the span fits (the shard's reserved and prod atomics, the room
 *   checked between them; else undone and the runtime's call below,
 *   but in a lossless ring without room its reservation handed on to
 *   egpu_dev_trace_claim, which waits for room for it), or,
 *   where the ring's layout is not folded, through egpu_dev_trace_claim,
 *   the other lanes' floors moving to its start as span_trace moves
 *   them.
 * The site's kind, size and number are the record's first word, a
 * constant here. Where they fit a short record (span_short_fits), the
 * group first tests the likely case with the stride known, the whole
 * warp at the access's size apart, and the leader stores an 8-byte short
 * record; a group that fails it takes the test above, and stores a
 * 16-byte record only into a span its leader owns. Anything else calls
 * egpu_dev_trace_site (device/
 * runtime.cu: bpf_egpu_trace_span's code, span_trace.cuh), which returns
 * the three registers. Before every exit, and before calls when a .func
 * traces too, a lane publishes the span it owns inline (a fence and the
 * header, as when a record fills it; in a ring in GPU memory then its
 * bytes added to its shard's published-bytes word, as span_publish
 * counts it); into a lossless ring also before
 * every wait and split of its warp (trace_wait.c), where only a group of
 * the whole warp stores its record inline.
 * A .func has no kernel registers: its sites call egpu_dev_trace_alone,
 * a span of one record published at once.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/span_record.h"
#include "ptx/memplan.h"

/*
 * Append @fmt's text to @sb, each '~' in it the prefix and '_' (the
 * names below: %~tw0 is %egpu_tw0); the arguments are numbers and names.
 */
static void put(struct strbuf *sb, const char *p, const char *fmt, ...)
	EGPU_PRINTF(3, 4);

static void put(struct strbuf *sb, const char *p, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(text)) { /* never: our templates */
		sb->oom = 1;
		return;
	}
	for (const char *t = text, *q; *t; t = q + 1) {
		q = strchr(t, '~');
		if (!q) {
			sb_adds(sb, t);
			return;
		}
		sb_addn(sb, t, (size_t)(q - t));
		sb_printf(sb, "%s_", p);
	}
}

/* Whether the site's record may be stored inline: the kernel's registers,
 * a size known here, fields that fit the first word. */
static bool inline_ok(const struct tr_site_code *c)
{
	const struct mem_op *op = &c->s->op;

	return c->kernel && op->size_reg < 0 &&
	       span_fields_fit(op->kind, op->size, c->number);
}

bool tr_may_be_short(const struct tr_site_code *c)
{
	const struct mem_op *op = &c->s->op;

	return inline_ok(c) && span_short_fits(op->kind, op->size, c->number);
}

uint32_t tr_record_end(const struct tr_site_code *c, uint32_t halves)
{
	if (tr_may_be_short(c))
		return halves + 1;
	return (halves + 1) / 2 * 2 + 2; /* at least a slot, at a slot */
}

uint32_t tr_first_slots(const struct ptx_trace *tr, uint32_t halves)
{
	uint32_t slots = 1 + (halves + 1) / 2;

	if (slots < tr->claim.least)
		return tr->claim.least;
	return slots < tr->claim.most ? slots : tr->claim.most;
}

/* %~ta1 = the info word (a bulk copy's size from its register). */
static void put_info(struct strbuf *sb, const struct tr_site_code *c)
{
	const struct mem_op *op = &c->s->op;
	const char *p = c->prefix;

	if (op->size_reg < 0) {
		put(sb, p, "\tmov.u64 \t%%~ta1, %llu;\n", (unsigned long long)
		    span_access_info(op->size, op->kind, c->number));
		return;
	}
	put(sb, p, "\tcvt.u64.u32 \t%%~ta1, %.*s;\n"
	    "\tor.b64 \t%%~ta1, %%~ta1, %llu;\n",
	    (int)c->m->toks[op->size_reg].len,
	    tok_text(c->m, (uint32_t)op->size_reg),
	    (unsigned long long)span_access_info(0, op->kind, c->number));
}

/* The registers the runtime's call @fn returns (struct span_regs). */
static void call_regs(struct strbuf *sb, const char *p, const char *fn,
		      const char *args)
{
	put(sb, p, "\t.param .align 8 .b8 \t%%~tret[24];\n"
	    "\tcall \t(%%~tret), %s, (%s);\n"
	    "\tld.param.b64 \t%%~tst, [%%~tret];\n"
	    "\tld.param.b64 \t%%~tcur, [%%~tret+8];\n"
	    "\tld.param.b32 \t%%~tleft, [%%~tret+16];\n", fn, args);
}

/* The runtime's call: the site's record, the registers after it. */
static void call_site(struct strbuf *sb, const struct tr_site_code *c)
{
	const char *p = c->prefix;

	put(sb, p, "\t{\n\t.reg .b64 \t%%~ta<2>;\n\tmov.u64 \t%%~ta0, %llu;\n",
	    (unsigned long long)c->tr->ring);
	put_info(sb, c);
	if (!c->kernel) {
		put(sb, p, "\tcall \t%s, (%%~ta0, %%~m0, %%~ta1);\n\t}\n",
		    TR_ALONE_FUNC);
		return;
	}
	call_regs(sb, p, TR_SITE_FUNC, "%~ta0, %~tst, %~m0, %~ta1");
	sb_adds(sb, "\t}\n");
}

/*
 * The group and its leader. %~tw0: the active lanes, %~tw1: the leader,
 * %~tw2: this lane, {%~tw3, %~tw4}: the leader's address, also in %~tx0.
 */
static void vote_leader(struct strbuf *sb, const char *p)
{
	put(sb, p, "\tactivemask.b32 \t%%~tw0;\n"
	    "\tbrev.b32 \t%%~tw1, %%~tw0;\n"
	    "\tbfind.shiftamt.u32 \t%%~tw1, %%~tw1;\n"
	    "\tmov.u32 \t%%~tw2, %%laneid;\n"
	    "\tmov.b64 \t{%%~tw3, %%~tw4}, %%~m0;\n"
	    "\tshfl.sync.idx.b32 \t%%~tw3, %%~tw3, %%~tw1, 31, %%~tw0;\n"
	    "\tshfl.sync.idx.b32 \t%%~tw4, %%~tw4, %%~tw1, 31, %%~tw0;\n"
	    "\tmov.b64 \t%%~tx0, {%%~tw3, %%~tw4};\n");
}

/*
 * The affine test: %~tw5, the 16-bit stride the next lane's offset gives
 * (sign-extended; from an inactive lane anything: every lane checks it),
 * %~tp0: this lane's address is off the line.
 */
static void vote_stride(struct strbuf *sb, const char *p)
{
	put(sb, p, "\tsub.s64 \t%%~tx1, %%~m0, %%~tx0;\n"
	    "\tcvt.u32.u64 \t%%~tw5, %%~tx1;\n"
	    "\tadd.u32 \t%%~tw6, %%~tw1, 1;\n"
	    "\tshfl.sync.idx.b32 \t%%~tw5, %%~tw5, %%~tw6, 31, %%~tw0;\n"
	    "\tbfe.s32 \t%%~tw5, %%~tw5, 0, 16;\n"
	    "\tsub.s32 \t%%~tw6, %%~tw2, %%~tw1;\n"
	    "\tmul.wide.s32 \t%%~tx2, %%~tw6, %%~tw5;\n"
	    "\tsetp.ne.s64 \t%%~tp0, %%~tx1, %%~tx2;\n");
}

/*
 * The short record's test, with the stride known (the access's size, as
 * a whole warp's coalesced access has it), so no shuffle for it: %~tp0,
 * this lane's address is not lane 0's + lane * @size, or the group is not
 * the whole warp.
 */
static void vote_unit(struct strbuf *sb, const char *p, uint32_t size)
{
	put(sb, p, "\tsub.s64 \t%%~tx1, %%~m0, %%~tx0;\n"
	    "\tsub.s32 \t%%~tw6, %%~tw2, %%~tw1;\n"
	    "\tmul.wide.s32 \t%%~tx2, %%~tw6, %u;\n"
	    "\tsetp.ne.s64 \t%%~tp0, %%~tx1, %%~tx2;\n"
	    "\tsetp.ne.or.u32 \t%%~tp0, %%~tw0, -1, %%~tp0;\n", size);
}

/*
 * %~tp0 |= this lane's reason for the runtime: its address needs more
 * than 48 bits (the leader's), it owns a span (another lane's: span_trace
 * would publish it). %~tp2: the leader owns none (made the group's by a
 * vote), so it claims one; else each other lane's state must start where
 * the leader's span does (its floor; one that starts there owns no span:
 * two lanes never own one). Then the group's vote. %~tp1: the leader,
 * %~tp3: this lane owns a span.
 */
static void vote_slow(struct strbuf *sb, const char *p)
{
	put(sb, p, "\tmov.b64 \t{%%~tw7, %%~tw8}, %%~tst;\n"
	    "\tshfl.sync.idx.b32 \t%%~tw9, %%~tw7, %%~tw1, 31, %%~tw0;\n"
	    "\tsetp.eq.u32 \t%%~tp1, %%~tw2, %%~tw1;\n"
	    "\tsetp.ne.u32 \t%%~tp3, %%~tleft, 0;\n"
	    "\tsetp.gt.u32 \t%%~tp4, %%~tw4, %u;\n"
	    "\t@!%%~tp1 mov.pred \t%%~tp4, %%~tp3;\n"
	    "\tor.pred \t%%~tp0, %%~tp0, %%~tp4;\n"
	    "\tsetp.eq.and.u32 \t%%~tp2, %%~tleft, 0, %%~tp1;\n"
	    "\tvote.sync.any.pred \t%%~tp2, %%~tp2, %%~tw0;\n"
	    "\tsetp.ne.u32 \t%%~tp4, %%~tw7, %%~tw9;\n"
	    "\t@!%%~tp2 or.pred \t%%~tp0, %%~tp0, %%~tp4;\n"
	    "\tvote.sync.any.pred \t%%~tp0, %%~tp0, %%~tw0;\n",
	    (1u << (SPAN_ADDR_BITS - 32)) - 1);
}

/*
 * The claim's first step inline (span_claim's size, ring_shard_here,
 * ring_take): %~cw1 the slots the leader's span asks for, as
 * span_claim_slots sizes it (span_fold_sizes): what its state asks for
 * (span_asks_slots: twice %~tst's slots where its last span filled, used
 * == slots; else its slots, as a let-go left them), at least claim.least
 * and at most claim.most, or the kernel's first size (@c->first) for a
 * fresh state; %~cx5 their
 * bytes, %~cx0 its SM's shard's counters; those bytes added to reserved,
 * %~cx2 the value before; %~cp: they do not fit below the cached
 * consumer position (loaded alongside, as ring_take does).
 */
static void claim_reserve(struct strbuf *sb, const struct tr_site_code *c)
{
	const struct ptx_trace *tr = c->tr;
	const char *p = c->prefix;

	put(sb, p, "\tmov.b64 \t{%%~cw0, %%~cw1}, %%~tst;\n"
	    "\tbfe.u32 \t%%~cw2, %%~cw1, %u, %u;\n"
	    "\tbfe.u32 \t%%~cw0, %%~cw1, %u, %u;\n"
	    "\tsetp.eq.u32 \t%%~cp, %%~cw2, %%~cw0;\n"
	    "\tshl.b32 \t%%~cw1, %%~cw0, 1;\n"
	    "\t@!%%~cp mov.b32 \t%%~cw1, %%~cw0;\n"
	    "\tmax.u32 \t%%~cw1, %%~cw1, %u;\n"
	    "\tmin.u32 \t%%~cw1, %%~cw1, %u;\n"
	    "\tsetp.eq.u32 \t%%~cp, %%~cw0, 0;\n"
	    "\tselp.b32 \t%%~cw1, %u, %%~cw1, %%~cp;\n"
	    "\tmul.wide.u32 \t%%~cx5, %%~cw1, %u;\n",
	    SPAN_USED_SHIFT - 32, SPAN_SLOTS_BITS,
	    SPAN_SLOTS_SHIFT - 32, SPAN_SLOTS_BITS, tr->claim.least,
	    tr->claim.most, c->first, SPAN_SLOT);
	if (tr->claim.shards > 1)
		put(sb, p, "\tmov.u32 \t%%~cw2, %%smid;\n"
		    "\tand.b32 \t%%~cw3, %%~cw2, %u;\n"
		    "\tsetp.lt.u32 \t%%~cp, %%~cw2, %u;\n"
		    "\tselp.b32 \t%%~cw2, %%~cw2, %%~cw3, %%~cp;\n",
		    tr->claim.shards - 1, tr->claim.shards);
	else
		put(sb, p, "\tmov.u32 \t%%~cw2, 0;\n");
	put(sb, p, "\tmul.wide.u32 \t%%~cx0, %%~cw2, %llu;\n"
	    "\tadd.s64 \t%%~cx0, %%~cx0, %llu;\n"
	    "\tld.relaxed.gpu.global.u64 \t%%~cx1, [%%~cx0+%u];\n"
	    "\tatom.global.add.u64 \t%%~cx2, [%%~cx0], %%~cx5;\n"
	    "\tadd.s64 \t%%~cx3, %%~cx2, %%~cx5;\n"
	    "\tsub.s64 \t%%~cx3, %%~cx3, %%~cx1;\n"
	    "\tsetp.gt.u64 \t%%~cp, %%~cx3, %llu;\n",
	    (unsigned long long)tr->claim.ctr_step,
	    (unsigned long long)tr->claim.ctr, tr->claim.cons_off,
	    (unsigned long long)tr->claim.mask + 1);
}

/*
 * The claim's second step inline (ring_settle): all the bytes kept,
 * %~cx4 their position from prod; %~cp: they cross the shard's end or
 * start no slot (span_claim would skip them), else the span's address
 * in %~tcur.
 */
static void claim_place(struct strbuf *sb, const char *p,
			const struct ptx_trace *tr)
{
	put(sb, p, "\tatom.global.add.u64 \t%%~cx4, [%%~cx0+%u], %%~cx5;\n"
	    "\tand.b64 \t%%~cx3, %%~cx4, %llu;\n"
	    "\tadd.s64 \t%%~cx1, %%~cx3, %%~cx5;\n"
	    "\tsetp.gt.u64 \t%%~cp, %%~cx1, %llu;\n"
	    "\tcvt.u32.u64 \t%%~cw3, %%~cx4;\n"
	    "\tand.b32 \t%%~cw3, %%~cw3, 8;\n"
	    "\tsetp.ne.or.u32 \t%%~cp, %%~cw3, 0, %%~cp;\n"
	    "\tmul.wide.u32 \t%%~cx1, %%~cw2, %llu;\n"
	    "\tadd.s64 \t%%~cx1, %%~cx1, %llu;\n"
	    "\tadd.s64 \t%%~tcur, %%~cx1, %%~cx3;\n",
	    tr->claim.prod_off, (unsigned long long)tr->claim.mask,
	    (unsigned long long)tr->claim.mask + 1,
	    (unsigned long long)tr->claim.data_step,
	    (unsigned long long)tr->claim.data);
}

/*
 * The span's slot 0 as span_claim stores it: the header {len, flags not yet
 * published} and span_info (block, warp of the block, SM); then the
 * leader's registers: its state owns the span from %~cx4 of %~cw1 slots,
 * one used, %~tcur at slot 1.
 */
static void claim_own(struct strbuf *sb, const char *p,
		      const struct ptx_trace *tr)
{
	put(sb, p, "\tmov.u32 \t%%~cw0, %%ctaid.z;\n"
	    "\tmov.u32 \t%%~cw3, %%nctaid.y;\n"
	    "\tmov.u32 \t%%~cw4, %%ctaid.y;\n"
	    "\tmad.lo.u32 \t%%~cw0, %%~cw0, %%~cw3, %%~cw4;\n"
	    "\tmov.u32 \t%%~cw3, %%nctaid.x;\n"
	    "\tmov.u32 \t%%~cw4, %%ctaid.x;\n"
	    "\tmad.lo.u32 \t%%~cw0, %%~cw0, %%~cw3, %%~cw4;\n"
	    "\tmov.u32 \t%%~cw2, %%tid.z;\n"
	    "\tmov.u32 \t%%~cw3, %%ntid.y;\n"
	    "\tmov.u32 \t%%~cw4, %%tid.y;\n"
	    "\tmad.lo.u32 \t%%~cw2, %%~cw2, %%~cw3, %%~cw4;\n"
	    "\tmov.u32 \t%%~cw3, %%ntid.x;\n"
	    "\tmov.u32 \t%%~cw4, %%tid.x;\n"
	    "\tmad.lo.u32 \t%%~cw2, %%~cw2, %%~cw3, %%~cw4;\n"
	    "\tshr.u32 \t%%~cw2, %%~cw2, 5;\n"
	    "\tmov.u32 \t%%~cw3, %%smid;\n"
	    "\tprmt.b32 \t%%~cw2, %%~cw2, %%~cw3, 0x5410;\n"
	    "\tmov.b64 \t%%~cx1, {%%~cw0, %%~cw2};\n"
	    "\tshl.b32 \t%%~cw0, %%~cw1, 4;\n"
	    "\tsub.u32 \t%%~cw0, %%~cw0, %u;\n"
	    "\tmov.u32 \t%%~cw2, %u;\n"
	    "\tmov.b64 \t%%~cx3, {%%~cw0, %%~cw2};\n"
	    "\tst.global.v2.u64 \t[%%~tcur], {%%~cx3, %%~cx1};\n"
	    "\tadd.s64 \t%%~tcur, %%~tcur, %u;\n"
	    "\tadd.u32 \t%%~tleft, %%~cw1, -1;\n",
	    tr->hdr_size, tr->claim.hdr_flags, SPAN_SLOT);
	put(sb, p, "\tshr.u64 \t%%~cx4, %%~cx4, 4;\n"
	    "\tand.b64 \t%%~cx4, %%~cx4, %llu;\n"
	    "\tcvt.u64.u32 \t%%~cx3, %%~cw1;\n"
	    "\tshl.b64 \t%%~cx3, %%~cx3, %u;\n"
	    "\tor.b64 \t%%~cx4, %%~cx4, %%~cx3;\n"
	    "\tor.b64 \t%%~tst, %%~cx4, %llu;\n",
	    (unsigned long long)((1ull << SPAN_START_BITS) - 1),
	    SPAN_SLOTS_SHIFT,
	    (unsigned long long)span_state(tr->claim.tag, 0, 1, 0, 1));
}

/*
 * The runtime's claim of the leader's span (egpu_dev_trace_claim), with
 * the reservation in registers @held (reserved's value before its bytes)
 * and %~cw1 (its slots), or @held NULL: none (SPAN_NOT_HELD), as
 * span_claim takes it.
 */
static void call_claim(struct strbuf *sb, const char *p,
		       const struct ptx_trace *tr, const char *held)
{
	put(sb, p, "\t{\n\t.reg .b64 \t%%~ta<2>;\n\t.reg .b32 \t%%~ta2;\n"
	    "\tmov.u64 \t%%~ta0, %llu;\n", (unsigned long long)tr->ring);
	if (held)
		put(sb, p, "\tmov.u64 \t%%~ta1, %s;\n\tmov.u32 \t%%~ta2, %%~cw1;\n",
		    held);
	else
		put(sb, p, "\tmov.u64 \t%%~ta1, %llu;\n\tmov.u32 \t%%~ta2, 0;\n",
		    (unsigned long long)SPAN_NOT_HELD);
	call_regs(sb, p, TR_CLAIM_FUNC, "%~ta0, %~tst, %~ta1, %~ta2");
	sb_adds(sb, "\t}\n");
}

/*
 * A lossless ring's inline claim that found no room hands its reservation
 * (%~cx2, reserved before it) on to the runtime's claim, which waits for
 * room for it, instead of giving it back: bytes given back would stay in
 * the checks of the reservations made since, which could then wait for
 * room never handed out (docs/events.md, "Lossless rings"). The claim's
 * registers are then the call's, as where the site does not claim inline.
 */
static void claim_held(struct strbuf *sb, const struct tr_site_code *c)
{
	call_claim(sb, c->prefix, c->tr, "%~cx2");
	put(sb, c->prefix, "\tbra \t$~town_%u;\n", c->site);
}

/*
 * The leader's claim, inline: what span_claim's first try does when the
 * span fits below the cached consumer position, starts a slot and ends
 * inside its shard. Else the leader undoes what it did and the group
 * takes the runtime's call, which claims again from the start
 * (span_claim: no room, a drop, the shard's end): without room, the bytes
 * given back to reserved (nothing was handed out), or in a lossless ring
 * handed on to the runtime's claim (claim_held); with a position that
 * makes no span, its bytes published as one record the consumer skips,
 * as span_claim skips them. %~tleft is then all ones, for the group to
 * see (and 0 again before the call).
 */
static void claim_inline(struct strbuf *sb, const struct tr_site_code *c)
{
	const char *p = c->prefix;

	put(sb, p, "\t{\n\t.reg .b32 \t%%~cw<5>;\n\t.reg .b64 \t%%~cx<6>;\n"
	    "\t.reg .pred \t%%~cp;\n");
	claim_reserve(sb, c);
	put(sb, p, "\t@%%~cp bra \t$~tgive_%u;\n", c->site);
	claim_place(sb, p, c->tr);
	put(sb, p, "\t@%%~cp bra \t$~tskip_%u;\n", c->site);
	claim_own(sb, p, c->tr);
	put(sb, p, "\tbra \t$~town_%u;\n$~tskip_%u:\n"
	    "\tadd.s64 \t%%~cx1, %%~cx5, %llu;\n"
	    "\tst.volatile.global.u64 \t[%%~tcur], %%~cx1;\n"
	    "\tbra \t$~tagain_%u;\n$~tgive_%u:\n",
	    c->site, c->site,
	    ((unsigned long long)c->tr->claim.skip_flags << 32) - c->tr->hdr_size,
	    c->site, c->site);
	if (c->tr->lossless)
		claim_held(sb, c);
	else
		put(sb, p, "\tneg.s64 \t%%~cx5, %%~cx5;\n"
		    "\tred.global.add.u64 \t[%%~cx0], %%~cx5;\n");
	put(sb, p, "$~tagain_%u:\n\tmov.u32 \t%%~tleft, 0xffffffff;\n$~town_%u:\n\t}\n",
	    c->site, c->site);
}

/*
 * The leader's claim (%~tp2): its registers with the new span's cursor at
 * slot 1, or none when dropped (counted in the runtime; the group's
 * record with it). Inline where the ring's shards are folded, else
 * through egpu_dev_trace_claim. Each other lane's state then starts
 * where that span does, as span_trace leaves it (its floor; its slots
 * kept for when it leads): (start | tag) of the leader's, slots of its
 * own.
 */
static void claim_span(struct strbuf *sb, const struct tr_site_code *c)
{
	const char *p = c->prefix;

	put(sb, p, "\t@!%%~tp2 bra \t$~trec_%u;\n"
	    "\t@!%%~tp1 bra \t$~tclaimed_%u;\n", c->site, c->site);
	if (c->tr->claim.shards)
		claim_inline(sb, c);
	else
		call_claim(sb, p, c->tr, NULL);
	put(sb, p, "$~tclaimed_%u:\n"
	    "\tshfl.sync.idx.b32 \t%%~tw7, %%~tleft, %%~tw1, 31, %%~tw0;\n",
	    c->site);
	if (c->tr->claim.shards) /* undone: the runtime's call */
		put(sb, p, "\tsetp.eq.u32 \t%%~tp4, %%~tw7, 0xffffffff;\n"
		    "\t@%%~tp4 mov.u32 \t%%~tleft, 0;\n"
		    "\t@%%~tp4 bra \t$~tslow_%u;\n", c->site);
	put(sb, p, "\tsetp.eq.u32 \t%%~tp4, %%~tw7, 0;\n"
	    "\t@%%~tp4 bra \t$~tdone_%u;\n"
	    "\tmov.b64 \t{%%~tw7, %%~tw8}, %%~tst;\n"
	    "\tshfl.sync.idx.b32 \t%%~tw7, %%~tw7, %%~tw1, 31, %%~tw0;\n"
	    "\tshfl.sync.idx.b32 \t%%~tw8, %%~tw8, %%~tw1, 31, %%~tw0;\n"
	    "\tmov.b64 \t%%~tx0, {%%~tw7, %%~tw8};\n"
	    "\tand.b64 \t%%~tx0, %%~tx0, %llu;\n"
	    "\tand.b64 \t%%~tx1, %%~tst, %llu;\n"
	    "\t@!%%~tp1 or.b64 \t%%~tst, %%~tx0, %%~tx1;\n"
	    "$~trec_%u:\n",
	    c->site, (unsigned long long)SPAN_START_TAG_MASK,
	    (unsigned long long)SPAN_SLOTS_MASK, c->site);
}

/* %~tw10 = where %~tcur stands in its slot: 8 in its second half, else 0. */
static void half_of_slot(struct strbuf *sb, const char *p)
{
	put(sb, p, "\tcvt.u32.u64 \t%%~tw10, %%~tcur;\n"
	    "\tand.b32 \t%%~tw10, %%~tw10, %u;\n", SPAN_SHORT_BYTES);
}

/*
 * The leader's 16-byte record: word 0 the site's constant and the lanes,
 * word 1 the address's 48 bits and the stride's 16 (core/span_record.h),
 * at the next slot: where a short record left %~tcur in a slot's second
 * half, that half stays zero (padding) and its slot is given up
 * (half_slot_check made sure one more is left); its span moves on one
 * slot.
 */
static void store_record(struct strbuf *sb, const struct tr_site_code *c)
{
	uint32_t w0 = (uint32_t)span_word0(SPAN_AFFINE, 0, c->s->op.kind,
					   c->s->op.size, c->number, 0);

	if (c->shorts) {
		half_of_slot(sb, c->prefix);
		put(sb, c->prefix, "\tsetp.ne.and.u32 \t%%~tp4, %%~tw10, 0, %%~tp1;\n"
		    "\t@%%~tp4 add.s32 \t%%~tleft, %%~tleft, -1;\n"
		    "\t@%%~tp4 add.s64 \t%%~tcur, %%~tcur, %u;\n",
		    SPAN_SHORT_BYTES);
	}
	put(sb, c->prefix, "\tmov.u32 \t%%~tw10, %u;\n"
	    "\tmov.b64 \t%%~tx3, {%%~tw10, %%~tw0};\n"
	    "\tprmt.b32 \t%%~tw11, %%~tw4, %%~tw5, 0x5410;\n"
	    "\tmov.b64 \t%%~tx4, {%%~tw3, %%~tw11};\n"
	    "\t@%%~tp1 st.global.v2.u64 \t[%%~tcur], {%%~tx3, %%~tx4};\n"
	    "\tadd.s64 \t%%~tcur, %%~tcur, %u;\n"
	    "\t@%%~tp1 add.s32 \t%%~tleft, %%~tleft, -1;\n"
	    "\t@%%~tp1 add.s64 \t%%~tst, %%~tst, %llu;\n",
	    w0, SPAN_SLOT, (unsigned long long)SPAN_USED_ONE);
}

/*
 * The leader's short record (8 bytes: the site's constant and lane 0's
 * address, core/span_record.h), in the half slot %~tcur is at: a slot's
 * first half starts the slot (one more used; it still has room, so as
 * many left), its second half fills it (one less left). So a span is
 * full, and published, only once no half of it is left. Every lane moves
 * its %~tcur on: no other lane owns a span here (vote_slow), and one that
 * owns none never reads it.
 */
static void store_short(struct strbuf *sb, const struct tr_site_code *c)
{
	const struct mem_op *op = &c->s->op;

	put(sb, c->prefix, "\tprmt.b32 \t%%~tw10, %%~tw3, %%~tw4, 0x5432;\n"
	    "\tmad.lo.u32 \t%%~tw11, %%~tw3, 65536, %u;\n"
	    "\tmov.b64 \t%%~tx3, {%%~tw11, %%~tw10};\n",
	    span_short_low(op->kind, op->size, c->number));
	half_of_slot(sb, c->prefix);
	put(sb, c->prefix, "\tsetp.eq.and.u32 \t%%~tp4, %%~tw10, 0, %%~tp1;\n"
	    "\tsetp.ne.and.u32 \t%%~tp2, %%~tw10, 0, %%~tp1;\n"
	    "\t@%%~tp1 st.global.u64 \t[%%~tcur], %%~tx3;\n"
	    "\tadd.s64 \t%%~tcur, %%~tcur, %u;\n"
	    "\t@%%~tp2 add.s32 \t%%~tleft, %%~tleft, -1;\n"
	    "\t@%%~tp4 add.s64 \t%%~tst, %%~tst, %llu;\n",
	    SPAN_SHORT_BYTES, (unsigned long long)SPAN_USED_ONE);
}

/*
 * %~tp0 |= the leader stands in a slot's second half with no slot after
 * it (%~tleft 1 there: only that half is left), where a 16-byte record
 * does not fit: the runtime's call publishes the span and claims another.
 */
static void half_slot_check(struct strbuf *sb, const char *p)
{
	half_of_slot(sb, p);
	put(sb, p, "\tsetp.ne.u32 \t%%~tp4, %%~tw10, 0;\n"
	    "\tsetp.eq.and.u32 \t%%~tp4, %%~tleft, 1, %%~tp4;\n"
	    "\tsetp.eq.and.u32 \t%%~tp4, %%~tw2, %%~tw1, %%~tp4;\n"
	    "\tor.pred \t%%~tp0, %%~tp0, %%~tp4;\n");
}

/*
 * The span the lane owns published as span_publish does: a fence, then,
 * where spans are counted (tr->done), its bytes added to the
 * published-bytes word of the shard that holds it, found from its address
 * as span_shard_at does (so from where the span is, whatever SM runs the
 * lane now; relaxed: the fence already orders the span's records before
 * it, and the header may land after it, docs/events.md "Copied once"),
 * then the header {len, flags} at the span's start, %~tcur less the slots
 * used (the state's: %~tcur is always that far into its span, but half a
 * slot less after a short record in a slot's first half), len from the
 * state's slots.
 */
static void publish_span(struct strbuf *sb, const char *p,
			 const struct ptx_trace *tr)
{
	put(sb, p, "\t{\n\t.reg .b32 \t%%~pw<3>;\n\t.reg .b64 \t%%~px<4>;\n"
	    "\tfence.acq_rel.%s;\n"
	    "\tmov.b64 \t{%%~pw0, %%~pw1}, %%~tst;\n"
	    "\tbfe.u32 \t%%~pw0, %%~pw1, %u, %u;\n"
	    "\tbfe.u32 \t%%~pw2, %%~pw1, %u, %u;\n"
	    "\tmul.wide.u32 \t%%~px0, %%~pw0, %u;\n"
	    "\tadd.s64 \t%%~px1, %%~tcur, %u;\n"
	    "\tand.b64 \t%%~px1, %%~px1, %d;\n"
	    "\tsub.s64 \t%%~px0, %%~px1, %%~px0;\n"
	    "\tshl.b32 \t%%~pw2, %%~pw2, 4;\n",
	    tr->sys_fence ? "sys" : "gpu",
	    SPAN_USED_SHIFT - 32, SPAN_SLOTS_BITS,
	    SPAN_SLOTS_SHIFT - 32, SPAN_SLOTS_BITS, SPAN_SLOT,
	    SPAN_SHORT_BYTES, -(int)SPAN_SLOT);
	if (tr->done.word) /* the shard from the span's own address */
		put(sb, p, "\tcvt.u32.u64 \t%%~pw0, %%~px0;\n"
		    "\tsub.u32 \t%%~pw0, %%~pw0, %u;\n"
		    "\tmul.wide.u32 \t%%~px2, %%~pw0, %u;\n"
		    "\tshr.u64 \t%%~px2, %%~px2, %u;\n"
		    "\tcvt.u32.u64 \t%%~pw0, %%~px2;\n"
		    "\tcvt.u64.u32 \t%%~px3, %%~pw2;\n"
		    "\tmul.wide.u32 \t%%~px2, %%~pw0, %llu;\n"
		    "\tadd.s64 \t%%~px2, %%~px2, %llu;\n"
		    "\tred.relaxed.gpu.global.add.u64 \t[%%~px2], %%~px3;\n",
		    (uint32_t)tr->done.data, tr->done.m, tr->done.k,
		    (unsigned long long)tr->done.step,
		    (unsigned long long)tr->done.word);
	put(sb, p, "\tsub.u32 \t%%~pw2, %%~pw2, %u;\n"
	    "\tmov.u32 \t%%~pw1, %u;\n"
	    "\tmov.b64 \t%%~px1, {%%~pw2, %%~pw1};\n"
	    "\tst.volatile.global.u64 \t[%%~px0], %%~px1;\n\t}\n",
	    tr->hdr_size, tr->span_flags);
}

/* The leader's span full (by the record just stored): published, and
 * no longer owned. */
static void publish_full(struct strbuf *sb, const struct tr_site_code *c)
{
	put(sb, c->prefix, "\tsetp.eq.and.u32 \t%%~tp2, %%~tleft, 0, %%~tp1;\n"
	    "\t@!%%~tp2 bra \t$~tdone_%u;\n", c->site);
	publish_span(sb, c->prefix, c->tr);
	put(sb, c->prefix, "\tand.b64 \t%%~tst, %%~tst, %llu;\n",
	    (unsigned long long)~SPAN_OWN);
}

/*
 * The general inline record: the affine test with the stride the lanes
 * give, then the 16-byte record; in a lossless ring a group of fewer than
 * 32 lanes takes the call, which publishes its record's span at once
 * (span_may_stay_open). @claim: a leader that owns no span claims one
 * inline, else it takes the call too.
 */
static void site_general(struct strbuf *sb, const struct tr_site_code *c,
			 bool claim)
{
	const char *p = c->prefix;

	vote_stride(sb, p);
	if (c->tr->lossless)
		put(sb, p, "\tsetp.ne.or.u32 \t%%~tp0, %%~tw0, -1, %%~tp0;\n");
	if (c->shorts)
		half_slot_check(sb, p);
	vote_slow(sb, p);
	if (!claim)
		put(sb, p, "\tor.pred \t%%~tp0, %%~tp0, %%~tp2;\n");
	put(sb, p, "\t@%%~tp0 bra \t$~tslow_%u;\n", c->site);
	if (claim)
		claim_span(sb, c);
	store_record(sb, c);
	publish_full(sb, c);
}

/*
 * A site whose record may be short: first the test with the stride known
 * (vote_unit) and the short record; a group it fails takes the general
 * test, and stores a 16-byte record only into a span its leader owns.
 */
static void site_short(struct strbuf *sb, const struct tr_site_code *c)
{
	const char *p = c->prefix;

	vote_unit(sb, p, c->s->op.size);
	vote_slow(sb, p);
	put(sb, p, "\t@%%~tp0 bra.uni \t$~tgen_%u;\n", c->site);
	claim_span(sb, c);
	store_short(sb, c);
	publish_full(sb, c);
	put(sb, p, "\tbra.uni \t$~tdone_%u;\n$~tgen_%u:\n", c->site, c->site);
	site_general(sb, c, false);
}

void tr_emit_site(struct strbuf *sb, const struct tr_site_code *c)
{
	const char *p = c->prefix;

	sb_adds(sb, "\t// egpu trace\n");
	if (!inline_ok(c)) {
		call_site(sb, c);
		return;
	}
	put(sb, p, "\t{\n\t.reg .b32 \t%%~tw<12>;\n\t.reg .b64 \t%%~tx<5>;\n"
	    "\t.reg .pred \t%%~tp<5>;\n");
	vote_leader(sb, p);
	if (tr_may_be_short(c))
		site_short(sb, c);
	else
		site_general(sb, c, true);
	put(sb, p, "\tbra \t$~tdone_%u;\n$~tslow_%u:\n", c->site, c->site);
	call_site(sb, c);
	put(sb, p, "$~tdone_%u:\n\t}\n", c->site);
}

static void emit_entry(struct strbuf *sb, const char *p)
{
	put(sb, p, "// begin egpu trace\n"
	    "\t.reg .b64 \t%%~tst, %%~tcur;\n\t.reg .b32 \t%%~tleft;\n"
	    "\tmov.b64 \t%%~tst, 0;\n\tmov.b64 \t%%~tcur, 0;\n"
	    "\tmov.u32 \t%%~tleft, 0;\n\t// end egpu trace\n\t");
}

/*
 * After a publish before a call or a wait, the lane lets go of its span
 * as span_let_go (maps/span_layout.h) says: its state keeps the span as
 * the lane's floor, owned no more, its slots the slots it used (the next
 * span's size).
 */
static void let_go(struct strbuf *sb, const char *p)
{
	put(sb, p, "\t{\n\t.reg .b32 \t%%~lw<3>;\n"
	    "\tmov.b64 \t{%%~lw0, %%~lw1}, %%~tst;\n"
	    "\tbfe.u32 \t%%~lw2, %%~lw1, %u, %u;\n"
	    "\tbfi.b32 \t%%~lw1, %%~lw2, %%~lw1, %u, %u;\n"
	    "\tand.b32 \t%%~lw1, %%~lw1, %u;\n"
	    "\tmov.b64 \t%%~tst, {%%~lw0, %%~lw1};\n"
	    "\tmov.u32 \t%%~tleft, 0;\n\t}\n",
	    SPAN_USED_SHIFT - 32, SPAN_SLOTS_BITS, SPAN_SLOTS_SHIFT - 32,
	    SPAN_SLOTS_BITS, (unsigned)(~SPAN_OWN >> 32));
}

/*
 * The lane's span published, if it owns one (%~tleft > 0: a lane never
 * owns a full span); let go of after, but at an exit (@kind 'x'; 'c'
 * before a call, 'w' before a wait), where every lane's used slots then
 * become 0 (span_let_go: a span that a record filled since the last wait
 * does not double the next). Its label: $~tf@kind_@item_@stmt, where the
 * flush goes.
 */
static void emit_flush(struct strbuf *sb, const char *p,
		       const struct ptx_trace *tr, char kind, uint32_t item,
		       uint32_t stmt)
{
	put(sb, p, "\t{\n\t.reg .pred \t%%~tq;\n"
	    "\tsetp.eq.u32 \t%%~tq, %%~tleft, 0;\n"
	    "\t@%%~tq bra \t$~tf%c_%u_%u;\n", kind, item, stmt);
	publish_span(sb, p, tr);
	if (kind != 'x')
		let_go(sb, p);
	put(sb, p, "$~tf%c_%u_%u:\n", kind, item, stmt);
	if (kind != 'x')
		put(sb, p, "\tand.b64 \t%%~tst, %%~tst, %llu;\n",
		    (unsigned long long)~SPAN_USED_MASK);
	sb_adds(sb, "\t}\n");
}

/*
 * Before statement @st, an exit (@w TR_EXIT) or in a lossless ring one
 * that may wait or split the warp (trace_wait.c): the lane's flush, let go
 * of after but at an exit; skipped (to $~t@skip_@item_@stmt) where the
 * exit's guard is false, or where a guarded bra's predicate is the same
 * in every active lane (a vote: then the warp does not split).
 */
static int flush_before(const struct ptx_module *m, const struct ptx_stmt *st,
			enum tr_wait w, const char *p, const struct ptx_trace *tr,
			uint32_t item, uint32_t stmt, struct edits *e)
{
	struct strbuf *sb = edit_at(e, m->toks[st->first].off, 0);
	const char *what = w == TR_EXIT ? "exit" : "wait";
	char skip = w == TR_MAY_SPLIT ? 'u' :
		    w == TR_EXIT && st->kind == ST_INSN && st->pred >= 0 ? 'x' : 0;
	int pl = skip ? (int)m->toks[st->pred].len : 0;
	const char *pred = skip ? tok_text(m, (uint32_t)st->pred) : NULL;

	if (!sb)
		return err_set(EGPU_ENOMEM, "PTX: out of memory for edits");
	sb_printf(sb, "// begin egpu trace %s\n\t{\n", what);
	if (skip == 'x')
		put(sb, p, "\t@%s%.*s bra \t$~tx_%u_%u;\n",
		    st->pred_neg ? "" : "!", pl, pred, item, stmt);
	if (skip == 'u')
		put(sb, p, "\t.reg .pred \t%%~tu;\n\t.reg .b32 \t%%~tm;\n"
		    "\tactivemask.b32 \t%%~tm;\n"
		    "\tvote.sync.uni.pred \t%%~tu, %.*s, %%~tm;\n"
		    "\t@%%~tu bra \t$~tu_%u_%u;\n", pl, pred, item, stmt);
	emit_flush(sb, p, tr, w == TR_EXIT ? 'x' : 'w', item, stmt);
	if (skip)
		put(sb, p, "$~t%c_%u_%u:\n", skip, item, stmt);
	sb_printf(sb, "\t}\n\t// end egpu trace %s\n\t", what);
	return 0;
}

/*
 * Where a flush before the call at statement @j goes: before the call
 * sequence's { when only its declarations and .param stores come between
 * (nothing there may trace), else before the call itself.
 */
static const struct ptx_stmt *call_start(const struct ptx_module *m,
					 const struct ptx_func *f, uint32_t j)
{
	for (uint32_t i = j; i-- > 0;) {
		const struct ptx_stmt *st = &f->stmts[i];

		if (st->kind == ST_OPEN)
			return st;
		if (st->kind == ST_DECL) /* .param, nvcc's temp_param_reg */
			continue;
		if (st->kind == ST_INSN && st->pred < 0 &&
		    tok_is(m, st->op, "st") && tok_is(m, st->op + 1, ".param"))
			continue;
		break;
	}
	return &f->stmts[j];
}

static int flush_before_call(const struct ptx_module *m, uint32_t item,
			     const struct ptx_func *f, uint32_t j,
			     const char *p, const struct ptx_trace *tr,
			     struct edits *e)
{
	struct strbuf *sb = edit_at(e, m->toks[call_start(m, f, j)->first].off, 0);

	if (!sb)
		return err_set(EGPU_ENOMEM, "PTX: out of memory for edits");
	sb_adds(sb, "// begin egpu trace call\n");
	emit_flush(sb, p, tr, 'c', item, j);
	sb_adds(sb, "\t// end egpu trace call\n\t");
	return 0;
}

int tr_emit_kernel(const struct ptx_module *m, uint32_t item,
		   const char *prefix, const struct ptx_trace *tr, bool calls,
		   struct edits *e)
{
	const struct ptx_func *f = m->items[item].func;
	struct strbuf *sb = edit_at(e, m->toks[func_entry_stmt(m, f)->first].off, 0);
	int err = 0;

	if (!sb)
		return err_set(EGPU_ENOMEM, "PTX: out of memory for edits");
	emit_entry(sb, prefix);
	err = tr_cap_registers(m, item, tr, e);
	for (uint32_t i = 0; i < f->nstmts && !err; i++) {
		const struct ptx_stmt *st = &f->stmts[i];

		enum tr_wait w = tr->lossless ? tr_wait_of(m, st) : TR_NO_WAIT;

		if (stmt_is_exit(m, st))
			err = flush_before(m, st, TR_EXIT, prefix, tr, item, i, e);
		else if ((calls || tr->lossless) && st->kind == ST_INSN &&
			 tok_is(m, st->op, "call"))
			err = flush_before_call(m, item, f, i, prefix, tr, e);
		else if (w != TR_NO_WAIT)
			err = flush_before(m, st, w, prefix, tr, item, i, e);
	}
	if (!err && func_falls_off_end(m, f))
		err = flush_before(m, &f->stmts[f->nstmts - 1], TR_EXIT,
				   prefix, tr, item, f->nstmts - 1, e);
	return err;
}
