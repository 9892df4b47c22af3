// SPDX-License-Identifier: MIT
/*
 * Probe overhead benchmark: device time of instrumented over original
 * kernels, both loaded the same way, timed with CUDA events, interleaved,
 * L2 flushed before every run, median of RUNS runs after warm-up. Prints a
 * Markdown table (docs/benchmarks.md) with the registers each kernel uses.
 *
 *   bench_overhead [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

#define WARMUP 3
#define FLUSH_BYTES (256u << 20) /* well above the H100's 50 MB of L2 */
#define VEC_N (16 << 20)
#define GEMM_N 2048

struct workload {
	const char *name;
	const char *kernel;
	dim3 grid, block;
	void **args;
};

struct probe {
	const char *name;
	const char *path;
	double target;
	bool no_inline; /* call the probe instead of copying it in */
};

static void *flush_buf;

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

static float time_once(cudaKernel_t k, const struct workload *w)
{
	CUDA_CHECK(cudaMemsetAsync(flush_buf, 0, FLUSH_BYTES, 0));
	return app_time_launch(k, w->grid, w->block, w->args);
}

static int regs(cudaKernel_t k)
{
	struct cudaFuncAttributes a;

	CUDA_CHECK(cudaFuncGetAttributes(&a, (const void *)k));
	return a.numRegs;
}

/* Interleave the two kernels run by run; medians into *base and *probed. */
static void measure(cudaKernel_t plain, cudaKernel_t inst,
		    const struct workload *w, int runs, float *base, float *probed)
{
	float *a = calloc((size_t)runs, sizeof(float));
	float *b = calloc((size_t)runs, sizeof(float));

	for (int i = 0; i < WARMUP; i++) {
		time_once(plain, w);
		time_once(inst, w);
	}
	for (int i = 0; i < runs; i++) {
		a[i] = time_once(plain, w);
		b[i] = time_once(inst, w);
	}
	qsort(a, (size_t)runs, sizeof(float), cmp_float);
	qsort(b, (size_t)runs, sizeof(float), cmp_float);
	*base = a[runs / 2];
	*probed = b[runs / 2];
	free(a);
	free(b);
}

static void bench_probe(const struct probe *p, const char *ptx, size_t len,
			const struct workload *w, size_t nw, int runs)
{
	EGPU_OPTS(egpu_ctx_opts, co, .no_inline = p->no_inline);
	egpu_ctx *ctx = egpu_ctx_new(&co);
	cudaLibrary_t plain_lib, inst_lib;
	EGPU_OPTS(egpu_report, rep);
	char *out = NULL;
	size_t out_len;
	egpu_obj *obj;

	EGPU_CHECK(ctx);
	obj = egpu_load(ctx, p->path, NULL);
	EGPU_CHECK(obj);
	EGPU_CHECK(egpu_attach_all(obj) > 0);
	EGPU_CHECK(!egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, &rep));
	plain_lib = app_load_ptx(ptx);
	inst_lib = app_load_ptx(out);
	for (size_t i = 0; i < nw; i++) {
		cudaKernel_t kp = app_kernel(plain_lib, w[i].kernel);
		cudaKernel_t ki = app_kernel(inst_lib, w[i].kernel);
		float base, probed;

		measure(kp, ki, &w[i], runs, &base, &probed);
		printf("| %-14s | %-14s | %9.3f | %9.3f | %6.3f | <= %.2f | %3d -> %3d | %6.2f |\n",
		       w[i].name, p->name, base, probed, probed / base, p->target,
		       regs(kp), regs(ki), rep.instrument_ms);
		fflush(stdout);
	}
	cudaLibraryUnload(plain_lib);
	cudaLibraryUnload(inst_lib);
	free(out);
	egpu_ctx_free(ctx);
}

static float *device_floats(size_t n, float v)
{
	float *h = malloc(n * sizeof(float)), *d;

	for (size_t i = 0; i < n; i++)
		h[i] = v + (float)(i % 97) * 0.01f;
	CUDA_CHECK(cudaMalloc((void **)&d, n * sizeof(float)));
	CUDA_CHECK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
	free(h);
	return d;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 25;
	const struct probe probes[] = {
		{ "empty", BENCH_DIR "/empty.bpf.o", 1.01, false },
		{ "empty, called", BENCH_DIR "/empty.bpf.o", 1.01, true },
		{ "timing", BENCH_DIR "/timing.bpf.o", 1.05, false },
		{ "threadhist", BENCH_DIR "/threadhist.bpf.o", 1.10, false },
	};
	float *a = device_floats(VEC_N, 1), *b = device_floats(VEC_N, 2);
	float *c = device_floats(VEC_N, 0);
	float *ga = device_floats((size_t)GEMM_N * GEMM_N, 1);
	float *gb = device_floats((size_t)GEMM_N * GEMM_N, 2);
	float *gc = device_floats((size_t)GEMM_N * GEMM_N, 0);
	int vn = VEC_N, gn = GEMM_N;
	void *vec_args[] = { &a, &b, &c, &vn };
	void *gemm_args[] = { &ga, &gb, &gc, &gn };
	const struct workload w[] = {
		{ "vecadd 16M", "vecadd", { VEC_N / 256, 1, 1 }, { 256, 1, 1 }, vec_args },
		{ "sgemm 2048^3", "sgemm_tiled", { GEMM_N / 32, GEMM_N / 32, 1 },
		  { 32, 32, 1 }, gemm_args },
	};
	struct cudaDeviceProp prop;
	const char *why;
	size_t len;
	char *ptx;
	int drv;

	if (!app_gpu_present(&why)) {
		printf("no GPU (%s): nothing to measure\n", why);
		return APP_SKIP;
	}
	CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
	CUDA_CHECK(cudaDriverGetVersion(&drv));
	CUDA_CHECK(cudaMalloc(&flush_buf, FLUSH_BYTES));
	ptx = app_read_file(BENCH_DIR "/workloads.ptx", &len);
	printf("GPU: %s, driver API %d, libegpu %s, median of %d runs, L2 flushed\n\n",
	       prop.name, drv, egpu_version(), runs);
	printf("| workload       | probe          | base ms   | probed ms | ratio  | target  | registers  | jit ms |\n");
	printf("|----------------|----------------|-----------|-----------|--------|---------|------------|--------|\n");
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		bench_probe(&probes[i], ptx, len, w, sizeof(w) / sizeof(w[0]), runs);
	free(ptx);
	return 0;
}
