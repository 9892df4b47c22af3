/* SPDX-License-Identifier: MIT */
/*
 * A context's own rings (the print ring, gpu_print.c; the call ring,
 * call_ring.c): a host ring mapped into the GPU, its device struct in GPU
 * memory, and the small PTX module that gives the device runtime's
 * variable naming the ring its address.
 */
#include <stdio.h>
#include <string.h>

#include "api/internal.h"
#include "cuda/cu.h"

int ctx_ring_make(struct egpu_ctx *ctx, struct ctx_ring *cr, bool wanted,
		  const char *name, uint64_t bytes)
{
	struct event_ring *ring = NULL;
	struct dev_ring init;
	CUdeviceptr dev = 0;
	int err;

	/* Offline PTX is never run: probes there get no ring. */
	if (!wanted || ctx->offline || cr->ring)
		return 0;
	err = ctx_bind_cuda(ctx);
	if (!err)
		err = ring_new(name, 0, bytes, &ring);
	if (!err)
		err = ring_map_gpu(ring, &init);
	if (!err)
		err = cu_alloc_stable(&dev, sizeof(init));
	if (!err)
		err = cu_upload(dev, &init, sizeof(init));
	if (err) {
		cu_free_stable(dev);
		ring_free(ring);
		err_prefix("making the %s ring", name);
		return err;
	}
	cr->dev = dev;
	cr->cu_ctx = ctx->cu_ctx;
	/* Consumers on other threads read the ring with acquire. */
	__atomic_store_n(&cr->ring, ring, __ATOMIC_RELEASE);
	return 0;
}

struct ptx_text ctx_ring_module(struct ctx_ring *cr, const char *var,
				const char *what)
{
	snprintf(cr->module, sizeof(cr->module),
		 ".version 6.0\n.target sm_50\n.address_size 64\n\n"
		 ".visible .global .align 8 .u64 %s = %llu;\n", var,
		 (unsigned long long)cr->dev);
	return (struct ptx_text){ .name = what, .text = cr->module,
				  .len = strlen(cr->module) };
}

void ctx_ring_free(struct ctx_ring *cr)
{
	CUcontext cur = NULL;

	if (cr->dev && cu()->cuCtxGetCurrent(&cur) == CUDA_SUCCESS) {
		cu()->cuCtxSetCurrent(cr->cu_ctx);
		cu_free_stable(cr->dev);
		cu()->cuCtxSetCurrent(cur);
	}
	ring_free(cr->ring);
	*cr = (struct ctx_ring){ 0 };
}
