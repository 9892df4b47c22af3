/* SPDX-License-Identifier: MIT */
/*
 * Lifter driver: splits the program into subprograms, finds basic blocks,
 * creates one LLVM function per subprogram and lifts every instruction.
 */
#include <stdio.h>
#include <stdlib.h>

#include "lift.h"

/* Per-instruction flags found by the scan. */
#define LIFT_LDDW_TAIL 0x1 /* second slot of an lddw */
#define LIFT_LEADER 0x2    /* starts a basic block */
#define LIFT_SUB 0x4       /* starts a subprogram */

static bool is_jump(const struct bpf_insn *insn)
{
	uint8_t cls = BPF_CLASS(insn->code), op = BPF_OP(insn->code);

	return (cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_CALL &&
	       op != BPF_EXIT;
}

static bool ends_subprogram(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_EXIT) ||
	       insn->code == (BPF_JMP | BPF_JA) ||
	       insn->code == (BPF_JMP32 | BPF_JA);
}

/* Whether @insn writes r10, which must stay the frame pointer. */
static bool writes_r10(const struct bpf_insn *insn)
{
	uint8_t cls = BPF_CLASS(insn->code);

	if (cls == BPF_ALU || cls == BPF_ALU64 || cls == BPF_LDX ||
	    cls == BPF_LD)
		return insn->dst_reg == 10;
	if (cls == BPF_STX && BPF_MODE(insn->code) == BPF_ATOMIC)
		return (insn->imm & BPF_FETCH) && insn->src_reg == 10;
	return false;
}

/* First pass: lddw pairs, registers, subprogram starts, abort helpers. */
static int scan_insns(struct lift *l)
{
	const struct jit_input *in = l->in;

	l->flags[0] |= LIFT_SUB;
	for (size_t pc = 0; pc < in->insn_cnt; pc++) {
		const struct bpf_insn *insn = &in->insns[pc];
		int64_t target = (int64_t)pc + 1 + insn->imm;

		if (l->flags[pc] & LIFT_LDDW_TAIL)
			continue;
		l->pc = pc;
		if (insn->dst_reg > 10 || insn->src_reg > 10)
			return lift_err(l, "invalid register r%u",
					insn->dst_reg > 10 ? insn->dst_reg :
							     insn->src_reg);
		if (writes_r10(insn))
			return lift_err(l, "r10 is read-only");
		if (bpf_is_lddw(insn)) {
			if (pc + 1 >= in->insn_cnt)
				return lift_err(l, "lddw lacks its second slot");
			l->flags[pc + 1] |= LIFT_LDDW_TAIL;
		} else if (insn->code == (BPF_JMP | BPF_CALL) &&
			   insn->src_reg == BPF_PSEUDO_CALL) {
			if (target < 0 || (size_t)target >= in->insn_cnt)
				return lift_err(l, "call target %lld is outside the program",
						(long long)target);
			l->flags[target] |= LIFT_SUB;
		} else if (insn->code == (BPF_JMP | BPF_CALL)) {
			if (insn->src_reg == 0 &&
			    lift_helper_may_abort(l, insn->imm))
				l->may_abort = true;
		} else if (insn->code == (BPF_JMP | BPF_CALL | BPF_X)) {
			l->may_abort = true;
		}
	}
	return 0;
}

static int make_funcs(struct lift *l)
{
	size_t n = 0;

	for (size_t pc = 0; pc < l->in->insn_cnt; pc++)
		n += !!(l->flags[pc] & LIFT_SUB);
	l->funcs = calloc(n, sizeof(*l->funcs));
	if (!l->funcs)
		return err_set(EGPU_ENOMEM, "%s: out of memory", l->in->name);
	for (size_t pc = 0; pc < l->in->insn_cnt; pc++) {
		if (!(l->flags[pc] & LIFT_SUB))
			continue;
		if (l->flags[pc] & LIFT_LDDW_TAIL) {
			l->pc = pc;
			return lift_err(l, "call into the middle of an lddw");
		}
		if (l->func_cnt)
			l->funcs[l->func_cnt - 1].end = pc;
		l->funcs[l->func_cnt].start = pc;
		l->flags[pc] |= LIFT_LEADER;
		l->func_at[pc] = ++l->func_cnt;
	}
	l->funcs[l->func_cnt - 1].end = l->in->insn_cnt;
	return 0;
}

