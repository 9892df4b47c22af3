/* SPDX-License-Identifier: MIT */
/*
 * launchlate's cross-check against CUPTI, opened with dlopen so the example
 * runs (without the cross-check) where libcupti is missing. For each
 * launch it keeps CUPTI's timestamp at the launch call's entry (taken with
 * cuptiGetTimestamp in a runtime API callback) and the kernel's start from
 * CUPTI's kernel activity record: both on CUPTI's clock.
 */
#ifndef LAUNCHLATE_XCHECK_H
#define LAUNCHLATE_XCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xcheck_launch {
	uint32_t corr;        /* correlation id of the runtime call; 0: none */
	uint32_t corr_driver; /* of the driver call inside it; 0: none */
	uint64_t api_ns;      /* CUPTI clock at the launch call's entry */
	uint64_t start_ns;    /* CUPTI clock at the kernel's start; 0: no record */
};

struct xcheck {
	struct xcheck_launch *launch; /* one per launch of the measured run */
	size_t n;
	size_t next;       /* launch the callbacks belong to; n: none */
	uint64_t dropped;  /* activity records CUPTI dropped */
	/* CUPTI's clock minus CLOCK_MONOTONIC, and how far off that may be. */
	int64_t mono_offset_ns;
	uint64_t mono_error_ns;
};

/*
 * Load CUPTI and start recording @n launches. false with *why set when
 * CUPTI cannot be had (no libcupti, another subscriber such as a
 * profiler); the example then runs without the cross-check.
 */
bool xcheck_start(struct xcheck *x, size_t n, const char **why);
/* The next launch the application makes is launch @i. */
void xcheck_expect(struct xcheck *x, size_t i);
/*
 * After the launches finished: flush CUPTI, give every launch its
 * kernel's start, and stop. false with *why set if CUPTI failed.
 */
bool xcheck_stop(struct xcheck *x, const char **why);
void xcheck_free(struct xcheck *x);

#endif
