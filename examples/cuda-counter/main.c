// SPDX-License-Identifier: MIT
/*
 * cuda-counter: counts threads, launches and time per kernel with an entry
 * and an exit probe, and checks the instrumented kernels compute exactly
 * what the original ones do.
 *
 *   cuda-counter [--check] [PROBE.bpf.o KERNELS.ptx]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

#define N (1 << 20)
#define ADD_BLOCK 256
#define ADD_LAUNCHES 3
#define SCALE_GRID 80
#define SCALE_BLOCK 128
#define SCALE_LAUNCHES 2

struct kernel_stats {
	uint64_t launches, entries, exits, first_entry, last_exit, n;
};

struct kernel_run {
	const char *name;      /* as the report names it */
	uint64_t threads;      /* launched in all */
	uint64_t launches;
	uint64_t n_right;      /* launches whose probe read n = N */
	double event_ns;       /* CUDA-event time of all launches */
	uint64_t span_ns;      /* first entry to last exit, summed */
	struct kernel_stats s;
};

struct buffers {
	float *a, *b, *c, *x;
};

static uint32_t kernel_id(const struct app *app, const char *name)
{
	for (uint32_t i = 0; i < app->report.kernel_cnt; i++)
		if (strstr(app->report.kernels[i].demangled, name))
			return app->report.kernels[i].kernel_id;
	fprintf(stderr, "kernel %s not in the report\n", name);
	exit(1);
}

/* Read a kernel's stats and clear its per-launch timestamps. */
static void collect(egpu_map *stats, uint32_t id, struct kernel_run *r)
{
	struct kernel_stats s;

	EGPU_CHECK(!egpu_map_lookup(stats, &id, &s));
	r->span_ns += s.last_exit - s.first_entry;
	r->n_right += s.n == N;
	r->s = s;
	s.first_entry = s.last_exit = s.n = 0;
	EGPU_CHECK(!egpu_map_update(stats, &id, &s, EGPU_ANY));
}

