/* SPDX-License-Identifier: MIT */
/*
 * The CUDA runtime's functions that host probes attach to, exported so
 * that they interpose libcudart.so's (applications built with nvcc
 * -cudart shared, PyTorch). Each runs its probes around the next
 * definition (dlsym RTLD_NEXT: libcudart.so's). A statically linked
 * runtime calls its own copies: hook_api.c's driver launch stands in for
 * cudaLaunchKernel there. The runtime's types are declared here by their
 * ABI, so this builds without the runtime's headers.
 */
#include <dlfcn.h>
#include <stddef.h>

#include "attach/uprobe.h"

#define EXPORT __attribute__((visibility("default")))

typedef int rt_err;                 /* cudaError_t */
typedef struct { unsigned x, y, z; } rt_dim3; /* dim3 */
typedef void *rt_stream;            /* cudaStream_t */
#define RT_ERR_UNKNOWN 999          /* cudaErrorUnknown */

/* libcudart.so's @name, looked up once. */
static void *next_fn(void **cache, const char *name)
{
	if (!__atomic_load_n(cache, __ATOMIC_ACQUIRE))
		__atomic_store_n(cache, dlsym(RTLD_NEXT, name), __ATOMIC_RELEASE);
	return *cache;
}

/*
 * res = fn(call_args) with @fn's probes around the next @fn; @type is the
 * function's type, then the arguments again as the 64-bit words of
 * registers and stack.
 */
#define RT_CALL(res, fn, type, call_args, ...)                                 \
	do {                                                                  \
		static void *next_;                                           \
		type real_ = (type)next_fn(&next_, #fn);                      \
		struct call c_;                                               \
                                                                              \
		if (!real_) {                                                 \
			res = RT_ERR_UNKNOWN;                                 \
			break;                                                \
		}                                                             \
		hook_enter(HOST_FN_##fn, &c_, (uint64_t[]){ __VA_ARGS__ },    \
			   ARGS_N(__VA_ARGS__), (void *)real_);               \
		res = real_ call_args;                                        \
		uprobe_fire(HOST_FN_##fn, &c_.regs, true, (uint64_t)res);     \
	} while (0)

typedef rt_err (*launch_fn)(const void *, rt_dim3, rt_dim3, void **, size_t,
			    rt_stream);
typedef rt_err (*memcpy_fn)(void *, const void *, size_t, int);
typedef rt_err (*memcpy_async_fn)(void *, const void *, size_t, int,
				  rt_stream);
typedef rt_err (*memset_fn)(void *, int, size_t);
typedef rt_err (*malloc_fn)(void **, size_t);
typedef rt_err (*free_fn)(void *);
typedef rt_err (*sync_fn)(void);
typedef rt_err (*stream_sync_fn)(rt_stream);

EXPORT rt_err cudaLaunchKernel(const void *func, rt_dim3 grid, rt_dim3 block,
			       void **args, size_t shmem, rt_stream stream)
{
	rt_err res;

	/* a dim3 by value takes two registers: x | y << 32, then z */
	hook_in_rt_launch++;
	RT_CALL(res, cudaLaunchKernel, launch_fn,
		(func, grid, block, args, shmem, stream), U(func),
		grid.x | (uint64_t)grid.y << 32, grid.z,
		block.x | (uint64_t)block.y << 32, block.z, U(args), shmem,
		U(stream));
	hook_in_rt_launch--;
	return res;
}

EXPORT rt_err cudaMemcpy(void *dst, const void *src, size_t n, int kind)
{
	rt_err res;

	RT_CALL(res, cudaMemcpy, memcpy_fn, (dst, src, n, kind), U(dst), U(src),
		n, (uint64_t)kind);
	return res;
}

EXPORT rt_err cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind,
			      rt_stream s)
{
	rt_err res;

	RT_CALL(res, cudaMemcpyAsync, memcpy_async_fn, (dst, src, n, kind, s),
		U(dst), U(src), n, (uint64_t)kind, U(s));
	return res;
}

EXPORT rt_err cudaMemset(void *p, int v, size_t n)
{
	rt_err res;

	RT_CALL(res, cudaMemset, memset_fn, (p, v, n), U(p), (uint64_t)v, n);
	return res;
}

EXPORT rt_err cudaMalloc(void **p, size_t n)
{
	rt_err res;

	RT_CALL(res, cudaMalloc, malloc_fn, (p, n), U(p), n);
	return res;
}

EXPORT rt_err cudaFree(void *p)
{
	rt_err res;

	RT_CALL(res, cudaFree, free_fn, (p), U(p));
	return res;
}

EXPORT rt_err cudaDeviceSynchronize(void)
{
	rt_err res;

	RT_CALL(res, cudaDeviceSynchronize, sync_fn, (), 0);
	return res;
}

EXPORT rt_err cudaStreamSynchronize(rt_stream s)
{
	rt_err res;

	RT_CALL(res, cudaStreamSynchronize, stream_sync_fn, (s), U(s));
	return res;
}
