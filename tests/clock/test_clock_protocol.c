// SPDX-License-Identifier: MIT
/*
 * The calibration's ping-pong without a GPU: a host thread plays the
 * kernel of lib/device/clock_sync.cu on a mailbox, with a fake
 * %globaltimer (CLOCK_MONOTONIC plus a known offset, advancing in steps),
 * and the host's half (clock_exchange) must find the offset within the
 * error bound it reports, and fail cleanly when the kernel does not answer
 * or its timer stands still.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/clock.h"
#include "test_util.h"

#define IDLE_TIMEOUT_NS 1000000000ull /* as the kernel's */
/* A host thread may wait for a core far longer than a GPU answers. */
#define ROUND_TIMEOUT_NS 1000000000ull

struct fake_gpu {
	struct clock_mailbox mb;
	int64_t offset; /* of the fake timer from CLOCK_MONOTONIC */
	uint64_t step;  /* its update step; 0: it stands still */
	pthread_t thread;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t fake_timer(const struct fake_gpu *g)
{
	uint64_t t = mono_ns() + (uint64_t)g->offset;

	return g->step ? t / g->step * g->step : 1234;
}

/* The next ping other than @seen, or CLOCK_PING_STOP after the timeout. */
static uint64_t wait_ping(struct fake_gpu *g, uint64_t seen)
{
	uint64_t start = mono_ns(), ping;

	while ((ping = __atomic_load_n(&g->mb.ping, __ATOMIC_ACQUIRE)) == seen)
		if (mono_ns() - start > IDLE_TIMEOUT_NS)
			return CLOCK_PING_STOP;
	return ping;
}

/* The kernel's loop, on the host. */
static void *fake_kernel(void *arg)
{
	struct fake_gpu *g = arg;
	uint64_t seen = 0, ping;

	__atomic_store_n(&g->mb.state, CLOCK_STATE_RUNNING, __ATOMIC_RELEASE);
	while ((ping = wait_ping(g, seen)) != CLOCK_PING_STOP) {
		g->mb.gpu_ns = fake_timer(g);
		__atomic_store_n(&g->mb.pong, ping, __ATOMIC_RELEASE);
		seen = ping;
	}
	__atomic_store_n(&g->mb.state, CLOCK_STATE_DONE, __ATOMIC_RELEASE);
	return NULL;
}

/* A fake GPU with the kernel running (@run: once it says so) or silent. */
static void fake_start(struct fake_gpu *g, int64_t offset, uint64_t step, bool run)
{
	memset(g, 0, sizeof(*g));
	g->offset = offset;
	g->step = step;
	g->mb.step_ns = step;
	if (!run) {
		g->mb.state = CLOCK_STATE_RUNNING;
		return;
	}
	ck_assert_int_eq(pthread_create(&g->thread, NULL, fake_kernel, g), 0);
	while (__atomic_load_n(&g->mb.state, __ATOMIC_ACQUIRE) != CLOCK_STATE_RUNNING)
		;
}

/* Calibrate against a fake GPU: the true offset lies within the bound. */
static void check_finds(int64_t offset, uint64_t step)
{
	static struct fake_gpu g;
	EGPU_OPTS(egpu_clock, c);
	uint64_t before = mono_ns(), h;

	fake_start(&g, offset, step, true);
	ck_assert_msg(!clock_exchange(&g.mb, ROUND_TIMEOUT_NS, &c), "%s",
		      egpu_errmsg());
	pthread_join(g.thread, NULL);
	ck_assert_uint_eq(g.mb.state, CLOCK_STATE_DONE);
	ck_assert_uint_gt(c.rounds, 0); /* all 64, unless the host stalled */
	ck_assert_uint_eq(c.step_ns, step);
	ck_assert_uint_eq(c.error_ns, (c.round_trip_ns + 1) / 2 + step);
	ck_assert_uint_ge(c.host_ns, before);
	ck_assert_uint_le(c.host_ns, mono_ns());
	ck_assert_msg(llabs(c.offset_ns - offset) <= (long long)c.error_ns,
		      "offset %lld found as %lld +- %llu", (long long)offset,
		      (long long)c.offset_ns, (unsigned long long)c.error_ns);
	/* A reading now converts to within the bound of now. */
	before = mono_ns();
	h = egpu_clock_gpu_to_host(&c, fake_timer(&g));
	ck_assert_uint_ge(h + c.error_ns, before);
	ck_assert_uint_le(h, mono_ns() + c.error_ns);
}

START_TEST(finds_an_epoch_offset)
{
	check_finds(1700000000123456789ll, 32);
}
END_TEST

START_TEST(finds_a_negative_offset)
{
	check_finds(-5000000000ll, 32);
}
END_TEST

START_TEST(a_coarse_timer_widens_the_bound)
{
	check_finds(987654321, 1000);
}
END_TEST

START_TEST(an_unanswered_ping_is_an_error)
{
	static struct fake_gpu g;
	EGPU_OPTS(egpu_clock, c);

	fake_start(&g, 0, 32, false);
	ck_assert_int_eq(clock_exchange(&g.mb, 10000000, &c), EGPU_ECUDA);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "did not answer"));
	ck_assert_uint_eq(c.rounds, 0);
	ck_assert_uint_eq(g.mb.ping, CLOCK_PING_STOP); /* a late kernel stops */
}
END_TEST

START_TEST(a_timer_that_stands_still_is_an_error)
{
	static struct fake_gpu g;
	EGPU_OPTS(egpu_clock, c);

	fake_start(&g, 0, 0, true);
	ck_assert_int_eq(clock_exchange(&g.mb, ROUND_TIMEOUT_NS, &c), EGPU_ECUDA);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "does not advance"));
	pthread_join(g.thread, NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("clock_protocol");
	TCase *tc = tcase_create("clock_protocol");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, finds_an_epoch_offset);
	tcase_add_test(tc, finds_a_negative_offset);
	tcase_add_test(tc, a_coarse_timer_widens_the_bound);
	tcase_add_test(tc, an_unanswered_ping_is_an_error);
	tcase_add_test(tc, a_timer_that_stands_still_is_an_error);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
