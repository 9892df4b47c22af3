/* SPDX-License-Identifier: MIT */
/*
 * What the example applications share: a CUDA runtime application that
 * instruments its own PTX with libegpu before loading it. They link the
 * static CUDA runtime, which opens the driver itself, so they start (and
 * explain) on machines without one.
 */
#ifndef EGPU_EXAMPLE_APP_H
#define EGPU_EXAMPLE_APP_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda_runtime.h>

#include "egpu.h"

/* Exit code of a --check run that cannot check anything (ctest: skipped). */
#define APP_SKIP 77

/* Abort with the file, line and CUDA message when @e fails. */
#define CUDA_CHECK(e) app_cuda_check((e), #e, __FILE__, __LINE__)
void app_cuda_check(cudaError_t err, const char *what, const char *file,
		    int line);
/* Abort with libegpu's message when @ok is false. */
#define EGPU_CHECK(ok) app_egpu_check((ok), #ok, __FILE__, __LINE__)
void app_egpu_check(bool ok, const char *what, const char *file, int line);

/* Whether a GPU is usable; if not, *why says what is missing. */
bool app_gpu_present(const char **why);
/* Before the first CUDA call: the process's streams on hardware queues of
 * their own, so that a ring's drain never waits behind a kernel that waits
 * for it (docs/events.md "Drained while the kernel runs"). */
void app_own_queues(void);
/* Whole file, NUL-terminated; aborts on failure. */
char *app_read_file(const char *path, size_t *len);
/* Load PTX text as a CUDA library and find a kernel in it. */
cudaLibrary_t app_load_ptx(const char *ptx);
cudaKernel_t app_kernel(cudaLibrary_t lib, const char *name);
/* Print what egpu_instrument_ptx() did, one line per kernel. */
void app_print_report(const struct egpu_report *r);

/*
 * The common start of an instrumenting example: a context (offline when
 * there is no GPU), the probe object loaded and attached from its section
 * names, the application's PTX instrumented. Returns the instrumented PTX.
 */
struct app {
	egpu_ctx *ctx;
	egpu_obj *obj;
	bool gpu;
	const char *why_no_gpu;
	char *ptx;          /* the application's own PTX */
	char *instrumented; /* the same with the probes */
	struct egpu_report report;
};

void app_start(struct app *app, const char *probe_path, const char *ptx_path);
/* app_start() calling @setup(ctx) before the probe is loaded (e.g. to
 * register the application's own helpers). */
void app_start_with(struct app *app, const char *probe_path,
		    const char *ptx_path, void (*setup)(egpu_ctx *ctx));
/* The same with no probe attached: the splicer's trace mode records every
 * global access in ring map @ring of the object at @obj_path
 * (egpu_mem_trace_enable). */
void app_start_mem_trace(struct app *app, const char *obj_path,
			 const char *ring, const char *ptx_path);
/* The instrumented PTX loaded as egpu_module_load() would: a module of
 * the trace mode with the device runtime compiled apart and linked
 * (egpu_ptx_link), any other as it is. */
cudaLibrary_t app_load_instrumented(const struct app *app);
/*
 * The main() of an instrumenting example: `NAME [--check] [PROBE PTX]`,
 * defaults @probe and @ptx; calls @run(app, check) where there is a GPU and
 * explains itself where there is none. Returns the exit code.
 */
int app_main(int argc, char **argv, const char *probe, const char *ptx,
	     int (*run)(struct app *app, bool check));
/* app_main() through app_start_with(@setup). */
int app_main_with(int argc, char **argv, const char *probe, const char *ptx,
		  void (*setup)(egpu_ctx *ctx),
		  int (*run)(struct app *app, bool check));
/* Device time of one launch of @k, from CUDA events around it. */
float app_time_launch(cudaKernel_t k, dim3 grid, dim3 block, void **args);
/* qsort() order of floats. */
int app_cmp_float(const void *a, const void *b);
/* Median device time of @runs launches (at most 64) after one warm-up. */
float app_time_median(cudaKernel_t k, dim3 grid, dim3 block, void **args,
		      int runs);
/*
 * Without a GPU, say why and what was shown, and return the exit code the
 * example should end with (0, or APP_SKIP for --check runs).
 */
int app_no_gpu(const struct app *app, bool check);
void app_stop(struct app *app);

#endif
