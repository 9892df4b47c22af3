// SPDX-License-Identifier: MIT
/* The public API on a GPU (ctest label gpu; skipped without one): module
 * loading with probes, exact probe counts, unchanged kernel results, direct
 * GPU runs over maps in GPU memory, host map access latency. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda/cu.h"
#include "egpu.h"
#include "test_util.h"

#define API_OBJ EGPU_TEST_BUILD "/api.bpf.o"
#define API_PTX EGPU_TEST_BUILD "/kernels.ptx"
#define BPFTIME_OBJ EGPU_TEST_BUILD "/bpftime.bpf.o"
#define N 1000
#define BLOCK 256
#define GRID 4 /* 1024 threads: 24 return early */

static egpu_ctx *ctx;
static egpu_obj *obj;

static void setup(void)
{
	ctx = egpu_ctx_new(NULL);
	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, API_OBJ, NULL);
	ck_assert_msg(obj, "load: %s", egpu_errmsg());
}

static void teardown(void)
{
	egpu_ctx_free(ctx);
}

static void run_saxpy(CUmodule mod, float *y)
{
	const struct cu_driver *d = cu();
	float x[N], a = 2.0f;
	CUdeviceptr dx, dy;
	CUfunction f;
	int n = N;
	void *args[] = { &a, &dx, &dy, &n };

	for (int i = 0; i < N; i++) {
		x[i] = (float)i;
		y[i] = 1.0f;
	}
	CK_CU(d->cuModuleGetFunction(&f, mod, "saxpy"));
	CK_CU(d->cuMemAlloc(&dx, sizeof(x)));
	CK_CU(d->cuMemAlloc(&dy, sizeof(x)));
	CK_CU(d->cuMemcpyHtoD(dx, x, sizeof(x)));
	CK_CU(d->cuMemcpyHtoD(dy, y, sizeof(x)));
	CK_CU(d->cuLaunchKernel(f, GRID, 1, 1, BLOCK, 1, 1, 0, NULL, args, NULL));
	CK_CU(d->cuCtxSynchronize());
	CK_CU(d->cuMemcpyDtoH(y, dy, sizeof(x)));
	d->cuMemFree(dx);
	d->cuMemFree(dy);
}

START_TEST(probes_count_every_thread)
{
	egpu_map *slots = egpu_obj_map(obj, "slots");
	uint64_t entries, exits;
	uint32_t k0 = 0, k1 = 1;
	char *ptx;
	size_t len;
	CUmodule mod;
	float y[N];

	ck_assert_int_eq(egpu_attach_all(obj), 2);
	ptx = tu_read_file(API_PTX, &len);
	ck_assert_msg(!egpu_module_load(ctx, &mod, ptx, len), "%s", egpu_errmsg());
	run_saxpy(mod, y);
	for (int i = 0; i < N; i++)
		ck_assert_float_eq(y[i], 2.0f * i + 1.0f);
	ck_assert_int_eq(egpu_map_lookup(slots, &k0, &entries), 0);
	ck_assert_int_eq(egpu_map_lookup(slots, &k1, &exits), 0);
	ck_assert_uint_eq(entries, GRID * BLOCK);
	ck_assert_uint_eq(exits, GRID * BLOCK);
	cu()->cuModuleUnload(mod);
	free(ptx);
}
END_TEST

static int on_event(void *user, const void *data, size_t size)
{
	uint64_t *seen = user, id;

	ck_assert_uint_eq(size, sizeof(id));
	memcpy(&id, data, sizeof(id));
	seen[0]++;
	seen[1] += id;
	return 0;
}

static uint64_t lookup_u64(egpu_obj *o, const char *map, uint32_t key)
{
	uint64_t v = 0;

	ck_assert_msg(!egpu_map_lookup(egpu_obj_map(o, map), &key, &v), "%s: %s",
		      map, egpu_errmsg());
	return v;
}

/*
 * bpftime's features with probes written its way (bpftime.bpf.c): blocks
 * 2 and 3 end at entry, so saxpy computes only y[0..511]; the 512 threads
 * left count themselves in maps 1504, 1513 and 1512 and send their index
 * with perf_event_output(NULL, ...).
 */
