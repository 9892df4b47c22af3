/* SPDX-License-Identifier: MIT */
/*
 * Warp-level (SIMT) lowering for the GPU: the active mask, ballots and
 * matches over the lanes now active, the warp primitives of aggregated
 * atomics (warp_agg.c), and a timed spin. All inline: no call, no stack.
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

/* @call of inline asm: no side effects, so LLVM drops it when unused. */
static LLVMValueRef pure_asm(struct lift *l, LLVMValueRef call)
{
	call_attr(l, call, "nounwind");
	call_attr(l, call, "willreturn");
	/* memory(none) from LLVM 16 on, readnone before */
	if (!call_attr(l, call, "memory"))
		call_attr(l, call, "readnone");
	return call;
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
	return pure_asm(l, call);
}

/* The GPU's warp primitives for warp_agg.c. */
static LLVMValueRef prim_lane(struct lift *l)
{
	return lift_call(l, "llvm.nvvm.read.ptx.sreg.laneid", l->i32, NULL, 0);
}

static LLVMValueRef prim_match(struct lift *l, LLVMValueRef mask, LLVMValueRef v)
{
	return lift_call(l, "llvm.nvvm.match.any.sync.i64", l->i32,
			 (LLVMValueRef[]){ mask, v }, 2);
}

static LLVMValueRef prim_vote_all(struct lift *l, LLVMValueRef mask,
				  LLVMValueRef pred)
{
	return lift_call(l, "llvm.nvvm.vote.all.sync", l->i1,
			 (LLVMValueRef[]){ mask, pred }, 2);
}

static LLVMValueRef prim_redux(struct lift *l, LLVMAtomicRMWBinOp op,
			       LLVMValueRef v, LLVMValueRef mask)
{
	const char *name = op == LLVMAtomicRMWBinOpAdd ? "llvm.nvvm.redux.sync.add" :
			   op == LLVMAtomicRMWBinOpOr ? "llvm.nvvm.redux.sync.or" :
			   op == LLVMAtomicRMWBinOpAnd ? "llvm.nvvm.redux.sync.and" :
			   "llvm.nvvm.redux.sync.xor";

	return lift_call(l, name, l->i32, (LLVMValueRef[]){ v, mask }, 2);
}

/* fns has no NVVM intrinsic; pure (pure_asm), so LLVM may drop it. */
static LLVMValueRef prim_fns(struct lift *l, LLVMValueRef mask,
			     LLVMValueRef base, LLVMValueRef off)
{
	static const char text[] = "fns.b32 $0, $1, $2, $3;";
	static const char constraints[] = "=r,r,r,r";
	LLVMTypeRef type = LLVMFunctionType(l->i32,
				(LLVMTypeRef[]){ l->i32, l->i32, l->i32 }, 3, 0);
	LLVMValueRef fn = LLVMGetInlineAsm(type, (char *)text, sizeof(text) - 1,
					   (char *)constraints,
					   sizeof(constraints) - 1, 0, 0,
					   LLVMInlineAsmDialectATT, 0);

	return pure_asm(l, LLVMBuildCall2(l->b, type, fn,
					  (LLVMValueRef[]){ mask, base, off }, 3, ""));
}

static void prim_sync(struct lift *l, LLVMValueRef mask)
{
	lift_call(l, "llvm.nvvm.bar.warp.sync", l->void_t, &mask, 1);
}

/* redux.sync needs sm_80. */
#define SM_REDUX 80

LLVMValueRef ptx_warp_rmw(struct lift *l, LLVMAtomicRMWBinOp op,
			  LLVMValueRef addr, LLVMValueRef val, unsigned flags)
{
	struct warp_prims p = {
		.active_mask = active_mask, .lane_id = prim_lane,
		.match_any = prim_match, .vote_all = prim_vote_all,
		.shfl = shfl_i64, .fns = prim_fns, .sync = prim_sync,
		.redux = l->sm >= SM_REDUX ? prim_redux : NULL,
	};
	LLVMValueRef rmw;

	if (l->sm >= SM_MATCH)
		return warp_rmw(l, &p, op, addr, val, flags);
	/* No match.sync to group lanes: each lane alone. */
	rmw = LLVMBuildAtomicRMW(l->b, op, addr, val,
				 flags & WARP_RMW_SEQ_CST ?
				 LLVMAtomicOrderingSequentiallyConsistent :
				 LLVMAtomicOrderingMonotonic, 0);
	LLVMSetAlignment(rmw, LLVMGetIntTypeWidth(LLVMTypeOf(val)) / 8);
	return flags & WARP_RMW_FETCH ? rmw : NULL;
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
static LLVMValueRef shfl_helper(struct lift *l, LLVMValueRef v, LLVMValueRef src)
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
	return ptx_warp_rmw(l, LLVMAtomicRMWBinOpAdd, addr, args[1],
			    WARP_RMW_FETCH);
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
		*r0 = shfl_helper(l, args[0], args[1]);
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
