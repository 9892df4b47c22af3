// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

#define FLUSH_BYTES (256u << 20) /* well above the H100's 50 MB of L2 */

static void *flush_buf;

float bench_time_once(cudaKernel_t k, const struct workload *w)
{
	CUDA_CHECK(cudaMemsetAsync(flush_buf, 0, FLUSH_BYTES, 0));
	return app_time_launch(k, w->grid, w->block, w->args);
}

static double host_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

float bench_time_until(cudaKernel_t k, const struct workload *w,
		       bool (*done)(void *arg), void *arg, double limit_ms,
		       float *kernel_ms)
{
	cudaEvent_t ev[2];
	double t0;
	bool ok;

	CUDA_CHECK(cudaEventCreate(&ev[0]));
	CUDA_CHECK(cudaEventCreate(&ev[1]));
	CUDA_CHECK(cudaMemsetAsync(flush_buf, 0, FLUSH_BYTES, 0));
	CUDA_CHECK(cudaDeviceSynchronize());
	t0 = host_ms();
	CUDA_CHECK(cudaEventRecord(ev[0], 0));
	CUDA_CHECK(cudaLaunchKernel((const void *)k, w->grid, w->block,
				    w->args, 0, 0));
	CUDA_CHECK(cudaEventRecord(ev[1], 0));
	while (!(ok = done(arg)) && host_ms() - t0 < limit_ms)
		;
	CUDA_CHECK(cudaDeviceSynchronize());
	CUDA_CHECK(cudaEventElapsedTime(kernel_ms, ev[0], ev[1]));
	cudaEventDestroy(ev[0]);
	cudaEventDestroy(ev[1]);
	return ok ? (float)(host_ms() - t0) : -1.0f;
}

int bench_regs(cudaKernel_t k)
{
	struct cudaFuncAttributes a;

	CUDA_CHECK(cudaFuncGetAttributes(&a, (const void *)k));
	return a.numRegs;
}

static float *runs_buf(int runs)
{
	float *v = calloc((size_t)runs, sizeof(float));

	if (!v)
		abort();
	return v;
}

static float median_of(float *v, int runs)
{
	float m;

	qsort(v, (size_t)runs, sizeof(float), app_cmp_float);
	m = v[runs / 2];
	free(v);
	return m;
}

void bench_measure(cudaKernel_t plain, cudaKernel_t inst, const struct workload *w,
		   int runs, float *base, float *probed)
{
	float *a = runs_buf(runs), *b = runs_buf(runs);

	for (int i = 0; i < BENCH_WARMUP; i++) {
		bench_time_once(plain, w);
		bench_time_once(inst, w);
	}
	for (int i = 0; i < runs; i++) {
		a[i] = bench_time_once(plain, w);
		b[i] = bench_time_once(inst, w);
	}
	*base = median_of(a, runs);
	*probed = median_of(b, runs);
}

float bench_median(cudaKernel_t k, const struct workload *w, int runs)
{
	float *a = runs_buf(runs);

	for (int i = 0; i < BENCH_WARMUP; i++)
		bench_time_once(k, w);
	for (int i = 0; i < runs; i++)
		a[i] = bench_time_once(k, w);
	return median_of(a, runs);
}

static float *device_floats(size_t n, float v)
{
	float *h = malloc(n * sizeof(float)), *d;

	if (!h)
		abort();
	for (size_t i = 0; i < n; i++)
		h[i] = v + (float)(i % 97) * 0.01f;
	CUDA_CHECK(cudaMalloc((void **)&d, n * sizeof(float)));
	CUDA_CHECK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
	free(h);
	return d;
}

size_t bench_start(int runs, const struct workload **out)
{
	static float *a, *b, *c, *ga, *gb, *gc;
	static int vn = BENCH_VEC_N, gn = BENCH_GEMM_N;
	static void *vec_args[] = { &a, &b, &c, &vn };
	static void *gemm_args[] = { &ga, &gb, &gc, &gn };
	static const struct workload w[] = {
		{ "vecadd 16M", "vecadd", { BENCH_VEC_N / 256, 1, 1 }, { 256, 1, 1 },
		  vec_args },
		{ "sgemm 2048^3", "sgemm_tiled",
		  { BENCH_GEMM_N / BENCH_GEMM_TILE, BENCH_GEMM_N / BENCH_GEMM_TILE, 1 },
		  { BENCH_GEMM_TILE, BENCH_GEMM_TILE, 1 }, gemm_args },
	};
	struct cudaDeviceProp prop;
	const char *why;
	int drv;

	if (!app_gpu_present(&why)) {
		printf("no GPU (%s): nothing to measure\n", why);
		return 0;
	}
	CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
	CUDA_CHECK(cudaDriverGetVersion(&drv));
	CUDA_CHECK(cudaMalloc(&flush_buf, FLUSH_BYTES));
	a = device_floats(BENCH_VEC_N, 1);
	b = device_floats(BENCH_VEC_N, 2);
	c = device_floats(BENCH_VEC_N, 0);
	ga = device_floats((size_t)BENCH_GEMM_N * BENCH_GEMM_N, 1);
	gb = device_floats((size_t)BENCH_GEMM_N * BENCH_GEMM_N, 2);
	gc = device_floats((size_t)BENCH_GEMM_N * BENCH_GEMM_N, 0);
	printf("GPU: %s, driver API %d, libegpu %s, median of %d runs, L2 flushed\n\n",
	       prop.name, drv, egpu_version(), runs);
	*out = w;
	return sizeof(w) / sizeof(w[0]);
}
