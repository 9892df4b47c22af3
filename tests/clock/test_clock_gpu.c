// SPDX-License-Identifier: MIT
/*
 * Clock calibration on a GPU (ctest label gpu; skipped without one): the
 * context calibrates at its first GPU use, within 10 us; GPU timer
 * readings of a kernel and of its entry probe, mapped to host time, fall
 * inside the host's window around the launch; calibrations agree with
 * each other; a busy default stream does not hold a calibration up.
 */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda/cu.h"
#include "egpu.h"
#include "test_util.h"

#define CLOCK_OBJ EGPU_TEST_BUILD "/clock.bpf.o"
#define CLOCK_PTX EGPU_TEST_BUILD "/kernels.ptx"
#define ERROR_MAX_NS 10000 /* what a calibration must achieve */
#define LAUNCHES 200
/* What the clocks may drift apart during one test (tens of milliseconds,
 * at up to 100 ppm), on top of a calibration's error bound. */
#define DRIFT_SLACK_NS 2000

static egpu_ctx *ctx;
static egpu_obj *obj;
static CUmodule mod;
/* Host time around the module's load: the first GPU use. */
static uint64_t load_start, load_end;

static uint64_t host_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A context whose first GPU use is loading kernels.ptx with the probe. */
static void setup(void)
{
	size_t len;
	char *ptx = tu_read_file(CLOCK_PTX, &len);

	ctx = egpu_ctx_new(NULL);
	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, CLOCK_OBJ, NULL);
	ck_assert_msg(obj, "load: %s", egpu_errmsg());
	ck_assert_int_eq(egpu_attach_all(obj), 1);
	load_start = host_now();
	ck_assert_msg(!egpu_module_load(ctx, &mod, ptx, len), "%s", egpu_errmsg());
	load_end = host_now();
	free(ptx);
}

static void teardown(void)
{
	cu()->cuModuleUnload(mod);
	egpu_ctx_free(ctx);
}

static void check_quality(const struct egpu_clock *c)
{
	ck_assert_uint_eq(c->sz, sizeof(*c));
	ck_assert_uint_gt(c->rounds, 0);
	ck_assert_uint_gt(c->step_ns, 0);
	ck_assert_uint_gt(c->round_trip_ns, 0);
	ck_assert_msg(c->error_ns < ERROR_MAX_NS,
		      "error bound %llu ns (round trip %llu ns, timer step %llu ns)",
		      (unsigned long long)c->error_ns,
		      (unsigned long long)c->round_trip_ns,
		      (unsigned long long)c->step_ns);
	ck_assert_uint_eq(c->error_ns, (c->round_trip_ns + 1) / 2 + c->step_ns);
}

START_TEST(calibrated_at_the_first_gpu_use)
{
	EGPU_OPTS(egpu_clock, c);

	ck_assert_msg(!egpu_clock_get(ctx, &c), "%s", egpu_errmsg());
	check_quality(&c);
	ck_assert_uint_ge(c.host_ns, load_start);
	ck_assert_uint_le(c.host_ns, load_end);
	printf("calibration at the first GPU use: globaltimer - CLOCK_MONOTONIC = %lld ns +- %llu ns (round trip %llu ns, timer step %llu ns, %u rounds; egpu_module_load with it %.2f ms)\n",
	       (long long)c.offset_ns, (unsigned long long)c.error_ns,
	       (unsigned long long)c.round_trip_ns,
	       (unsigned long long)c.step_ns, c.rounds,
	       (load_end - load_start) / 1e6);
}
END_TEST

START_TEST(get_returns_the_kept_calibration)
{
	EGPU_OPTS(egpu_clock, a);
	EGPU_OPTS(egpu_clock, b);
	struct egpu_clock old = { .sz = offsetof(struct egpu_clock, error_ns) };

	ck_assert_msg(!egpu_clock_sync(ctx, &a), "%s", egpu_errmsg());
	ck_assert_msg(!egpu_clock_get(ctx, &b), "%s", egpu_errmsg());
	ck_assert_mem_eq(&a, &b, sizeof(a));
	/* An older, smaller struct gets the fields it has. */
	ck_assert_msg(!egpu_clock_get(ctx, &old), "%s", egpu_errmsg());
	ck_assert_uint_eq(old.sz, offsetof(struct egpu_clock, error_ns));
	ck_assert_int_eq(old.offset_ns, a.offset_ns);
	ck_assert_uint_eq(old.error_ns, 0);
}
END_TEST

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* @gpu_ns mapped to host time lies in [before, after], give or take the
 * calibration's error bound and drift. */
static void check_inside(const struct egpu_clock *c, uint64_t gpu_ns,
			 uint64_t before, uint64_t after, const char *what)
{
	uint64_t h = egpu_clock_gpu_to_host(c, gpu_ns);
	uint64_t slack = c->error_ns + DRIFT_SLACK_NS;

	ck_assert_msg(h + slack >= before && h <= after + slack,
		      "%s at %lld ns from the launch, the window is [0, %llu] +- %llu ns",
		      what, (long long)(h - before), (unsigned long long)(after - before),
		      (unsigned long long)slack);
}

