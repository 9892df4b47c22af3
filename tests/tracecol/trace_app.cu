// SPDX-License-Identifier: MIT
/*
 * The tracer's GPU test (ctest label gpu), a CUDA program that launches
 * kernels every way the collector knows: <<<>>> (cudaLaunchKernel),
 * cudaLaunchKernelEx, cuLaunchKernel, cuLaunchKernelEx, a CUDA graph,
 * and copies and sets memory. It checks:
 *  - every kernel execution is joined to its launch (100% matched),
 *  - each kernel's path names the launching functions and the API,
 *  - per-kernel GPU time agrees with CUDA events within 5%,
 *  - tracing costs at most 5% of a launch-heavy workload's wall time
 *    (median of several runs, traced vs. untraced).
 * `trace_app --plain` only runs the launches, for `egpu trace` to trace.
 * Exits 77 (skipped) without a GPU.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>

#include "egpu.h"

#define RUNS 7
#define WORK_LAUNCHES 200
#define WORK_NS 100000ull         /* each workload kernel: 100 us */
#define TIMED_LAUNCHES 20
#define TIMED_NS 1000000ull       /* each timed kernel: 1 ms */
#define SMALL_NS 20000ull         /* the others: 20 us */

static int failures;

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);  \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
			failures++;                                           \
		}                                                             \
	} while (0)

#define RT(call)                                                              \
	do {                                                                  \
		cudaError_t e_ = (call);                                      \
		if (e_ != cudaSuccess) {                                      \
			fprintf(stderr, "%s: %s\n", #call,                    \
				cudaGetErrorString(e_));                      \
			exit(1);                                              \
		}                                                             \
	} while (0)

