/* SPDX-License-Identifier: MIT */
/* LLVM plumbing shared by the PTX and host back ends. */
#ifndef EGPU_JIT_LLVM_H
#define EGPU_JIT_LLVM_H

#include <llvm-c/Error.h>
#include <llvm-c/TargetMachine.h>

#include "lift.h"

/* Back ends (helper lowering): ptx_lower.c and host_lower.c. */
extern const struct lift_backend ptx_backend;
extern const struct lift_backend host_backend;

/* Initialise the NVPTX and native targets once per process. */
void jit_llvm_init(void);
/*
 * Run @fn(@arg), which calls into LLVM, and return its result; a fatal
 * error inside LLVM (which would exit the process) returns EGPU_EJIT with
 * LLVM's reason instead. @fn must keep its LLVM objects to itself: on such
 * an error they are abandoned, never freed.
 */
int jit_guarded(const char *name, int (*fn)(void *arg), void *arg);
/* Reject a malformed jit_input (EGPU_EINVAL). */
int jit_check_input(const struct jit_input *in);
/* Turn @e into an EGPU_EJIT message about @what; consumes @e. */
int jit_llvm_err(LLVMErrorRef e, const char *name, const char *what);
/* Check the lifted module and run the optimisation pipeline for @tm. */
int jit_optimize(const char *name, LLVMModuleRef mod, LLVMTargetMachineRef tm);

#endif
