/* SPDX-License-Identifier: MIT */
/*
 * ALU and ALU64 classes with RFC 9669 semantics: 32-bit results are
 * zero-extended, shift counts are masked, division by zero gives 0, modulo
 * by zero keeps the dividend, and signed INT_MIN / -1 wraps. Every case is
 * expressed with selects, so no LLVM instruction ever sees a divisor that
 * would be undefined behaviour.
 */
#include <stdio.h>

#include "lift.h"

/* END (le/be) is defined for the target's byte order: both ours are little. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the lifter assumes little-endian host and device"
#endif

LLVMValueRef lift_narrow(struct lift *l, LLVMValueRef v, LLVMTypeRef t)
{
	if (t == l->i64)
		return v;
	return LLVMBuildTrunc(l->b, v, t, "");
}

LLVMValueRef lift_src(struct lift *l, const struct bpf_insn *insn,
		      LLVMTypeRef t)
{
	if (BPF_SRC(insn->code) == BPF_X)
		return lift_narrow(l, lift_reg(l, insn->src_reg), t);
	return lift_const(t, (uint64_t)(int64_t)insn->imm);
}

static LLVMValueRef widen(struct lift *l, LLVMValueRef v)
{
	if (LLVMTypeOf(v) == l->i64)
		return v;
	return LLVMBuildZExt(l->b, v, l->i64, "");
}

static LLVMValueRef divmod(struct lift *l, LLVMValueRef dst, LLVMValueRef src,
			   bool is_signed, bool is_mod)
{
	LLVMTypeRef t = LLVMTypeOf(dst);
	LLVMBuilderRef b = l->b;
	LLVMValueRef zero = lift_const(t, 0), minus1 = lift_const(t, -1);
	LLVMValueRef by_zero = LLVMBuildICmp(b, LLVMIntEQ, src, zero, "");
	LLVMValueRef by_m1 = LLVMBuildICmp(b, LLVMIntEQ, src, minus1, "");
	LLVMValueRef bad = is_signed ? LLVMBuildOr(b, by_zero, by_m1, "") :
				       by_zero;
	LLVMValueRef safe = LLVMBuildSelect(b, bad, lift_const(t, 1), src, "");
	LLVMValueRef q;

	if (is_mod)
		q = is_signed ? LLVMBuildSRem(b, dst, safe, "") :
				LLVMBuildURem(b, dst, safe, "");
	else
		q = is_signed ? LLVMBuildSDiv(b, dst, safe, "") :
				LLVMBuildUDiv(b, dst, safe, "");
	/* x s/ -1 wraps to -x; x s% -1 is already 0 (x s% 1). */
	if (is_signed && !is_mod)
		q = LLVMBuildSelect(b, by_m1, LLVMBuildNeg(b, dst, ""), q, "");
	return LLVMBuildSelect(b, by_zero, is_mod ? dst : zero, q, "");
}

static LLVMValueRef shift_count(struct lift *l, LLVMValueRef src)
{
	LLVMTypeRef t = LLVMTypeOf(src);

	return LLVMBuildAnd(l->b, src,
			    lift_const(t, LLVMGetIntTypeWidth(t) - 1), "");
}

static LLVMTypeRef int_type(struct lift *l, unsigned bits)
{
	return LLVMIntTypeInContext(l->ctx, bits);
}

/* MOV, and MOVSX (offset 8/16/32: sign-extend the low bits of src). */
static int lift_mov(struct lift *l, const struct bpf_insn *insn,
		    LLVMTypeRef t)
{
	bool wide = t == l->i64;
	LLVMValueRef v = lift_src(l, insn, t);

	if (insn->off) {
		if (insn->off != 8 && insn->off != 16 &&
		    (insn->off != 32 || !wide))
			return lift_err(l, "invalid movsx width %d", insn->off);
		if (BPF_SRC(insn->code) != BPF_X)
			return lift_err(l, "movsx needs a register source");
		v = LLVMBuildTrunc(l->b, v, int_type(l, insn->off), "");
		v = LLVMBuildSExt(l->b, v, t, "");
	}
	lift_set_reg(l, insn->dst_reg, widen(l, v));
	return 0;
}

