/* SPDX-License-Identifier: MIT */
/*
 * Sleep-polling: how the host waits for what a GPU writes to mapped memory
 * (ring records, the clock mailbox), as a GPU cannot wake a host thread.
 */
#include <time.h>

#include "core/core.h"

/* Sleep between looks: from POLL_MIN_US doubling to POLL_MAX_US. */
#define POLL_MIN_US 10u
#define POLL_MAX_US 1000u

bool poll_wait(bool (*ready)(void *), void *arg, int timeout_ms)
{
	uint64_t now = now_ns(), sleep_ns = POLL_MIN_US * 1000ull;
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX :
			    now + (uint64_t)timeout_ms * 1000000u;

	while (!ready(arg)) {
		uint64_t left;
		struct timespec ts;

		now = now_ns();
		if (now >= deadline)
			return false;
		left = deadline - now < sleep_ns ? deadline - now : sleep_ns;
		ts = (struct timespec){ .tv_sec = (time_t)(left / 1000000000u),
					.tv_nsec = (long)(left % 1000000000u) };
		nanosleep(&ts, NULL);
		if (sleep_ns < POLL_MAX_US * 1000ull)
			sleep_ns *= 2;
	}
	return true;
}
