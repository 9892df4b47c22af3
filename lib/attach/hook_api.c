/* SPDX-License-Identifier: MIT */
/*
 * The CUDA API functions host probes attach to (uprobe.h's HOST_FNS): each
 * stand-in fills a struct egpu_pt_regs with the call's arguments as the
 * x86-64 calling convention places them (six in registers, the rest on a
 * stack that sp points to, above a zero return address), runs the
 * function's uprobes, calls the real function and runs its uretprobes
 * with the result.
 *
 * The driver's functions are handed out in place of the driver's where the
 * application looks them up (hook.c: dlsym, cuGetProcAddress), only for
 * functions some host probe names. The runtime's are exported, so they
 * interpose libcudart.so's; a statically linked runtime has no symbols to
 * interpose, so a probe on cudaLaunchKernel also runs at the driver's
 * launches that no cudaLaunchKernel of libcudart.so made, with the
 * arguments laid out as cudaLaunchKernel's (docs/attach.md).
 */
#include <dlfcn.h>
#include <string.h>

#include <cuda.h>

#include "attach/attach.h"
#include "attach/uprobe.h"


static void *real_fn[HOST_FN_CNT];

/* Inside libcudart.so's cudaLaunchKernel (its driver launch is not a
 * second cudaLaunchKernel). */
__thread int hook_in_rt_launch;

static void call_init(struct call *c, const uint64_t *a, size_t n)
{
	uint64_t *r[6] = { &c->regs.di, &c->regs.si, &c->regs.dx,
			   &c->regs.cx, &c->regs.r8, &c->regs.r9 };

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < n && i < 6; i++)
		*r[i] = a[i];
	for (size_t i = 6; i < n && i < 6 + HOOK_STACK_MAX; i++)
		c->stack[i - 5] = a[i];
	c->regs.sp = U(c->stack);
}

void hook_enter(enum host_fn fn, struct call *c, const uint64_t *a,
		size_t n, void *real)
{
	call_init(c, a, n);
	c->regs.ip = U(real);
	uprobe_fire(fn, &c->regs, false, 0);
}

static void enter(enum host_fn fn, struct call *c, const uint64_t *a,
		  size_t n)
{
	hook_enter(fn, c, a, n, real_fn[fn]);
}

/* fn(args...) with its probes around; the real function is real_fn[fn]. */
#define PROBED(fn, type, call_args, ...)                                       \
	do {                                                                  \
		struct call c_;                                               \
		CUresult res_;                                                \
                                                                              \
		enter(HOST_FN_##fn, &c_, (uint64_t[]){ __VA_ARGS__ },         \
		      ARGS_N(__VA_ARGS__));                                   \
		res_ = ((type)real_fn[HOST_FN_##fn]) call_args;               \
		uprobe_fire(HOST_FN_##fn, &c_.regs, true, (uint64_t)res_);    \
		return res_;                                                  \
	} while (0)

/*
 * cudaLaunchKernel(func, dim3 grid, dim3 block, args, shmem, stream) as
 * the driver's launch saw it: each dim3 is two registers (x | y << 32,
 * then z); func is the CUfunction, not the runtime's host stub.
 */
static bool rt_launch_enter(struct call *c, CUfunction f, const unsigned g[3],
			    const unsigned b[3], void **params, unsigned shmem,
			    CUstream s)
{
	if (hook_in_rt_launch || !uprobe_wanted(HOST_FN_cudaLaunchKernel))
		return false;
	enter(HOST_FN_cudaLaunchKernel, c,
	      (uint64_t[]){ U(f), g[0] | (uint64_t)g[1] << 32, g[2],
			    b[0] | (uint64_t)b[1] << 32, b[2], U(params), shmem,
			    U(s) }, 8);
	return true;
}

static CUresult launch_done(bool rt, struct call *c, CUresult res)
{
	if (rt)
		uprobe_fire(HOST_FN_cudaLaunchKernel, &c->regs, true, res);
	return res;
}

static CUresult h_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy,
				 unsigned gz, unsigned bx, unsigned by,
				 unsigned bz, unsigned shmem, CUstream s,
				 void **params, void **extra)
{
	const unsigned g[3] = { gx, gy, gz }, b[3] = { bx, by, bz };
	struct call c, rc;
	bool rt = rt_launch_enter(&rc, f, g, b, params, shmem, s);
	CUresult res;

	enter(HOST_FN_cuLaunchKernel, &c,
	      (uint64_t[]){ U(f), gx, gy, gz, bx, by, bz, shmem, U(s),
			    U(params), U(extra) }, 11);
	res = ((__typeof__(&cuLaunchKernel))real_fn[HOST_FN_cuLaunchKernel])(
		f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
	uprobe_fire(HOST_FN_cuLaunchKernel, &c.regs, true, res);
	return launch_done(rt, &rc, res);
}

static CUresult h_cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f,
				   void **params, void **extra)
{
	const unsigned g[3] = { cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ };
	const unsigned b[3] = { cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ };
	struct call c, rc;
	bool rt = rt_launch_enter(&rc, f, g, b, params, cfg->sharedMemBytes,
				  cfg->hStream);
	CUresult res;

	enter(HOST_FN_cuLaunchKernelEx, &c,
	      (uint64_t[]){ U(cfg), U(f), U(params), U(extra) }, 4);
	res = ((__typeof__(&cuLaunchKernelEx))real_fn[HOST_FN_cuLaunchKernelEx])(
		cfg, f, params, extra);
	uprobe_fire(HOST_FN_cuLaunchKernelEx, &c.regs, true, res);
	return launch_done(rt, &rc, res);
}

static CUresult h_cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n)
{
	PROBED(cuMemcpy, __typeof__(&cuMemcpy), (d, s, n), d, s, n);
}

static CUresult h_cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n,
				CUstream st)
{
	PROBED(cuMemcpyAsync, __typeof__(&cuMemcpyAsync), (d, s, n, st), d, s,
	       n, U(st));
}

