/* SPDX-License-Identifier: MIT */
/*
 * Warp-level (SIMT) lowering for the GPU: the active mask, ballots and
 * matches over the lanes now active, warp-aggregated atomic adds, and
 * a timed spin. All inline: no call, no stack.
 */
#include <string.h>

#include "ptx_lower.h"

/* match.sync, which groups lanes by value, needs sm_70. */
#define SM_MATCH 70

/*
 * LLVM 16 has no activemask intrinsic; the asm has side effects, so it
 * stays where it is, next to the vote or match that uses it.
 */
static LLVMValueRef active_mask(struct lift *l)
{
	return ptx_inline_asm(l, l->i32, "activemask.b32 $0;", "=r");
}

/* Whether this LLVM knows function attribute @name (value 0), and set it. */
static bool call_attr(struct lift *l, LLVMValueRef call, const char *name)
{
	unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));

	if (kind)
		LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
					 LLVMCreateEnumAttribute(l->ctx, kind, 0));
	return kind;
}

/*
 * Lane @src's @v (i64) in every lane of @mask: two 32-bit shuffles. Inline
 * PTX marked convergent and free of side effects rather than the NVVM
 * shuffle intrinsics, which LLVM keeps even when nobody reads their result:
 * so a warp_add whose result is unused costs no shuffle.
 */
static LLVMValueRef shfl_i64(struct lift *l, LLVMValueRef v, LLVMValueRef src,
			     LLVMValueRef mask)
{
	static const char text[] =
		"{\n\t.reg .b32 %egpu_lo, %egpu_hi;\n\t"
		"mov.b64 {%egpu_lo, %egpu_hi}, $1;\n\t"
		"shfl.sync.idx.b32 %egpu_lo, %egpu_lo, $2, 31, $3;\n\t"
		"shfl.sync.idx.b32 %egpu_hi, %egpu_hi, $2, 31, $3;\n\t"
		"mov.b64 $0, {%egpu_lo, %egpu_hi};\n\t}";
	static const char constraints[] = "=l,l,r,r";
	LLVMTypeRef type = LLVMFunctionType(l->i64,
				(LLVMTypeRef[]){ l->i64, l->i32, l->i32 }, 3, 0);
	LLVMValueRef fn = LLVMGetInlineAsm(type, (char *)text, sizeof(text) - 1,
					   (char *)constraints,
					   sizeof(constraints) - 1, 0, 0,
					   LLVMInlineAsmDialectATT, 0);
	LLVMValueRef call = LLVMBuildCall2(l->b, type, fn,
					   (LLVMValueRef[]){ v, src, mask }, 3, "");
	call_attr(l, call, "convergent");
	call_attr(l, call, "nounwind");
	call_attr(l, call, "willreturn");
	/* memory(none) from LLVM 16 on, readnone before */
	if (!call_attr(l, call, "memory"))
		call_attr(l, call, "readnone");
	return call;
}

/* One warp add: who adds, and what each lane's atomic fetched. */
struct warp_add {
	LLVMValueRef group;  /* lanes adding at the same address */
	LLVMValueRef same;   /* i1: the group's lanes add the same value */
	LLVMValueRef lane;   /* %laneid */
	LLVMValueRef leader; /* the group's lowest lane */
	LLVMValueRef old;    /* what this lane's atomic fetched, if it ran */
};

/*
 * The leader's fetched value plus the adds of the group's lanes below this
 * one; a group that did not combine fetched its own values.
 */
static LLVMValueRef fetched(struct lift *l, const struct warp_add *w,
			    LLVMValueRef val)
{
	LLVMBuilderRef b = l->b;
	LLVMTypeRef t = LLVMTypeOf(val);
	LLVMValueRef below, first, mine;

	below = LLVMBuildShl(b, lift_const(l->i32, 1), w->lane, "");
	below = LLVMBuildSub(b, below, lift_const(l->i32, 1), "");
	below = LLVMBuildAnd(b, w->group, below, "");
	below = lift_call(l, "llvm.ctpop.i32", l->i32, &below, 1);
	first = shfl_i64(l, LLVMBuildZExt(b, w->old, l->i64, ""), w->leader,
			 w->group);
	first = LLVMBuildTrunc(b, first, t, "");
	mine = LLVMBuildMul(b, val, LLVMBuildZExt(b, below, t, ""), "");
	mine = LLVMBuildAdd(b, first, mine, "");
	return LLVMBuildSelect(b, w->same, mine, w->old, "");
}

/* w->group and w->same by match.any / match.all. */
static void match_lanes(struct lift *l, struct warp_add *w, LLVMValueRef mask,
			LLVMValueRef addr, LLVMValueRef v64)
{
	LLVMTypeRef pair = LLVMStructTypeInContext(l->ctx,
				(LLVMTypeRef[]){ l->i32, l->i1 }, 2, 0);

	w->group = lift_call(l, "llvm.nvvm.match.any.sync.i64", l->i32,
			     (LLVMValueRef[]){ mask, addr }, 2);
	w->same = LLVMBuildExtractValue(l->b, lift_call(l, "llvm.nvvm.match.all.sync.i64p",
							pair, (LLVMValueRef[]){ w->group, v64 }, 2),
					1, "");
}

