// SPDX-License-Identifier: MIT
/*
 * The whole collector without a GPU, against a stand-in libcupti
 * (fake_cupti.c, opened through EGPU_CUPTI_LIB): callbacks from several
 * threads, runtime calls with nested driver calls under their own ids,
 * graph launches with many kernels, copies, calls not asked for; then the
 * join, the totals, the per-kernel paths and every output format.
 */
#include <check.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "egpu.h"
#include "test_util.h"

#define FAKE_CUPTI EGPU_TEST_BUILD "/fakecupti/libcupti.so"
#define THREADS 4
#define PER_THREAD 700  /* more than one chunk of calls per thread */

static void *fake;
static void (*fake_launch)(const char *kernel, bool split);
static void (*fake_graph_launch)(const char *kernel, int kernels);
static void (*fake_memcpy)(void);
static void (*fake_memset)(void);
static void (*fake_driver_launch)(const char *kernel);
static void (*fake_synchronize)(void);
static bool *fake_other_subscriber;

#define SYM(name) (name = (__typeof__(name))dlsym(fake, #name))

static void setup(void)
{
	setenv("EGPU_CUPTI_LIB", FAKE_CUPTI, 1);
	fake = dlopen(FAKE_CUPTI, RTLD_NOW);
	ck_assert_msg(fake, "%s", dlerror());
	ck_assert(SYM(fake_launch) && SYM(fake_graph_launch) &&
		  SYM(fake_memcpy) && SYM(fake_memset) &&
		  SYM(fake_driver_launch) &&
		  SYM(fake_synchronize) && SYM(fake_other_subscriber));
}

static void teardown(void)
{
	dlclose(fake);
}

/* The program's own functions, named in the stacks. */
static __attribute__((noinline)) void step_forward(void)
{
	fake_launch("_Z7forwardPf", true);
}

static __attribute__((noinline)) void step_backward(void)
{
	fake_launch("_Z8backwardPf", false);
}

static __attribute__((noinline)) void graph_step(void)
{
	fake_graph_launch("_Z5layerv", 4);
}

static __attribute__((noinline)) void copy_step(void)
{
	fake_memcpy();
	fake_memset();
}

static __attribute__((noinline)) void driver_step(void)
{
	fake_driver_launch("_Z3drvv");
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < PER_THREAD; i++)
		step_forward();
	return NULL;
}

static void run_program(void)
{
	pthread_t th[THREADS];

	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, worker, NULL), 0);
	for (int i = 0; i < 10; i++)
		step_backward();
	for (int i = 0; i < 3; i++)
		graph_step();
	copy_step();
	driver_step();
	fake_synchronize();
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
}

static const struct egpu_trace_kernel *kernel(egpu_trace *t, const char *name)
{
	for (size_t i = 0; i < egpu_trace_kernel_cnt(t); i++)
		if (!strcmp(egpu_trace_kernel(t, i)->name, name))
			return egpu_trace_kernel(t, i);
	ck_abort_msg("no kernel %s", name);
	return NULL;
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && !strcmp(s + n - m, end);
}

static void ck_kernel(egpu_trace *t, const char *name, uint64_t launches,
		      const char *path_end)
{
	const struct egpu_trace_kernel *k = kernel(t, name);

	ck_assert_uint_eq(k->launches, launches);
	ck_assert_uint_eq(k->gpu_ns, launches * 2000);
	ck_assert_msg(ends_with(k->hottest_path, path_end),
		      "%s: path %s, want ...%s", name, k->hottest_path,
		      path_end);
}

static void ck_outputs(egpu_trace *t)
{
	static const char *const file[] = { NULL, "t.folded", "t.json",
		"t.svg", "summary.txt" };
	char dir[] = "/tmp/egpu_tracecol_XXXXXX", path[64];
	size_t len;
	char *text;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (int f = EGPU_TRACE_FOLDED; f <= EGPU_TRACE_SUMMARY; f++) {
		snprintf(path, sizeof(path), "%s/%s", dir, file[f]);
		ck_assert_msg(!egpu_trace_write(t, f, path), "%s: %s", path,
			      egpu_errmsg());
		text = tu_read_file(path, &len);
		ck_assert_msg(strstr(text, "forward(float*)"),
			      "%s lacks forward(float*)", path);
		/* copies joined to the runtime calls through their aliases */
		if (f == EGPU_TRACE_FOLDED)
			ck_assert_msg(strstr(text, "copy_step;cudaMemcpy;") &&
				      strstr(text, "copy_step;cudaMemset;"),
				      "folded: %s", text);
		free(text);
		unlink(path);
	}
	ck_assert_int_eq(egpu_trace_write(t, 99, path), EGPU_EINVAL);
	rmdir(dir);
}

