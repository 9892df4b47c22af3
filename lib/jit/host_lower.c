/* SPDX-License-Identifier: MIT */
/*
 * Host helper lowering: a call to the helper's C function (host_helpers.c)
 * by its symbol, which jit_host.c defines at the function's address.
 * membar is a fence; exit_thread ends the program with r0 = 0. Code over
 * maps in GPU memory calls host_gpu_maps.c's map and clock helpers. User
 * helpers are called directly at the address they were registered with.
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
	hh = l->in->gpu_maps ? host_gpu_helper_find(h->id) : NULL;
	if (!hh)
		hh = host_helper_find(h->id);
	if (!hh)
		return lift_err(l, "helper %s (%d) has no CPU implementation",
				h->name, h->id);
	*r0 = lift_call(l, hh->symbol, l->i64, args, h->nargs);
	return 0;
}

/*
 * A user helper: a direct call of the registered function, through its
 * address, with its own signature (scalars i64, buffers pointers).
 */
static int host_user_helper(struct lift *l, const struct user_helper *u,
			    LLVMValueRef *args, LLVMValueRef *r0)
{
	bool ret_void = u->info.ret == RET_VOID;
	LLVMTypeRef params[5], ret = ret_void ? l->void_t : l->i64, type;
	LLVMValueRef fn, call_args[5], result;

	for (unsigned i = 0; i < u->info.nargs; i++) {
		bool scalar = u->info.args[i] == ARG_SCALAR;

		params[i] = scalar ? l->i64 : l->ptr;
		call_args[i] = scalar ? args[i] :
			       LLVMBuildIntToPtr(l->b, args[i], l->ptr, "");
	}
	type = LLVMFunctionType(ret, params, u->info.nargs, 0);
	fn = LLVMConstIntToPtr(lift_const(l->i64, (uintptr_t)u->fn), l->ptr);
	result = LLVMBuildCall2(l->b, type, fn, call_args, u->info.nargs, "");
	*r0 = ret_void ? lift_const(l->i64, 0) : result;
	return 0;
}

const struct lift_backend host_backend = {
	.helper = host_helper,
	.user_helper = host_user_helper,
	.has_helper = host_has_helper,
	.abort_helper = HELPER_EXIT_THREAD,
	.ctx_align = 1,
};
