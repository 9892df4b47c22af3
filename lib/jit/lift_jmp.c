/* SPDX-License-Identifier: MIT */
/* JMP and JMP32 classes: ja, gotol, conditional jumps and exit. */
#include "lift.h"

/*
 * LLVM predicate per jump operation (BPF_OP >> 4); 0 where the operation is
 * not a comparison (JSET is handled apart).
 */
static const LLVMIntPredicate jump_pred[16] = {
	[BPF_JEQ >> 4] = LLVMIntEQ,   [BPF_JGT >> 4] = LLVMIntUGT,
	[BPF_JGE >> 4] = LLVMIntUGE,  [BPF_JNE >> 4] = LLVMIntNE,
	[BPF_JSGT >> 4] = LLVMIntSGT, [BPF_JSGE >> 4] = LLVMIntSGE,
	[BPF_JLT >> 4] = LLVMIntULT,  [BPF_JLE >> 4] = LLVMIntULE,
	[BPF_JSLT >> 4] = LLVMIntSLT, [BPF_JSLE >> 4] = LLVMIntSLE,
};

static bool is_condition(uint8_t op)
{
	return op == BPF_JSET || jump_pred[op >> 4];
}

int lift_jmp(struct lift *l, const struct bpf_insn *insn)
{
	bool wide = BPF_CLASS(insn->code) == BPF_JMP;
	LLVMTypeRef t = wide ? l->i64 : l->i32;
	uint8_t op = BPF_OP(insn->code);
	LLVMBasicBlockRef taken, next;
	LLVMValueRef dst, src, cond;

	if (op == BPF_EXIT && wide) {
		LLVMBuildRet(l->b, lift_reg(l, 0));
		return 0;
	}
	if (op == BPF_JA) {
		/* JMP32 ja is gotol: its offset is the 32-bit imm. */
		LLVMBuildBr(l->b, l->blocks[l->pc + 1 +
					    (wide ? insn->off : insn->imm)]);
		return 0;
	}
	if (!is_condition(op))
		return lift_err(l, "unknown jump opcode 0x%02x", insn->code);
	dst = lift_narrow(l, lift_reg(l, insn->dst_reg), t);
	src = lift_src(l, insn, t);
	if (op == BPF_JSET)
		cond = LLVMBuildICmp(l->b, LLVMIntNE,
				     LLVMBuildAnd(l->b, dst, src, ""),
				     lift_const(t, 0), "");
	else
		cond = LLVMBuildICmp(l->b, jump_pred[op >> 4], dst, src, "");
	taken = l->blocks[l->pc + 1 + insn->off];
	next = l->blocks[l->pc + 1];
	LLVMBuildCondBr(l->b, cond, taken, next);
	return 0;
}
