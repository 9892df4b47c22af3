/* SPDX-License-Identifier: MIT */
/* What the CPU benchmarks share (bench_fake.c): launches through the
 * stand-in libcupti, with CUPTI's buffers flushed as its thread would. */
#ifndef EGPU_TRACECOL_BENCH_FAKE_H
#define EGPU_TRACECOL_BENCH_FAKE_H

/* Open the stand-in ($EGPU_CUPTI_LIB, else FAKE_CUPTI); 0, or -1 with a
 * message naming @who. */
int bench_fake_open(const char *who);
/* Launch number @i (counting from 0) from one of @paths call paths, each
 * 8 frames deeper than the one before, @extra frames below the caller;
 * the records are flushed every 2048 launches. */
void bench_launch(long i, int paths, int extra);
/* The monotonic clock in seconds. */
double bench_now(void);

#endif
