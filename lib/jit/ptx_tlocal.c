/* SPDX-License-Identifier: MIT */
/*
 * Thread-local map values as registers (core/tlocal.h). After
 * optimisation a thread-local value is reached only by loads and stores
 * at constant placeholder addresses: each becomes inline PTX on the
 * register of its 8-byte word (a move, or a shift / bit-field insert for
 * narrower accesses; the verifier proves them naturally aligned, so none
 * spans two words). A placeholder left anywhere else (a key LLVM could
 * not fold, an address kept) is refused: it would reach memory.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/tlocal.h"
#include "jit_llvm.h"
#include "ptx_tlocal.h"

struct tl_pass {
	const char *name;
	LLVMContextRef ctx;
	LLVMBuilderRef b;
	LLVMTypeRef i16, i64;
	uint64_t used[THREAD_LOCAL_MAX_BYTES / 8 * 4]; /* words of a function */
	size_t nused;
};

/* Note word @a of the function being lowered. */
static int use_word(struct tl_pass *p, uint64_t a)
{
	uint64_t w = thread_local_word(a);

	for (size_t i = 0; i < p->nused; i++)
		if (p->used[i] == w)
			return 0;
	if (p->nused == sizeof(p->used) / sizeof(p->used[0]))
		return err_set(EGPU_E2BIG, "%s: too many thread-local values", p->name);
	p->used[p->nused++] = w;
	return 0;
}

/* The placeholder address constant @v stands for, if it is one. */
static bool tl_const(const struct tl_pass *p, LLVMValueRef v, uint64_t *a)
{
	LLVMValueRef i;

	if (!v || !LLVMIsConstant(v))
		return false;
	i = LLVMTypeOf(v) == p->i64 ? v :
	    LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMPointerTypeKind ?
		LLVMConstPtrToInt(v, p->i64) : NULL;
	if (!i || !LLVMIsAConstantInt(i))
		return false;
	*a = LLVMConstIntGetZExtValue(i);
	return thread_local_addr(*a);
}

static LLVMValueRef asm_call(struct tl_pass *p, LLVMTypeRef ret,
			     LLVMValueRef arg, const char *text,
			     const char *cons)
{
	LLVMTypeRef at = arg ? LLVMTypeOf(arg) : NULL;
	LLVMTypeRef ft = LLVMFunctionType(ret, &at, arg ? 1 : 0, 0);
	LLVMValueRef fn = LLVMGetInlineAsm(ft, (char *)text, strlen(text),
					   (char *)cons, strlen(cons), 1, 0,
					   LLVMInlineAsmDialectATT, 0);

	return LLVMBuildCall2(p->b, ft, fn, &arg, arg ? 1 : 0, "");
}

/* The register of address @a's word. */
static void reg_name(char *buf, size_t n, uint64_t a)
{
	snprintf(buf, n, "%s%" PRIx64, THREAD_LOCAL_REG_PREFIX,
		 thread_local_word(a));
}

/* Bits of integer type @t (8..64), 0 for anything else. */
static unsigned int_bits(LLVMTypeRef t)
{
	unsigned n;

	if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind)
		return 0;
	n = LLVMGetIntTypeWidth(t);
	return n == 8 || n == 16 || n == 32 || n == 64 ? n : 0;
}

static int lower_load(struct tl_pass *p, LLVMValueRef ld, uint64_t a)
{
	LLVMTypeRef t = LLVMTypeOf(ld);
	unsigned bits = int_bits(t), sh = (unsigned)(a & 7) * 8;
	char text[160], reg[40];
	LLVMValueRef v;

	reg_name(reg, sizeof(reg), a);
	if (!bits)
		return err_set(EGPU_EJIT, "%s: a thread-local value is read as a non-integer", p->name);
	if (bits == 64) {
		snprintf(text, sizeof(text), "mov.b64 $0, %s;", reg);
		v = asm_call(p, p->i64, NULL, text, "=l");
	} else {
		snprintf(text, sizeof(text),
			 "{ .reg .b64 %%t; shr.b64 %%t, %s, %u; cvt.u%u.u64 $0, %%t; }",
			 reg, sh, bits == 32 ? 32 : 16);
		v = asm_call(p, bits == 32 ? LLVMInt32TypeInContext(p->ctx) : p->i16,
			     NULL, text, bits == 32 ? "=r" : "=h");
		if (bits == 8)
			v = LLVMBuildTrunc(p->b, v, t, "");
	}
	LLVMReplaceAllUsesWith(ld, v);
	return 0;
}

