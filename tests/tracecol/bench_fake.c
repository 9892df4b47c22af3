// SPDX-License-Identifier: MIT
/* The launches of the CPU benchmarks (bench_fake.h). */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_fake.h"

/* the stand-in holds 4096 GPU records; flushed (as CUPTI's thread does)
 * more often than that */
#define FLUSH_EVERY 2048

static void (*fake_launch)(const char *kernel, bool split);
static int (*flush_all)(uint32_t flag);
static volatile int sink;

int bench_fake_open(const char *who)
{
	void *fake;

	setenv("EGPU_CUPTI_LIB", FAKE_CUPTI, 0);
	fake = dlopen(getenv("EGPU_CUPTI_LIB"), RTLD_NOW);
	if (!fake || !(fake_launch = (__typeof__(fake_launch))dlsym(fake,
			"fake_launch")) ||
	    !(flush_all = (__typeof__(flush_all))dlsym(fake,
			"cuptiActivityFlushAll"))) {
		fprintf(stderr, "%s: %s\n", who, dlerror());
		return -1;
	}
	return 0;
}

/* A launch @extra frames further down than the caller. */
static __attribute__((noinline)) void launch_below(int extra)
{
	if (extra > 0) {
		launch_below(extra - 1);
		sink++;     /* not a tail call: each level keeps its frame */
		return;
	}
	fake_launch("_Z5layerPf", true);
}

void bench_launch(long i, int paths, int extra)
{
	launch_below(extra + (int)(i % paths) * 8);
	if (i % FLUSH_EVERY == FLUSH_EVERY - 1)
		flush_all(0);
}

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
