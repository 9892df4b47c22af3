/* SPDX-License-Identifier: MIT */
/*
 * A crash of the traced program writes what was traced so far. A signal
 * handler may do little safely, so the handler only wakes a thread of the
 * library (a byte down a pipe) and waits for its answer on another pipe;
 * that thread stops and writes the trace. If the crashed thread held a
 * lock the writing needs (malloc's, say), the wait times out and the
 * signal goes on without the trace. Then the handler puts back the
 * action the process had and lets the signal happen again. A handler the
 * process installed before (the CUDA driver's, the program's) is called
 * first, with the signal's context: libraries that handle faults of their
 * own must keep seeing them as they happen.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <unistd.h>

#include "crash.h"

static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
static struct sigaction before[sizeof(fatal) / sizeof(fatal[0])];
static int wake[2] = { -1, -1 }, done[2] = { -1, -1 };
static void (*write_trace)(int sig);

/* @sig's place in fatal[] and before[]. */
static size_t fatal_index(int sig)
{
	size_t i = 0;

	while (i < sizeof(fatal) / sizeof(fatal[0]) && fatal[i] != sig)
		i++;
	return i;
}

/*
 * A handler the process had first (the CUDA driver's own, the program's)
 * gets the signal first, with its context: a fault it handles is none of
 * ours. Whether there was one to call.
 */
static bool chained(const struct sigaction *prev, int sig, siginfo_t *si,
		    void *uc)
{
	if (prev->sa_flags & SA_SIGINFO) {
		if (!prev->sa_sigaction)
			return false;
		prev->sa_sigaction(sig, si, uc);
		return true;
	}
	/* SIG_IGN counts as none: an ignored fault would only come again */
	if (prev->sa_handler == SIG_DFL || prev->sa_handler == SIG_IGN)
		return false;
	prev->sa_handler(sig);
	return true;
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	static atomic_flag once = ATOMIC_FLAG_INIT;
	unsigned char b = (unsigned char)sig;
	struct pollfd p = { .fd = done[0], .events = POLLIN };
	size_t i = fatal_index(sig);

	if (i == sizeof(fatal) / sizeof(fatal[0]) || chained(&before[i], sig, si, uc))
		return;
	if (!atomic_flag_test_and_set(&once) && write(wake[1], &b, 1) == 1)
		while (poll(&p, 1, CRASH_WAIT_S * 1000) < 0 && errno == EINTR)
			;
	sigaction(sig, &before[i], NULL);
	/* A fault comes again when the instruction is retried on return, now
	 * with the default action; a signal sent (abort, kill) is sent again. */
	if (si->si_code <= 0)
		raise(sig);
}

static void *crash_thread(void *arg)
{
	unsigned char b;
	ssize_t n;

	(void)arg;
	while (read(wake[0], &b, 1) < 0 && errno == EINTR)
		;
	write_trace(b);
	n = write(done[1], &b, 1);  /* the handler times out without it */
	(void)n;
	return NULL;
}

int crash_watch(void (*write)(int sig))
{
	struct sigaction sa = { .sa_sigaction = on_fatal,
		.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER };
	pthread_attr_t attr;
	pthread_t tid;
	int err;

	write_trace = write;
	if (pipe2(wake, O_CLOEXEC) || pipe2(done, O_CLOEXEC))
		return errno;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&tid, &attr, crash_thread, NULL);
	pthread_attr_destroy(&attr);
	if (err)
		return err;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		if (sigaction(fatal[i], &sa, &before[i]))
			return errno;
	return 0;
}
