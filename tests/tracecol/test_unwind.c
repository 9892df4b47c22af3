// SPDX-License-Identifier: MIT
/*
 * The collector's cached unwinder (collect_unwind.c) against glibc's
 * backtrace(): the same return addresses from deep recursion, a cut at
 * max, a callback inside libc (qsort), frames with a frame pointer and a
 * variable-size stack, a realigned frame (a CFA by DWARF expression),
 * several threads at once (one shared cache), and a
 * signal handler (a signal frame: the walk hands over to backtrace()).
 */
#include <check.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "trace/collect_impl.h"

#define MAX 400

static struct unwinder *uw;
static volatile int sink;

struct both {
	void *fast[MAX], *slow[MAX];
	int fast_n, slow_n;
};

/* Both captures from here: the cached walk (-1: handed over) and
 * backtrace(). */
static __attribute__((noinline)) void capture(struct both *b, uint32_t max,
					      bool must_walk)
{
	b->fast_n = uw_walk(uw, b->fast, max);
	if (b->fast_n < 0 && !must_walk)
		b->fast_n = (int)uw_capture(uw, b->fast, max);
	b->slow_n = backtrace(b->slow, (int)max);
	sink++;
}

/*
 * Both agree from capture()'s caller outward: before it, backtrace() has
 * its frame in capture() (and a sanitizer's interceptor), the walk one or
 * two in this unwinder. @cut: both stopped at max.
 */
static void ck_same(const struct both *b, bool cut)
{
	int i = 0, j = 0, n;

	ck_assert_int_ge(b->fast_n, 0);
	ck_assert_int_ge(b->slow_n, 3);
	for (j = 1; j <= 3; j++) {
		for (i = 1; i <= 3 && b->fast[i] != b->slow[j]; i++)
			;
		if (i <= 3)
			break;
	}
	ck_assert_msg(j <= 3, "no common frame near the top");
	n = b->slow_n - j;
	if (cut)
		n = n < b->fast_n - i ? n : b->fast_n - i;
	else
		ck_assert_int_eq(b->fast_n - i, n);
	ck_assert_int_ge(n, 2);
	ck_assert_mem_eq(b->fast + i, b->slow + j, (size_t)n * sizeof(void *));
}

static __attribute__((noinline)) void recurse(int depth, struct both *b,
					      uint32_t max)
{
	if (depth > 0) {
		recurse(depth - 1, b, max);
		sink++;     /* no tail call */
		return;
	}
	capture(b, max, true);
}

static void setup(void)
{
	uw = uw_new();
	ck_assert_ptr_nonnull(uw);
}

static void teardown(void)
{
	uw_free(uw);
}

START_TEST(deep_and_cut)
{
	static struct both b;
	static const int depth[] = { 0, 5, 60, 250 };

	for (int twice = 0; twice < 2; twice++) {   /* uncached, cached */
		for (size_t i = 0; i < ARRAY_SIZE(depth); i++) {
			recurse(depth[i], &b, MAX);
			ck_same(&b, false);
		}
	}
	recurse(100, &b, 20);
	ck_assert_int_eq(b.fast_n, 20);
	ck_same(&b, true);
}
END_TEST

static struct both in_qsort;

static int by_value(const void *x, const void *y)
{
	if (!in_qsort.slow_n)
		capture(&in_qsort, MAX, true);
	return *(const int *)x - *(const int *)y;
}

START_TEST(callback_in_libc)
{
	int v[64];

	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	qsort(v, 64, sizeof(*v), by_value);
	ck_same(&in_qsort, false);
}
END_TEST

/*
 * A frame with a frame pointer: the CFA comes from rbp. alloca makes
 * every compiler keep one (the frame's size is known only at run time).
 */
static __attribute__((noinline))
void variable_frame(int n, struct both *b)
{
	volatile char *buf = __builtin_alloca((size_t)n);

	buf[0] = 1;
	capture(b, MAX, true);
	sink += buf[0];
}

START_TEST(frame_pointer_frames)
{
	static struct both b;

	variable_frame(100 + sink % 7, &b);
	ck_same(&b, false);
}
END_TEST

/*
 * A frame realigned through a saved pointer (gcc's DRAP: an aligned local
 * beside alloca), as cuBLAS has them: its CFA is a DWARF expression, which
 * the walk follows instead of handing the capture to backtrace().
 */
static __attribute__((noinline))
void realigned_frame(int n, struct both *b)
{
	volatile char aligned[64] __attribute__((aligned(64)));
	volatile char *buf = __builtin_alloca((size_t)n);

	aligned[0] = 1;
	buf[0] = 1;
	capture(b, MAX, true);
	sink += buf[0] + aligned[0];
}

START_TEST(realigned_frames)
{
	static struct both b;
	struct uw_counts n;

	realigned_frame(100 + sink % 7, &b);
	ck_same(&b, false);
	uw_counts(uw, &n);
	ck_assert_uint_eq(n.slow, 0);
}
END_TEST

/* Two callers of one frame at the same depth: the walk from a stack the
 * previous walk shares its inner frames with must see its own caller. */
static uint32_t middle_max = MAX;

static __attribute__((noinline)) void middle(struct both *b)
{
	capture(b, middle_max, true);
	sink++;
}

static __attribute__((noinline)) void outer_x(struct both *b)
{
	middle(b);
	sink += 1;
}

static __attribute__((noinline)) void outer_y(struct both *b)
{
	middle(b);
	sink += 2;
}

START_TEST(previous_walk_reused_where_unchanged)
{
	static struct both x, y, x2;
	struct uw_counts n, cut;

	for (int i = 0; i < 3; i++) {
		outer_x(&x);
		outer_y(&y);
		outer_x(&x2);
		ck_same(&x, false);
		ck_same(&y, false);
		ck_same(&x2, false);
		ck_assert_int_eq(x.fast_n, y.fast_n);  /* one caller apart */
		ck_assert(memcmp(x.fast, y.fast, sizeof(void *) *
				 (size_t)x.fast_n));
	}
	uw_counts(uw, &n);
	ck_assert_uint_gt(n.reused, 0);
	/* walks cut at their max are finished from each other too */
	middle_max = 6;
	for (int i = 0; i < 3; i++) {
		outer_x(&x);
		ck_same(&x, true);
		ck_assert_int_eq(x.fast_n, 6);
	}
	middle_max = MAX;
	uw_counts(uw, &cut);
	ck_assert_uint_ge(cut.reused, n.reused + 2);
}
END_TEST

static void *thread_main(void *arg)
{
	struct both *b = arg;

	for (int i = 0; i < 200; i++)
		recurse(i % 40, b, MAX);
	return NULL;
}

START_TEST(threads_share_the_cache)
{
	static struct both b[4];
	pthread_t th[4];

	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, thread_main,
						&b[i]), 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		ck_same(&b[i], false);
	}
}
END_TEST

static struct both in_signal;

static void on_signal(int sig)
{
	(void)sig;
	capture(&in_signal, MAX, false);
}

START_TEST(signal_handler)
{
	signal(SIGUSR1, on_signal);
	raise(SIGUSR1);
	signal(SIGUSR1, SIG_DFL);
	ck_same(&in_signal, false);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tracecol_unwind");
	TCase *tc = tcase_create("unwind");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, deep_and_cut);
	tcase_add_test(tc, callback_in_libc);
	tcase_add_test(tc, frame_pointer_frames);
	tcase_add_test(tc, realigned_frames);
	tcase_add_test(tc, previous_walk_reused_where_unchanged);
	tcase_add_test(tc, threads_share_the_cache);
	tcase_add_test(tc, signal_handler);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite(), true);
}
