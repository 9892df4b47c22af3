/* SPDX-License-Identifier: MIT */
/*
 * What the GPU helper lowering (ptx_lower.c) and the warp-level lowering
 * (ptx_warp.c) share.
 */
#ifndef EGPU_JIT_PTX_LOWER_H
#define EGPU_JIT_PTX_LOWER_H

#include "lift.h"

/*
 * The enum jit_need bits of the device runtime functions @mod calls (those
 * left after optimisation).
 */
unsigned ptx_runtime_needs(LLVMModuleRef mod);
/* ptx_asm.c. Inline PTX @text without operands other than a result of type @ret. */
LLVMValueRef ptx_inline_asm(struct lift *l, LLVMTypeRef ret, const char *text,
			    const char *constraints);
/* @addr (ptr) behind an opaque mov: LLVM no longer knows where it points. */
LLVMValueRef ptx_hide_origin(struct lift *l, LLVMValueRef addr);
/* @addr (generic ptr) as a global-space pointer, where atomics reach. */
LLVMValueRef ptx_global_addr(struct lift *l, LLVMValueRef addr);

enum warp_add_flags {
	/* Return what this lane would have fetched had the lanes added one
	 * by one in lane order (else NULL). */
	WARP_ADD_FETCH = 1,
	/* Expect all active lanes to add the same value at one address:
	 * test that first, cheaply, before grouping lanes with match. */
	WARP_ADD_UNIFORM = 2,
};

/*
 * Atomic add of @val (i32 or i64) at @addr, one atomic per warp and
 * address where the lanes add the same value.
 */
LLVMValueRef ptx_warp_add(struct lift *l, LLVMValueRef addr, LLVMValueRef val,
			  unsigned flags);
/*
 * EGPU_ENOTSUP with a message when helper @h cannot be lowered for the
 * target (bpf_warp_match before sm_70), else 0.
 */
int ptx_warp_unsupported(const struct lift *l, const struct helper_info *h);
/*
 * The SIMT helpers (HELPER_ACTIVE_MASK ... HELPER_WARP_SHFL): true and
 * the i64 result in *@r0 if @id is one of them.
 */
bool ptx_warp_helper(struct lift *l, int32_t id, LLVMValueRef *args,
		     LLVMValueRef *r0);

#endif
