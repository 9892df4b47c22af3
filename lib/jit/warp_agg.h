/* SPDX-License-Identifier: MIT */
/*
 * Warp-aggregated atomics (warp_agg.c), built from warp primitives that a
 * back end provides: PTX instructions on the GPU (ptx_warp.c), calls into
 * a 32-lane model on the CPU (host_warp.c), so the CPU tests run the very
 * IR the GPU gets.
 */
#ifndef EGPU_JIT_WARP_AGG_H
#define EGPU_JIT_WARP_AGG_H

#include "lift.h"

struct warp_prims {
	/* i32: the lanes now executing together */
	LLVMValueRef (*active_mask)(struct lift *l);
	/* i32: this lane's index, 0-31 */
	LLVMValueRef (*lane_id)(struct lift *l);
	/* i32: the lanes of @mask whose @v (i64) equals this lane's */
	LLVMValueRef (*match_any)(struct lift *l, LLVMValueRef mask,
				  LLVMValueRef v);
	/* i1: @pred (i1) holds in every lane of @mask */
	LLVMValueRef (*vote_all)(struct lift *l, LLVMValueRef mask,
				 LLVMValueRef pred);
	/* i64: lane @src's @v (i64); @src and this lane are in @mask */
	LLVMValueRef (*shfl)(struct lift *l, LLVMValueRef v, LLVMValueRef src,
			     LLVMValueRef mask);
	/* i32: @op (add, or, and, xor) of @v (i32) over @mask; NULL where
	 * the target has no such instruction (before sm_80) */
	LLVMValueRef (*redux)(struct lift *l, LLVMAtomicRMWBinOp op,
			      LLVMValueRef v, LLVMValueRef mask);
	/* i32: PTX fns: the |@off|-th set bit of @mask from @base on (down
	 * for @off < 0), or 0xffffffff */
	LLVMValueRef (*fns)(struct lift *l, LLVMValueRef mask, LLVMValueRef base,
			    LLVMValueRef off);
	/* memory ordering among the lanes of @mask (bar.warp.sync) */
	void (*sync)(struct lift *l, LLVMValueRef mask);
};

enum warp_rmw_flags {
	/* Return what this lane fetched (else NULL); the serial order is the
	 * group's lanes in ascending lane order, at one atomic. */
	WARP_RMW_FETCH = 1,
	/* Sequentially consistent (eBPF's fetching atomics), with the
	 * group's lanes ordered around the one atomic; else relaxed. */
	WARP_RMW_SEQ_CST = 2,
};

/*
 * Atomic @op (add, or, and, xor) of @val (i32 or i64) at @addr, combined
 * over the active lanes that name the same address: one atomic per
 * distinct address and warp.
 */
LLVMValueRef warp_rmw(struct lift *l, const struct warp_prims *p,
		      LLVMAtomicRMWBinOp op, LLVMValueRef addr,
		      LLVMValueRef val, unsigned flags);

#endif
