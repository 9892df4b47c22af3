// SPDX-License-Identifier: MIT
/*
 * threadhist: per-thread run counts and time of a grid-stride kernel, to
 * show the imbalance when the work does not divide evenly over the grid.
 *
 *   threadhist [--check] [PROBE.bpf.o KERNELS.ptx]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

#define GRID 132
#define BLOCK 256
#define THREADS (GRID * BLOCK)
#define N (THREADS * 3 + THREADS / 2) /* half the threads do 4 trips */
#define ROUNDS 2000
#define LAUNCHES 5

/* Trips of thread @t in the grid-stride loop. */
static int trips(int t)
{
	return (N - t + THREADS - 1) / THREADS;
}

struct group {
	uint64_t threads, runs, ns;
};

static int run_kernel(cudaLibrary_t lib, float *x)
{
	cudaKernel_t k = app_kernel(lib, "stride_work");
	int n = N, rounds = ROUNDS;
	void *args[] = { &x, &n, &rounds };

	for (int i = 0; i < LAUNCHES; i++)
		CUDA_CHECK(cudaLaunchKernel((const void *)k, (dim3){ GRID, 1, 1 },
					    (dim3){ BLOCK, 1, 1 }, args, 0, 0));
	return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

/* Per-thread values of @key, one uint64_t per thread slot. */
static uint64_t *thread_values(egpu_map *m, uint32_t key)
{
	uint64_t *v = calloc(egpu_map_values_per_key(m), sizeof(*v));

	EGPU_CHECK(v && !egpu_map_lookup(m, &key, v));
	return v;
}

static int report(egpu_map *m, bool check)
{
	uint64_t *runs = thread_values(m, 0), *ns = thread_values(m, 1);
	uint32_t slots = egpu_map_values_per_key(m);
	struct group g[5] = { 0 };
	int bad = 0;

	for (uint32_t t = 0; t < slots; t++) {
		int want = t < THREADS ? LAUNCHES : 0;

		if (runs[t] != (uint64_t)want) {
			if (bad++ < 5)
				fprintf(stderr, "thread %u ran %llu times, expected %d\n", t,
					(unsigned long long)runs[t], want);
		}
		if (t < THREADS) {
			g[trips((int)t)].threads++;
			g[trips((int)t)].runs += runs[t];
			g[trips((int)t)].ns += ns[t];
		}
	}
	printf("\n%-6s %8s %10s %14s\n", "trips", "threads", "runs", "mean us/run");
	for (int i = 0; i < 5; i++)
		if (g[i].threads)
			printf("%-6d %8llu %10llu %14.2f\n", i,
			       (unsigned long long)g[i].threads,
			       (unsigned long long)g[i].runs,
			       g[i].runs ? g[i].ns / 1e3 / g[i].runs : 0.0);
	printf("imbalance: 4-trip threads spend %.2fx the time of 3-trip threads\n",
	       (double)g[4].ns / g[4].runs / ((double)g[3].ns / g[3].runs));
	if (check && (g[3].ns == 0 || g[4].ns == 0)) {
		fprintf(stderr, "CHECK FAILED: zero durations\n");
		bad++;
	}
	free(runs);
	free(ns);
	return check && bad ? 1 : 0;
}

static int run(struct app *app, bool check)
{
	float *x;
	int rc;

	CUDA_CHECK(cudaMalloc((void **)&x, N * sizeof(float)));
	CUDA_CHECK(cudaMemset(x, 0, N * sizeof(float)));
	rc = run_kernel(app_load_ptx(app->instrumented), x);
	if (!rc)
		rc = report(egpu_obj_map(app->obj, "per_thread"), check);
	cudaFree(x);
	return rc;
}

int main(int argc, char **argv)
{
	return app_main(argc, argv, EXAMPLE_PROBE, EXAMPLE_PTX, run);
}
