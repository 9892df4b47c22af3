// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <time.h>

#include "event_bench.h"

double bench_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_percentile(double *v, int n, double p)
{
	int i = (int)(p / 100.0 * (n - 1) + 0.5);

	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

double bench_touch(cudaKernel_t k, float *x)
{
	void *args[] = { &x };

	return app_time_launch(k, (dim3){ BENCH_THREADS / BENCH_BLOCK, 1, 1 },
			       (dim3){ BENCH_BLOCK, 1, 1 }, args);
}

void bench_probe_load(struct bench_probe *s, const char *ptx, size_t len,
		      const char *prog)
{
	char *out = NULL;
	size_t out_len;

	s->ctx = egpu_ctx_new(NULL);
	EGPU_CHECK(s->ctx);
	s->obj = egpu_load(s->ctx, BENCH_DIR "/ringbuf.bpf.o", NULL);
	EGPU_CHECK(s->obj);
	EGPU_CHECK(egpu_attach_kernel(egpu_obj_prog(s->obj, prog), "touch",
				      EGPU_ATTACH_EXIT, NULL));
	EGPU_CHECK(!egpu_instrument_ptx(s->ctx, ptx, len, &out, &out_len, NULL));
	s->lib = app_load_ptx(out);
	s->k = app_kernel(s->lib, "touch");
	free(out);
}

void bench_probe_free(struct bench_probe *s)
{
	cudaLibraryUnload(s->lib);
	egpu_ctx_free(s->ctx);
}
