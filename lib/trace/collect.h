/* SPDX-License-Identifier: MIT */
/*
 * The CUPTI collector behind egpu_trace_start/stop: API callbacks on the
 * launching threads record host stacks, activity buffers record what the
 * GPU ran, and collect_stop() turns both into a struct trace_data.
 *
 * Built only where CUPTI's headers are (EGPU_HAVE_CUPTI); elsewhere
 * collect_start() answers EGPU_ENOTSUP.
 */
#ifndef EGPU_TRACE_COLLECT_H
#define EGPU_TRACE_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "trace.h"

struct collect;

/* Most host frames a call keeps (collect_opts.max_frames). */
#define COLLECT_MAX_FRAMES 1024

struct collect_opts {
	uint32_t max_frames;  /* host frames kept per call, 1 to the max */
	bool no_copies;       /* no memcpy / memset */
	bool no_python;       /* no Python frames (collect_python.c) */
	size_t buffer_size;   /* bytes per activity buffer */
	uint64_t keep_ns;     /* flight recorder: only the last keep_ns of
				 the trace (collect_keep.c); 0: all of it */
	const char *stream_path; /* the Perfetto timeline written there
				    while tracing (collect_stream.c); the
				    trace data keeps totals only */
	uint64_t max_size;    /* stream_path: bytes per file, 0: no limit */
	uint32_t max_files;   /* with max_size: files kept, rotated */
};

/* What collect_stop() counted besides the trace data. */
struct collect_counts {
	uint64_t launches;    /* kernel and graph launch calls */
	/* the tracer's own time on the application's threads */
	uint64_t host_ns;     /* in the callbacks, all of it */
	uint64_t stack_ns;    /* of which unwinding native frames */
	uint64_t python_ns;   /* of which walking Python frames */
	uint64_t stacks;      /* native stacks taken */
	uint64_t stacks_slow; /* of which by backtrace() (uw_counts) */
	uint64_t stacks_reused; /* of which finished from the previous */
	uintptr_t slow_pc;    /* the first return address that sent one there */
	const char *slow_frame; /* its name ("" when none), in the trace data */
	uint64_t dropped;     /* calls and operations the flight recorder let
				 go, while running and at stop */
	bool stream_full;     /* the streamed timeline stopped at max_size */
};

#ifdef EGPU_HAVE_CUPTI

/* Start the process's one collection; NULL with an error set. */
struct collect *collect_start(const struct collect_opts *opts);
/*
 * Synchronize the contexts launches used, flush CUPTI, stop collecting and
 * build the trace data (owned by @c). NULL with an error set.
 */
struct trace_data *collect_stop(struct collect *c,
				struct collect_counts *counts);
/* Free @c and its trace data; stops first if needed. NULL-safe. */
void collect_free(struct collect *c);

#else

static inline struct collect *collect_start(const struct collect_opts *opts)
{
	(void)opts;
	err_set(EGPU_ENOTSUP, "egpu_trace_start: libegpu was built without "
		"CUPTI's headers (cupti.h), so it cannot trace");
	return NULL;
}

static inline struct trace_data *collect_stop(struct collect *c,
					      struct collect_counts *counts)
{
	(void)c;
	(void)counts;
	err_set(EGPU_ENOTSUP, "egpu_trace_stop: built without CUPTI");
	return NULL;
}

static inline void collect_free(struct collect *c)
{
	(void)c;
}

#endif

#endif
