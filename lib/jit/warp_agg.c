/* SPDX-License-Identifier: MIT */
/*
 * Warp-aggregated atomics. Same-address atomics serialise in the memory
 * system, and probes make every lane of a warp add to one counter. The
 * active lanes are grouped by address (a shuffle and a vote first test
 * whether they all name one address, the common case, and skip the costly
 * match.any); each group combines what its lanes add, or, and or xor
 * (one redux.sync per 32 bits from sm_80 on, else a scan by shuffles),
 * and its highest lane alone does the atomic with the combination.
 *
 * Fetching forms return what each lane would have fetched had the group's
 * lanes done their atomics one after another in ascending lane order,
 * right where the highest lane's atomic is: that lane's fetched value
 * combined with the exclusive prefix of the lanes below (a sum for add;
 * an or, and or xor of their operands for the others).
 */
#include "warp_agg.h"

static LLVMValueRef binop(struct lift *l, LLVMAtomicRMWBinOp op,
			  LLVMValueRef x, LLVMValueRef y)
{
	switch (op) {
	case LLVMAtomicRMWBinOpAdd:
		return LLVMBuildAdd(l->b, x, y, "");
	case LLVMAtomicRMWBinOpOr:
		return LLVMBuildOr(l->b, x, y, "");
	case LLVMAtomicRMWBinOpAnd:
		return LLVMBuildAnd(l->b, x, y, "");
	default:
		return LLVMBuildXor(l->b, x, y, "");
	}
}

static LLVMValueRef identity(LLVMAtomicRMWBinOp op, LLVMTypeRef t)
{
	return op == LLVMAtomicRMWBinOpAnd ? LLVMConstAllOnes(t) :
	       LLVMConstNull(t);
}

/* @count (i32) lanes' equal @val combined. */
static LLVMValueRef repeated(struct lift *l, LLVMAtomicRMWBinOp op,
			     LLVMValueRef val, LLVMValueRef count)
{
	LLVMTypeRef t = LLVMTypeOf(val);
	LLVMValueRef zero = lift_const(l->i32, 0), some, odd;

	if (op == LLVMAtomicRMWBinOpAdd)
		return LLVMBuildMul(l->b, val, LLVMBuildZExt(l->b, count, t, ""), "");
	if (op == LLVMAtomicRMWBinOpXor) {
		odd = LLVMBuildTrunc(l->b, count, l->i1, "");
		return LLVMBuildSelect(l->b, odd, val, LLVMConstNull(t), "");
	}
	some = LLVMBuildICmp(l->b, LLVMIntNE, count, zero, "");
	return LLVMBuildSelect(l->b, some, val, identity(op, t), "");
}

/* Lane @src's @v (of @v's type) among @mask. */
static LLVMValueRef shfl(struct lift *l, const struct warp_prims *p,
			 LLVMValueRef v, LLVMValueRef src, LLVMValueRef mask)
{
	LLVMTypeRef t = LLVMTypeOf(v);

	if (t != l->i64)
		v = LLVMBuildZExt(l->b, v, l->i64, "");
	v = p->shfl(l, v, src, mask);
	return t != l->i64 ? LLVMBuildTrunc(l->b, v, t, "") : v;
}

/* The group's lanes below this one. */
struct group {
	LLVMValueRef mask, lane, below, last;
};

/*
 * @v of the @d-th lane of the group below this one combined into @acc, or
 * @acc where there is none. Every lane of the group shuffles.
 */
static LLVMValueRef pull(struct lift *l, const struct warp_prims *p,
			 const struct group *g, LLVMAtomicRMWBinOp op,
			 LLVMValueRef acc, LLVMValueRef v, int d)
{
	LLVMValueRef src = p->fns(l, g->below, g->lane, lift_const(l->i32, (uint32_t)-d));
	LLVMValueRef none = LLVMBuildICmp(l->b, LLVMIntEQ, src,
					  lift_const(l->i32, UINT32_MAX), "");
	LLVMValueRef got;

	src = LLVMBuildSelect(l->b, none, g->lane, src, "");
	got = shfl(l, p, v, src, g->mask);
	return acc ? LLVMBuildSelect(l->b, none, acc, binop(l, op, acc, got), "") :
		     LLVMBuildSelect(l->b, none, identity(op, LLVMTypeOf(v)), got, "");
}

/* The group's @val combined over its lanes up to this one (Hillis-Steele). */
static LLVMValueRef scan(struct lift *l, const struct warp_prims *p,
			 const struct group *g, LLVMAtomicRMWBinOp op,
			 LLVMValueRef val)
{
	for (int d = 1; d < 32; d *= 2)
		val = pull(l, p, g, op, val, val, d);
	return val;
}