/*
 * Sets w->group and w->same when all active lanes are expected to add the
 * same value at the same address (a counter, a warp-uniform slot):
 * shuffles and one vote confirm it, and the group is the active mask. Only
 * otherwise the lanes are matched, which costs many times more on an H100
 * (a counting probe at every access of a vector add: 7.35x against 1.88x).
 */
static void group_uniform(struct lift *l, struct warp_add *w, LLVMValueRef mask,
			  LLVMValueRef addr, LLVMValueRef v64)
{
	LLVMBasicBlockRef from, split = lift_block(l, ""), join = lift_block(l, "");
	LLVMBuilderRef b = l->b;
	LLVMValueRef first, uniform, all;
	struct warp_add m;

	first = lift_call(l, "llvm.cttz.i32", l->i32,
			  (LLVMValueRef[]){ mask, lift_const(l->i1, 0) }, 2);
	uniform = LLVMBuildICmp(b, LLVMIntEQ, addr,
				shfl_i64(l, addr, first, mask), "");
	if (!LLVMIsConstant(v64))
		uniform = LLVMBuildAnd(b, uniform,
				       LLVMBuildICmp(b, LLVMIntEQ, v64,
						     shfl_i64(l, v64, first, mask), ""), "");
	all = lift_call(l, "llvm.nvvm.vote.all.sync", l->i1,
			(LLVMValueRef[]){ mask, uniform }, 2);
	from = LLVMGetInsertBlock(b);
	LLVMBuildCondBr(b, all, join, split);
	LLVMPositionBuilderAtEnd(b, split);
	match_lanes(l, &m, mask, addr, v64);
	LLVMBuildBr(b, join);
	LLVMPositionBuilderAtEnd(b, join);
	w->group = LLVMBuildPhi(b, l->i32, "");
	LLVMAddIncoming(w->group, (LLVMValueRef[]){ mask, m.group },
			(LLVMBasicBlockRef[]){ from, split }, 2);
	w->same = LLVMBuildPhi(b, l->i1, "");
	LLVMAddIncoming(w->same, (LLVMValueRef[]){ lift_const(l->i1, 1), m.same },
			(LLVMBasicBlockRef[]){ from, split }, 2);
}

/*
 * Counters and histograms make many lanes of a warp add to one address,
 * and same-address atomics serialise. Lanes are grouped by address
 * (match.any); a group whose lanes add the same value (match.all) lets its
 * lowest lane add value * group size alone: one atomic per distinct address
 * and warp instead of one per lane. Other groups add lane by lane.
 */
static LLVMValueRef lane_add(struct lift *l, LLVMValueRef addr,
			     LLVMValueRef val)
{
	LLVMValueRef rmw = LLVMBuildAtomicRMW(l->b, LLVMAtomicRMWBinOpAdd, addr,
					      val, LLVMAtomicOrderingMonotonic,
					      0);

	LLVMSetAlignment(rmw, LLVMGetIntTypeWidth(LLVMTypeOf(val)) / 8);
	return rmw;
}

LLVMValueRef ptx_warp_add(struct lift *l, LLVMValueRef addr, LLVMValueRef val,
			  unsigned flags)
{
	LLVMTypeRef t = LLVMTypeOf(val);
	LLVMBasicBlockRef from, add, join;
	LLVMValueRef mask, count, amount, go, v64, rmw;
	LLVMBuilderRef b = l->b;
	struct warp_add w;

	if (l->sm < SM_MATCH) {
		/* No match.sync to group lanes: each lane adds alone. */
		rmw = lane_add(l, addr, val);
		return flags & WARP_ADD_FETCH ? rmw : NULL;
	}
	add = lift_block(l, "");
	join = lift_block(l, "");
	mask = active_mask(l);
	v64 = t == l->i64 ? val : LLVMBuildZExt(b, val, l->i64, "");
	if (flags & WARP_ADD_UNIFORM)
		group_uniform(l, &w, mask, LLVMBuildPtrToInt(b, addr, l->i64, ""), v64);
	else
		match_lanes(l, &w, mask, LLVMBuildPtrToInt(b, addr, l->i64, ""), v64);
	w.lane = lift_call(l, "llvm.nvvm.read.ptx.sreg.laneid", l->i32, NULL, 0);
	w.leader = lift_call(l, "llvm.cttz.i32", l->i32,
			     (LLVMValueRef[]){ w.group, lift_const(l->i1, 0) }, 2);
	count = lift_call(l, "llvm.ctpop.i32", l->i32, &w.group, 1);
	count = t == l->i64 ? LLVMBuildZExt(b, count, t, "") : count;
	amount = LLVMBuildSelect(b, w.same, LLVMBuildMul(b, val, count, ""), val, "");
	go = LLVMBuildOr(b, LLVMBuildNot(b, w.same, ""),
			 LLVMBuildICmp(b, LLVMIntEQ, w.lane, w.leader, ""), "");
	from = LLVMGetInsertBlock(b);
	LLVMBuildCondBr(b, go, add, join);
	LLVMPositionBuilderAtEnd(b, add);
	rmw = lane_add(l, addr, amount);
	LLVMBuildBr(b, join);
	LLVMPositionBuilderAtEnd(b, join);
	if (!(flags & WARP_ADD_FETCH))
		return NULL;
	w.old = LLVMBuildPhi(b, t, "");
	LLVMAddIncoming(w.old, (LLVMValueRef[]){ rmw, lift_const(t, 0) },
			(LLVMBasicBlockRef[]){ add, from }, 2);
	return fetched(l, &w, val);
}

