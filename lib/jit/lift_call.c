/* SPDX-License-Identifier: MIT */
/*
 * Calls: helpers by number, local (bpf-to-bpf) calls and callx.
 *
 * A local call passes r1-r5 and a pointer to the entry function's "stop"
 * flag; the callee has its own registers and frame, so r6-r9 and the
 * caller's stack are preserved by construction. A helper that ends the
 * program sets the flag and returns (lift_abort_if, lift_util.c); every
 * caller checks the flag after a local call and returns too. Programs that
 * cannot end early get no check.
 */
#include "lift.h"

static int lift_local_call(struct lift *l, const struct bpf_insn *insn)
{
	size_t target = l->pc + 1 + insn->imm;
	struct lift_func *callee = &l->funcs[l->func_at[target] - 1];
	LLVMValueRef args[6], r0, stop;

	for (unsigned r = 1; r <= 5; r++)
		args[r - 1] = lift_reg(l, r);
	args[5] = l->fn->stop;
	r0 = LLVMBuildCall2(l->b, l->sub_type, callee->fn, args, 6, "");
	lift_set_reg(l, 0, r0);
	if (!l->may_abort)
		return 0;
	stop = LLVMBuildLoad2(l->b, l->i8, l->fn->stop, "");
	lift_abort_if(l, LLVMBuildICmp(l->b, LLVMIntNE, stop,
				       lift_const(l->i8, 0), ""));
	return 0;
}

static int lift_helper_call(struct lift *l, int32_t id)
{
	const struct helper_info *h = helper_lookup(id, l->in->helpers,
						    l->in->users);
	LLVMValueRef r0;
	int err;

	if (!h)
		return lift_err(l, "unknown helper %d", id);
	err = lift_helper(l, h, &r0);
	if (!err)
		lift_set_reg(l, 0, r0);
	return err;
}

/*
 * callx: call the helper whose number is in a register. The conformance
 * suite's assembler puts that register in the dst field. The call becomes
 * a switch over every helper of the program's helper set that the back end
 * implements; any other number ends the program with r0 = 0.
 */
static int lift_callx(struct lift *l, const struct bpf_insn *insn)
{
	LLVMValueRef id = lift_reg(l, insn->dst_reg), sw, phi;
	LLVMBasicBlockRef none = lift_block(l, ""), join = lift_block(l, "");
	LLVMBasicBlockRef bb;
	LLVMValueRef r0;
	size_t n;
	const struct helper_info *t = helper_table(l->in->helpers, &n);
	int err;

	sw = LLVMBuildSwitch(l->b, id, none, 0);
	LLVMPositionBuilderAtEnd(l->b, join);
	phi = LLVMBuildPhi(l->b, l->i64, "");
	for (size_t i = 0; i < n; i++) {
		const struct helper_info *h = &t[i];

		if (!lift_helper_exists(l, h))
			continue;
		bb = lift_block(l, "");
		LLVMAddCase(sw, lift_const(l->i64, (uint64_t)h->id), bb);
		LLVMPositionBuilderAtEnd(l->b, bb);
		err = lift_helper(l, h, &r0);
		if (err)
			return err;
		bb = LLVMGetInsertBlock(l->b);
		LLVMBuildBr(l->b, join);
		LLVMAddIncoming(phi, &r0, &bb, 1);
	}
	LLVMPositionBuilderAtEnd(l->b, none);
	lift_abort_if(l, NULL);
	LLVMBuildUnreachable(l->b);
	LLVMPositionBuilderAtEnd(l->b, join);
	lift_set_reg(l, 0, phi);
	return 0;
}

int lift_call_insn(struct lift *l, const struct bpf_insn *insn)
{
	if (insn->code == (BPF_JMP | BPF_CALL | BPF_X))
		return lift_callx(l, insn);
	if (insn->code != (BPF_JMP | BPF_CALL))
		return lift_err(l, "unknown call opcode 0x%02x", insn->code);
	switch (insn->src_reg) {
	case 0:
		return lift_helper_call(l, insn->imm);
	case BPF_PSEUDO_CALL:
		return lift_local_call(l, insn);
	case BPF_PSEUDO_KFUNC_CALL:
		return lift_err(l, "kfunc calls are not supported");
	default:
		return lift_err(l, "call with unknown src %u", insn->src_reg);
	}
}
