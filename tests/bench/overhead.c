// SPDX-License-Identifier: MIT
/*
 * Probe overhead benchmark: device time of instrumented over original
 * kernels, both loaded the same way, timed with CUDA events, interleaved,
 * L2 flushed before every run, median of RUNS runs after warm-up. Prints a
 * Markdown table (docs/benchmarks.md) with the registers each kernel uses.
 *
 *   bench_overhead [RUNS [PROBE]]   (PROBE: only the rows of that probe,
 *                                    e.g. to profile them with ncu)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

struct probe {
	const char *name;
	const char *path;
	double target;
	bool no_inline; /* call the probe instead of copying it in */
};

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

		bench_measure(kp, ki, &w[i], runs, &base, &probed);
		printf("| %-14s | %-14s | %9.3f | %9.3f | %6.3f | <= %.2f | %3d -> %3d | %6.2f |\n",
		       w[i].name, p->name, base, probed, probed / base, p->target,
		       bench_regs(kp), bench_regs(ki), rep.instrument_ms);
		fflush(stdout);
	}
	cudaLibraryUnload(plain_lib);
	cudaLibraryUnload(inst_lib);
	free(out);
	egpu_ctx_free(ctx);
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 25;
	const char *only = argc > 2 ? argv[2] : NULL;
	const struct probe probes[] = {
		{ "empty", BENCH_DIR "/empty.bpf.o", 1.01, false },
		{ "empty, called", BENCH_DIR "/empty.bpf.o", 1.01, true },
		{ "timing", BENCH_DIR "/timing.bpf.o", 1.05, false },
		{ "timing, TL+SM", BENCH_DIR "/timing_tl.bpf.o", 1.10, false },
		{ "timing, TL only", BENCH_DIR "/timing_tlonly.bpf.o", 1.10, false },
		{ "threadhist", BENCH_DIR "/threadhist.bpf.o", 1.10, false },
		/* issue 24: as users write them; one padded word per SM */
		{ "timing, naive", BENCH_DIR "/naive_timing.bpf.o", 1.10, false },
		{ "timing, tuned", BENCH_DIR "/tuned_timing.bpf.o", 1.10, false },
		{ "count, SM word", BENCH_DIR "/sm_counter.bpf.o", 1.15, false },
	};
	const struct workload *w;
	size_t nw = bench_start(runs, &w);
	size_t len;
	char *ptx;

	if (!nw)
		return APP_SKIP;
	ptx = app_read_file(BENCH_DIR "/workloads.ptx", &len);
	printf("| workload       | probe          | base ms   | probed ms | ratio  | target  | registers  | jit ms |\n");
	printf("|----------------|----------------|-----------|-----------|--------|---------|------------|--------|\n");
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		if (!only || !strcmp(only, probes[i].name))
			bench_probe(&probes[i], ptx, len, w, nw, runs);
	free(ptx);
	return 0;
}
