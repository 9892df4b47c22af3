/* SPDX-License-Identifier: MIT */
/* What the event and map benchmarks share: clocks, percentiles, a probe. */
#ifndef EGPU_EVENT_BENCH_H
#define EGPU_EVENT_BENCH_H

#include "app.h"

#define BENCH_THREADS (16u << 20)
#define BENCH_BLOCK 256

double bench_now_s(void);
/* The @p-th percentile (0 to 100) of @n values; sorts @v. */
double bench_percentile(double *v, int n, double p);

/* Device time of touch<<<BENCH_THREADS / BENCH_BLOCK, BENCH_BLOCK>>>, ms. */
double bench_touch(cudaKernel_t k, float *x);

/* A libegpu context with @prog of ringbuf.bpf.o attached to touch's exit. */
struct bench_probe {
	egpu_ctx *ctx;
	egpu_obj *obj;
	cudaLibrary_t lib;
	cudaKernel_t k;
};

void bench_probe_load(struct bench_probe *s, const char *ptx, size_t len,
		      const char *prog);
void bench_probe_free(struct bench_probe *s);

#endif
