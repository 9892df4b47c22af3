/* SPDX-License-Identifier: MIT */
/*
 * The window `egpu trace --delay S --duration S` traces: a thread of the
 * library's own sleeps through the delay, opens the trace, sleeps through
 * the duration and closes it (stopped and written then, while the program
 * runs on); the program's exit closes it first if it comes earlier. By
 * signal, the thread opens or closes a window at each SIGUSR1: the
 * handler only writes a byte to a pipe (all a handler may safely do).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "window.h"

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s,
		.tv_nsec = (long)((s - floor(s)) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int signal_pipe[2] = { -1, -1 };

static void on_sigusr1(int sig)
{
	int saved = errno;
	ssize_t n = write(signal_pipe[1], "", 1);  /* full: toggles wait */

	(void)sig;
	(void)n;
	errno = saved;
}

static void *window_thread(void *arg)
{
	const struct window *w = arg;
	char b;

	while (w->by_signal) {
		if (read(signal_pipe[0], &b, 1) == 1)
			w->toggle();
		else if (errno != EINTR)
			return NULL;
	}

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

static int catch_sigusr1(void)
{
	struct sigaction sa = { .sa_handler = on_sigusr1,
				.sa_flags = SA_RESTART };

	if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) ||
	    fcntl(signal_pipe[0], F_SETFL, 0) ||  /* the thread blocks */
	    sigemptyset(&sa.sa_mask) || sigaction(SIGUSR1, &sa, NULL))
		return errno;
	return 0;
}

int window_run(const struct window *w)
{
	pthread_attr_t attr;
	pthread_t tid;
	int err;

	if (w->by_signal && (err = catch_sigusr1()))
		return err;
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
