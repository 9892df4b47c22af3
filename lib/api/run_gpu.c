/* SPDX-License-Identifier: MIT */
/* egpu_prog_run() on the GPU: the program as a one-thread kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "cuda/cu.h"

struct gpu_run {
	CUmodule mod;
	CUdeviceptr mem;
	CUdeviceptr ret;
};

static int launch(struct gpu_run *run, const char *kernel,
		  struct egpu_run_opts *opts)
{
	const struct cu_driver *d = cu();
	uint64_t len = OPTS_GET(opts, ctx_len, 0);
	void *host_mem = OPTS_GET(opts, ctx, NULL);
	CUdeviceptr r1 = 0;
	void *args[] = { &r1, &len, &run->ret };
	uint64_t r0 = 0, t0;
	CUfunction fn;
	int err;

	err = cu_check(d->cuModuleGetFunction(&fn, run->mod, kernel),
		       "cuModuleGetFunction");
	if (!err)
		err = cu_check(d->cuMemAlloc(&run->mem, len ? len : 1), "cuMemAlloc");
	if (!err)
		err = cu_check(d->cuMemAlloc(&run->ret, sizeof(r0)), "cuMemAlloc");
	if (!err && len)
		err = cu_check(d->cuMemcpyHtoD(run->mem, host_mem, len), "cuMemcpyHtoD");
	if (err)
		return err;
	if (host_mem)
		r1 = run->mem; /* without memory r1 is NULL, as on the CPU */
	t0 = now_ns();
	err = cu_check(d->cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL),
		       "cuLaunchKernel");
	if (!err)
		err = cu_check(d->cuCtxSynchronize(), "running the program");
	OPTS_SET(opts, run_ns, (double)(now_ns() - t0));
	if (!err)
		err = cu_check(d->cuMemcpyDtoH(&r0, run->ret, sizeof(r0)), "cuMemcpyDtoH");
	if (!err && len)
		err = cu_check(d->cuMemcpyDtoH(host_mem, run->mem, len), "cuMemcpyDtoH");
	OPTS_SET(opts, retval, r0);
	return err;
}

static int compile(struct egpu_prog *prog, const char *func, char **ptx)
{
	char sm[16];
	int err = cu_device_sm(sm, sizeof(sm));

	return err ? err : prog_kernel_ptx(prog, func, sm, ptx);
}

int prog_run_gpu(struct egpu_prog *prog, struct egpu_run_opts *opts)
{
	struct gpu_run run = { 0 };
	char func[256], kernel[272];
	CUcontext ctx;
	char *ptx = NULL;
	int err;

	if (prog->obj->ctx->offline)
		return err_set(EGPU_EINVAL, "prog '%s': the context is offline (inspection only)",
			       prog->spec->name);
	err = cu_ctx_current(&ctx);
	if (err)
		return err;
	snprintf(func, sizeof(func), "egpu_run_%s", prog->spec->name);
	snprintf(kernel, sizeof(kernel), "%s_kernel", func);
	err = compile(prog, func, &ptx);
	if (!err)
		err = cu_module_load_ptx(ptx, &run.mod);
	free(ptx);
	if (!err)
		err = launch(&run, kernel, opts);
	if (run.mem)
		cu()->cuMemFree(run.mem);
	if (run.ret)
		cu()->cuMemFree(run.ret);
	if (run.mod)
		cu()->cuModuleUnload(run.mod);
	return err;
}
