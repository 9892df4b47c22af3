/* SPDX-License-Identifier: MIT */
/*
 * PTX building blocks that the GPU helper lowering (ptx_lower.c) and the
 * warp-level lowering (ptx_warp.c) both use: inline PTX, addresses whose
 * origin LLVM must forget, and global-space pointers for atomics.
 */
#include <string.h>

#include "ptx_lower.h"

LLVMValueRef ptx_inline_asm(struct lift *l, LLVMTypeRef ret, const char *text,
			    const char *constraints)
{
	LLVMTypeRef type = LLVMFunctionType(ret, NULL, 0, 0);
	LLVMValueRef fn = LLVMGetInlineAsm(type, (char *)text, strlen(text),
					   (char *)constraints,
					   strlen(constraints), 1, 0,
					   LLVMInlineAsmDialectATT, 0);

	return LLVMBuildCall2(l->b, type, fn, NULL, 0, "");
}

LLVMValueRef ptx_hide_origin(struct lift *l, LLVMValueRef addr)
{
	LLVMTypeRef type = LLVMFunctionType(l->i64, &l->i64, 1, 0);
	LLVMValueRef mov = LLVMGetInlineAsm(type, "mov.b64 $0, $1;", 15,
					    "=l,l", 5, 0, 0,
					    LLVMInlineAsmDialectATT, 0);
	LLVMValueRef a = LLVMBuildPtrToInt(l->b, addr, l->i64, "");

	a = LLVMBuildCall2(l->b, type, mov, &a, 1, "");
	return LLVMBuildIntToPtr(l->b, a, l->ptr, "");
}

/*
 * Atomics that reach memory other threads share reach map values, in
 * global memory (device or mapped host memory, never .shared: lib/maps);
 * the verifier lets nothing else but the stack (private_addr) through. A
 * generic atomic would make ptxas dispatch on the address's window at
 * every site: about 30 SASS instructions for a 64-bit add against 2, and
 * most of an instrumented module's compile time.
 */
LLVMValueRef ptx_global_addr(struct lift *l, LLVMValueRef addr)
{
	return LLVMBuildAddrSpaceCast(l->b, addr,
				      LLVMPointerTypeInContext(l->ctx, 1), "");
}