/* Byte order: ALU END to_le/to_be and ALU64 END bswap, width in imm. */
static int lift_end(struct lift *l, const struct bpf_insn *insn, bool wide)
{
	bool swap = wide || BPF_SRC(insn->code) == BPF_TO_BE;
	LLVMValueRef v = lift_reg(l, insn->dst_reg);
	char name[32];
	LLVMTypeRef t;

	if (wide && BPF_SRC(insn->code) != BPF_TO_LE)
		return lift_err(l, "invalid bswap opcode 0x%02x", insn->code);
	if (insn->imm != 16 && insn->imm != 32 && insn->imm != 64)
		return lift_err(l, "invalid byte swap width %d", insn->imm);
	t = int_type(l, insn->imm);
	v = lift_narrow(l, v, t);
	if (swap) {
		snprintf(name, sizeof(name), "llvm.bswap.i%d", insn->imm);
		v = LLVMBuildCall2(l->b, LLVMFunctionType(t, &t, 1, 0),
				   lift_function(l, name,
						 LLVMFunctionType(t, &t, 1, 0)),
				   &v, 1, "");
	}
	lift_set_reg(l, insn->dst_reg, widen(l, v));
	return 0;
}

static int lift_alu_op(struct lift *l, const struct bpf_insn *insn)
{
	bool wide = BPF_CLASS(insn->code) == BPF_ALU64;
	LLVMTypeRef t = wide ? l->i64 : l->i32;
	LLVMBuilderRef b = l->b;
	LLVMValueRef dst, src, res;
	uint8_t op = BPF_OP(insn->code);

	if (op == BPF_END)
		return lift_end(l, insn, wide);
	if (op == BPF_MOV)
		return lift_mov(l, insn, t);
	if ((op == BPF_DIV || op == BPF_MOD) && insn->off != 0 && insn->off != 1)
		return lift_err(l, "invalid div/mod offset %d (0: unsigned, 1: signed)",
				insn->off);
	dst = lift_narrow(l, lift_reg(l, insn->dst_reg), t);
	src = lift_src(l, insn, t);
	switch (op) {
	case BPF_ADD:
		res = LLVMBuildAdd(b, dst, src, "");
		break;
	case BPF_SUB:
		res = LLVMBuildSub(b, dst, src, "");
		break;
	case BPF_MUL:
		res = LLVMBuildMul(b, dst, src, "");
		break;
	case BPF_DIV:
	case BPF_MOD:
		res = divmod(l, dst, src, insn->off == 1, op == BPF_MOD);
		break;
	case BPF_OR:
		res = LLVMBuildOr(b, dst, src, "");
		break;
	case BPF_AND:
		res = LLVMBuildAnd(b, dst, src, "");
		break;
	case BPF_XOR:
		res = LLVMBuildXor(b, dst, src, "");
		break;
	case BPF_LSH:
		res = LLVMBuildShl(b, dst, shift_count(l, src), "");
		break;
	case BPF_RSH:
		res = LLVMBuildLShr(b, dst, shift_count(l, src), "");
		break;
	case BPF_ARSH:
		res = LLVMBuildAShr(b, dst, shift_count(l, src), "");
		break;
	case BPF_NEG:
		res = LLVMBuildNeg(b, dst, "");
		break;
	default:
		return lift_err(l, "unknown ALU opcode 0x%02x", insn->code);
	}
	lift_set_reg(l, insn->dst_reg, widen(l, res));
	return 0;
}

/*
 * Whether @insn leaves dst = r10 + *off (mov of a tracked register, or a
 * tracked register plus or minus a constant).
 */
static bool fp_result(const struct lift *l, const struct bpf_insn *insn,
		      int64_t *off)
{
	switch (insn->code) {
	case BPF_ALU64 | BPF_MOV | BPF_X:
		*off = l->fp_off[insn->src_reg];
		return !insn->off && l->fp_known[insn->src_reg];
	case BPF_ALU64 | BPF_ADD | BPF_K:
		*off = l->fp_off[insn->dst_reg] + insn->imm;
		return l->fp_known[insn->dst_reg];
	case BPF_ALU64 | BPF_SUB | BPF_K:
		*off = l->fp_off[insn->dst_reg] - insn->imm;
		return l->fp_known[insn->dst_reg];
	default:
		return false;
	}
}

int lift_alu(struct lift *l, const struct bpf_insn *insn)
{
	int64_t fp = 0;
	bool on_frame = fp_result(l, insn, &fp);
	int err = lift_alu_op(l, insn);

	if (!err && on_frame)
		lift_fp_set(l, insn->dst_reg, fp);
	return err;
}