static CUresult h_cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n)
{
	PROBED(cuMemcpyHtoD_v2, __typeof__(&cuMemcpyHtoD_v2), (d, s, n), d,
	       U(s), n);
}

static CUresult h_cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
	PROBED(cuMemcpyDtoH_v2, __typeof__(&cuMemcpyDtoH_v2), (d, s, n), U(d),
	       s, n);
}

static CUresult h_cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n)
{
	PROBED(cuMemcpyDtoD_v2, __typeof__(&cuMemcpyDtoD_v2), (d, s, n), d, s,
	       n);
}

static CUresult h_cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s,
				       size_t n, CUstream st)
{
	PROBED(cuMemcpyHtoDAsync_v2, __typeof__(&cuMemcpyHtoDAsync_v2),
	       (d, s, n, st), d, U(s), n, U(st));
}

static CUresult h_cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n,
				       CUstream st)
{
	PROBED(cuMemcpyDtoHAsync_v2, __typeof__(&cuMemcpyDtoHAsync_v2),
	       (d, s, n, st), U(d), s, n, U(st));
}

static CUresult h_cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
	PROBED(cuMemsetD8_v2, __typeof__(&cuMemsetD8_v2), (d, v, n), d, v, n);
}

static CUresult h_cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n)
{
	PROBED(cuMemsetD32_v2, __typeof__(&cuMemsetD32_v2), (d, v, n), d, v,
	       n);
}

static CUresult h_cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	PROBED(cuMemAlloc_v2, __typeof__(&cuMemAlloc_v2), (p, n), U(p), n);
}

static CUresult h_cuMemFree_v2(CUdeviceptr p)
{
	PROBED(cuMemFree_v2, __typeof__(&cuMemFree_v2), (p), p);
}

static CUresult h_cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream st)
{
	PROBED(cuMemAllocAsync, __typeof__(&cuMemAllocAsync), (p, n, st), U(p),
	       n, U(st));
}

static CUresult h_cuMemFreeAsync(CUdeviceptr p, CUstream st)
{
	PROBED(cuMemFreeAsync, __typeof__(&cuMemFreeAsync), (p, st), p, U(st));
}

static CUresult h_cuCtxSynchronize(void)
{
	struct call c;
	CUresult res;

	enter(HOST_FN_cuCtxSynchronize, &c, NULL, 0);
	res = ((__typeof__(&cuCtxSynchronize))real_fn[HOST_FN_cuCtxSynchronize])();
	uprobe_fire(HOST_FN_cuCtxSynchronize, &c.regs, true, res);
	return res;
}

static CUresult h_cuStreamSynchronize(CUstream st)
{
	PROBED(cuStreamSynchronize, __typeof__(&cuStreamSynchronize), (st),
	       U(st));
}

#define HOOK(fn) [HOST_FN_##fn] = (void (*)(void))h_##fn
static void (*const hooks[HOST_FN_CNT])(void) = {
	HOOK(cuLaunchKernel), HOOK(cuLaunchKernelEx), HOOK(cuMemcpy),
	HOOK(cuMemcpyAsync), HOOK(cuMemcpyHtoD_v2), HOOK(cuMemcpyDtoH_v2),
	HOOK(cuMemcpyDtoD_v2), HOOK(cuMemcpyHtoDAsync_v2),
	HOOK(cuMemcpyDtoHAsync_v2), HOOK(cuMemsetD8_v2), HOOK(cuMemsetD32_v2),
	HOOK(cuMemAlloc_v2), HOOK(cuMemFree_v2), HOOK(cuMemAllocAsync),
	HOOK(cuMemFreeAsync), HOOK(cuCtxSynchronize), HOOK(cuStreamSynchronize),
};
#undef HOOK

void *hook_api_wrap(const char *name, void *real)
{
	enum host_fn fn = host_fn_find(name); /* cuGetProcAddress: no _v2 */
	bool launch = fn == HOST_FN_cuLaunchKernel || fn == HOST_FN_cuLaunchKernelEx;

	if (fn == HOST_FN_CNT || !hooks[fn] || !real || real == (void *)hooks[fn])
		return NULL;
	/* the driver's launches stand in for a static runtime's
	 * cudaLaunchKernel */
	if (!uprobe_wanted(fn) &&
	    !(launch && uprobe_wanted(HOST_FN_cudaLaunchKernel)))
		return NULL;
	/* one variant per name: a per-thread-stream one asked for later
	 * (cuGetProcAddress's flags) is left unprobed */
	if (!real_fn[fn])
		real_fn[fn] = real;
	return real_fn[fn] == real ? (void *)hooks[fn] : NULL;
}
