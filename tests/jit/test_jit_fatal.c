/* SPDX-License-Identifier: MIT */
/*
 * A fatal error inside LLVM (which would exit the process) comes back from
 * jit_guarded() as EGPU_EJIT with LLVM's reason, and the JIT keeps working.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "core/core.h"
#include "jit/jit_llvm.h"
#include "jit_test.h"
#include "test_util.h"

/*
 * What LLVM was working on when it failed is abandoned by design (see
 * jit_guarded): LeakSanitizer, where present, ignores what is allocated
 * meanwhile.
 */
void __lsan_disable(void) __attribute__((weak));
void __lsan_enable(void) __attribute__((weak));

/* match.any.sync for sm_60, which NVPTX cannot select: a fatal error. */
static int emit_unselectable(void *arg)
{
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("fatal", ctx);
	LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(ctx);
	LLVMTypeRef match_t = LLVMFunctionType(i32, (LLVMTypeRef[]){ i32, i64 }, 2, 0);
	LLVMTypeRef fn_t = LLVMFunctionType(i32, &i64, 1, 0);
	LLVMValueRef fn = LLVMAddFunction(mod, "f", fn_t);
	LLVMValueRef match = LLVMAddFunction(mod, "llvm.nvvm.match.any.sync.i64",
					     match_t);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
	LLVMMemoryBufferRef buf;
	LLVMTargetMachineRef tm;
	LLVMTargetRef target;
	char *msg = NULL;

	(void)arg;
	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, fn, ""));
	LLVMBuildRet(b, LLVMBuildCall2(b, match_t, match,
				       (LLVMValueRef[]){ LLVMConstInt(i32, ~0u, 0),
							 LLVMGetParam(fn, 0) },
				       2, ""));
	LLVMSetTarget(mod, "nvptx64-nvidia-cuda");
	ck_assert_int_eq(LLVMGetTargetFromTriple("nvptx64-nvidia-cuda", &target, &msg), 0);
	tm = LLVMCreateTargetMachine(target, "nvptx64-nvidia-cuda", "sm_60", "",
				     LLVMCodeGenLevelNone, LLVMRelocDefault,
				     LLVMCodeModelDefault);
	LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &msg, &buf);
	ck_abort_msg("LLVM selected match.any.sync for sm_60");
	return 0;
}

START_TEST(fatal_error_is_returned)
{
	const struct bpf_insn p[] = { MOV64(0, 7), EXIT };
	struct jit_input in = test_input("after", p, ARRAY_SIZE(p), EGPU_HELPERS_GPU);
	char *ptx = NULL;

	for (int i = 0; i < 2; i++) {
		int err;

		if (__lsan_disable)
			__lsan_disable();
		err = jit_guarded("unselectable", emit_unselectable, NULL);
		if (__lsan_enable)
			__lsan_enable();
		ck_assert_int_eq(err, EGPU_EJIT);
		ck_assert_msg(strstr(egpu_errmsg(), "unselectable: LLVM failed:") &&
				      strstr(egpu_errmsg(), "match.any.sync"),
			      "%s", egpu_errmsg());
	}
	ck_assert_int_eq(jit_ptx(&in, "sm_60", false, &ptx, NULL, NULL), 0);
	free(ptx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jit_fatal");
	TCase *tc = tcase_create("fatal");

	tcase_add_test(tc, fatal_error_is_returned);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