/*
 * Spin until %globaltimer has moved @ns nanoseconds (at most
 * HELPER_NANOSLEEP_MAX_NS). PTX's nanosleep would yield the warp, but the
 * H100 wakes it on a coarse schedule (every delay from 100 ns to 3.2 us
 * cost the same there), so a latency model needs the timer.
 */
static void spin_ns(struct lift *l, LLVMValueRef ns)
{
	static const char text[] = "mov.u64 $0, %globaltimer;";
	LLVMBasicBlockRef loop = lift_block(l, ""), done = lift_block(l, "");
	LLVMValueRef max = lift_const(l->i64, HELPER_NANOSLEEP_MAX_NS);
	LLVMValueRef t0, waited;

	ns = LLVMBuildSelect(l->b, LLVMBuildICmp(l->b, LLVMIntUGT, ns, max, ""),
			     max, ns, "");
	t0 = ptx_inline_asm(l, l->i64, text, "=l");
	LLVMBuildBr(l->b, loop);
	LLVMPositionBuilderAtEnd(l->b, loop);
	waited = LLVMBuildSub(l->b, ptx_inline_asm(l, l->i64, text, "=l"), t0, "");
	LLVMBuildCondBr(l->b, LLVMBuildICmp(l->b, LLVMIntULT, waited, ns, ""),
			loop, done);
	LLVMPositionBuilderAtEnd(l->b, done);
}

/* The lanes now active for which @pred (i64) is not 0. */
static LLVMValueRef ballot(struct lift *l, LLVMValueRef pred)
{
	LLVMValueRef set = LLVMBuildICmp(l->b, LLVMIntNE, pred,
					 lift_const(l->i64, 0), "");

	return lift_call(l, "llvm.nvvm.vote.ballot.sync", l->i32,
			 (LLVMValueRef[]){ active_mask(l), set }, 2);
}

/* The lanes now active that hold the same @v (i64) as this one. */
static LLVMValueRef match(struct lift *l, LLVMValueRef v)
{
	return lift_call(l, "llvm.nvvm.match.any.sync.i64", l->i32,
			 (LLVMValueRef[]){ active_mask(l), v }, 2);
}

/* Lane @src's (mod 32) @v, among the lanes now active. */
static LLVMValueRef shfl(struct lift *l, LLVMValueRef v, LLVMValueRef src)
{
	src = LLVMBuildTrunc(l->b, src, l->i32, "");
	src = LLVMBuildAnd(l->b, src, lift_const(l->i32, 31), "");
	return shfl_i64(l, v, src, active_mask(l));
}

/*
 * The verifier lets only map values through (global memory); the
 * address's origin is hidden all the same, so that no stack address
 * reaches a local-space atomic, which NVPTX cannot emit.
 */
static LLVMValueRef warp_add_helper(struct lift *l, LLVMValueRef *args)
{
	LLVMValueRef addr = LLVMBuildIntToPtr(l->b, args[0], l->ptr, "");

	addr = ptx_global_addr(l, ptx_hide_origin(l, addr));
	return ptx_warp_add(l, addr, args[1],
			    WARP_ADD_FETCH | WARP_ADD_UNIFORM);
}

int ptx_warp_unsupported(const struct lift *l, const struct helper_info *h)
{
	if (h->id != HELPER_WARP_MATCH || l->sm >= SM_MATCH)
		return 0;
	return err_set(EGPU_ENOTSUP, "%s: insn %zu: helper %s needs sm_%d or later (match.sync); the target is sm_%u",
		       l->in->name, l->pc, h->name, SM_MATCH, l->sm);
}

bool ptx_warp_helper(struct lift *l, int32_t id, LLVMValueRef *args,
		     LLVMValueRef *r0)
{
	LLVMValueRef mask;

	switch (id) {
	case HELPER_ACTIVE_MASK:
		mask = active_mask(l);
		break;
	case HELPER_WARP_BALLOT:
		mask = ballot(l, args[0]);
		break;
	case HELPER_WARP_MATCH:
		mask = match(l, args[0]);
		break;
	case HELPER_WARP_ADD:
		*r0 = warp_add_helper(l, args);
		return true;
	case HELPER_WARP_SHFL:
		*r0 = shfl(l, args[0], args[1]);
		return true;
	case HELPER_NANOSLEEP:
		spin_ns(l, args[0]);
		*r0 = lift_const(l->i64, 0);
		return true;
	default:
		return false;
	}
	*r0 = LLVMBuildZExt(l->b, mask, l->i64, "");
	return true;
}
