/* SPDX-License-Identifier: MIT */
/*
 * What the overhead benchmarks share: the workloads of workloads.cu and
 * timing with CUDA events, the L2 flushed before every run.
 */
#ifndef EGPU_BENCH_H
#define EGPU_BENCH_H

#include "app.h"

#define BENCH_WARMUP 3
#define BENCH_VEC_N (16 << 20)
#define BENCH_GEMM_N 2048
#define BENCH_GEMM_TILE 32 /* workloads.cu's TILE: the block is TILE x TILE */

struct workload {
	const char *name;
	const char *kernel;
	dim3 grid, block;
	void **args;
};

/*
 * The GPU's description line, the flush buffer, and the workloads (vecadd
 * 16M, sgemm 2048^3) with their data in *@w; returns their number, 0 (after
 * saying why) without a GPU.
 */
size_t bench_start(int runs, const struct workload **w);
/* Device time of one launch of @k, after flushing the L2. */
float bench_time_once(cudaKernel_t k, const struct workload *w);
/*
 * Host time (ms) from one launch of @k, after flushing the L2, until
 * @done(@arg) says true and the kernel has ended (a lossless trace's
 * delivery: tests/bench/mem_bench.c); a negative time if @done did not
 * come within @limit_ms. The kernel's own device time in *@kernel_ms.
 */
float bench_time_until(cudaKernel_t k, const struct workload *w,
		       bool (*done)(void *arg), void *arg, double limit_ms,
		       float *kernel_ms);
/* Interleave the two kernels run by run; medians into *base and *probed. */
void bench_measure(cudaKernel_t plain, cudaKernel_t inst, const struct workload *w,
		   int runs, float *base, float *probed);
/* Median of @runs flushed launches of @k alone. */
float bench_median(cudaKernel_t k, const struct workload *w, int runs);
/* Registers per thread of @k. */
int bench_regs(cudaKernel_t k);

#endif