START_TEST(traces_threads_graphs_and_copies)
{
	struct egpu_trace_stats st = { .sz = sizeof(st) };
	egpu_trace *t = egpu_trace_start(NULL);

	ck_assert_msg(t, "%s", egpu_errmsg());
	ck_assert_ptr_null(egpu_trace_start(NULL));
	ck_assert_int_eq(egpu_errcode(), EGPU_EBUSY);
	ck_assert_int_eq(egpu_trace_write(t, EGPU_TRACE_FOLDED, "-"),
			 EGPU_EINVAL);
	run_program();
	ck_assert_int_eq(egpu_trace_stop(t), 0);
	ck_assert_int_eq(egpu_trace_stop(t), 0);
	ck_assert_int_eq(egpu_trace_stats(t, &st), 0);
	ck_assert_uint_eq(st.launches, THREADS * PER_THREAD + 10 + 3 + 1);
	ck_assert_uint_eq(st.kernels, THREADS * PER_THREAD + 10 + 12 + 1);
	ck_assert_uint_eq(st.matched, st.kernels);
	ck_assert_uint_eq(st.copies, 2);
	ck_assert_uint_eq(st.lost, 0);
	ck_assert_uint_eq(st.gpu_ns, st.kernels * 2000);
	ck_assert_uint_eq(st.devices, 1);
	/* its own cost: a stack per launch and copy call, timed */
	ck_assert_uint_eq(st.stacks, st.launches + st.copies);
	ck_assert_uint_le(st.stacks_slow + st.stacks_reused, st.stacks);
	ck_assert_uint_gt(st.stacks_reused, 0);
	ck_assert_uint_eq(st.stacks_slow == 0, *st.slow_frame == 0);
	ck_assert_uint_gt(st.host_ns, 0);
	ck_assert_uint_ge(st.host_ns, st.stack_ns + st.python_ns);
	ck_assert_uint_eq(egpu_trace_kernel_cnt(t), 4);
	ck_kernel(t, "forward(float*)", THREADS * PER_THREAD,
		  "worker;step_forward;cudaLaunchKernel");
	ck_kernel(t, "backward(float*)", 10,
		  "step_backward;cudaLaunchKernel");
	ck_kernel(t, "layer()", 12, "graph_step;cudaGraphLaunch");
	ck_kernel(t, "drv()", 1, "driver_step;cuLaunchKernel");
	/* a thread's stack starts at its function (start_thread dropped) */
	ck_assert_str_eq(kernel(t, "forward(float*)")->hottest_path,
			 "worker;step_forward;cudaLaunchKernel");
	ck_assert_str_eq(egpu_trace_kernel(t, 0)->name, "forward(float*)");
	ck_assert_ptr_null(egpu_trace_kernel(t, 4));
	ck_outputs(t);
	egpu_trace_free(t);

	/* a second trace sees only its own work */
	t = egpu_trace_start(NULL);
	ck_assert_msg(t, "%s", egpu_errmsg());
	step_backward();
	ck_assert_int_eq(egpu_trace_stop(t), 0);
	ck_assert_int_eq(egpu_trace_stats(t, &st), 0);
	ck_assert_uint_eq(st.kernels, 1);
	ck_assert_uint_eq(st.matched, 1);
	egpu_trace_free(t);
}
END_TEST

START_TEST(options_frames_and_copies)
{
	struct egpu_trace_opts o = { .sz = sizeof(o), .max_frames = 1,
		.no_copies = true, .buffer_size = 64 << 10 };
	struct egpu_trace_stats st = { .sz = sizeof(st) };
	egpu_trace *t = egpu_trace_start(&o);

	ck_assert_msg(t, "%s", egpu_errmsg());
	run_program();
	egpu_trace_free(t);   /* stops */
	t = egpu_trace_start(&o);
	ck_assert_msg(t, "%s", egpu_errmsg());
	step_backward();
	copy_step();
	ck_assert_int_eq(egpu_trace_stop(t), 0);
	ck_assert_int_eq(egpu_trace_stats(t, &st), 0);
	ck_assert_uint_eq(st.copies, 0);
	ck_assert_str_eq(kernel(t, "backward(float*)")->hottest_path,
			 "step_backward;cudaLaunchKernel");
	egpu_trace_free(t);
}
END_TEST

START_TEST(busy_with_another_tool)
{
	*fake_other_subscriber = true;
	ck_assert_ptr_null(egpu_trace_start(NULL));
	ck_assert_int_eq(egpu_errcode(), EGPU_EBUSY);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "another CUPTI client"));
	*fake_other_subscriber = false;
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tracecol_collect");
	TCase *tc = tcase_create("collect");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, traces_threads_graphs_and_copies);
	tcase_add_test(tc, options_frames_and_copies);
	tcase_add_test(tc, busy_with_another_tool);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite(), true);
}
