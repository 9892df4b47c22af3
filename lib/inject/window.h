/* SPDX-License-Identifier: MIT */
/* The traced window of libegpu_inject.so (window.c). */
#ifndef EGPU_INJECT_WINDOW_H
#define EGPU_INJECT_WINDOW_H

#include <stdbool.h>

struct window {
	double delay_s;       /* 0: the trace is open from the start */
	double duration_s;    /* 0: until the program exits */
	double last_s;        /* the flight recorder's window; 0: none */
	void (*open)(void);   /* after the delay */
	void (*close)(void);  /* after the duration */
	void (*toggle)(void); /* by_signal: at each SIGUSR1 */
	bool by_signal;       /* SIGUSR1 opens and closes windows instead */
};

/*
 * Run @w (kept alive by the caller) on a detached thread; 0 or an errno.
 * By signal, the thread waits for the SIGUSR1s that
 * the handler installed here passes on through a pipe.
 */
int window_run(const struct window *w);
/* $@name as seconds (0 when unset), or -1 with a message. */
double window_env(const char *name);

#endif