START_TEST(bpftime_maps_and_early_exit)
{
	egpu_obj *bt = egpu_load(ctx, BPFTIME_OBJ, NULL);
	egpu_map *pt;
	uint64_t seen[2] = { 0, 0 }, *slots, sum = 0;
	egpu_ringbuf *rb;
	uint32_t key = 0;
	char *ptx;
	size_t len;
	CUmodule mod;
	float y[N];

	ck_assert_msg(bt, "load: %s", egpu_errmsg());
	ck_assert_uint_eq(egpu_map_type(egpu_obj_map(bt, "hostpt")),
			  EGPU_MAP_PERTHREAD_ARRAY_HOST);
	ck_assert_int_eq(egpu_attach_all(bt), 2);
	ptx = tu_read_file(API_PTX, &len);
	ck_assert_msg(!egpu_module_load(ctx, &mod, ptx, len), "%s", egpu_errmsg());
	rb = egpu_ringbuf_new(egpu_obj_map(bt, "events"), on_event, seen);
	ck_assert_msg(rb, "%s", egpu_errmsg());
	run_saxpy(mod, y);
	for (int i = 0; i < N; i++)
		ck_assert_float_eq(y[i], i < 2 * BLOCK ? 2.0f * i + 1.0f : 1.0f);
	ck_assert_uint_eq(lookup_u64(bt, "kshared", 0), 2 * BLOCK);
	ck_assert_uint_eq(lookup_u64(bt, "kshared", 1), 2 * BLOCK);
	ck_assert_uint_eq(lookup_u64(bt, "hostarr", 0), 2 * BLOCK);
	ck_assert_uint_eq(lookup_u64(bt, "ghash", 7), 7);
	pt = egpu_obj_map(bt, "hostpt");
	slots = calloc(egpu_map_values_per_key(pt), sizeof(*slots));
	ck_assert_int_eq(egpu_map_lookup(pt, &key, slots), 0);
	for (uint32_t t = 0; t < egpu_map_values_per_key(pt); t++) {
		ck_assert_uint_le(slots[t], 1);
		sum += slots[t];
	}
	ck_assert_uint_eq(sum, 2 * BLOCK);
	while (egpu_ringbuf_poll(rb, 100) > 0)
		;
	ck_assert_uint_eq(seen[0], 2 * BLOCK);
	ck_assert_uint_eq(seen[1], (2 * BLOCK - 1) * 2 * BLOCK / 2);
	egpu_ringbuf_free(rb);
	free(slots);
	cu()->cuModuleUnload(mod);
	free(ptx);
}
END_TEST

START_TEST(direct_gpu_run_matches_cpu)
{
	egpu_prog *p = egpu_obj_prog(obj, "bump");
	uint8_t mem[4] = { 7 };
	EGPU_OPTS(egpu_run_opts, cpu, .ctx = mem, .ctx_len = sizeof(mem));
	EGPU_OPTS(egpu_run_opts, gpu, .ctx = mem, .ctx_len = sizeof(mem),
		  .backend = EGPU_BACKEND_GPU);
	uint32_t key = 7;
	uint64_t v;

	ck_assert_msg(!egpu_prog_run(p, &cpu), "%s", egpu_errmsg());
	ck_assert_uint_eq(cpu.retval, 103);
	/* The GPU copy of the maps starts from what the CPU run left. */
	ck_assert_msg(!egpu_prog_run(p, &gpu), "%s", egpu_errmsg());
	ck_assert_uint_eq(gpu.retval, 106);
	ck_assert_int_eq(egpu_map_lookup(egpu_obj_map(obj, "counts"), &key, &v), 0);
	ck_assert_uint_eq(v, 6);
}
END_TEST

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static double lookup_median_us(egpu_map *m, uint32_t key)
{
	enum { RUNS = 2001 };
	static uint64_t ns[RUNS];
	uint64_t v;

	for (int i = 0; i < RUNS; i++) {
		struct timespec a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		ck_assert_int_eq(egpu_map_lookup(m, &key, &v), 0);
		clock_gettime(CLOCK_MONOTONIC, &b);
		ns[i] = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u +
			(uint64_t)(b.tv_nsec - a.tv_nsec);
	}
	qsort(ns, RUNS, sizeof(ns[0]), cmp_u64);
	return ns[RUNS / 2] / 1e3;
}

START_TEST(host_lookup_latency)
{
	EGPU_OPTS(egpu_run_opts, gpu, .backend = EGPU_BACKEND_GPU);
	egpu_map *counts = egpu_obj_map(obj, "counts");
	uint8_t mem[4] = { 1 };
	double arr, hash;

	gpu.ctx = mem;
	gpu.ctx_len = sizeof(mem);
	ck_assert_msg(!egpu_prog_run(egpu_obj_prog(obj, "bump"), &gpu), "%s",
		      egpu_errmsg());
	arr = lookup_median_us(egpu_obj_map(obj, "slots"), 3);
	hash = lookup_median_us(counts, 1);
	printf("host egpu_map_lookup median: array %.2f us, hash %.2f us\n", arr, hash);
	ck_assert_double_lt(arr, 50.0);
	ck_assert_double_lt(hash, 50.0);
}
END_TEST

int main(void)
{
	Suite *s;
	TCase *tc;

	tu_require_gpu();
	s = suite_create("api_gpu");
	tc = tcase_create("gpu");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, probes_count_every_thread);
	tcase_add_test(tc, direct_gpu_run_matches_cpu);
	tcase_add_test(tc, bpftime_maps_and_early_exit);
	tcase_add_test(tc, host_lookup_latency);
	suite_add_tcase(s, tc);
	/* One process: the maps' CUDA context must outlive each test. */
	return tu_run_suite(s, false);
}