/* Second pass, per subprogram: jump targets and the last instruction. */
static int scan_blocks(struct lift *l, const struct lift_func *f)
{
	size_t last = f->end - 1;

	for (size_t pc = f->start; pc < f->end; pc++) {
		const struct bpf_insn *insn = &l->in->insns[pc];
		int64_t target;

		if (l->flags[pc] & LIFT_LDDW_TAIL)
			continue;
		last = pc;
		l->pc = pc;
		if (insn->code == (BPF_JMP | BPF_EXIT) && pc + 1 < f->end)
			l->flags[pc + 1] |= LIFT_LEADER;
		if (!is_jump(insn))
			continue;
		target = (int64_t)pc + 1 +
			 (insn->code == (BPF_JMP32 | BPF_JA) ? insn->imm :
							       insn->off);
		if (target < (int64_t)f->start || target >= (int64_t)f->end)
			return lift_err(l, "jump to %lld leaves the subprogram [%zu, %zu)",
					(long long)target, f->start, f->end);
		if (l->flags[target] & LIFT_LDDW_TAIL)
			return lift_err(l, "jump into the middle of an lddw");
		l->flags[target] |= LIFT_LEADER;
		if (pc + 1 < f->end)
			l->flags[pc + 1] |= LIFT_LEADER;
	}
	l->pc = last;
	if (!ends_subprogram(&l->in->insns[last]))
		return lift_err(l, "the subprogram falls off its end (last instruction is not exit or ja)");
	return 0;
}

static void declare_func(struct lift *l, struct lift_func *f)
{
	LLVMTypeRef params[2] = { l->ptr, l->i64 };
	char name[JIT_NAME_MAX + 32];

	if (f->start == 0) {
		f->fn = LLVMAddFunction(l->mod, l->in->name,
					LLVMFunctionType(l->i64, params, 2, 0));
		return;
	}
	snprintf(name, sizeof(name), "%s_sub%zu", l->in->name, f->start);
	f->fn = LLVMAddFunction(l->mod, name, l->sub_type);
	LLVMSetLinkage(f->fn, LLVMInternalLinkage);
}

static void set_align_attr(struct lift *l, LLVMValueRef fn, unsigned idx,
			   unsigned align)
{
	unsigned kind = LLVMGetEnumAttributeKindForName("align", 5);

	LLVMAddAttributeAtIndex(fn, idx,
				LLVMCreateEnumAttribute(l->ctx, kind, align));
}

/* Entry block: registers, frame, r1-r5 from the arguments, r10. */
static void lift_prologue(struct lift *l, struct lift_func *f)
{
	LLVMValueRef zero = lift_const(l->i64, 0), top;

	LLVMPositionBuilderAtEnd(l->b, lift_block(l, "entry"));
	for (unsigned r = 0; r < BPF_REG_COUNT; r++) {
		f->regs[r] = LLVMBuildAlloca(l->b, l->i64, "");
		LLVMBuildStore(l->b, zero, f->regs[r]);
	}
	f->frame = LLVMBuildAlloca(l->b, LLVMArrayType(l->i8, BPF_STACK_SIZE),
				   "frame");
	LLVMSetAlignment(f->frame, 8);
	f->value_bits = LLVMBuildAlloca(l->b, l->i64, "value_bits");
	if (f->start == 0) {
		f->stop = LLVMBuildAlloca(l->b, l->i8, "stop");
		LLVMBuildStore(l->b, lift_const(l->i8, 0), f->stop);
		lift_set_reg(l, 1, LLVMBuildPtrToInt(l->b, LLVMGetParam(f->fn, 0),
						     l->i64, ""));
		lift_set_reg(l, 2, LLVMGetParam(f->fn, 1));
		if (l->be->ctx_align > 1)
			set_align_attr(l, f->fn, 1, l->be->ctx_align);
	} else {
		for (unsigned r = 1; r <= 5; r++)
			lift_set_reg(l, r, LLVMGetParam(f->fn, r - 1));
		f->stop = LLVMGetParam(f->fn, 5);
	}
	top = LLVMBuildGEP2(l->b, l->i8, f->frame,
			    (LLVMValueRef[]){ lift_const(l->i64, BPF_STACK_SIZE) },
			    1, "");
	lift_set_reg(l, 10, LLVMBuildPtrToInt(l->b, top, l->i64, ""));
}

