/* SPDX-License-Identifier: MIT */
/*
 * GPU helper lowering. Cheap helpers become NVVM intrinsics or inline PTX
 * so they optimise with the program (the warp-level ones: ptx_warp.c);
 * the rest call `egpu_dev_<name>`, extern device functions (all arguments
 * and the result .b64) that the device runtime (lib/device) links in.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "egpu/ctx.h"
#include "jit_llvm.h"
#include "maps/ring_layout.h"
#include "ptx_lower.h"

/* Special register %<name> as i64, through llvm.nvvm.read.ptx.sreg.*. */
static LLVMValueRef sreg(struct lift *l, const char *name)
{
	char fn[64];

	snprintf(fn, sizeof(fn), "llvm.nvvm.read.ptx.sreg.%s", name);
	return LLVMBuildZExt(l->b, lift_call(l, fn, l->i32, NULL, 0), l->i64,
			     "");
}

static LLVMValueRef ptx_sm_id(struct lift *l)
{
	return sreg(l, "smid");
}

/* bpftime's (u64 *x, u64 *y, u64 *z) helpers: store %<name>.{x,y,z}. */
static LLVMValueRef store_xyz(struct lift *l, const char *name)
{
	static const char axis[] = "xyz";
	unsigned align;
	char reg[32];

	for (unsigned i = 0; i < 3; i++) {
		LLVMValueRef p = lift_addr(l, 1 + i, 0, sizeof(uint64_t), &align);

		snprintf(reg, sizeof(reg), "%s.%c", name, axis[i]);
		lift_store(l, p, align, sreg(l, reg));
	}
	return lift_const(l->i64, 0);
}

/* The process's tgid in both halves: the GPU has no thread ids of its own. */
static uint64_t pid_tgid(void)
{
	uint64_t pid = (uint64_t)getpid();

	return pid << 32 | pid;
}

#define RUNTIME_PREFIX "egpu_dev_"
#define USER_CALL RUNTIME_PREFIX "user_call"

static LLVMValueRef extern_call(struct lift *l, const struct helper_info *h,
				LLVMValueRef *args)
{
	char name[96];

	snprintf(name, sizeof(name), RUNTIME_PREFIX "%s", h->name);
	return lift_call(l, name, l->i64, args, h->nargs);
}

/*
 * The kernel id a print record carries: the probe's ctx holds it (folded
 * to a constant where the probe is copied into its site); subprograms
 * and direct runs have no kernel ctx (PRINT_NO_KERNEL).
 */
static LLVMValueRef print_kernel(struct lift *l)
{
	int at = l->in->attach;
	unsigned off = at == EGPU_ATTACH_MEM ? offsetof(struct egpu_mem_ctx, kernel_id) :
					       offsetof(struct egpu_kernel_ctx, kernel_id);
	LLVMValueRef p, v;

	if (l->fn->start || (at != EGPU_ATTACH_ENTRY && at != EGPU_ATTACH_EXIT &&
			     at != EGPU_ATTACH_MEM))
		return lift_const(l->i64, PRINT_NO_KERNEL);
	p = LLVMBuildGEP2(l->b, l->i8, LLVMGetParam(l->fn->fn, 0),
			  (LLVMValueRef[]){ lift_const(l->i64, off) }, 1, "");
	v = LLVMBuildLoad2(l->b, l->i32, p, "kernel_id");
	LLVMSetAlignment(v, 4);
	return LLVMBuildZExt(l->b, v, l->i64, "");
}

/* A print helper: its arguments, then the kernel's id. */
static LLVMValueRef print_call(struct lift *l, const struct helper_info *h,
			       LLVMValueRef *args)
{
	char name[96];
	LLVMValueRef all[6];

	memcpy(all, args, h->nargs * sizeof(*args));
	all[h->nargs] = print_kernel(l);
	snprintf(name, sizeof(name), RUNTIME_PREFIX "%s", h->name);
	return lift_call(l, name, l->i64, all, h->nargs + 1);
}

/* Whether the runtime's egpu_dev_@helper writes the print ring. */
static bool prints(const char *helper)
{
	size_t n;
	const struct helper_info *t = helper_table(EGPU_HELPERS_GPU, &n);

	for (size_t i = 0; i < n; i++)
		if ((t[i].flags & HELPER_PRINTS) && !strcmp(t[i].name, helper))
			return true;
	return false;
}

unsigned ptx_runtime_needs(LLVMModuleRef mod)
{
	const size_t plen = strlen(RUNTIME_PREFIX);
	unsigned needs = 0;

	for (LLVMValueRef f = LLVMGetFirstFunction(mod); f;
	     f = LLVMGetNextFunction(f)) {
		size_t n;
		const char *name = LLVMGetValueName2(f, &n);

		if (!LLVMIsDeclaration(f) || !LLVMGetFirstUse(f) ||
		    strncmp(name, RUNTIME_PREFIX, plen))
			continue;
		needs |= JIT_NEED_RUNTIME;
		if (prints(name + plen))
			needs |= JIT_NEED_PRINT;
		if (!strcmp(name, USER_CALL))
			needs |= JIT_NEED_CALL;
	}
	return needs;
}

