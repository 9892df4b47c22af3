/* SPDX-License-Identifier: MIT */
/* The PTX back end: lifted module -> NVPTX -> PTX text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm/Config/llvm-config.h>

#include "jit_llvm.h"
#include "ptx_tlocal.h"

#define PTX_TRIPLE "nvptx64-nvidia-cuda"

/* Newest GPU this LLVM generates code for; PTX runs on later GPUs too. */
#if LLVM_VERSION_MAJOR >= 16
#define PTX_MAX_SM 90
#else
#define PTX_MAX_SM 86
#endif

/*
 * "sm_NN" with an optional feature suffix ("sm_90a"): the code is made for
 * the plain sm_NN (at most PTX_MAX_SM), which the suffixed target accepts;
 * the PTX linker gives the final module the application's target.
 */
static int parse_sm(const char *name, const char *sm, char *cpu, size_t n)
{
	char *end;
	long v;

	if (!sm)
		sm = "sm_90";
	v = strncmp(sm, "sm_", 3) ? -1 : strtol(sm + 3, &end, 10);
	if (v < 30 || v > 999 || end == sm + 3 ||
	    (*end && (strchr("af", *end) == NULL || end[1])))
		return err_set(EGPU_EINVAL, "%s: invalid GPU target \"%s\" (want sm_NN)",
			       name, sm);
	snprintf(cpu, n, "sm_%ld", v < PTX_MAX_SM ? v : PTX_MAX_SM);
	return 0;
}

static int target_machine(const char *name, const char *cpu,
			  LLVMTargetMachineRef *tm)
{
	LLVMTargetRef target;
	char *msg = NULL;

	if (LLVMGetTargetFromTriple(PTX_TRIPLE, &target, &msg)) {
		err_set(EGPU_EJIT, "%s: no NVPTX target in LLVM: %s", name, msg);
		LLVMDisposeMessage(msg);
		return EGPU_EJIT;
	}
	/*
	 * No codegen optimisation: the IR is optimised already, and ptxas
	 * (or the driver) optimises the PTX; this halves translation time.
	 */
	*tm = LLVMCreateTargetMachine(target, PTX_TRIPLE, cpu, "",
				      LLVMCodeGenLevelNone, LLVMRelocDefault,
				      LLVMCodeModelDefault);
	if (!*tm)
		return err_set(EGPU_EJIT, "%s: cannot create an NVPTX %s target",
			       name, cpu);
	return 0;
}

/* NAME_kernel(ctx, ctx_len, u64 *r0): runs NAME once and stores r0. */
static int add_kernel(LLVMContextRef ctx, LLVMModuleRef mod, const char *name)
{
	LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(ctx);
	LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
	LLVMTypeRef prog_t = LLVMFunctionType(i64, (LLVMTypeRef[]){ ptr, i64 },
					      2, 0);
	LLVMTypeRef kern_t = LLVMFunctionType(LLVMVoidTypeInContext(ctx),
					      (LLVMTypeRef[]){ ptr, i64, ptr },
					      3, 0);
	size_t n = strlen(name) + sizeof("_kernel");
	char *kname = malloc(n);
	LLVMBuilderRef b;
	LLVMValueRef k, r0;
	LLVMMetadataRef md[3];

	if (!kname)
		return err_set(EGPU_ENOMEM, "%s: out of memory", name);
	snprintf(kname, n, "%s_kernel", name);
	k = LLVMAddFunction(mod, kname, kern_t);
	free(kname);
	b = LLVMCreateBuilderInContext(ctx);
	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, k, ""));
	r0 = LLVMBuildCall2(b, prog_t, LLVMGetNamedFunction(mod, name),
			    (LLVMValueRef[]){ LLVMGetParam(k, 0),
					      LLVMGetParam(k, 1) },
			    2, "");
	LLVMSetAlignment(LLVMBuildStore(b, r0, LLVMGetParam(k, 2)), 8);
	LLVMBuildRetVoid(b);
	LLVMDisposeBuilder(b);
	md[0] = LLVMValueAsMetadata(k);
	md[1] = LLVMMDStringInContext2(ctx, "kernel", 6);
	md[2] = LLVMValueAsMetadata(LLVMConstInt(i32, 1, 0));
	LLVMAddNamedMetadataOperand(mod, "nvvm.annotations",
				    LLVMMetadataAsValue(ctx,
							LLVMMDNodeInContext2(ctx, md, 3)));
	return 0;
}

static int emit_ptx(const char *name, LLVMTargetMachineRef tm,
		    LLVMModuleRef mod, char **ptx, size_t *len)
{
	LLVMMemoryBufferRef buf;
	char *msg = NULL;
	size_t n;

	if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &msg,
						&buf)) {
		err_set(EGPU_EJIT, "%s: PTX generation: %s", name, msg);
		LLVMDisposeMessage(msg);
		return EGPU_EJIT;
	}
	n = LLVMGetBufferSize(buf);
	*ptx = malloc(n + 1);
	if (*ptx) {
		memcpy(*ptx, LLVMGetBufferStart(buf), n);
		(*ptx)[n] = '\0';
		if (len)
			*len = n;
	}
	LLVMDisposeMemoryBuffer(buf);
	return *ptx ? 0 : err_set(EGPU_ENOMEM, "%s: out of memory", name);
}

static void set_target(LLVMModuleRef mod, LLVMTargetMachineRef tm)
{
	LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);

	LLVMSetTarget(mod, PTX_TRIPLE);
	LLVMSetModuleDataLayout(mod, dl);
	LLVMDisposeTargetData(dl);
}

int jit_ptx(const struct jit_input *in, const char *sm, bool kernel,
	    char **ptx, size_t *len)
{
	LLVMTargetMachineRef tm;
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	char cpu[16];
	int err;

	err = jit_check_input(in);
	if (err)
		return err;
	if (!ptx)
		return err_set(EGPU_EINVAL, "%s: no place for the PTX", in->name);
	*ptx = NULL;
	err = parse_sm(in->name, sm, cpu, sizeof(cpu));
	if (err)
		return err;
	jit_llvm_init();
	err = target_machine(in->name, cpu, &tm);
	if (err)
		return err;
	ctx = LLVMContextCreate();
	LLVMContextSetDiscardValueNames(ctx, 1);
	mod = LLVMModuleCreateWithNameInContext(in->name, ctx);
	set_target(mod, tm);
	err = lift_program(in, &ptx_backend, ctx, mod);
	if (!err && kernel)
		err = add_kernel(ctx, mod, in->name);
	if (!err)
		err = jit_optimize(in->name, mod, tm);
	if (!err)
		err = ptx_thread_local(in, mod);
	if (!err)
		err = emit_ptx(in->name, tm, mod, ptx, len);
	LLVMDisposeModule(mod);
	LLVMContextDispose(ctx);
	LLVMDisposeTargetMachine(tm);
	return err;
}
