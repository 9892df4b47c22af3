/* SPDX-License-Identifier: MIT */
/*
 * Atomic read-modify-write (STX | ATOMIC, 32 and 64 bits): add, or, and, xor
 * with or without fetch, xchg and cmpxchg. The plain forms are relaxed
 * (monotonic), the fetching ones and cmpxchg sequentially consistent, as
 * Linux documents them. Atomics need natural alignment: the verifier checks
 * it, and the access is emitted with it.
 *
 * The stack is private to its thread, so atomics on it are plain
 * read-modify-write sequences; GPUs have no atomic instructions for their
 * thread-local memory at all. Where a back end has such memory, an atomic
 * through a pointer of unknown origin tests it at run time
 * (lift_backend.private_addr); one the verifier proved never reaches a
 * stack (jit_input.never_stack) goes straight to shared memory.
 */
#include "lift.h"

static bool rmw_op(int32_t imm, LLVMAtomicRMWBinOp *op)
{
	switch (imm & ~BPF_FETCH) {
	case BPF_ADD:
		*op = LLVMAtomicRMWBinOpAdd;
		return true;
	case BPF_OR:
		*op = LLVMAtomicRMWBinOpOr;
		return true;
	case BPF_AND:
		*op = LLVMAtomicRMWBinOpAnd;
		return true;
	case BPF_XOR:
		*op = LLVMAtomicRMWBinOpXor;
		return true;
	default:
		return false;
	}
}

static LLVMValueRef atomic_rmw(struct lift *l, int32_t imm,
			       LLVMAtomicRMWBinOp op, LLVMValueRef addr,
			       LLVMValueRef val, LLVMTypeRef t)
{
	unsigned size = LLVMGetIntTypeWidth(t) / 8;
	LLVMValueRef cmp, v;

	if (l->be->shared_addr)
		addr = l->be->shared_addr(l, addr);
	if (imm != BPF_XCHG && imm != BPF_CMPXCHG && l->be->atomic_rmw) {
		v = l->be->atomic_rmw(l, op, addr, val, imm & BPF_FETCH);
		return v ? v : LLVMConstNull(t); /* no fetch: nobody reads it */
	}
	if (imm == BPF_CMPXCHG) {
		cmp = lift_narrow(l, lift_reg(l, 0), t);
		v = LLVMBuildAtomicCmpXchg(l->b, addr, cmp, val,
					   LLVMAtomicOrderingSequentiallyConsistent,
					   LLVMAtomicOrderingSequentiallyConsistent,
					   0);
		LLVMSetAlignment(v, size);
		return LLVMBuildExtractValue(l->b, v, 0, "");
	}
	v = LLVMBuildAtomicRMW(l->b, op, addr, val,
			       imm & BPF_FETCH ?
				       LLVMAtomicOrderingSequentiallyConsistent :
				       LLVMAtomicOrderingMonotonic,
			       0);
	LLVMSetAlignment(v, size);
	return v;
}

/* The same operation as loads and stores, for thread-private memory. */
static LLVMValueRef plain_rmw(struct lift *l, int32_t imm,
			      LLVMAtomicRMWBinOp op, LLVMValueRef addr,
			      LLVMValueRef val, LLVMTypeRef t)
{
	unsigned size = LLVMGetIntTypeWidth(t) / 8;
	LLVMBuilderRef b = l->b;
	LLVMValueRef old = LLVMBuildLoad2(b, t, addr, ""), eq, v;

	LLVMSetAlignment(old, size);
	if (imm == BPF_CMPXCHG) {
		eq = LLVMBuildICmp(b, LLVMIntEQ, old,
				   lift_narrow(l, lift_reg(l, 0), t), "");
		v = LLVMBuildSelect(b, eq, val, old, "");
	} else if (op == LLVMAtomicRMWBinOpAdd) {
		v = LLVMBuildAdd(b, old, val, "");
	} else if (op == LLVMAtomicRMWBinOpOr) {
		v = LLVMBuildOr(b, old, val, "");
	} else if (op == LLVMAtomicRMWBinOpAnd) {
		v = LLVMBuildAnd(b, old, val, "");
	} else if (op == LLVMAtomicRMWBinOpXor) {
		v = LLVMBuildXor(b, old, val, "");
	} else {
		v = val; /* xchg */
	}
	LLVMSetAlignment(LLVMBuildStore(b, v, addr), size);
	return old;
}

/* Test at run time whether @addr is private, and take the right path. */
static LLVMValueRef checked_rmw(struct lift *l, int32_t imm,
				LLVMAtomicRMWBinOp op, LLVMValueRef addr,
				LLVMValueRef val, LLVMTypeRef t)
{
	LLVMValueRef is_private = l->be->private_addr(l, &addr);
	LLVMBasicBlockRef private = lift_block(l, ""), shared = lift_block(l, "");
	LLVMBasicBlockRef join = lift_block(l, ""), from[2];
	LLVMValueRef old[2], phi;

	LLVMBuildCondBr(l->b, is_private, private, shared);
	LLVMPositionBuilderAtEnd(l->b, private);
	old[0] = plain_rmw(l, imm, op, addr, val, t);
	from[0] = LLVMGetInsertBlock(l->b);
	LLVMBuildBr(l->b, join);
	LLVMPositionBuilderAtEnd(l->b, shared);
	old[1] = atomic_rmw(l, imm, op, addr, val, t);
	from[1] = LLVMGetInsertBlock(l->b);
	LLVMBuildBr(l->b, join);
	LLVMPositionBuilderAtEnd(l->b, join);
	phi = LLVMBuildPhi(l->b, t, "");
	LLVMAddIncoming(phi, old, from, 2);
	return phi;
}

int lift_atomic(struct lift *l, const struct bpf_insn *insn)
{
	uint8_t size = BPF_SIZE(insn->code);
	LLVMTypeRef t = size == BPF_DW ? l->i64 : l->i32;
	unsigned bytes = size == BPF_DW ? 8 : 4, align;
	LLVMAtomicRMWBinOp op = LLVMAtomicRMWBinOpXchg;
	LLVMValueRef addr, val, old;
	int32_t imm = insn->imm;

	if (size != BPF_W && size != BPF_DW)
		return lift_err(l, "atomic operations are 4 or 8 bytes wide");
	if (imm != BPF_XCHG && imm != BPF_CMPXCHG && !rmw_op(imm, &op))
		return lift_err(l, "unknown atomic operation 0x%x", imm);
	addr = lift_addr(l, insn->dst_reg, insn->off, bytes, &align);
	val = lift_narrow(l, lift_reg(l, insn->src_reg), t);
	if (lift_on_frame(l, insn->dst_reg, insn->off, bytes))
		old = plain_rmw(l, imm, op, addr, val, t);
	else if (l->be->private_addr && !lift_never_stack(l))
		old = checked_rmw(l, imm, op, addr, val, t);
	else
		old = atomic_rmw(l, imm, op, addr, val, t);
	if (t != l->i64)
		old = LLVMBuildZExt(l->b, old, l->i64, "");
	if (imm == BPF_CMPXCHG)
		lift_set_reg(l, 0, old);
	else if (imm & BPF_FETCH)
		lift_set_reg(l, insn->src_reg, old);
	return 0;
}
