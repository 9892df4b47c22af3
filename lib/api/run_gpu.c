/* SPDX-License-Identifier: MIT */
/*
 * egpu_prog_run() on the GPU: the program as a one-thread kernel. The
 * module is built and loaded at the first run and kept with the program,
 * in the CUDA context that holds the object's maps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "core/mem_ctx.h"
#include "cuda/cu.h"

/* Device buffers of one run: the ctx copy and r0. */
struct gpu_run {
	CUdeviceptr mem;
	CUdeviceptr ret;
};

/*
 * A memory probe's ctx gets the tail the GPU lowering of read_value reads
 * (core/mem_ctx.h): the stored bytes at the public ctx.value. Copied back:
 * the caller's bytes only.
 */
static int put_mem_tail(CUdeviceptr mem, const void *host_mem, uint64_t len)
{
	struct mem_site_ctx c = { 0 };

	memcpy(&c, host_mem, len < sizeof(c.pub) ? len : sizeof(c.pub));
	c.value_at = len >= sizeof(c.pub) ? c.pub.value : 0;
	return cu_check(cu()->cuMemcpyHtoD(mem + sizeof(c.pub), &c.value_bits,
					   sizeof(c) - sizeof(c.pub)),
			"cuMemcpyHtoD");
}

static int launch(CUfunction fn, struct gpu_run *run, bool mem_probe,
		  struct egpu_run_opts *opts)
{
	const struct cu_driver *d = cu();
	uint64_t len = OPTS_GET(opts, ctx_len, 0), dev_len = len;
	void *host_mem = OPTS_GET(opts, ctx, NULL);
	CUdeviceptr r1 = 0;
	void *args[] = { &r1, &len, &run->ret };
	uint64_t r0 = 0, t0;
	int err;

	mem_probe = mem_probe && host_mem;
	if (mem_probe) {
		dev_len = sizeof(struct mem_site_ctx);
		len = len < sizeof(struct egpu_mem_ctx) ? len :
		      sizeof(struct egpu_mem_ctx);
	}
	err = cu_check(d->cuMemAlloc(&run->mem, dev_len ? dev_len : 1), "cuMemAlloc");
	if (!err)
		err = cu_check(d->cuMemAlloc(&run->ret, sizeof(r0)), "cuMemAlloc");
	if (!err && len)
		err = cu_check(d->cuMemcpyHtoD(run->mem, host_mem, len), "cuMemcpyHtoD");
	if (!err && mem_probe)
		err = put_mem_tail(run->mem, host_mem, len);
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

/* The program's kernel, translated and loaded at the first run. */
static int prog_kernel(struct egpu_prog *prog, CUfunction *fn)
{
	char func[256], kernel[272], sm[16];
	CUmodule mod = NULL;
	char *ptx = NULL;
	int err = 0;

	pthread_mutex_lock(&prog->lock);
	if (!prog->gpu_fn) {
		snprintf(func, sizeof(func), "egpu_run_%s", prog->spec->name);
		snprintf(kernel, sizeof(kernel), "%s_kernel", func);
		err = cu_device_sm(sm, sizeof(sm));
		if (!err && (err = obj_maps_to_gpu(prog->obj)))
			err_prefix("prog '%s'", prog->spec->name);
		if (!err)
			err = prog_kernel_ptx(prog, func, sm, &ptx);
		if (!err)
			err = cu_module_load_ptx(ptx, &mod);
		free(ptx);
		if (!err)
			err = cu_check(cu()->cuModuleGetFunction((CUfunction *)&prog->gpu_fn,
								 mod, kernel),
				       "cuModuleGetFunction");
		if (err && mod)
			cu()->cuModuleUnload(mod);
		else
			prog->gpu_mod = mod;
	}
	*fn = prog->gpu_fn;
	pthread_mutex_unlock(&prog->lock);
	return err;
}

void prog_gpu_unload(struct egpu_prog *prog)
{
	if (prog->gpu_mod)
		cu()->cuModuleUnload(prog->gpu_mod);
	prog->gpu_mod = prog->gpu_fn = NULL;
}

int prog_run_gpu(struct egpu_prog *prog, struct egpu_run_opts *opts)
{
	struct gpu_run run = { 0 };
	CUfunction fn;
	CUcontext ctx;
	int err;

	if (prog->obj->ctx->offline)
		return err_set(EGPU_EINVAL, "prog '%s': the context is offline (inspection only)",
			       prog->spec->name);
	err = cu_ctx_current(&ctx);
	if (!err)
		err = prog_kernel(prog, &fn);
	if (!err) {
		clock_ctx_start(prog->obj->ctx);
		err = launch(fn, &run, prog->spec->attach == EGPU_ATTACH_MEM,
			     opts);
	}
	if (run.mem)
		cu()->cuMemFree(run.mem);
	if (run.ret)
		cu()->cuMemFree(run.ret);
	return err;
}
