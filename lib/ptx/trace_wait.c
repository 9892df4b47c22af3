/* SPDX-License-Identifier: MIT */
/*
 * The splicer's trace mode into a lossless ring (docs/events.md, "Lossless
 * rings"): where a lane publishes the span it owns besides its exits. A
 * lane that waits for other threads while its span is open would hold back
 * the consumer, and so the threads it waits for if they wait for room in
 * the ring. So a kernel's lane lets go of its span before
 * - an instruction that waits for other warps: a CTA or cluster barrier
 *   that is not an arrive alone (bar.sync, bar.red, barrier.sync,
 *   barrier.cta.red, barrier.cluster.wait...), an mbarrier's test_wait or
 *   try_wait (the loop around them is the wait), griddepcontrol.wait,
 *   setmaxnreg (a warpgroup's warps meet there, an increase waits for
 *   registers the others give back);
 * - a call (the callee may wait, or split the warp);
 * - an indirect branch (brx.idx), and a guarded bra that is not .uni when
 *   its predicate differs among the active lanes (a vote there): after a
 *   split, one side may wait for the other to reconverge where the PTX
 *   says nothing (ptxas's convergence barriers).
 * Warp collectives (shfl.sync, vote.sync, bar.warp.sync...) need none: a
 * lane owns an open span only while its warp is whole since the span's
 * claim (only a group of all 32 lanes keeps one open, and a split lets go
 * of it first), so the lanes a collective waits for are not in a claim.
 */
#include "ptx/memplan.h"

enum tr_wait tr_wait_of(const struct ptx_module *m, const struct ptx_stmt *st)
{
	if (st->kind != ST_INSN)
		return TR_NO_WAIT;
	if (tok_is(m, st->op, "bar") || tok_is(m, st->op, "barrier"))
		return stmt_has_modifier(m, st, ".arrive") ||
		       stmt_has_modifier(m, st, ".warp") ? TR_NO_WAIT : TR_WAITS;
	if (tok_is(m, st->op, "mbarrier"))
		return stmt_has_modifier(m, st, ".try_wait") ||
		       stmt_has_modifier(m, st, ".test_wait") ? TR_WAITS : TR_NO_WAIT;
	if (tok_is(m, st->op, "griddepcontrol"))
		return stmt_has_modifier(m, st, ".wait") ? TR_WAITS : TR_NO_WAIT;
	if (tok_is(m, st->op, "brx") || tok_is(m, st->op, "setmaxnreg"))
		return TR_WAITS;
	if (tok_is(m, st->op, "bra") && st->pred >= 0 &&
	    !stmt_has_modifier(m, st, ".uni"))
		return TR_MAY_SPLIT;
	return TR_NO_WAIT;
}