static int lift_insn(struct lift *l, const struct bpf_insn *insn)
{
	switch (BPF_CLASS(insn->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		return lift_alu(l, insn);
	case BPF_JMP:
	case BPF_JMP32:
		if (BPF_OP(insn->code) == BPF_CALL)
			return lift_call_insn(l, insn);
		return lift_jmp(l, insn);
	case BPF_LD:
		return lift_ld(l, insn);
	case BPF_LDX:
		return lift_ldx(l, insn);
	case BPF_ST:
		return lift_st(l, insn);
	default: /* BPF_STX */
		if (BPF_MODE(insn->code) == BPF_ATOMIC)
			return lift_atomic(l, insn);
		return lift_st(l, insn);
	}
}

static int lift_func_body(struct lift *l, struct lift_func *f)
{
	l->fn = f;
	lift_prologue(l, f);
	for (size_t pc = f->start; pc < f->end; pc++)
		if (l->flags[pc] & LIFT_LEADER)
			l->blocks[pc] = lift_block(l, "");
	LLVMBuildBr(l->b, l->blocks[f->start]);
	for (size_t pc = f->start; pc < f->end; pc++) {
		LLVMBasicBlockRef cur = LLVMGetInsertBlock(l->b);
		int err;

		if (l->flags[pc] & LIFT_LDDW_TAIL)
			continue;
		l->pc = pc;
		if (l->blocks[pc]) {
			if (!LLVMGetBasicBlockTerminator(cur))
				LLVMBuildBr(l->b, l->blocks[pc]);
			LLVMPositionBuilderAtEnd(l->b, l->blocks[pc]);
			lift_fp_reset(l);
		}
		err = lift_insn(l, &l->in->insns[pc]);
		if (err)
			return err;
	}
	return 0;
}

static int lift_all(struct lift *l)
{
	int err = scan_insns(l);

	if (!err)
		err = make_funcs(l);
	for (size_t i = 0; !err && i < l->func_cnt; i++)
		err = scan_blocks(l, &l->funcs[i]);
	if (err)
		return err;
	for (size_t i = 0; i < l->func_cnt; i++)
		declare_func(l, &l->funcs[i]);
	for (size_t i = 0; !err && i < l->func_cnt; i++)
		err = lift_func_body(l, &l->funcs[i]);
	return err;
}

static void init_types(struct lift *l)
{
	l->i1 = LLVMInt1TypeInContext(l->ctx);
	l->i8 = LLVMInt8TypeInContext(l->ctx);
	l->i32 = LLVMInt32TypeInContext(l->ctx);
	l->i64 = LLVMInt64TypeInContext(l->ctx);
	l->ptr = LLVMPointerTypeInContext(l->ctx, 0);
	l->void_t = LLVMVoidTypeInContext(l->ctx);
	l->sub_type = LLVMFunctionType(l->i64,
				       (LLVMTypeRef[]){ l->i64, l->i64, l->i64,
							l->i64, l->i64, l->ptr },
				       6, 0);
}

int lift_program(const struct jit_input *in, const struct lift_backend *be,
		 unsigned sm, LLVMContextRef ctx, LLVMModuleRef mod)
{
	struct lift l = { .in = in, .be = be, .sm = sm, .ctx = ctx, .mod = mod };
	int err;

	init_types(&l);
	l.flags = calloc(in->insn_cnt, sizeof(*l.flags));
	l.blocks = calloc(in->insn_cnt, sizeof(*l.blocks));
	l.func_at = calloc(in->insn_cnt, sizeof(*l.func_at));
	l.b = LLVMCreateBuilderInContext(ctx);
	if (!l.flags || !l.blocks || !l.func_at)
		err = err_set(EGPU_ENOMEM, "%s: out of memory", in->name);
	else
		err = lift_all(&l);
	LLVMDisposeBuilder(l.b);
	free(l.funcs);
	free(l.func_at);
	free(l.blocks);
	free(l.flags);
	return err;
}
