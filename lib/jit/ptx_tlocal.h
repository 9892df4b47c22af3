/* SPDX-License-Identifier: MIT */
/* Thread-local map values as registers in the PTX back end (ptx_tlocal.c). */
#ifndef EGPU_JIT_PTX_TLOCAL_H
#define EGPU_JIT_PTX_TLOCAL_H

#include <llvm-c/Core.h>

#include "jit.h"

/* Turn the optimised module's thread-local accesses into register moves. */
int ptx_thread_local(const struct jit_input *in, LLVMModuleRef mod);

#endif
