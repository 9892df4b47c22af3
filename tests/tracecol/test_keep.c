// SPDX-License-Identifier: MIT
/*
 * The flight recorder while the trace runs (collect_keep.c), against the
 * stand-in libcupti: once an activity buffer comes back more than the
 * window and its margin after a burst of launches, the burst's operations
 * and the chunks of its calls are gone from memory, not only from the
 * written trace; the thread's current chunk stays.
 */
#include <check.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"
#include "trace/collect_impl.h"

#define FAKE_CUPTI EGPU_TEST_BUILD "/fakecupti/libcupti.so"
#define BURST 2000  /* calls: three full chunks and part of a fourth */

static size_t chunks(struct collect *c)
{
	size_t n = 0;

	pthread_mutex_lock(&c->lock);
	for (struct call_chunk *k = c->chunks; k; k = k->next)
		n++;
	pthread_mutex_unlock(&c->lock);
	return n;
}

START_TEST(old_calls_and_operations_are_let_go)
{
	struct collect_opts o = { .max_frames = 16, .buffer_size = 4 << 20,
				  .no_python = true, .keep_ns = 1 };
	void (*launch)(const char *kernel, bool split);
	int (*flush)(uint32_t flag);
	void *fake;
	struct collect *c;

	setenv("EGPU_CUPTI_LIB", FAKE_CUPTI, 1);
	fake = dlopen(FAKE_CUPTI, RTLD_NOW);
	ck_assert_msg(fake, "%s", dlerror());
	launch = (__typeof__(launch))dlsym(fake, "fake_launch");
	flush = (__typeof__(flush))dlsym(fake, "cuptiActivityFlushAll");
	ck_assert(launch && flush);
	c = collect_start(&o);
	ck_assert_msg(c, "%s", egpu_errmsg());
	for (int i = 0; i < BURST; i++)
		launch("_Z5layerPf", false);
	flush(0);
	ck_assert_uint_eq(c->dropped, 0);     /* within the margin */
	ck_assert_uint_eq(c->op_n, BURST);
	ck_assert_uint_ge(chunks(c), BURST / CHUNK_CALLS);
	usleep(2300 * 1000);                  /* past the 2 s margin */
	launch("_Z5layerPf", false);
	flush(0);
	ck_assert_uint_eq(c->op_n, 1);
	/* the sealed chunks went with their calls; the current one stays */
	ck_assert_uint_eq(chunks(c), 1);
	ck_assert_uint_eq(c->dropped, BURST + BURST / CHUNK_CALLS * CHUNK_CALLS);
	collect_free(c);
	dlclose(fake);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tracecol_keep");
	TCase *tc = tcase_create("keep");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, old_calls_and_operations_are_let_go);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