static int lower_store(struct tl_pass *p, LLVMValueRef st, uint64_t a)
{
	LLVMValueRef v = LLVMGetOperand(st, 0);
	unsigned bits = int_bits(LLVMTypeOf(v)), sh = (unsigned)(a & 7) * 8;
	char text[160], reg[40];

	reg_name(reg, sizeof(reg), a);
	if (!bits)
		return err_set(EGPU_EJIT, "%s: a thread-local value is written as a non-integer", p->name);
	if (bits == 64)
		snprintf(text, sizeof(text), "mov.b64 %s, $0;", reg);
	else
		snprintf(text, sizeof(text), "bfi.b64 %s, $0, %s, %u, %u;", reg,
			 reg, sh, bits);
	if (bits < 64)
		v = LLVMBuildZExt(p->b, v, p->i64, "");
	asm_call(p, LLVMVoidTypeInContext(p->ctx), v, text, "l");
	return 0;
}

/* Lower @insn if it reaches a thread-local value; *gone: erase it. */
static int lower_insn(struct tl_pass *p, LLVMValueRef insn, bool *gone)
{
	LLVMOpcode op = LLVMGetInstructionOpcode(insn);
	unsigned n = (unsigned)LLVMGetNumOperands(insn);
	uint64_t a, v;

	*gone = false;
	if (op == LLVMLoad && tl_const(p, LLVMGetOperand(insn, 0), &a)) {
		LLVMPositionBuilderBefore(p->b, insn);
		*gone = true;
		return use_word(p, a) ? EGPU_E2BIG : lower_load(p, insn, a);
	}
	if (op == LLVMStore && tl_const(p, LLVMGetOperand(insn, 1), &a) &&
	    !tl_const(p, LLVMGetOperand(insn, 0), &v)) {
		LLVMPositionBuilderBefore(p->b, insn);
		*gone = true;
		return use_word(p, a) ? EGPU_E2BIG : lower_store(p, insn, a);
	}
	for (unsigned i = 0; i < n; i++)
		if (tl_const(p, LLVMGetOperand(insn, i), &a))
			return err_set(EGPU_EJIT,
				       "%s: a thread-local map value is used other than by a load or store at a constant key and offset (it would need memory; thread-local values are registers)",
				       p->name);
	return 0;
}

/*
 * The function's own declaration of its registers, zeroed, for when it
 * runs as it is (called, or run directly): `mov.u64 REG, 0` marks the
 * zeroing, which copies into kernels drop with the declaration (the
 * rewriter declares the kernel's registers instead).
 */
static void declare_words(struct tl_pass *p, LLVMValueRef fn)
{
	LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
	char reg[40], text[128];

	LLVMPositionBuilderBefore(p->b, LLVMGetFirstInstruction(entry));
	for (size_t i = 0; i < p->nused; i++) {
		snprintf(reg, sizeof(reg), "%s%" PRIx64, THREAD_LOCAL_REG_PREFIX,
			 p->used[i]);
		snprintf(text, sizeof(text), ".reg .b64 %s;\n\tmov.u64 %s, 0;",
			 reg, reg);
		asm_call(p, LLVMVoidTypeInContext(p->ctx), NULL, text, "");
	}
}

static int lower_function(struct tl_pass *p, LLVMValueRef fn)
{
	int err = 0;

	p->nused = 0;
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb;
	     bb = LLVMGetNextBasicBlock(bb)) {
		LLVMValueRef insn = LLVMGetFirstInstruction(bb), next;

		for (; insn; insn = next) {
			bool gone;
			int err = lower_insn(p, insn, &gone);

			next = LLVMGetNextInstruction(insn);
			if (err)
				return err;
			if (gone)
				LLVMInstructionEraseFromParent(insn);
		}
	}
	if (p->nused)
		declare_words(p, fn);
	return err;
}

static bool uses_thread_local(const struct jit_input *in)
{
	for (size_t i = 0; i < in->map_cnt; i++)
		if (in->maps[i].type == EGPU_MAP_THREAD_LOCAL)
			return true;
	return false;
}

int ptx_thread_local(const struct jit_input *in, LLVMModuleRef mod)
{
	struct tl_pass p = { .name = in->name };
	int err = 0;

	if (!uses_thread_local(in))
		return 0;
	p.ctx = LLVMGetModuleContext(mod);
	p.b = LLVMCreateBuilderInContext(p.ctx);
	p.i16 = LLVMInt16TypeInContext(p.ctx);
	p.i64 = LLVMInt64TypeInContext(p.ctx);
	for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn && !err;
	     fn = LLVMGetNextFunction(fn))
		err = lower_function(&p, fn);
	LLVMDisposeBuilder(p.b);
	return err;
}
