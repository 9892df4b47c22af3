/* SPDX-License-Identifier: MIT */
/* The PTX back end: lifted module -> NVPTX -> PTX text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm/Config/llvm-config.h>

#include "core/target.h"
#include "jit_llvm.h"
#include "ptx_lower.h"
#include "ptx_tlocal.h"

#define PTX_TRIPLE "nvptx64-nvidia-cuda"

/* Newest GPU this LLVM generates code for; PTX runs on later GPUs too. */
#if LLVM_VERSION_MAJOR >= 16
#define PTX_MAX_SM 90
#else
#define PTX_MAX_SM 86
#endif

/* The targets LLVM's NVPTX back end knows (up to PTX_MAX_SM). */
static const unsigned known_sm[] = { 30, 32, 35, 37, 50, 52, 53, 60, 61, 62,
				     70, 72, 75, 80, 86, 87, 89, 90 };

const unsigned *jit_ptx_targets(size_t *n)
{
	size_t i = 0;

	while (i < sizeof(known_sm) / sizeof(known_sm[0]) &&
	       known_sm[i] <= PTX_MAX_SM)
		i++;
	*n = i;
	return known_sm;
}

static bool sm_known(long v)
{
	size_t n;
	const unsigned *sm = jit_ptx_targets(&n);

	for (size_t i = 0; i < n; i++)
		if (sm[i] == v)
			return true;
	return false;
}

/*
 * The target, checked (core/target.c), and the one LLVM generates for
 * (*@num): itself up to PTX_MAX_SM, PTX_MAX_SM for later GPUs, whose PTX
 * then gets their own header (retarget()). A suffixed target up to
 * PTX_MAX_SM ("sm_90a") gets the plain target's code, which it accepts;
 * the PTX linker gives the final module the application's target.
 */
static int parse_sm(const char *name, const char *sm, struct gpu_target *t,
		    unsigned *num)
{
	int err = target_parse(name, sm ? sm : "sm_90", t);

	if (err)
		return err;
	if (t->sm <= PTX_MAX_SM && !sm_known(t->sm))
		return err_set(EGPU_EINVAL, "%s: this LLVM has no code generator for %s",
			       name, sm);
	*num = t->sm < PTX_MAX_SM ? t->sm : PTX_MAX_SM;
	return 0;
}

/*
 * PTX made for PTX_MAX_SM, retargeted to @t, a later GPU: its .target line
 * names @t and its .version is at least the ISA that names @t. The code
 * itself is PTX_MAX_SM's, which every later GPU runs.
 */
static int retarget(const char *name, const struct gpu_target *t, char **ptx,
		    size_t *len)
{
	const char *ver = strstr(*ptx, "\n.version "), *tgt, *eol;
	unsigned major = 0, minor = 0, isa;
	struct strbuf sb;

	tgt = ver ? strstr(ver, "\n.target ") : NULL;
	if (!tgt || sscanf(ver, "\n.version %u.%u", &major, &minor) != 2)
		return err_set(EGPU_EJIT, "%s: LLVM's PTX has no .version and .target lines",
			       name);
	isa = major * 10 + minor > t->ptx_isa ? major * 10 + minor : t->ptx_isa;
	sb_init(&sb);
	sb_addn(&sb, *ptx, (size_t)(ver - *ptx));
	sb_printf(&sb, "\n.version %u.%u", isa / 10, isa % 10);
	eol = strchr(ver + 1, '\n');
	sb_addn(&sb, eol, (size_t)(tgt - eol));
	sb_printf(&sb, "\n.target sm_%u", t->sm);
	if (t->suffix)
		sb_addn(&sb, &t->suffix, 1);
	eol = strchr(tgt + 1, '\n');
	sb_adds(&sb, eol ? eol : "");
	if (!sb_ok(&sb)) {
		sb_free(&sb);
		return err_set(EGPU_ENOMEM, "%s: out of memory", name);
	}
	free(*ptx);
	*ptx = sb_detach(&sb, len);
	return 0;
}

static int target_machine(const char *name, unsigned sm,
			  LLVMTargetMachineRef *tm)
{
	LLVMTargetRef target;
	char *msg = NULL, cpu[16];

	snprintf(cpu, sizeof(cpu), "sm_%u", sm);

	if (LLVMGetTargetFromTriple(PTX_TRIPLE, &target, &msg)) {
		err_set(EGPU_EJIT, "%s: no NVPTX target in LLVM: %s", name, msg);
		LLVMDisposeMessage(msg);
		return EGPU_EJIT;
	}
	/*
	 * No codegen optimisation: the IR is optimised already, and ptxas
	 * (or the driver) optimises the PTX; this halves translation time.
	 */
	/* Before sm_75 LLVM picks a PTX version without activemask (6.2). */
	*tm = LLVMCreateTargetMachine(target, PTX_TRIPLE, cpu,
				      sm < 75 ? "+ptx63" : "",
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

struct ptx_job {
	const struct jit_input *in;
	struct gpu_target target;
	unsigned sm; /* the target LLVM generates for */
	bool kernel;
	char **ptx;
	size_t *len;
	unsigned *needs;
};

/* Everything that calls LLVM, under jit_guarded(). */
static int ptx_translate(void *arg)
{
	const struct ptx_job *job = arg;
	const struct jit_input *in = job->in;
	LLVMTargetMachineRef tm;
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	int err;

	err = target_machine(in->name, job->sm, &tm);
	if (err)
		return err;
	ctx = LLVMContextCreate();
	LLVMContextSetDiscardValueNames(ctx, 1);
	mod = LLVMModuleCreateWithNameInContext(in->name, ctx);
	set_target(mod, tm);
	err = lift_program(in, &ptx_backend, job->sm, ctx, mod);
	if (!err && job->kernel)
		err = add_kernel(ctx, mod, in->name);
	if (!err)
		err = jit_optimize(in->name, mod, tm);
	if (!err)
		err = ptx_thread_local(in, mod);
	if (!err && job->needs)
		*job->needs = ptx_runtime_needs(mod);
	if (!err)
		err = emit_ptx(in->name, tm, mod, job->ptx, job->len);
	if (!err && job->target.sm > job->sm)
		err = retarget(in->name, &job->target, job->ptx, job->len);
	LLVMDisposeModule(mod);
	LLVMContextDispose(ctx);
	LLVMDisposeTargetMachine(tm);
	return err;
}

int jit_ptx(const struct jit_input *in, const char *sm, bool kernel,
	    char **ptx, size_t *len, unsigned *needs)
{
	struct ptx_job job = { .in = in, .kernel = kernel, .ptx = ptx,
			       .len = len, .needs = needs };
	int err;

	err = jit_check_input(in);
	if (err)
		return err;
	if (!ptx)
		return err_set(EGPU_EINVAL, "%s: no place for the PTX", in->name);
	*ptx = NULL;
	err = parse_sm(in->name, sm, &job.target, &job.sm);
	if (err)
		return err;
	return jit_guarded(in->name, ptx_translate, &job);
}
