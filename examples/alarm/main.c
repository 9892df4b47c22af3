// SPDX-License-Identifier: MIT
/*
 * alarm: the application's own function on_nan(kernel_id, index), called
 * from a memory probe the first time kernel step writes a NaN (a user
 * helper, docs/helpers.md; the probe sees each stored value through
 * bpf_egpu_read_value). The kernel never waits for the host: the call is
 * queued and made on the context's dispatcher thread.
 *
 *   alarm [--check] [PROBE.bpf.o KERNELS.ptx]
 *
 * Runs step without NaNs (timing the plain and the watched kernel: median
 * of RUNS launches each), then with NaNs at three places: one on_nan call
 * per kernel however many threads write NaNs, none more until the host
 * re-arms the flag. --check: exactly those calls, at a NaN's index, the
 * results identical to the plain kernel's, the watched kernel within
 * MAX_SLOWDOWN of the plain one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"

#define N (1 << 24)
#define BLOCK 256
#define ITERS 32
#define RUNS 41
#define MAX_SLOWDOWN 1.10
#define ON_NAN 0x10000

static const int nan_at[] = { 123457, 9000001, 16000003 };

/* What on_nan saw; written on the dispatcher thread. */
static uint64_t alarms, alarm_kernel, alarm_index;

static void on_nan(uint64_t kernel_id, uint64_t index)
{
	printf("on_nan: kernel %llu wrote a NaN at index %llu\n",
	       (unsigned long long)kernel_id, (unsigned long long)index);
	alarm_kernel = kernel_id;
	alarm_index = index;
	__atomic_add_fetch(&alarms, 1, __ATOMIC_RELEASE);
}

static void register_on_nan(egpu_ctx *ctx)
{
	EGPU_CHECK(!egpu_helper_register(ctx, ON_NAN, "on_nan", (void *)on_nan,
					 "void (u64, u64)", NULL));
}

/* Wait up to a second for the dispatcher to have made @want calls. */
static uint64_t wait_alarms(uint64_t want)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 1000 && __atomic_load_n(&alarms, __ATOMIC_ACQUIRE) <
	     want; i++)
		nanosleep(&ms, NULL);
	nanosleep(&ms, NULL); /* and a little longer: nothing more comes */
	return __atomic_load_n(&alarms, __ATOMIC_ACQUIRE);
}

static uint32_t step_id(const struct egpu_report *r)
{
	for (uint32_t i = 0; i < r->kernel_cnt; i++)
		if (!strcmp(r->kernels[i].name, "step"))
			return r->kernels[i].kernel_id;
	return UINT32_MAX;
}

static bool at_a_nan(uint64_t index)
{
	for (size_t i = 0; i < sizeof(nan_at) / sizeof(nan_at[0]); i++)
		if ((uint64_t)nan_at[i] == index)
			return true;
	return false;
}

struct run {
	float *x, *y;
	void *args[4];
	int n, iters;
	dim3 grid, block;
};

static void launch(cudaKernel_t k, struct run *r)
{
	CUDA_CHECK(cudaLaunchKernel((const void *)k, r->grid, r->block, r->args,
				    0, 0));
	CUDA_CHECK(cudaDeviceSynchronize());
}

static bool same_y(const struct run *r, const float *want)
{
	float *got = malloc(N * sizeof(float));
	bool same;

	if (!got)
		abort();
	CUDA_CHECK(cudaMemcpy(got, r->y, N * sizeof(float), cudaMemcpyDeviceToHost));
	same = !memcmp(got, want, N * sizeof(float));
	free(got);
	return same;
}

