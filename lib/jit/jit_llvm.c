/* SPDX-License-Identifier: MIT */
/* LLVM set-up, input checks, verification and the pass pipeline. */
#include <ctype.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "jit_llvm.h"

/*
 * The IR pipeline: not default<O2>, which costs three times as much for
 * little gain here. Lifted code needs its register and stack allocas
 * promoted (sroa), local calls inlined, constants folded through helper
 * and map-lookup lowering (instcombine, simplifycfg) and redundant loads
 * and stores removed (early-cse, gvn, dse); ptxas does the rest on the GPU.
 * sroa runs again once the folding made helpers' sizes and offsets
 * constants: stack slots a helper copies bytes into (read_value's
 * destination) become registers, and no stack store stays behind.
 * instcombine runs again once simplifycfg has dropped a map lookup's other
 * arms: it then sees the array value's address (base + key * value_size)
 * and raises the alignment of the accesses through it, so a probe's 8-byte
 * map field loads as one ld.u64, not eight ld.u8 and their shifts (slower
 * on the GPU, and a quarter of the instrumented counter's ptxas time).
 */
#define JIT_PIPELINE                                                           \
	"cgscc(inline),globaldce,"                                             \
	"function(sroa,early-cse<memssa>,instcombine,simplifycfg,sroa,"        \
	"instcombine,gvn,dse,adce,simplifycfg)"

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;

/*
 * LLVM reports some failures (an intrinsic its back end cannot select, ...)
 * through report_fatal_error(), which calls the installed handler and then
 * exits the process. Ours jumps back to jit_guarded() on threads inside
 * one; elsewhere (the embedding application's own LLVM use) it prints the
 * reason as LLVM would, and LLVM exits as it would have.
 */
static _Thread_local jmp_buf *fatal_env;
static _Thread_local char fatal_reason[256];

static void on_llvm_fatal(const char *reason)
{
	if (!fatal_env) {
		fprintf(stderr, "LLVM ERROR: %s\n", reason);
		return;
	}
	snprintf(fatal_reason, sizeof(fatal_reason), "%s", reason);
	longjmp(*fatal_env, 1);
}

int jit_guarded(const char *name, int (*fn)(void *arg), void *arg)
{
	jmp_buf env, *outer = fatal_env;
	int err;

	jit_llvm_init();
	if (setjmp(env)) {
		fatal_env = outer;
		/*
		 * What LLVM was working on is leaked: its objects were left
		 * mid-operation and cannot be freed safely. This is rare (the
		 * callers check targets and helpers first) and bounded.
		 */
		return err_set(EGPU_EJIT, "%s: LLVM failed: %s", name,
			       fatal_reason);
	}
	fatal_env = &env;
	err = fn(arg);
	fatal_env = outer;
	return err;
}

static void llvm_init_once(void)
{
	LLVMInstallFatalErrorHandler(on_llvm_fatal);
	LLVMInitializeNVPTXTargetInfo();
	LLVMInitializeNVPTXTarget();
	LLVMInitializeNVPTXTargetMC();
	LLVMInitializeNVPTXAsmPrinter();
	LLVMInitializeNativeTarget();
	LLVMInitializeNativeAsmPrinter();
}

void jit_llvm_init(void)
{
	pthread_once(&llvm_once, llvm_init_once);
}

/* Names become PTX identifiers: [A-Za-z_$][A-Za-z0-9_$]*. */
static bool valid_name(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '$')
			return false;
	return true;
}

int jit_check_input(const struct jit_input *in)
{
	if (!in || !in->name)
		return err_set(EGPU_EINVAL, "jit: no program or no name");
	if (!valid_name(in->name) || strlen(in->name) > JIT_NAME_MAX)
		return err_set(EGPU_EINVAL, "jit: \"%.64s\" is not a valid function name (identifier of at most %d characters)",
			       in->name, JIT_NAME_MAX);
	if (!in->insns || !in->insn_cnt)
		return err_set(EGPU_EINVAL, "%s: no instructions", in->name);
	if (in->map_cnt && !in->maps)
		return err_set(EGPU_EINVAL, "%s: %zu maps but no map table",
			       in->name, in->map_cnt);
	if (in->helpers != EGPU_HELPERS_GPU &&
	    in->helpers != EGPU_HELPERS_CONFORMANCE)
		return err_set(EGPU_EINVAL, "%s: unknown helper set %d",
			       in->name, in->helpers);
	return 0;
}

int jit_llvm_err(LLVMErrorRef e, const char *name, const char *what)
{
	char *msg = LLVMGetErrorMessage(e);

	err_set(EGPU_EJIT, "%s: %s: %s", name, what, msg);
	LLVMDisposeErrorMessage(msg);
	return EGPU_EJIT;
}

int jit_optimize(const char *name, LLVMModuleRef mod, LLVMTargetMachineRef tm)
{
	LLVMPassBuilderOptionsRef opts;
	LLVMErrorRef e;
	char *msg = NULL;

	/* A lifter bug must give an error, never a crash inside LLVM. */
	if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
		err_set(EGPU_EJIT, "%s: invalid IR (a JIT bug): %s", name, msg);
		LLVMDisposeMessage(msg);
		return EGPU_EJIT;
	}
	LLVMDisposeMessage(msg);
	opts = LLVMCreatePassBuilderOptions();
	e = LLVMRunPasses(mod, JIT_PIPELINE, tm, opts);
	LLVMDisposePassBuilderOptions(opts);
	return e ? jit_llvm_err(e, name, "optimisation") : 0;
}