/* @val combined over the whole group by redux (every lane gets it). */
static LLVMValueRef reduce(struct lift *l, const struct warp_prims *p,
			   LLVMAtomicRMWBinOp op, LLVMValueRef val,
			   LLVMValueRef mask)
{
	LLVMBuilderRef b = l->b;
	LLVMValueRef lo, mid, hi;

	if (LLVMTypeOf(val) == l->i32)
		return p->redux(l, op, val, mask);
	hi = LLVMBuildTrunc(b, LLVMBuildLShr(b, val, lift_const(l->i64, 32), ""), l->i32, "");
	hi = LLVMBuildZExt(b, p->redux(l, op, hi, mask), l->i64, "");
	hi = LLVMBuildShl(b, hi, lift_const(l->i64, 32), "");
	if (op != LLVMAtomicRMWBinOpAdd) {
		lo = p->redux(l, op, LLVMBuildTrunc(b, val, l->i32, ""), mask);
		return LLVMBuildOr(b, hi, LLVMBuildZExt(b, lo, l->i64, ""), "");
	}
	/* 16-bit pieces of the low half cannot carry out of 32 bits in a
	 * 32-lane sum; the high half's sum is wanted modulo 2^32 anyway. */
	lo = LLVMBuildAnd(b, LLVMBuildTrunc(b, val, l->i32, ""), lift_const(l->i32, 0xffff), "");
	mid = LLVMBuildLShr(b, LLVMBuildTrunc(b, val, l->i32, ""), lift_const(l->i32, 16), "");
	lo = LLVMBuildZExt(b, p->redux(l, op, lo, mask), l->i64, "");
	mid = LLVMBuildZExt(b, p->redux(l, op, mid, mask), l->i64, "");
	mid = LLVMBuildShl(b, mid, lift_const(l->i64, 16), "");
	return LLVMBuildAdd(b, LLVMBuildAdd(b, lo, mid, ""), hi, "");
}

/* @cond ? @mask : match.any(@mask, @a64), the match only where needed. */
static LLVMValueRef match_unless(struct lift *l, const struct warp_prims *p,
				 LLVMValueRef cond, LLVMValueRef mask,
				 LLVMValueRef a64)
{
	LLVMBasicBlockRef from = LLVMGetInsertBlock(l->b);
	LLVMBasicBlockRef split = lift_block(l, ""), join = lift_block(l, "");
	LLVMValueRef matched, group;

	LLVMBuildCondBr(l->b, cond, join, split);
	LLVMPositionBuilderAtEnd(l->b, split);
	matched = p->match_any(l, mask, a64);
	LLVMBuildBr(l->b, join);
	LLVMPositionBuilderAtEnd(l->b, join);
	group = LLVMBuildPhi(l->b, l->i32, "");
	LLVMAddIncoming(group, (LLVMValueRef[]){ mask, matched },
			(LLVMBasicBlockRef[]){ from, split }, 2);
	return group;
}

/* i1: @v (i64) is the same in every lane of @mask; @first is one of them. */
static LLVMValueRef same_in(struct lift *l, const struct warp_prims *p,
			    LLVMValueRef v, LLVMValueRef first,
			    LLVMValueRef mask)
{
	return LLVMBuildICmp(l->b, LLVMIntEQ, v, p->shfl(l, v, first, mask), "");
}

/* The atomic, in the highest lane of the group only; its fetched value
 * there, 0 elsewhere. */
static LLVMValueRef last_lane_rmw(struct lift *l, const struct group *g,
				  LLVMAtomicRMWBinOp op, LLVMValueRef addr,
				  LLVMValueRef amount, bool sc)
{
	LLVMBasicBlockRef from = LLVMGetInsertBlock(l->b);
	LLVMBasicBlockRef act = lift_block(l, ""), join = lift_block(l, "");
	LLVMTypeRef t = LLVMTypeOf(amount);
	LLVMValueRef rmw, old;

	LLVMBuildCondBr(l->b, LLVMBuildICmp(l->b, LLVMIntEQ, g->lane, g->last, ""),
			act, join);
	LLVMPositionBuilderAtEnd(l->b, act);
	rmw = LLVMBuildAtomicRMW(l->b, op, addr, amount,
				 sc ? LLVMAtomicOrderingSequentiallyConsistent :
					 LLVMAtomicOrderingMonotonic, 0);
	LLVMSetAlignment(rmw, LLVMGetIntTypeWidth(t) / 8);
	LLVMBuildBr(l->b, join);
	LLVMPositionBuilderAtEnd(l->b, join);
	old = LLVMBuildPhi(l->b, t, "");
	LLVMAddIncoming(old, (LLVMValueRef[]){ rmw, LLVMConstNull(t) },
			(LLVMBasicBlockRef[]){ act, from }, 2);
	return old;
}

/* What a group adds (or ors...) at once, and each lane's exclusive prefix. */
struct combined {
	LLVMValueRef group, amount, excl;
	LLVMBasicBlockRef from;
};

static void init_group(struct lift *l, struct group *g, LLVMValueRef mask,
		       LLVMValueRef lane)
{
	LLVMBuilderRef b = l->b;
	LLVMValueRef below = LLVMBuildSub(b, LLVMBuildShl(b, lift_const(l->i32, 1), lane, ""),
					  lift_const(l->i32, 1), "");

	g->mask = mask;
	g->lane = lane;
	g->below = LLVMBuildAnd(b, mask, below, "");
	g->last = LLVMBuildSub(b, lift_const(l->i32, 31),
			       lift_call(l, "llvm.ctlz.i32", l->i32,
					 (LLVMValueRef[]){ mask, lift_const(l->i1, 0) }, 2), "");
}

