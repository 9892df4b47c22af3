/* SPDX-License-Identifier: MIT */
/* Writing the trace when the traced program crashes (crash.c). */
#ifndef EGPU_INJECT_CRASH_H
#define EGPU_INJECT_CRASH_H

/*
 * Catch the fatal signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT):
 * @write(sig) runs on a thread of its own while the crashing thread waits
 * for it (at most CRASH_WAIT_S), then the signal takes its course (the
 * program's own handler, else the default). 0 or an errno.
 */
int crash_watch(void (*write)(int sig));

#define CRASH_WAIT_S 60

#endif
