/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <stdio.h>

#include "cudashim.h"

#define KS_FUNCS(X)                                                           \
	X(cuInit)                                                             \
	X(cuGetErrorString)                                                   \
	X(cuDeviceGet)                                                        \
	X(cuDevicePrimaryCtxRetain)                                           \
	X(cuDevicePrimaryCtxRelease)                                          \
	X(cuCtxSetCurrent)                                                    \
	X(cuCtxSynchronize)                                                   \
	X(cuModuleGetFunction)                                                \
	X(cuMemAlloc)                                                         \
	X(cuMemFree)                                                          \
	X(cuMemsetD32)                                                        \
	X(cuLaunchKernel)

#define STR(x) #x
#define SYMBOL(x) STR(x) /* after cuda.h's macros: cuMemAlloc_v2, ... */
#define KS_FIELD(name) __typeof__(&name) name;
static struct {
	KS_FUNCS(KS_FIELD)
} cu;
static CUdevice device;
static CUcontext primary;

int ks_open(char *why, size_t len)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	CUresult res;

	if (!lib) {
		snprintf(why, len, "no CUDA driver: %s", dlerror());
		return -1;
	}
#define KS_RESOLVE(name)                                                      \
	cu.name = (__typeof__(cu.name))dlsym(lib, SYMBOL(name));              \
	if (!cu.name) {                                                       \
		snprintf(why, len, "the CUDA driver lacks %s", SYMBOL(name)); \
		return -1;                                                    \
	}
	KS_FUNCS(KS_RESOLVE)
#undef KS_RESOLVE
	res = cu.cuInit(0);
	if (res != CUDA_SUCCESS) {
		snprintf(why, len, "cuInit: %s", ks_strerror(res));
		return -1;
	}
	return 0;
}

CUresult ks_ctx_start(void)
{
	CUresult res = cu.cuDeviceGet(&device, 0);

	if (res == CUDA_SUCCESS)
		res = cu.cuDevicePrimaryCtxRetain(&primary, device);
	if (res == CUDA_SUCCESS)
		res = cu.cuCtxSetCurrent(primary);
	return res;
}

void ks_ctx_stop(void)
{
	if (primary)
		cu.cuDevicePrimaryCtxRelease(device);
	primary = NULL;
}

CUresult ks_function(uintptr_t mod, const char *name, CUfunction *fn)
{
	return cu.cuModuleGetFunction(fn, (CUmodule)mod, name);
}

CUresult ks_alloc_floats(CUdeviceptr *p, size_t n)
{
	CUresult res = cu.cuMemAlloc(p, n * sizeof(float));

	if (res == CUDA_SUCCESS)
		res = cu.cuMemsetD32(*p, 0, n);
	return res;
}

CUresult ks_free(CUdeviceptr p)
{
	return cu.cuMemFree(p);
}

CUresult ks_launch(CUfunction fn, unsigned grid, unsigned block,
		   CUdeviceptr x, int n)
{
	/* Built here: cgo may not hand C an array of pointers to Go memory. */
	void *args[] = { &x, &n };

	return cu.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, NULL, args,
				 NULL);
}

CUresult ks_synchronize(void)
{
	return cu.cuCtxSynchronize();
}

const char *ks_strerror(CUresult res)
{
	const char *s = NULL;

	if (!cu.cuGetErrorString || cu.cuGetErrorString(res, &s) != CUDA_SUCCESS || !s)
		return "unknown CUDA error";
	return s;
}
