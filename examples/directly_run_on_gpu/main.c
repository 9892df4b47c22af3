// SPDX-License-Identifier: MIT
/*
 * directly_run_on_gpu: run an eBPF program as its own GPU kernel over maps
 * in GPU memory, and the same program on the CPU, and compare.
 *
 *   directly_run_on_gpu [--check] [PROG.bpf.o]
 */
#include <stdio.h>
#include <string.h>

#include "app.h"

#define VALUES 256

static uint64_t expected_sum(void)
{
	uint64_t s = 0;

	for (uint64_t i = 0; i < VALUES; i++)
		s += i * i;
	return s;
}

static void fill_input(egpu_obj *obj)
{
	egpu_map *in = egpu_obj_map(obj, "input");

	EGPU_CHECK(in);
	for (uint32_t i = 0; i < VALUES; i++) {
		uint64_t v = (uint64_t)i * i;

		EGPU_CHECK(!egpu_map_update(in, &i, &v, EGPU_ANY));
	}
}

/* Run once on @backend; returns r0 and prints the output map. */
static uint64_t run(egpu_obj *obj, enum egpu_backend backend)
{
	EGPU_OPTS(egpu_run_opts, ro, .backend = backend);
	egpu_map *out = egpu_obj_map(obj, "output");
	uint64_t sum, max;
	uint32_t k0 = 0, k1 = 1;

	EGPU_CHECK(!egpu_prog_run(egpu_obj_prog(obj, "sum_values"), &ro));
	EGPU_CHECK(!egpu_map_lookup(out, &k0, &sum));
	EGPU_CHECK(!egpu_map_lookup(out, &k1, &max));
	printf("%s: r0 = %llu, output map: sum %llu, max %llu (%.1f us)\n",
	       backend == EGPU_BACKEND_GPU ? "GPU" : "CPU",
	       (unsigned long long)ro.retval, (unsigned long long)sum,
	       (unsigned long long)max, ro.run_ns / 1e3);
	return ro.retval;
}

int main(int argc, char **argv)
{
	bool check = argc > 1 && !strcmp(argv[1], "--check");
	const char *path = argc > 1 + check ? argv[1 + check] : EXAMPLE_PROBE;
	uint64_t want = expected_sum() & 0xffffffffu, cpu, gpu;
	egpu_ctx *ctx = egpu_ctx_new(NULL);
	const char *why;
	egpu_obj *obj;
	int rc = 0;

	EGPU_CHECK(ctx);
	obj = egpu_load(ctx, path, NULL);
	EGPU_CHECK(obj);
	fill_input(obj);
	cpu = run(obj, EGPU_BACKEND_CPU);
	if (!app_gpu_present(&why)) {
		printf("no GPU here (%s): ran on the CPU only\n", why);
		egpu_ctx_free(ctx);
		return check ? APP_SKIP : 0;
	}
	/* The first GPU use moves the maps, values included, to GPU memory. */
	gpu = run(obj, EGPU_BACKEND_GPU);
	if (cpu != want || gpu != want) {
		fprintf(stderr, "CHECK FAILED: expected %llu\n", (unsigned long long)want);
		rc = 1;
	}
	egpu_ctx_free(ctx);
	return rc;
}
