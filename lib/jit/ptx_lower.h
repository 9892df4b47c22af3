/* SPDX-License-Identifier: MIT */
/*
 * What the GPU helper lowering (ptx_lower.c) and the warp-level lowering
 * (ptx_warp.c) share.
 */
#ifndef EGPU_JIT_PTX_LOWER_H
#define EGPU_JIT_PTX_LOWER_H

#include "lift.h"
#include "warp_agg.h"

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

/*
 * Atomic @op (add, or, and, xor) of @val (i32 or i64) at global @addr,
 * warp-aggregated from sm_70 on (warp_agg.h, enum warp_rmw_flags); the
 * fetched value, or NULL without WARP_RMW_FETCH.
 */
LLVMValueRef ptx_warp_rmw(struct lift *l, LLVMAtomicRMWBinOp op,
			  LLVMValueRef addr, LLVMValueRef val, unsigned flags);
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
