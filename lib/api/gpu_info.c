/* SPDX-License-Identifier: MIT */
/* egpu_ctx_gpu: which GPU a context's maps live on (ordinal and UUID). */
#include <stdio.h>

#include "api/internal.h"
#include "cuda/cu.h"

/* "GPU-" and the 16 bytes as nvidia-smi prints them (8-4-4-4-12 hex). */
static void uuid_text(const CUuuid *u, char *out, size_t len)
{
	const unsigned char *b = (const unsigned char *)u->bytes;
	size_t n = (size_t)snprintf(out, len, "GPU-");

	for (int i = 0; i < 16 && n < len; i++)
		n += (size_t)snprintf(out + n, len - n, "%s%02x",
				      i == 4 || i == 6 || i == 8 || i == 10 ?
				      "-" : "", b[i]);
}

/* The device of @cu_ctx, made current for the call only. */
static int ctx_device(const struct cu_driver *d, CUcontext cu_ctx,
		      CUdevice *dev)
{
	CUcontext cur = NULL;
	int err;

	d->cuCtxGetCurrent(&cur);
	if (cur != cu_ctx)
		d->cuCtxSetCurrent(cu_ctx);
	err = cu_check(d->cuCtxGetDevice(dev), "cuCtxGetDevice");
	if (cur != cu_ctx)
		d->cuCtxSetCurrent(cur);
	return err;
}

int egpu_ctx_gpu(const egpu_ctx *ctx, struct egpu_gpu_info *info)
{
	const struct cu_driver *d;
	CUdevice dev;
	CUuuid uuid;
	int err;

	if (!ctx || !info || info->sz < offsetofend(struct egpu_gpu_info, sz))
		return err_set(EGPU_EINVAL, "egpu_ctx_gpu: NULL argument or "
			       "info->sz not set");
	if (!ctx->cu_ctx)
		return err_set(EGPU_ENODEV, "egpu_ctx_gpu: the context has not "
			       "used a GPU (its maps are in host memory)");
	d = cu();
	if (!d)
		return EGPU_ENODEV;
	err = ctx_device(d, ctx->cu_ctx, &dev);
	if (!err)
		err = cu_check(d->cuDeviceGetUuid(&uuid, dev), "cuDeviceGetUuid");
	if (err)
		return err;
	OPTS_SET(info, index, (int)dev);
	if (OPTS_HAS(info, uuid))
		uuid_text(&uuid, info->uuid, sizeof(info->uuid));
	return 0;
}
