/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

void app_cuda_check(cudaError_t err, const char *what, const char *file,
		    int line)
{
	if (err == cudaSuccess)
		return;
	fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, cudaGetErrorString(err));
	exit(1);
}

void app_egpu_check(bool ok, const char *what, const char *file, int line)
{
	if (ok)
		return;
	fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, egpu_errmsg());
	exit(1);
}

void app_own_queues(void)
{
	setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
}

bool app_gpu_present(const char **why)
{
	static char reason[512];
	int n = 0;
	cudaError_t err;

	/* libegpu's reason is the clearer one ("no CUDA driver: ..."). */
	if (!egpu_gpu_available()) {
		snprintf(reason, sizeof(reason), "%s", egpu_errmsg());
		*why = reason;
		return false;
	}
	err = cudaGetDeviceCount(&n);
	if (err != cudaSuccess) {
		*why = cudaGetErrorString(err);
		return false;
	}
	if (n == 0) {
		*why = "no CUDA device found";
		return false;
	}
	return true;
}

char *app_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		perror(path);
		exit(1);
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		exit(1);
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = (size_t)n;
	return buf;
}

cudaLibrary_t app_load_ptx(const char *ptx)
{
	cudaLibrary_t lib;

	CUDA_CHECK(cudaLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
	return lib;
}

cudaLibrary_t app_load_instrumented(const struct app *app)
{
	cudaLibrary_t lib;
	size_t size;
	void *cubin;
	int err = egpu_ptx_link(app->ctx, app->instrumented, NULL, &cubin, &size);

	if (err == EGPU_ENOENT)
		return app_load_ptx(app->instrumented);
	if (err) {
		fprintf(stderr, "%s; loading the PTX as one module\n",
			egpu_errmsg());
		return app_load_ptx(app->instrumented);
	}
	CUDA_CHECK(cudaLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
	free(cubin);
	return lib;
}

cudaKernel_t app_kernel(cudaLibrary_t lib, const char *name)
{
	cudaKernel_t k;

	CUDA_CHECK(cudaLibraryGetKernel(&k, lib, name));
	return k;
}

void app_print_report(const struct egpu_report *r)
{
	printf("instrumented %u of %u kernels in %.2f ms (%u programs, %u entry, %u exit points, %u memory sites)\n",
	       r->kernels_patched, r->kernel_cnt, r->instrument_ms, r->programs,
	       r->entry_points, r->exit_points, r->mem_site_cnt);
	for (uint32_t i = 0; i < r->kernel_cnt; i++)
		printf("  kernel %u %-28s entry %u exit %u mem %u\n", r->kernels[i].kernel_id,
		       r->kernels[i].demangled, r->kernels[i].entry_points,
		       r->kernels[i].exit_points, r->kernels[i].mem_points);
}

void app_start(struct app *app, const char *probe_path, const char *ptx_path)
{
	app_start_with(app, probe_path, ptx_path, NULL);
}

/* A context (offline without a GPU) and the object at @obj_path in it. */
static void open_obj(struct app *app, const char *obj_path,
		     void (*setup)(egpu_ctx *ctx))
{
	memset(app, 0, sizeof(*app));
	app->gpu = app_gpu_present(&app->why_no_gpu);
	EGPU_OPTS(egpu_ctx_opts, co, .offline = !app->gpu);
	app->ctx = egpu_ctx_new(&co);
	EGPU_CHECK(app->ctx);
	if (setup)
		setup(app->ctx);
	app->obj = egpu_load(app->ctx, obj_path, NULL);
	EGPU_CHECK(app->obj);
}

/* The application's PTX at @ptx_path, instrumented as the context says. */
static void instrument(struct app *app, const char *ptx_path)
{
	size_t len, out_len;

	app->ptx = app_read_file(ptx_path, &len);
	app->report.sz = sizeof(app->report);
	EGPU_CHECK(!egpu_instrument_ptx(app->ctx, app->ptx, len, &app->instrumented,
				       &out_len, &app->report));
	app_print_report(&app->report);
}

void app_start_with(struct app *app, const char *probe_path,
		    const char *ptx_path, void (*setup)(egpu_ctx *ctx))
{
	open_obj(app, probe_path, setup);
	EGPU_CHECK(egpu_attach_all(app->obj) > 0);
	instrument(app, ptx_path);
}

void app_start_mem_trace(struct app *app, const char *obj_path,
			 const char *ring, const char *ptx_path)
{
	open_obj(app, obj_path, NULL);
	EGPU_CHECK(!egpu_mem_trace_enable(app->ctx, egpu_obj_map(app->obj, ring),
					  NULL));
	instrument(app, ptx_path);
}

int app_no_gpu(const struct app *app, bool check)
{
	printf("\nno GPU here (%s).\n"
	       "Shown: the probe loaded and checked, translated to PTX and spliced into\n"
	       "the application's kernels (%zu bytes of PTX, maps at placeholder addresses).\n"
	       "Running the kernels and reading the maps needs an NVIDIA GPU.\n",
	       app->why_no_gpu, strlen(app->instrumented));
	return check ? APP_SKIP : 0;
}

void app_stop(struct app *app)
{
	egpu_ctx_free(app->ctx);
	free(app->ptx);
	free(app->instrumented);
}

int app_main(int argc, char **argv, const char *probe, const char *ptx,
	     int (*run)(struct app *app, bool check))
{
	return app_main_with(argc, argv, probe, ptx, NULL, run);
}

int app_main_with(int argc, char **argv, const char *probe, const char *ptx,
		  void (*setup)(egpu_ctx *ctx),
		  int (*run)(struct app *app, bool check))
{
	bool check = argc > 1 && !strcmp(argv[1], "--check");
	struct app app;
	int rc;

	if (argc > 2 + check) {
		probe = argv[1 + check];
		ptx = argv[2 + check];
	}
	app_start_with(&app, probe, ptx, setup);
	rc = app.gpu ? run(&app, check) : app_no_gpu(&app, check);
	app_stop(&app);
	return rc;
}

float app_time_launch(cudaKernel_t k, dim3 grid, dim3 block, void **args)
{
	cudaEvent_t t0, t1;
	float ms;

	CUDA_CHECK(cudaEventCreate(&t0));
	CUDA_CHECK(cudaEventCreate(&t1));
	CUDA_CHECK(cudaEventRecord(t0, 0));
	CUDA_CHECK(cudaLaunchKernel((const void *)k, grid, block, args, 0, 0));
	CUDA_CHECK(cudaEventRecord(t1, 0));
	CUDA_CHECK(cudaEventSynchronize(t1));
	CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
	cudaEventDestroy(t0);
	cudaEventDestroy(t1);
	return ms;
}

int app_cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

float app_time_median(cudaKernel_t k, dim3 grid, dim3 block, void **args,
		      int runs)
{
	float ms[64];

	if (runs < 1 || runs > 64)
		runs = runs < 1 ? 1 : 64;
	app_time_launch(k, grid, block, args);
	for (int i = 0; i < runs; i++)
		ms[i] = app_time_launch(k, grid, block, args);
	qsort(ms, (size_t)runs, sizeof(ms[0]), app_cmp_float);
	return ms[runs / 2];
}