static void init_buffers(struct buffers *b)
{
	float *h = malloc(N * sizeof(float));

	for (int i = 0; i < N; i++)
		h[i] = (float)i * 0.5f;
	CUDA_CHECK(cudaMalloc((void **)&b->a, N * sizeof(float)));
	CUDA_CHECK(cudaMalloc((void **)&b->b, N * sizeof(float)));
	CUDA_CHECK(cudaMalloc((void **)&b->c, N * sizeof(float)));
	CUDA_CHECK(cudaMalloc((void **)&b->x, N * sizeof(float)));
	CUDA_CHECK(cudaMemcpy(b->a, h, N * sizeof(float), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(b->b, h, N * sizeof(float), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(b->x, h, N * sizeof(float), cudaMemcpyHostToDevice));
	free(h);
}

static void free_buffers(struct buffers *b)
{
	cudaFree(b->a);
	cudaFree(b->b);
	cudaFree(b->c);
	cudaFree(b->x);
}

/*
 * Run the workload on the kernels of @lib; the results (c and x) go to
 * @out_c and @out_x. With @stats, read the probes' numbers after each launch.
 */
static void workload(cudaLibrary_t lib, struct buffers *b, float *out_c,
		     float *out_x, egpu_map *stats, struct kernel_run runs[2],
		     const uint32_t ids[2])
{
	cudaKernel_t add = app_kernel(lib, "vectorAdd");
	cudaKernel_t scale = app_kernel(lib, "_Z5scaleIfEvPT_S0_i");
	float factor = 1.0001f;
	int n = N;
	void *add_args[] = { &b->a, &b->b, &b->c, &n };
	void *scale_args[] = { &b->x, &factor, &n };

	for (int i = 0; i < ADD_LAUNCHES; i++) {
		float ms = app_time_launch(add, (dim3){ N / ADD_BLOCK, 1, 1 },
					   (dim3){ ADD_BLOCK, 1, 1 }, add_args);

		if (stats) {
			runs[0].event_ns += ms * 1e6;
			collect(stats, ids[0], &runs[0]);
		}
	}
	for (int i = 0; i < SCALE_LAUNCHES; i++) {
		float ms = app_time_launch(scale, (dim3){ SCALE_GRID, 1, 1 },
					   (dim3){ SCALE_BLOCK, 1, 1 }, scale_args);

		if (stats) {
			runs[1].event_ns += ms * 1e6;
			collect(stats, ids[1], &runs[1]);
		}
	}
	CUDA_CHECK(cudaMemcpy(out_c, b->c, N * sizeof(float), cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemcpy(out_x, b->x, N * sizeof(float), cudaMemcpyDeviceToHost));
}

static int check_run(const struct kernel_run *r)
{
	int bad = 0;

	bad |= r->s.entries != r->threads;
	bad |= r->s.exits != r->threads;
	bad |= r->s.launches != r->launches;
	bad |= r->span_ns == 0 || (double)r->span_ns >= r->event_ns;
	bad |= r->n_right != r->launches;
	if (bad)
		fprintf(stderr, "CHECK FAILED for %s: want %llu threads, %llu launches, 0 < span < event time, n = %d each launch\n",
			r->name, (unsigned long long)r->threads,
			(unsigned long long)r->launches, N);
	return bad;
}

static void print_runs(const struct kernel_run runs[2])
{
	printf("\n%-22s %8s %10s %10s %12s %12s %8s\n", "kernel", "launches",
	       "entries", "exits", "span us", "events us", "n");
	for (int i = 0; i < 2; i++)
		printf("%-22s %8llu %10llu %10llu %12.1f %12.1f %8llu\n", runs[i].name,
		       (unsigned long long)runs[i].s.launches,
		       (unsigned long long)runs[i].s.entries,
		       (unsigned long long)runs[i].s.exits, runs[i].span_ns / 1e3,
		       runs[i].event_ns / 1e3, (unsigned long long)runs[i].s.n);
}

int main(int argc, char **argv)
{
	bool check = argc > 1 && !strcmp(argv[1], "--check");
	const char *probe = argc > 2 + check ? argv[1 + check] : EXAMPLE_PROBE;
	const char *ptx = argc > 2 + check ? argv[2 + check] : EXAMPLE_PTX;
	struct kernel_run runs[2] = {
		{ .name = "vectorAdd", .threads = (uint64_t)ADD_LAUNCHES * N,
		  .launches = ADD_LAUNCHES },
		{ .name = "scale<float>",
		  .threads = (uint64_t)SCALE_LAUNCHES * SCALE_GRID * SCALE_BLOCK,
		  .launches = SCALE_LAUNCHES },
	};
	float *c0 = malloc(N * sizeof(float)), *x0 = malloc(N * sizeof(float));
	float *c1 = malloc(N * sizeof(float)), *x1 = malloc(N * sizeof(float));
	struct buffers plain, probed;
	uint32_t ids[2];
	struct app app;
	int rc = 0;

	app_start(&app, probe, ptx);
	if (!app.gpu) {
		rc = app_no_gpu(&app, check);
		goto out;
	}
	ids[0] = kernel_id(&app, "vectorAdd");
	ids[1] = kernel_id(&app, "scale<float>");
	init_buffers(&plain);
	init_buffers(&probed);
	workload(app_load_ptx(app.ptx), &plain, c0, x0, NULL, runs, ids);
	workload(app_load_ptx(app.instrumented), &probed, c1, x1,
		 egpu_obj_map(app.obj, "stats"), runs, ids);
	print_runs(runs);
	if (memcmp(c0, c1, N * sizeof(float)) || memcmp(x0, x1, N * sizeof(float))) {
		fprintf(stderr, "CHECK FAILED: instrumented kernels computed different results\n");
		rc = 1;
	} else {
		printf("\ninstrumented results are bit-identical to the original ones\n");
	}
	if (check)
		rc |= check_run(&runs[0]) | check_run(&runs[1]);
	free_buffers(&plain);
	free_buffers(&probed);
out:
	app_stop(&app);
	free(c0);
	free(x0);
	free(c1);
	free(x1);
	return rc;
}
