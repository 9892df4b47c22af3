/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "core/core.h"
#include "cuda/cu.h"

#define STR(x) #x
#define SYMBOL(x) STR(x) /* expands cuda.h's versioning macros first */

static struct cu_driver driver;
static char open_error[512];
static int open_status = 1; /* 1: not tried, 0: ready, <0: failed */
static pthread_once_t open_once = PTHREAD_ONCE_INIT;

static int open_fail(const char *fmt, const char *detail)
{
	snprintf(open_error, sizeof(open_error), fmt, detail);
	return EGPU_ENODEV;
}

static int resolve_all(void *lib)
{
#define CU_RESOLVE(name)                                                      \
	driver.name = (__typeof__(driver.name))dlsym(lib, SYMBOL(name));      \
	if (!driver.name)                                                     \
		return open_fail("CUDA driver lacks %s", SYMBOL(name));
	CU_FUNCS(CU_RESOLVE)
#undef CU_RESOLVE
#define CU_RESOLVE_OPTIONAL(name)                                             \
	driver.name = (__typeof__(driver.name))dlsym(lib, SYMBOL(name));
	CU_FUNCS_OPTIONAL(CU_RESOLVE_OPTIONAL)
#undef CU_RESOLVE_OPTIONAL
	return 0;
}

static int open_driver(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	int count = 0;
	CUresult res;

	if (!lib)
		return open_fail("no CUDA driver: %s", dlerror());
	if (resolve_all(lib))
		return EGPU_ENODEV;
	res = driver.cuInit(0);
	if (res != CUDA_SUCCESS) {
		const char *name = "unknown";

		driver.cuGetErrorName(res, &name);
		return open_fail("CUDA driver present but cuInit failed: %s", name);
	}
	if (driver.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0)
		return open_fail("%s", "CUDA driver present but no GPU found");
	return 0;
}

static void open_once_fn(void)
{
	open_status = open_driver();
}

const struct cu_driver *cu(void)
{
	pthread_once(&open_once, open_once_fn);
	if (open_status) {
		err_set(EGPU_ENODEV, "%s", open_error);
		return NULL;
	}
	return &driver;
}

int cu_check(CUresult res, const char *what)
{
	const char *name = "CUDA_ERROR_UNKNOWN", *desc = "unknown error";

	if (res == CUDA_SUCCESS)
		return 0;
	driver.cuGetErrorName(res, &name);
	driver.cuGetErrorString(res, &desc);
	return err_set(EGPU_ECUDA, "%s: %s (%s)", what, name, desc);
}

static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primary;

static int retain_primary(void)
{
	CUdevice dev;
	int err = 0;

	pthread_mutex_lock(&primary_lock);
	if (!primary) {
		err = cu_check(driver.cuDeviceGet(&dev, 0), "cuDeviceGet");
		if (!err)
			err = cu_check(driver.cuDevicePrimaryCtxRetain(&primary, dev),
				       "cuDevicePrimaryCtxRetain");
	}
	pthread_mutex_unlock(&primary_lock);
	return err;
}

/*
 * The end of an operation on the private stream @s: its result, then the
 * stream waited for and destroyed.
 */
static int own_stream_finish(CUstream s, CUresult res, const char *what)
{
	int err = cu_check(res, what);

	if (!err)
		err = cu_check(driver.cuStreamSynchronize(s), "cuStreamSynchronize");
	driver.cuStreamDestroy(s);
	return err;
}

int cu_zero(CUdeviceptr dst, size_t n)
{
	CUstream s;
	int err = cu_check(driver.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING),
			   "cuStreamCreate");

	return err ? err : own_stream_finish(s, driver.cuMemsetD8Async(dst, 0, n, s),
					     "cuMemsetD8Async");
}

int cu_upload(CUdeviceptr dst, const void *src, size_t n)
{
	CUstream s;
	int err = cu_check(driver.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING),
			   "cuStreamCreate");

	return err ? err : own_stream_finish(s, driver.cuMemcpyHtoDAsync(dst, src, n, s),
					     "cuMemcpyHtoDAsync");
}

int cu_ctx_current(CUcontext *out)
{
	CUcontext cur = NULL;
	int err;

	if (!cu())
		return EGPU_ENODEV;
	err = cu_check(driver.cuCtxGetCurrent(&cur), "cuCtxGetCurrent");
	if (err || cur) {
		*out = cur;
		return err;
	}
	err = retain_primary();
	if (!err)
		err = cu_check(driver.cuCtxSetCurrent(primary), "cuCtxSetCurrent");
	*out = primary;
	return err;
}

int cu_ctx_set_current(CUcontext ctx)
{
	if (!cu())
		return EGPU_ENODEV;
	return cu_check(driver.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

int cu_device_sm(char *buf, size_t len)
{
	int major = 0, minor = 0, err;
	CUcontext ctx;
	CUdevice dev;

	err = cu_ctx_current(&ctx);
	if (!err)
		err = cu_check(driver.cuCtxGetDevice(&dev), "cuCtxGetDevice");
	if (!err)
		err = cu_check(driver.cuDeviceGetAttribute(&major,
				CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
			       "cuDeviceGetAttribute");
	if (!err)
		err = cu_check(driver.cuDeviceGetAttribute(&minor,
				CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
			       "cuDeviceGetAttribute");
	if (!err)
		snprintf(buf, len, "sm_%d%d", major, minor);
	return err;
}

int cu_device_attr(CUdevice_attribute attr, int *value)
{
	CUcontext ctx;
	CUdevice dev;
	int err;

	*value = 0;
	err = cu_ctx_current(&ctx);
	if (!err)
		err = cu_check(driver.cuCtxGetDevice(&dev), "cuCtxGetDevice");
	if (!err)
		err = cu_check(driver.cuDeviceGetAttribute(value, attr, dev),
			       "cuDeviceGetAttribute");
	return err;
}

int cu_device_sm_count(int *count)
{
	return cu_device_attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, count);
}

int cu_func_regs(CUmodule mod, const char *name, int *regs)
{
	CUfunction f;
	int err;

	*regs = 0;
	err = cu_check(driver.cuModuleGetFunction(&f, mod, name),
		       "cuModuleGetFunction");
	if (!err)
		err = cu_check(driver.cuFuncGetAttribute(regs,
				CU_FUNC_ATTRIBUTE_NUM_REGS, f),
			       "cuFuncGetAttribute");
	return err;
}

int cu_module_load_ptx(const char *ptx, CUmodule *mod)
{
	char log[8192] = "";
	CUjit_option keys[] = { CU_JIT_ERROR_LOG_BUFFER,
				CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *vals[] = { log, (void *)(uintptr_t)sizeof(log) };
	CUcontext ctx;
	CUresult res;
	int err;

	err = cu_ctx_current(&ctx);
	if (err)
		return err;
	res = driver.cuModuleLoadDataEx(mod, ptx, 2, keys, vals);
	if (res == CUDA_SUCCESS)
		return 0;
	cu_check(res, "cuModuleLoadDataEx");
	if (log[0])
		err_prefix("%s", log);
	return EGPU_ECUDA;
}
