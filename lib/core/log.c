/* SPDX-License-Identifier: MIT */
/* Logging and the clock used for reported timings. */
#include <stdio.h>
#include <time.h>

#include "core.h"

void log_msg(const struct egpu_logger *lg, enum egpu_log_level level,
	     const char *fmt, ...)
{
	static const char *const tags[] = { "error", "warn", "info", "debug" };
	char msg[1024];
	va_list ap;

	if (lg && level > lg->level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (lg && lg->fn)
		lg->fn(level, msg, lg->user);
	else
		fprintf(stderr, "libegpu: %s: %s\n", tags[level], msg);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