START_TEST(gpu_readings_map_inside_the_launch_window)
{
	const struct cu_driver *d = cu();
	static int64_t entry[LAUNCHES];
	EGPU_OPTS(egpu_clock, c);
	uint64_t probe_ns, kernel_ns;
	egpu_map *map = egpu_obj_map(obj, "entry_ns");
	uint32_t zero = 0;
	CUdeviceptr out;
	CUfunction f;
	void *args[] = { &out };

	CK_CU(d->cuModuleGetFunction(&f, mod, "stamp"));
	CK_CU(d->cuMemAlloc(&out, sizeof(kernel_ns)));
	ck_assert_msg(!egpu_clock_sync(ctx, &c), "%s", egpu_errmsg());
	check_quality(&c);
	for (int i = 0; i < LAUNCHES; i++) {
		uint64_t before = host_now(), after;

		CK_CU(d->cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
		CK_CU(d->cuCtxSynchronize());
		after = host_now();
		CK_CU(d->cuMemcpyDtoH(&kernel_ns, out, sizeof(kernel_ns)));
		ck_assert_msg(!egpu_map_lookup(map, &zero, &probe_ns), "%s", egpu_errmsg());
		check_inside(&c, probe_ns, before, after, "the entry probe ran");
		check_inside(&c, kernel_ns, before, after, "the kernel read the timer");
		ck_assert_uint_le(probe_ns, kernel_ns);
		entry[i] = (int64_t)(egpu_clock_gpu_to_host(&c, probe_ns) - before);
	}
	qsort(entry, LAUNCHES, sizeof(entry[0]), cmp_i64);
	printf("launch to entry probe, %d launches after a sync: median %.2f us, p90 %.2f us, max %.2f us (+- %.2f us)\n",
	       LAUNCHES, entry[LAUNCHES / 2] / 1e3, entry[LAUNCHES * 9 / 10] / 1e3,
	       entry[LAUNCHES - 1] / 1e3, c.error_ns / 1e3);
	d->cuMemFree(out);
}
END_TEST

/* Two calibrations a moment apart describe the same clocks. */
START_TEST(calibrations_agree)
{
	EGPU_OPTS(egpu_clock, a);
	EGPU_OPTS(egpu_clock, b);
	uint64_t start;
	int64_t diff;

	ck_assert_msg(!egpu_clock_sync(ctx, &a), "%s", egpu_errmsg());
	start = host_now();
	ck_assert_msg(!egpu_clock_sync(ctx, &b), "%s", egpu_errmsg());
	printf("a calibration took %.1f us; offsets a moment apart differ by %lld ns (bounds %llu, %llu ns)\n",
	       (host_now() - start) / 1e3, (long long)(b.offset_ns - a.offset_ns),
	       (unsigned long long)a.error_ns, (unsigned long long)b.error_ns);
	check_quality(&b);
	ck_assert_uint_gt(b.host_ns, a.host_ns);
	diff = b.offset_ns - a.offset_ns;
	ck_assert_msg(llabs(diff) <= (long long)(a.error_ns + b.error_ns + DRIFT_SLACK_NS),
		      "offsets %lld and %lld ns differ by more than bounds %llu + %llu ns and drift %d ns",
		      (long long)a.offset_ns, (long long)b.offset_ns,
		      (unsigned long long)a.error_ns, (unsigned long long)b.error_ns,
		      DRIFT_SLACK_NS);
}
END_TEST

/* The calibration kernel runs on a non-blocking stream of its own. */
START_TEST(busy_default_stream_does_not_hold_calibration_up)
{
	const struct cu_driver *d = cu();
	unsigned long long busy_ns = 300000000ull;
	EGPU_OPTS(egpu_clock, c);
	void *args[] = { &busy_ns };
	uint64_t start;
	CUfunction f;

	CK_CU(d->cuModuleGetFunction(&f, mod, "spin"));
	CK_CU(d->cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	start = host_now();
	ck_assert_msg(!egpu_clock_sync(ctx, &c), "%s", egpu_errmsg());
	ck_assert_uint_lt(host_now() - start, busy_ns / 3);
	check_quality(&c);
	CK_CU(d->cuCtxSynchronize());
}
END_TEST

int main(void)
{
	Suite *s;
	TCase *tc;

	tu_require_gpu();
	s = suite_create("clock_gpu");
	tc = tcase_create("clock_gpu");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, calibrated_at_the_first_gpu_use);
	tcase_add_test(tc, get_returns_the_kept_calibration);
	tcase_add_test(tc, gpu_readings_map_inside_the_launch_window);
	tcase_add_test(tc, calibrations_agree);
	tcase_add_test(tc, busy_default_stream_does_not_hold_calibration_up);
	suite_add_tcase(s, tc);
	/* A CUDA context does not survive fork(): run the tests in-process. */
	return tu_run_suite(s, false);
}
