/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver calls kernelstat makes. The driver is opened with
 * dlopen("libcuda.so.1") rather than linked, so that the tool starts, and
 * says why it cannot run, on a machine without one.
 */
#ifndef KERNELSTAT_CUDASHIM_H
#define KERNELSTAT_CUDASHIM_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

/* 0 when the driver is open; else -1 with the reason in @why. */
int ks_open(char *why, size_t len);
/* Device 0's primary context, made current on the calling thread. */
CUresult ks_ctx_start(void);
void ks_ctx_stop(void);
/* @mod: a CUmodule handle as egpu's ModuleLoad returns it. */
CUresult ks_function(uintptr_t mod, const char *name, CUfunction *fn);
CUresult ks_alloc_floats(CUdeviceptr *p, size_t n);
CUresult ks_free(CUdeviceptr p);
/* Launch @fn(x, n) on the default stream. */
CUresult ks_launch(CUfunction fn, unsigned grid, unsigned block,
		   CUdeviceptr x, int n);
CUresult ks_synchronize(void);
/* The driver's description of @res. */
const char *ks_strerror(CUresult res);

#endif