/* Every lane of @g has this lane's @val: multiples and repeats. */
static void combine_same(struct lift *l, const struct group *g,
			 LLVMAtomicRMWBinOp op, LLVMValueRef val,
			 struct combined *c)
{
	LLVMValueRef below = g->below;

	c->group = g->mask;
	c->amount = repeated(l, op, val, lift_call(l, "llvm.ctpop.i32", l->i32,
						   (LLVMValueRef *)&g->mask, 1));
	c->excl = repeated(l, op, val, lift_call(l, "llvm.ctpop.i32", l->i32,
						 &below, 1));
	c->from = LLVMGetInsertBlock(l->b);
}

/* Lanes add different values: redux for the whole, a scan for prefixes. */
static void combine_any(struct lift *l, const struct warp_prims *p,
			const struct group *g, LLVMAtomicRMWBinOp op,
			LLVMValueRef val, bool fetch, struct combined *c)
{
	LLVMValueRef incl = NULL;

	if (fetch || !p->redux)
		incl = scan(l, p, g, op, val); /* the highest lane's is the whole */
	c->group = g->mask;
	/* redux where there is one, so an unused fetch leaves no scan */
	c->amount = p->redux ? reduce(l, p, op, val, g->mask) : incl;
	c->excl = fetch ? pull(l, p, g, op, NULL, incl, 1) : LLVMConstNull(LLVMTypeOf(val));
	c->from = LLVMGetInsertBlock(l->b);
}

static LLVMValueRef phi2(struct lift *l, LLVMTypeRef t, LLVMValueRef a,
			 LLVMBasicBlockRef from_a, LLVMValueRef b,
			 LLVMBasicBlockRef from_b)
{
	LLVMValueRef phi = LLVMBuildPhi(l->b, t, "");

	LLVMAddIncoming(phi, (LLVMValueRef[]){ a, b },
			(LLVMBasicBlockRef[]){ from_a, from_b }, 2);
	return phi;
}

LLVMValueRef warp_rmw(struct lift *l, const struct warp_prims *p,
		      LLVMAtomicRMWBinOp op, LLVMValueRef addr,
		      LLVMValueRef val, unsigned flags)
{
	bool fetch = flags & WARP_RMW_FETCH, sc = flags & WARP_RMW_SEQ_CST;
	LLVMBasicBlockRef same = lift_block(l, ""), any = lift_block(l, "");
	LLVMBasicBlockRef join = lift_block(l, "");
	LLVMTypeRef t = LLVMTypeOf(val);
	LLVMValueRef mask = p->active_mask(l), lane = p->lane_id(l), first;
	LLVMValueRef a64, v64, one_addr, one_val, old, group, amount, excl;
	LLVMBuilderRef b = l->b;
	struct combined c[2];
	struct group g;

	/* One address and one operand in every lane: the common case. */
	a64 = LLVMBuildPtrToInt(b, addr, l->i64, "");
	v64 = t == l->i64 ? val : LLVMBuildZExt(b, val, l->i64, "");
	first = lift_call(l, "llvm.cttz.i32", l->i32,
			  (LLVMValueRef[]){ mask, lift_const(l->i1, 0) }, 2);
	one_addr = same_in(l, p, a64, first, mask);
	one_val = same_in(l, p, v64, first, mask);
	LLVMBuildCondBr(b, p->vote_all(l, mask, LLVMBuildAnd(b, one_addr, one_val, "")),
			same, any);
	LLVMPositionBuilderAtEnd(b, same);
	init_group(l, &g, mask, lane);
	combine_same(l, &g, op, val, &c[0]);
	LLVMBuildBr(b, join);
	LLVMPositionBuilderAtEnd(b, any);
	init_group(l, &g, match_unless(l, p, p->vote_all(l, mask, one_addr),
				       mask, a64), lane);
	combine_any(l, p, &g, op, val, fetch, &c[1]);
	LLVMBuildBr(b, join);
	LLVMPositionBuilderAtEnd(b, join);
	group = phi2(l, l->i32, c[0].group, c[0].from, c[1].group, c[1].from);
	amount = phi2(l, t, c[0].amount, c[0].from, c[1].amount, c[1].from);
	excl = phi2(l, t, c[0].excl, c[0].from, c[1].excl, c[1].from);
	init_group(l, &g, group, lane);
	if (sc)
		p->sync(l, g.mask); /* the lanes' earlier accesses come first */
	old = last_lane_rmw(l, &g, op, addr, amount, sc);
	if (sc)
		p->sync(l, g.mask); /* and their later ones after */
	if (!fetch)
		return NULL;
	return binop(l, op, shfl(l, p, old, g.last, g.mask), excl);
}
