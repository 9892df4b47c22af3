/* SPDX-License-Identifier: MIT */
/*
 * The window `egpu trace --delay S --duration S` traces: a thread of the
 * library's own sleeps through the delay, opens the trace, sleeps through
 * the duration and closes it (stopped and written then, while the program
 * runs on); the program's exit closes it first if it comes earlier.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "window.h"

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s,
		.tv_nsec = (long)((s - floor(s)) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void *window_thread(void *arg)
{
	const struct window *w = arg;

	if (w->delay_s > 0) {
		sleep_s(w->delay_s);
		w->open();
	}
	if (w->duration_s > 0) {
		sleep_s(w->duration_s);
		w->close();
	}
	return NULL;
}

int window_run(const struct window *w)
{
	pthread_attr_t attr;
	pthread_t tid;
	int err;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&tid, &attr, window_thread, (void *)w);
	pthread_attr_destroy(&attr);
	return err;
}

/* $@name as seconds: 0 when unset; -1 (and a message) when not a number
 * of seconds from 0 to a day. */
double window_env(const char *name)
{
	const char *v = getenv(name);
	char *end;
	double s;

	if (!v || !*v)
		return 0;
	s = strtod(v, &end);
	if (*end || !(s >= 0 && s <= 86400)) {
		fprintf(stderr, "egpu trace: not tracing: %s=%s is not a number "
			"of seconds from 0 to 86400\n", name, v);
		return -1;
	}
	return s;
}
