/* SPDX-License-Identifier: MIT */
/*
 * bench_loads [N]: what attaching costs a program that loads many modules.
 * Loads N distinct PTX modules (one small kernel each) with
 * cuModuleLoadData, launches each once and checks its result, then loads
 * the same N texts again (the instrumented-module cache's case). Linked
 * with -lcuda: the driver reached by symbol binding, not dlsym. Prints the
 * time of each pass; run with and without `egpu attach` to compare.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PTX_FMT                                                               \
	".version 8.0\n.target sm_90\n.address_size 64\n"                     \
	".visible .entry bench_k%d(.param .u64 out)\n{\n"                    \
	"\t.reg .b64 %%rd<3>;\n\t.reg .b32 %%r<2>;\n"                        \
	"\tld.param.u64 %%rd1, [out];\n\tcvta.to.global.u64 %%rd2, %%rd1;\n"  \
	"\tatom.global.add.u32 %%r1, [%%rd2], %d;\n\tret;\n}\n"

#define CK(call)                                                              \
	do {                                                                  \
		CUresult r = (call);                                          \
		if (r != CUDA_SUCCESS) {                                      \
			fprintf(stderr, "%s: error %d\n", #call, r);          \
			exit(1);                                              \
		}                                                             \
	} while (0)

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Load every module, run its kernel on 64 threads, check the sum. */
static double pass(int n, char **ptx, CUdeviceptr out)
{
	double t = now_ms();

	for (int i = 0; i < n; i++) {
		char name[32];
		CUmodule mod;
		CUfunction fn;
		unsigned got = 0;
		void *args[] = { &out };

		CK(cuModuleLoadData(&mod, ptx[i]));
		snprintf(name, sizeof(name), "bench_k%d", i);
		CK(cuModuleGetFunction(&fn, mod, name));
		CK(cuMemsetD32(out, 0, 1));
		CK(cuLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
		CK(cuMemcpyDtoH(&got, out, sizeof(got)));
		if (got != 64u * (unsigned)(i + 1)) {
			fprintf(stderr, "module %d: %u, want %u\n", i, got, 64 * (i + 1));
			exit(1);
		}
		CK(cuModuleUnload(mod));
	}
	return now_ms() - t;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	char **ptx = calloc(n, sizeof(*ptx));
	double start = now_ms(), first, second;
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr out;

	for (int i = 0; i < n; i++) {
		ptx[i] = malloc(1024);
		snprintf(ptx[i], 1024, PTX_FMT, i, i + 1);
	}
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuMemAlloc(&out, 4));
	first = pass(n, ptx, out);
	second = pass(n, ptx, out);
	printf("bench_loads: %d modules: first pass %.1f ms (%.2f ms each), second pass %.1f ms (%.2f ms each), process %.1f ms\n",
	       n, first, first / n, second, second / n, now_ms() - start);
	return 0;
}
