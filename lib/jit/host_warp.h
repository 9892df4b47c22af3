/* SPDX-License-Identifier: MIT */
/*
 * The CPU's 32-lane warp model (host_warp.c): its functions, which the
 * translated code calls by absolute address, and the aggregated atomics
 * built on them (jit_input.warp_model).
 */
#ifndef EGPU_JIT_HOST_WARP_H
#define EGPU_JIT_HOST_WARP_H

#include "host_helpers.h"
#include "lift.h"

extern const struct host_helper host_warp_calls[];
extern const size_t host_warp_call_cnt;

/* lift_backend.atomic_rmw of the host back end under a warp model. */
LLVMValueRef host_warp_rmw(struct lift *l, LLVMAtomicRMWBinOp op,
			   LLVMValueRef addr, LLVMValueRef val, bool fetch);

#endif
