/* SPDX-License-Identifier: MIT */
/*
 * Host probes (SEC("uprobe...")/SEC("uretprobe...") programs, or any
 * program named by EGPU_ATTACH_UPROBES=PROG=FUNC,...): run on the CPU back
 * end when the application calls one of the CUDA API functions below,
 * with a struct egpu_pt_regs of the call's arguments (x86-64 layout,
 * include/egpu/ctx.h). uprobe.c keeps which programs go where and runs
 * them; hook_api.c holds the functions that stand in for the API's.
 */
#ifndef EGPU_ATTACH_UPROBE_H
#define EGPU_ATTACH_UPROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "egpu.h"
#include "egpu/ctx.h"

/* The functions a host probe can name: the CUDA runtime's (reached where
 * the application links libcudart.so) and the driver's. */
#define HOST_FNS(X)                                                           \
	X(cudaLaunchKernel) X(cudaMemcpy) X(cudaMemcpyAsync) X(cudaMemset)    \
	X(cudaMalloc) X(cudaFree) X(cudaDeviceSynchronize)                    \
	X(cudaStreamSynchronize)                                              \
	X(cuLaunchKernel) X(cuLaunchKernelEx) X(cuMemcpy) X(cuMemcpyAsync)    \
	X(cuMemcpyHtoD_v2) X(cuMemcpyDtoH_v2) X(cuMemcpyDtoD_v2)              \
	X(cuMemcpyHtoDAsync_v2) X(cuMemcpyDtoHAsync_v2) X(cuMemsetD8_v2)      \
	X(cuMemsetD32_v2) X(cuMemAlloc_v2) X(cuMemFree_v2) X(cuMemAllocAsync) \
	X(cuMemFreeAsync) X(cuCtxSynchronize) X(cuStreamSynchronize)          \
	X(cuModuleLoadData) X(cuModuleLoadDataEx) X(cuLibraryLoadData)

#define HOST_FN_ENUM(fn) HOST_FN_##fn,
enum host_fn { HOST_FNS(HOST_FN_ENUM) HOST_FN_CNT };
#undef HOST_FN_ENUM

/* The function named @name (cuda.h's unversioned names, cuMemAlloc for
 * cuMemAlloc_v2, included), or HOST_FN_CNT. */
enum host_fn host_fn_find(const char *name);
const char *host_fn_name(enum host_fn fn);

/*
 * Whether some host probe wants @fn (hooks are handed out only then):
 * uprobe.c reads, before main, which functions the probe EGPU_ATTACH
 * names has host probes on (and EGPU_ATTACH_UPROBES adds), the probe
 * loaded offline; problems are printed, the rest still attach.
 */
bool uprobe_wanted(enum host_fn fn);

/*
 * Run the uprobes of @fn on @regs (its arguments), or with @ret set the
 * uretprobes with regs->ax = @ret. Nothing when the calling thread is
 * inside libegpu or a probe, or the agent has no probe.
 */
void uprobe_fire(enum host_fn fn, struct egpu_pt_regs *regs, bool ret,
		 uint64_t result);

/* A call's arguments where a uprobe would see them (hook_api.c). */
#define HOOK_STACK_MAX 8
struct call {
	struct egpu_pt_regs regs;
	uint64_t stack[1 + HOOK_STACK_MAX]; /* return address (0), arguments */
};
#define U(x) ((uint64_t)(uintptr_t)(x))
#define ARGS_N(...) (sizeof((uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t))

/* Fill @c with the @n arguments @a of a call of @real and run @fn's
 * uprobes. */
void hook_enter(enum host_fn fn, struct call *c, const uint64_t *a,
		size_t n, void *real);
/* Set while libcudart.so's cudaLaunchKernel runs (hook_rt.c). */
extern __thread int hook_in_rt_launch;
/* Our function for driver function @name, whose own is @real; NULL: none
 * (no host probe wants it). */
void *hook_api_wrap(const char *name, void *real);

/* The agent's object once set up (agent.c), NULL if it has none. */
egpu_obj *agent_obj(void);

#endif
