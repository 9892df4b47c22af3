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

/*
 * One warp at a time (host_warp_run.c): begin holds the model until end,
 * which says whether every primitive kept PTX's rules. Each lane's thread
 * enters as its lane and leaves when its program returns; lanes that never
 * start leave too.
 */
void host_warp_begin(uint32_t lanes);
void host_warp_enter(uint32_t lane);
void host_warp_leave(uint32_t lanes);
bool host_warp_end(void);

#endif
