/* SPDX-License-Identifier: MIT */
/*
 * The host back end: the lifted module compiled for this CPU by ORC LLJIT.
 * Each program gets its own LLJIT instance, so freeing a program frees all
 * its code and programs never share symbols; helpers are absolute symbols
 * in the instance's main JITDylib.
 */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>

#include "host_helpers.h"
#include "host_warp.h"
#include "jit_llvm.h"

typedef uint64_t (*host_prog_fn)(void *ctx, uint64_t ctx_len);

struct jit_host {
	LLVMOrcLLJITRef jit;
	host_prog_fn fn;
};

/*
 * An LLJIT whose code generator does no optimisation of its own (fast
 * instruction selection): the IR comes optimised, and code generation at
 * the default level costs twenty times as much.
 */
static int create_jit(const char *name, LLVMOrcLLJITRef *jit)
{
	char *triple = LLVMGetDefaultTargetTriple();
	char *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures();
	LLVMOrcLLJITBuilderRef builder;
	LLVMTargetMachineRef tm = NULL;
	LLVMTargetRef target;
	char *msg = NULL;
	LLVMErrorRef e;

	if (LLVMGetTargetFromTriple(triple, &target, &msg) == 0)
		tm = LLVMCreateTargetMachine(target, triple, cpu, features,
					     LLVMCodeGenLevelNone,
					     LLVMRelocDefault,
					     LLVMCodeModelJITDefault);
	LLVMDisposeMessage(triple);
	LLVMDisposeMessage(cpu);
	LLVMDisposeMessage(features);
	if (!tm) {
		err_set(EGPU_EJIT, "%s: no code generator for this CPU: %s", name,
			msg ? msg : "unknown");
		LLVMDisposeMessage(msg);
		return EGPU_EJIT;
	}
	builder = LLVMOrcCreateLLJITBuilder();
	LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
		builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
	e = LLVMOrcCreateLLJIT(jit, builder);
	return e ? jit_llvm_err(e, name, "creating the CPU JIT") : 0;
}

/*
 * The C library's functions that LLVM's code generator calls for the
 * memory intrinsics it does not expand inline: a helper's copy whose
 * length is not one constant (read_mem of 4 or 8 bytes, merged into one
 * copy of either length).
 */
static const struct host_helper libc_calls[] = {
	{ 0, "memcpy", (void (*)(void))memcpy },
	{ 0, "memmove", (void (*)(void))memmove },
	{ 0, "memset", (void (*)(void))memset },
};

/* Symbol @i of the helpers, the GPU map helpers, libc_calls and the
 * warp model's calls. */
static const struct host_helper *helper_symbol(size_t i)
{
	size_t ngpu;
	const struct host_helper *gpu = host_gpu_helpers(&ngpu);

	if (i < host_helper_cnt)
		return &host_helpers[i];
	i -= host_helper_cnt;
	if (i < ngpu)
		return &gpu[i];
	i -= ngpu;
	return i < ARRAY_SIZE(libc_calls) ? &libc_calls[i] :
	       &host_warp_calls[i - ARRAY_SIZE(libc_calls)];
}

