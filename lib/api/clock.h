/* SPDX-License-Identifier: MIT */
/*
 * The host's half of the clock calibration's ping-pong (clock.c), apart
 * from CUDA, so that tests can play the kernel's half with a host thread.
 */
#ifndef EGPU_API_CLOCK_H
#define EGPU_API_CLOCK_H

#include "device/clock_sync.h"
#include "egpu.h"

/*
 * With the calibration kernel running on @mb (state RUNNING): play the
 * rounds, each waiting up to @round_timeout_ns for the answer, tell the
 * kernel to stop, and fill @c with the offset, error bound, round trip,
 * timer step and rounds answered. EGPU_ECUDA when no round was answered
 * or the timer does not advance.
 */
int clock_exchange(struct clock_mailbox *mb, uint64_t round_timeout_ns,
		   struct egpu_clock *c);

#endif