static int run(struct app *app, bool check)
{
	cudaLibrary_t plain_lib = app_load_ptx(app->ptx);
	cudaLibrary_t lib = app_load_ptx(app->instrumented);
	cudaKernel_t plain = app_kernel(plain_lib, "step"), watched = app_kernel(lib, "step");
	egpu_map *raised = egpu_obj_map(app->obj, "raised");
	uint32_t id = step_id(&app->report);
	uint64_t zero = 0, after_first, after_again, after_rearm;
	float *hx = malloc(N * sizeof(float)), *want = malloc(N * sizeof(float));
	struct run r = { .n = N, .iters = ITERS, .grid = { N / BLOCK, 1, 1 },
			 .block = { BLOCK, 1, 1 } };
	float plain_ms, watched_ms;
	bool same;
	int bad = 0;

	EGPU_CHECK(raised && id != UINT32_MAX);
	if (!hx || !want)
		abort();
	for (int i = 0; i < N; i++)
		hx[i] = 1.0f + (float)(i % 1000);
	CUDA_CHECK(cudaMalloc((void **)&r.x, N * sizeof(float)));
	CUDA_CHECK(cudaMalloc((void **)&r.y, N * sizeof(float)));
	CUDA_CHECK(cudaMemcpy(r.x, hx, N * sizeof(float), cudaMemcpyHostToDevice));
	r.args[0] = &r.x;
	r.args[1] = &r.y;
	r.args[2] = &r.n;
	r.args[3] = &r.iters;

	/* No NaN: the watch costs its checks only. */
	plain_ms = app_time_median(plain, r.grid, r.block, r.args, RUNS);
	watched_ms = app_time_median(watched, r.grid, r.block, r.args, RUNS);
	printf("\nstep over %d floats (%d threads of %d), median of %d launches:\n"
	       "  plain   %.4f ms\n  watched %.4f ms  (%.3fx)\n", N, N, BLOCK,
	       RUNS, plain_ms, watched_ms, watched_ms / plain_ms);

	/* NaNs at three places: one call for the kernel. */
	for (size_t i = 0; i < sizeof(nan_at) / sizeof(nan_at[0]); i++)
		hx[nan_at[i]] = -1.0f;
	CUDA_CHECK(cudaMemcpy(r.x, hx, N * sizeof(float), cudaMemcpyHostToDevice));
	launch(plain, &r);
	CUDA_CHECK(cudaMemcpy(want, r.y, N * sizeof(float), cudaMemcpyDeviceToHost));
	printf("\nkernel step (id %u) with NaNs at %d, %d, %d:\n", id, nan_at[0],
	       nan_at[1], nan_at[2]);
	launch(watched, &r);
	same = same_y(&r, want);
	after_first = wait_alarms(1);
	launch(watched, &r); /* the flag is set: no call */
	after_again = wait_alarms(after_first + 1);
	printf("launched again: %llu call(s) in all\n", (unsigned long long)after_again);
	EGPU_CHECK(!egpu_map_update(raised, &id, &zero, 0)); /* re-arm */
	launch(watched, &r);
	after_rearm = wait_alarms(after_again + 1);
	printf("re-armed and launched: %llu call(s) in all; %llu dropped\n",
	       (unsigned long long)after_rearm,
	       (unsigned long long)egpu_helper_drops(app->ctx));

	if (check) {
		bad |= after_first != 1 || after_again != 1 || after_rearm != 2;
		bad |= alarm_kernel != id || !at_a_nan(alarm_index) || !same;
		bad |= watched_ms > MAX_SLOWDOWN * plain_ms;
		printf(bad ? "CHECK FAILED: calls %llu/%llu/%llu (want 1/1/2), "
			     "kernel %llu index %llu, results %s, %.3fx\n" :
			     "check passed\n",
		       (unsigned long long)after_first,
		       (unsigned long long)after_again,
		       (unsigned long long)after_rearm,
		       (unsigned long long)alarm_kernel,
		       (unsigned long long)alarm_index,
		       same ? "identical" : "DIFFERENT", watched_ms / plain_ms);
	}
	cudaFree(r.x);
	cudaFree(r.y);
	free(hx);
	free(want);
	cudaLibraryUnload(plain_lib);
	cudaLibraryUnload(lib);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--check")) {
		const char *why;

		if (!app_gpu_present(&why)) {
			printf("no GPU here (%s): nothing to check\n", why);
			return APP_SKIP;
		}
	}
	return app_main_with(argc, argv, EXAMPLE_PROBE, EXAMPLE_PTX,
			     register_on_nan, run);
}