/* The symbols of helper_symbol(), absolute in @jit. */
static int define_helpers(const char *name, LLVMOrcLLJITRef jit)
{
	size_t ngpu, n;
	LLVMOrcCSymbolMapPair *syms;
	LLVMOrcMaterializationUnitRef mu;
	LLVMErrorRef e;

	host_gpu_helpers(&ngpu);
	n = host_helper_cnt + ngpu + ARRAY_SIZE(libc_calls) + host_warp_call_cnt;
	syms = calloc(n, sizeof(*syms));
	if (!syms)
		return err_set(EGPU_ENOMEM, "%s: out of memory", name);
	for (size_t i = 0; i < n; i++) {
		const struct host_helper *h = helper_symbol(i);

		syms[i].Name = LLVMOrcLLJITMangleAndIntern(jit, h->symbol);
		syms[i].Sym.Address = (uintptr_t)h->fn;
		syms[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported |
						 LLVMJITSymbolGenericFlagsCallable;
	}
	mu = LLVMOrcAbsoluteSymbols(syms, n);
	free(syms);
	e = LLVMOrcJITDylibDefine(LLVMOrcLLJITGetMainJITDylib(jit), mu);
	if (e) {
		LLVMOrcDisposeMaterializationUnit(mu);
		return jit_llvm_err(e, name, "defining helpers");
	}
	return 0;
}

/* Lift and optimise @in into a module of @tsctx made for @jit. */
static int build_module(const struct jit_input *in, LLVMOrcLLJITRef jit,
			LLVMOrcThreadSafeContextRef tsctx, LLVMModuleRef *out)
{
	LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(tsctx);
	struct lift_backend be = host_backend;
	LLVMModuleRef mod;
	int err;

	LLVMContextSetDiscardValueNames(ctx, 1);
	mod = LLVMModuleCreateWithNameInContext(in->name, ctx);
	LLVMSetTarget(mod, LLVMOrcLLJITGetTripleString(jit));
	LLVMSetDataLayout(mod, LLVMOrcLLJITGetDataLayoutStr(jit));
	if (in->warp_model)
		be.atomic_rmw = host_warp_rmw;
	err = lift_program(in, &be, 0, ctx, mod);
	if (!err)
		err = jit_optimize(in->name, mod, NULL);
	if (err) {
		LLVMDisposeModule(mod);
		return err;
	}
	*out = mod;
	return 0;
}

static int add_program(const struct jit_input *in, struct jit_host *jh)
{
	LLVMOrcThreadSafeContextRef tsctx = LLVMOrcCreateNewThreadSafeContext();
	LLVMOrcExecutorAddress addr;
	LLVMModuleRef mod;
	LLVMErrorRef e;
	int err;

	err = build_module(in, jh->jit, tsctx, &mod);
	if (!err) {
		/* The JIT owns the module (and keeps the context alive). */
		e = LLVMOrcLLJITAddLLVMIRModule(jh->jit,
						LLVMOrcLLJITGetMainJITDylib(jh->jit),
						LLVMOrcCreateNewThreadSafeModule(mod, tsctx));
		if (e)
			err = jit_llvm_err(e, in->name, "adding the module");
	}
	LLVMOrcDisposeThreadSafeContext(tsctx);
	if (err)
		return err;
	e = LLVMOrcLLJITLookup(jh->jit, &addr, in->name);
	if (e)
		return jit_llvm_err(e, in->name, "compiling");
	jh->fn = (host_prog_fn)(uintptr_t)addr;
	return 0;
}

struct host_job {
	const struct jit_input *in;
	struct jit_host *jh;
};

/* Everything that calls LLVM, under jit_guarded(). */
static int host_build(void *arg)
{
	const struct host_job *job = arg;
	int err;

	err = create_jit(job->in->name, &job->jh->jit);
	if (err) {
		free(job->jh);
		return err;
	}
	err = define_helpers(job->in->name, job->jh->jit);
	if (!err)
		err = add_program(job->in, job->jh);
	if (err)
		jit_host_free(job->jh);
	return err;
}

int jit_host_new(const struct jit_input *in, struct jit_host **out)
{
	struct host_job job = { .in = in };
	int err;

	err = jit_check_input(in);
	if (err)
		return err;
	if (!out)
		return err_set(EGPU_EINVAL, "%s: no place for the program",
			       in->name);
	*out = NULL;
	job.jh = calloc(1, sizeof(*job.jh));
	if (!job.jh)
		return err_set(EGPU_ENOMEM, "%s: out of memory", in->name);
	err = jit_guarded(in->name, host_build, &job);
	if (!err)
		*out = job.jh;
	return err;
}

uint64_t jit_host_call(const struct jit_host *jh, void *ctx, uint64_t ctx_len)
{
	return jh->fn(ctx, ctx_len);
}

int jit_host_call_gpu(const struct jit_host *jh, void *ctx, uint64_t ctx_len,
		      int64_t timer_offset, uint64_t *r0)
{
	host_gpu_begin(timer_offset);
	*r0 = jh->fn(ctx, ctx_len);
	return host_gpu_end();
}

void jit_host_free(struct jit_host *jh)
{
	LLVMErrorRef e;

	if (!jh)
		return;
	/* Disposal errors cannot be acted on; consume the message. */
	e = LLVMOrcDisposeLLJIT(jh->jit);
	if (e)
		LLVMConsumeError(e);
	free(jh);
}
