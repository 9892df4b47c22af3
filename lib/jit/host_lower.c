/* SPDX-License-Identifier: MIT */
/*
 * Host helper lowering: a call to the helper's C function (host_helpers.c)
 * by its symbol, which jit_host.c defines at the function's address.
 * membar is a fence; exit_thread ends the program with r0 = 0.
 */
#include "host_helpers.h"
#include "jit_llvm.h"

static bool host_has_helper(int32_t id)
{
	return id == HELPER_EXIT_THREAD || id == HELPER_MEMBAR ||
	       host_helper_find(id);
}

static int host_helper(struct lift *l, const struct helper_info *h,
		       LLVMValueRef *args, LLVMValueRef *r0)
{
	const struct host_helper *hh;

	switch (h->id) {
	case HELPER_EXIT_THREAD:
		lift_abort_if(l, NULL);
		*r0 = lift_const(l->i64, 0);
		return 0;
	case HELPER_MEMBAR:
		LLVMBuildFence(l->b, LLVMAtomicOrderingSequentiallyConsistent, 0,
			       "");
		*r0 = lift_const(l->i64, 0);
		return 0;
	}
	hh = host_helper_find(h->id);
	if (!hh)
		return lift_err(l, "helper %s (%d) has no CPU implementation",
				h->name, h->id);
	*r0 = lift_call(l, hh->symbol, l->i64, args, h->nargs);
	return 0;
}

const struct lift_backend host_backend = {
	.helper = host_helper,
	.has_helper = host_has_helper,
	.abort_helper = HELPER_EXIT_THREAD,
	.ctx_align = 1,
};