/*
 * A user helper: one record in the context's call ring, made by the
 * runtime (lib/device/call.cuh) from the call's shape, a constant; the
 * result is the reservation's (0 queued, negative dropped).
 */
static int ptx_user_helper(struct lift *l, const struct user_helper *u,
			   LLVMValueRef *args, LLVMValueRef *r0)
{
	LLVMValueRef call_args[2 + CALL_MAX_ARGS];
	uint64_t layout = u->info.nargs;

	for (unsigned i = 0; i < u->info.nargs; i++)
		if (u->info.args[i] != ARG_SCALAR)
			layout |= CALL_LAYOUT_ARG(i, u->size[i]);
	call_args[0] = lift_const(l->i64, (uint64_t)u->info.id);
	call_args[1] = lift_const(l->i64, layout);
	for (unsigned i = 0; i < CALL_MAX_ARGS; i++)
		call_args[2 + i] = i < u->info.nargs ? args[i] :
				   lift_const(l->i64, 0);
	*r0 = lift_call(l, USER_CALL, l->i64, call_args,
			2 + CALL_MAX_ARGS);
	return 0;
}

static int ptx_helper(struct lift *l, const struct helper_info *h,
		      LLVMValueRef *args, LLVMValueRef *r0)
{
	LLVMValueRef zero = lift_const(l->i64, 0);
	int err = ptx_warp_unsupported(l, h);

	if (err)
		return err;
	if (ptx_warp_helper(l, h->id, args, r0))
		return 0;
	switch (h->id) {
	case HELPER_KTIME_GET_NS:
	case HELPER_GLOBALTIMER:
		*r0 = ptx_inline_asm(l, l->i64, "mov.u64 $0, %globaltimer;", "=l");
		break;
	case HELPER_BLOCK_IDX:
		*r0 = store_xyz(l, "ctaid");
		break;
	case HELPER_BLOCK_DIM:
		*r0 = store_xyz(l, "ntid");
		break;
	case HELPER_THREAD_IDX:
		*r0 = store_xyz(l, "tid");
		break;
	case HELPER_GRID_DIM:
		*r0 = store_xyz(l, "nctaid");
		break;
	case HELPER_SMID:
		*r0 = sreg(l, "smid");
		break;
	case HELPER_WARPID:
		*r0 = sreg(l, "warpid");
		break;
	case HELPER_LANEID:
		*r0 = sreg(l, "laneid");
		break;
	case HELPER_MEMBAR:
		lift_call(l, "llvm.nvvm.membar.sys", l->void_t, NULL, 0);
		*r0 = zero;
		break;
	case HELPER_EXIT_THREAD:
		ptx_inline_asm(l, l->void_t, "exit;", "");
		*r0 = zero;
		break;
	case HELPER_GET_PID_TGID:
		*r0 = lift_const(l->i64, pid_tgid());
		break;
	default:
		*r0 = h->flags & HELPER_PRINTS ? print_call(l, h, args) :
						 extern_call(l, h, args);
		break;
	}
	return 0;
}

/*
 * Generic addresses in the thread's local window cannot take atomics. The
 * mov hides the address's origin, so LLVM never turns the atomic into a
 * (nonexistent) local-space one; isspacep.local decides at run time.
 */
static LLVMValueRef ptx_private_addr(struct lift *l, LLVMValueRef *addr)
{
	LLVMTypeRef is_type = LLVMFunctionType(l->i1, &l->ptr, 1, 0);

	*addr = ptx_hide_origin(l, *addr);
	return LLVMBuildCall2(l->b, is_type,
			      lift_function(l, "llvm.nvvm.isspacep.local",
					    is_type),
			      addr, 1, "");
}

/* Atomics on map values: warp-aggregated (ptx_warp.c, warp_agg.c). */
static LLVMValueRef ptx_atomic_rmw(struct lift *l, LLVMAtomicRMWBinOp op,
				   LLVMValueRef addr, LLVMValueRef val,
				   bool fetch)
{
	return ptx_warp_rmw(l, op, addr, val,
			    fetch ? WARP_RMW_FETCH | WARP_RMW_SEQ_CST : 0);
}

const struct lift_backend ptx_backend = {
	.atomic_rmw = ptx_atomic_rmw,
	.helper = ptx_helper,
	.user_helper = ptx_user_helper,
	.check_align = true,
	.ctx_align = 8,
	.private_addr = ptx_private_addr,
	.shared_addr = ptx_global_addr,
	.sm_id = ptx_sm_id,
};