#define DRV(call)                                                             \
	do {                                                                  \
		CUresult r_ = (call);                                         \
		if (r_ != CUDA_SUCCESS) {                                     \
			fprintf(stderr, "%s: CUresult %d\n", #call, (int)r_); \
			exit(1);                                              \
		}                                                             \
	} while (0)

__device__ static unsigned long long gtime(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* Busy for @ns nanoseconds of GPU time. */
__device__ static void spin(unsigned long long ns, int *out)
{
	unsigned long long t0 = gtime();

	while (gtime() - t0 < ns)
		;
	if (!threadIdx.x)
		out[blockIdx.x] = 1;
}

__global__ void work_kernel(unsigned long long ns, int *out) { spin(ns, out); }
__global__ void timed_kernel(unsigned long long ns, int *out) { spin(ns, out); }
__global__ void ex_kernel(unsigned long long ns, int *out) { spin(ns, out); }
__global__ void drv_kernel(unsigned long long ns, int *out) { spin(ns, out); }
__global__ void drv_ex_kernel(unsigned long long ns, int *out) { spin(ns, out); }
__global__ void graph_kernel(unsigned long long ns, int *out) { spin(ns, out); }

static int *dev_out;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * Launch-heavy and GPU-bound, like a training step: many short kernels.
 * Returns the wall time; *@launching: the time spent launching.
 */
static double __attribute__((noinline)) workload(double *launching)
{
	double t0 = now_s();

	for (int i = 0; i < WORK_LAUNCHES; i++)
		work_kernel<<<1, 32>>>(WORK_NS, dev_out);
	*launching = now_s() - t0;
	RT(cudaDeviceSynchronize());
	return now_s() - t0;
}

static double median(double *v, int n)
{
	std::sort(v, v + n);
	return v[n / 2];
}

/* GPU time of TIMED_LAUNCHES timed kernels by CUDA events, in ns. */
static double __attribute__((noinline)) launch_timed(void)
{
	cudaEvent_t a, b;
	double total = 0;
	float ms;

	RT(cudaEventCreate(&a));
	RT(cudaEventCreate(&b));
	for (int i = 0; i < TIMED_LAUNCHES; i++) {
		RT(cudaEventRecord(a));
		timed_kernel<<<1, 32>>>(TIMED_NS, dev_out);
		RT(cudaEventRecord(b));
		RT(cudaEventSynchronize(b));
		RT(cudaEventElapsedTime(&ms, a, b));
		total += ms * 1e6;
	}
	RT(cudaEventDestroy(a));
	RT(cudaEventDestroy(b));
	return total;
}

static void __attribute__((noinline)) launch_ex(void)
{
	cudaLaunchConfig_t cfg = {};

	cfg.gridDim = dim3(1);
	cfg.blockDim = dim3(32);
	RT(cudaLaunchKernelEx(&cfg, ex_kernel, SMALL_NS, dev_out));
}

/* The driver's entry points through the runtime: the program needs no
 * libcuda to start, so it can say "skipped" where there is none. */
template <typename F> static F driver_entry(const char *name)
{
	cudaDriverEntryPointQueryResult found;
	void *fn = NULL;

	RT(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault,
					    &found));
	if (!fn || found != cudaDriverEntryPointSuccess) {
		fprintf(stderr, "no driver entry point %s\n", name);
		exit(1);
	}
	return (F)fn;
}

static CUfunction driver_function(const void *kernel)
{
	cudaFunction_t f;

	RT(cudaGetFuncBySymbol(&f, kernel));
	return (CUfunction)f;
}

static void __attribute__((noinline)) launch_driver(void)
{
	unsigned long long ns = SMALL_NS;
	void *args[] = { &ns, &dev_out };

	auto launch = driver_entry<decltype(&cuLaunchKernel)>("cuLaunchKernel");

	DRV(launch(driver_function((const void *)drv_kernel), 1, 1, 1, 32, 1, 1,
		   0, NULL, args, NULL));
}

static void __attribute__((noinline)) launch_driver_ex(void)
{
	unsigned long long ns = SMALL_NS;
	void *args[] = { &ns, &dev_out };
	CUlaunchConfig cfg = {};
	auto launch =
		driver_entry<decltype(&cuLaunchKernelEx)>("cuLaunchKernelEx");

	cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
	cfg.blockDimX = 32;
	cfg.blockDimY = cfg.blockDimZ = 1;
	DRV(launch(&cfg, driver_function((const void *)drv_ex_kernel), args,
		   NULL));
}

/* A graph of two kernels, launched three times. */
static void __attribute__((noinline)) launch_graph(void)
{
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t exec;

	RT(cudaStreamCreate(&s));
	RT(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	graph_kernel<<<1, 32, 0, s>>>(SMALL_NS, dev_out);
	graph_kernel<<<1, 32, 0, s>>>(SMALL_NS, dev_out);
	RT(cudaStreamEndCapture(s, &g));
	RT(cudaGraphInstantiate(&exec, g, 0));
	for (int i = 0; i < 3; i++)
		RT(cudaGraphLaunch(exec, s));
	RT(cudaStreamSynchronize(s));
	RT(cudaGraphExecDestroy(exec));
	RT(cudaGraphDestroy(g));
	RT(cudaStreamDestroy(s));
}

static void __attribute__((noinline)) copy_memory(void)
{
	int host[256] = { 0 };

	RT(cudaMemcpy(dev_out, host, sizeof(host), cudaMemcpyHostToDevice));
	RT(cudaMemset(dev_out, 0, sizeof(host)));
	RT(cudaMemcpy(host, dev_out, sizeof(host), cudaMemcpyDeviceToHost));
}

static double launch_everything(void)
{
	double timed = launch_timed();

	launch_ex();
	launch_driver();
	launch_driver_ex();
	launch_graph();
	copy_memory();
	RT(cudaDeviceSynchronize());
	return timed;
}

static const struct egpu_trace_kernel *kernel_named(egpu_trace *t,
						    const char *prefix)
{
	for (size_t i = 0; i < egpu_trace_kernel_cnt(t); i++) {
		const struct egpu_trace_kernel *k = egpu_trace_kernel(t, i);

		if (!strncmp(k->name, prefix, strlen(prefix)))
			return k;
	}
	return NULL;
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && !strcmp(s + n - m, end);
}

/* Kernel @name ran @launches times, launched from @fn through @api. */
static void check_kernel(egpu_trace *t, const char *name, uint64_t launches,
			 const char *fn, const char *api)
{
	const struct egpu_trace_kernel *k = kernel_named(t, name);

	CHECK(k, "no kernel %s in the trace", name);
	if (!k)
		return;
	printf("%-14s %4llu launches %10.3f ms  %s\n", name,
	       (unsigned long long)k->launches, k->gpu_ns / 1e6,
	       k->hottest_path);
	CHECK(k->launches == launches, "%s: %llu launches, want %llu", name,
	      (unsigned long long)k->launches, (unsigned long long)launches);
	CHECK(strstr(k->hottest_path, "main;") == k->hottest_path ||
	      strstr(k->hottest_path, ";main;"), "%s: no main in %s", name,
	      k->hottest_path);
	CHECK(strstr(k->hottest_path, fn), "%s: no %s in %s", name, fn,
	      k->hottest_path);
	CHECK(ends_with(k->hottest_path, api), "%s: %s does not end in %s",
	      name, k->hottest_path, api);
}

static void check_outputs(egpu_trace *t)
{
	static const char *const ext[] = { "", "folded", "json", "svg", "txt" };
	char dir[] = "/tmp/egpu_trace_app_XXXXXX", path[128];

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	for (int f = EGPU_TRACE_FOLDED; f <= EGPU_TRACE_SUMMARY; f++) {
		FILE *in;
		long size = 0;

		snprintf(path, sizeof(path), "%s/trace.%s", dir, ext[f]);
		CHECK(!egpu_trace_write(t, (enum egpu_trace_format)f, path),
		      "write %s: %s", path, egpu_errmsg());
		if ((in = fopen(path, "r"))) {
			fseek(in, 0, SEEK_END);
			size = ftell(in);
			fclose(in);
		}
		CHECK(size > 0, "%s is empty", path);
		remove(path);
	}
	remove(dir);
}

static void check_trace(egpu_trace *t, double event_ns)
{
	struct egpu_trace_stats st = {};
	const struct egpu_trace_kernel *k;
	/* the workloads, the timed kernels, ex, driver, driver ex */
	const uint64_t direct = RUNS * WORK_LAUNCHES + TIMED_LAUNCHES + 3;
	/* and 2 launches captured into the graph, 3 graph launches */
	const uint64_t launches = direct + 2 + 3;
	/* the graph's 2 kernels each time */
	const uint64_t kernels = direct + 3 * 2;

	st.sz = sizeof(st);
	CHECK(!egpu_trace_stats(t, &st), "stats: %s", egpu_errmsg());
	printf("launches %llu, kernels %llu, matched %llu, copies %llu, "
	       "lost %llu\n", (unsigned long long)st.launches,
	       (unsigned long long)st.kernels, (unsigned long long)st.matched,
	       (unsigned long long)st.copies, (unsigned long long)st.lost);
	CHECK(st.launches == launches, "%llu launches, want %llu",
	      (unsigned long long)st.launches, (unsigned long long)launches);
	CHECK(st.kernels == kernels, "%llu kernels, want %llu",
	      (unsigned long long)st.kernels, (unsigned long long)kernels);
	CHECK(st.matched == st.kernels, "matched %llu of %llu kernels",
	      (unsigned long long)st.matched, (unsigned long long)st.kernels);
	CHECK(st.copies == 3, "%llu copies, want 3",
	      (unsigned long long)st.copies);
	CHECK(st.lost == 0, "%llu records lost", (unsigned long long)st.lost);
	check_kernel(t, "timed_kernel", TIMED_LAUNCHES, "launch_timed",
		     "cudaLaunchKernel");
	check_kernel(t, "ex_kernel", 1, "launch_ex", "cudaLaunchKernelExC");
	check_kernel(t, "drv_kernel", 1, "launch_driver", "cuLaunchKernel");
	check_kernel(t, "drv_ex_kernel", 1, "launch_driver_ex",
		     "cuLaunchKernelEx");
	check_kernel(t, "graph_kernel", 6, "launch_graph", "cudaGraphLaunch");
	check_kernel(t, "work_kernel", RUNS * WORK_LAUNCHES, "workload",
		     "cudaLaunchKernel");
	k = kernel_named(t, "timed_kernel");
	if (k) {
		double diff = (k->gpu_ns - event_ns) / event_ns;

		printf("timed_kernel: CUPTI %.3f ms, CUDA events %.3f ms "
		       "(%+.2f%%)\n", k->gpu_ns / 1e6, event_ns / 1e6,
		       diff * 100);
		CHECK(diff < 0.05 && diff > -0.05, "GPU time off by %.2f%%",
		      diff * 100);
	}
	check_outputs(t);
}

int main(int argc, char **argv)
{
	double plain[RUNS], traced[RUNS], plain_cpu[RUNS], traced_cpu[RUNS];
	double event_ns, overhead, warm;
	egpu_trace *t, *second;
	int n;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		printf("skipped: no CUDA device\n");
		return 77;
	}
	RT(cudaMalloc(&dev_out, 1024 * sizeof(int)));
	if (argc > 1 && !strcmp(argv[1], "--plain")) {
		workload(&warm);
		launch_everything();
		return 0;
	}
	workload(&warm);  /* warm up: module loading, clocks */
	for (int i = 0; i < RUNS; i++)
		plain[i] = workload(&plain_cpu[i]);
	t = egpu_trace_start(NULL);
	if (!t) {
		fprintf(stderr, "egpu_trace_start: %s\n", egpu_errmsg());
		return 1;
	}
	second = egpu_trace_start(NULL);
	CHECK(!second && egpu_errcode() == EGPU_EBUSY,
	      "second trace: %s", egpu_errmsg());
	for (int i = 0; i < RUNS; i++)
		traced[i] = workload(&traced_cpu[i]);
	event_ns = launch_everything();
	CHECK(!egpu_trace_stop(t), "stop: %s", egpu_errmsg());
	overhead = median(traced, RUNS) / median(plain, RUNS) - 1;
	printf("workload wall time: untraced %.3f ms, traced %.3f ms "
	       "(median of %d): overhead %+.2f%%\n",
	       median(plain, RUNS) * 1e3, median(traced, RUNS) * 1e3, RUNS,
	       overhead * 100);
	CHECK(overhead <= 0.05, "tracing overhead %.2f%% > 5%%",
	      overhead * 100);
	printf("host time per launch: untraced %.2f us, traced %.2f us\n",
	       median(plain_cpu, RUNS) / WORK_LAUNCHES * 1e6,
	       median(traced_cpu, RUNS) / WORK_LAUNCHES * 1e6);
	check_trace(t, event_ns);
	egpu_trace_free(t);
	RT(cudaFree(dev_out));
	printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}
