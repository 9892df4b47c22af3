/* SPDX-License-Identifier: MIT */
/*
 * What every part of the lifter uses: errors naming the instruction,
 * registers, constants, blocks, calls by name, and the way a helper ends
 * the whole program from any subprogram depth (lift_call.c says how).
 * Below the driver (lift.c) and the instruction classes (lift_*.c).
 */
#include <stdio.h>

#include "lift.h"

int lift_err(struct lift *l, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(EGPU_EJIT, "%s: insn %zu: %s", l->in->name, l->pc, msg);
}

LLVMValueRef lift_const(LLVMTypeRef t, uint64_t v)
{
	unsigned bits = LLVMGetIntTypeWidth(t);

	if (bits < 64)
		v &= (UINT64_C(1) << bits) - 1;
	return LLVMConstInt(t, v, 0);
}

LLVMValueRef lift_reg(struct lift *l, unsigned reg)
{
	return LLVMBuildLoad2(l->b, l->i64, l->fn->regs[reg], "");
}

void lift_set_reg(struct lift *l, unsigned reg, LLVMValueRef v)
{
	LLVMBuildStore(l->b, v, l->fn->regs[reg]);
	l->fp_known[reg] = false;
}

void lift_fp_set(struct lift *l, unsigned reg, int64_t off)
{
	l->fp_known[reg] = true;
	l->fp_off[reg] = off;
}

void lift_fp_reset(struct lift *l)
{
	for (unsigned r = 0; r < BPF_REG_COUNT; r++)
		l->fp_known[r] = false;
	lift_fp_set(l, 10, 0);
}

LLVMValueRef lift_function(struct lift *l, const char *name, LLVMTypeRef type)
{
	LLVMValueRef fn = LLVMGetNamedFunction(l->mod, name);

	return fn ? fn : LLVMAddFunction(l->mod, name, type);
}

LLVMValueRef lift_call(struct lift *l, const char *name, LLVMTypeRef ret,
		       LLVMValueRef *args, unsigned n)
{
	LLVMTypeRef params[8], type;

	for (unsigned i = 0; i < n && i < 8; i++)
		params[i] = LLVMTypeOf(args[i]);
	type = LLVMFunctionType(ret, params, n, 0);
	return LLVMBuildCall2(l->b, type, lift_function(l, name, type), args,
			      n, "");
}

LLVMBasicBlockRef lift_block(struct lift *l, const char *name)
{
	return LLVMAppendBasicBlockInContext(l->ctx, l->fn->fn, name);
}

static LLVMBasicBlockRef abort_block(struct lift *l)
{
	struct lift_func *f = l->fn;
	LLVMBasicBlockRef here = LLVMGetInsertBlock(l->b);

	if (f->abort)
		return f->abort;
	f->abort = lift_block(l, "abort");
	LLVMPositionBuilderAtEnd(l->b, f->abort);
	if (f->start != 0)
		LLVMBuildStore(l->b, lift_const(l->i8, 1), f->stop);
	LLVMBuildRet(l->b, lift_const(l->i64, 0));
	LLVMPositionBuilderAtEnd(l->b, here);
	return f->abort;
}

void lift_abort_if(struct lift *l, LLVMValueRef cond)
{
	LLVMBasicBlockRef abort = abort_block(l), cont = lift_block(l, "");

	if (cond)
		LLVMBuildCondBr(l->b, cond, abort, cont);
	else
		LLVMBuildBr(l->b, abort);
	LLVMPositionBuilderAtEnd(l->b, cont);
}
