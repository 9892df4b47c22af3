/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver, opened with dlopen("libcuda.so.1") at first use so that
 * libegpu loads and works (without GPU features) where there is no driver.
 * Call through cu()->name(...) with the names of <cuda.h>; versioned
 * symbols (cuMemAlloc_v2, ...) are resolved as cuda.h maps them.
 */
#ifndef EGPU_CU_H
#define EGPU_CU_H

#include <cuda.h>

#define CU_FUNCS(X)                                                           \
	X(cuInit)                                                             \
	X(cuGetErrorName)                                                     \
	X(cuGetErrorString)                                                   \
	X(cuDeviceGetCount)                                                   \
	X(cuDeviceGet)                                                        \
	X(cuDeviceGetAttribute)                                               \
	X(cuDeviceGetUuid)                                                    \
	X(cuDevicePrimaryCtxRetain)                                           \
	X(cuDevicePrimaryCtxRelease)                                          \
	X(cuCtxGetCurrent)                                                    \
	X(cuCtxSetCurrent)                                                    \
	X(cuCtxGetDevice)                                                     \
	X(cuCtxSynchronize)                                                   \
	X(cuModuleLoadDataEx)                                                 \
	X(cuModuleUnload)                                                     \
	X(cuModuleGetFunction)                                                \
	X(cuModuleGetGlobal)                                                  \
	X(cuFuncGetAttribute)                                                 \
	X(cuFuncGetModule)                                                    \
	X(cuMemAlloc)                                                         \
	X(cuMemGetInfo)                                                       \
	X(cuMemFree)                                                          \
	X(cuMemcpyHtoD)                                                       \
	X(cuMemcpyDtoH)                                                       \
	X(cuMemcpyDtoHAsync)                                                  \
	X(cuMemcpyHtoDAsync)                                                  \
	X(cuMemcpy2DAsync)                                                    \
	X(cuMemAllocHost)                                                     \
	X(cuMemAddressReserve)                                                \
	X(cuMemCreate)                                                        \
	X(cuMemRelease)                                                       \
	X(cuMemMap)                                                           \
	X(cuMemUnmap)                                                         \
	X(cuMemSetAccess)                                                     \
	X(cuMemGetAllocationGranularity)                                      \
	X(cuMemFreeHost)                                                      \
	X(cuStreamCreate)                                                     \
	X(cuStreamDestroy)                                                    \
	X(cuStreamQuery)                                                      \
	X(cuStreamSynchronize)                                                \
	X(cuMemsetD8)                                                         \
	X(cuMemsetD8Async)                                                    \
	X(cuMemHostRegister)                                                  \
	X(cuMemHostUnregister)                                                \
	X(cuMemHostGetDevicePointer)                                          \
	X(cuLaunchKernel)                                                     \
	X(cuEventCreate)                                                      \
	X(cuEventRecord)                                                      \
	X(cuEventSynchronize)                                                 \
	X(cuEventElapsedTime)                                                 \
	X(cuEventDestroy)                                                     \
	X(cuStreamWriteValue32)                                               \
	X(cuLaunchHostFunc)                                                   \
	X(cuStreamIsCapturing)                                                \
	X(cuThreadExchangeStreamCaptureMode)                                  \
	X(cuLibraryGetGlobal)                                                  \
	X(cuLinkCreate)                                                       \
	X(cuLinkAddData)                                                      \
	X(cuLinkComplete)                                                     \
	X(cuLinkDestroy)

/* Entry points a driver may lack (NULL then): used where present. */
#if CUDA_VERSION >= 13000
#define CU_FUNCS_OPTIONAL(X) X(cuMemcpyBatchAsync)
#define CU_HAVE_MEMCPY_BATCH 1
#else
#define CU_FUNCS_OPTIONAL(X)
#endif

#define CU_FIELD(name) __typeof__(&name) name;
struct cu_driver {
	CU_FUNCS(CU_FIELD)
	CU_FUNCS_OPTIONAL(CU_FIELD)
};
#undef CU_FIELD

/*
 * The driver's entry points, or NULL with EGPU_ENODEV in egpu_errmsg() when
 * there is no driver or no device. Safe to call from any thread.
 */
const struct cu_driver *cu(void);
/* 0, or EGPU_ECUDA with "WHAT: CUDA_ERROR_X (description)" recorded. */
int cu_check(CUresult res, const char *what);
/*
 * Zero @n bytes at @dst / copy @n bytes of @src there, in the current
 * context, finished when they return. Not cuMemsetD8/cuMemcpyHtoD: those
 * go on the legacy default stream and may still be pending when they
 * return, and what does not wait for that stream (the maps' copies and an
 * application's kernels on non-blocking streams) could write the bytes
 * before the memset does, or read them before they land. A stream of
 * their own does not wait for the application's kernels either.
 */
int cu_zero(CUdeviceptr dst, size_t n);
int cu_upload(CUdeviceptr dst, const void *src, size_t n);
/*
 * Make a context current on this thread: the one already current, else
 * device 0's primary context (retained once for the process).
 */
int cu_ctx_current(CUcontext *out);
/* Make @ctx current on the calling thread. */
int cu_ctx_set_current(CUcontext ctx);
/*
 * cuModuleLoadDataEx of @ptx (or a cubin, cu_link_ptx's) with the JIT's
 * error log in the message on failure, in the current context.
 */
int cu_module_load_ptx(const char *ptx, CUmodule *mod);
/* JIT options as the driver takes them (an application's, passed on). */
struct cu_jit {
	unsigned n;
	const CUjit_option *keys;
	void *const *vals;
};
/* @jit's CU_JIT_MAX_REGISTERS (@jit may be NULL), 0: none. */
unsigned cu_jit_max_regs(const struct cu_jit *jit);
/*
 * The PTX modules @app and @rt linked by the driver's JIT linker in the
 * current context (cu_link.c), @rt compiled with at most @rt_regs
 * registers a thread (an option of that input alone), @jit (may be NULL)
 * given to the whole link: the cubin malloc'd in *@cubin, *@size bytes.
 * Errors name the stage (cuLinkAddData of which input ...) and carry the
 * JIT's error log.
 */
int cu_link_ptx(const char *app, const char *rt, unsigned rt_regs,
		const struct cu_jit *jit, void **cubin, size_t *size);
/*
 * Device memory in the current context at an address that is the same in
 * every run allocating in the same order (stable_alloc.c says why), or
 * from cuMemAlloc where that cannot be had. Free with cu_free_stable.
 */
int cu_alloc_stable(CUdeviceptr *p, size_t len);
void cu_free_stable(CUdeviceptr p);
/* "sm_XY" of the current context's device into @buf. */
int cu_device_sm(char *buf, size_t len);
/* Attribute @attr of the current context's device. */
int cu_device_attr(CUdevice_attribute attr, int *value);
/* The current context's device's SM count. */
int cu_device_sm_count(int *count);
/* The registers a thread of kernel @name of @mod takes. */
int cu_func_regs(CUmodule mod, const char *name, int *regs);

#endif
