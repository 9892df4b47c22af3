/* SPDX-License-Identifier: MIT */
/*
 * `egpu attach --trace FILE` (EGPU_ATTACH_TRACE=FILE): the probe's ring
 * streamed to FILE as a record file while the application runs, drained
 * by a thread of its own from the probe's setup to the process's exit
 * (with a lossless probe, mem_trace_span_lossless.bpf.o, nothing is
 * dropped: docs/attach.md). The file holds the raw records; nothing is
 * decoded here.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "attach/attach.h"

static egpu_ringbuf *rb;
static pthread_t drainer;
static bool draining, stop;
static const char *trace_path;
static double t_start;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *drain_loop(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		if (egpu_ringbuf_poll(rb, 1) < 0) {
			fprintf(stderr, ATTACH_MSG "--trace %s: %s\n", trace_path,
				egpu_errmsg());
			break;
		}
	return NULL;
}

/* The probe's ring maps' first (RINGBUF, GPU_RINGBUF, PERF_EVENT_ARRAY). */
static egpu_map *ring_of(const egpu_obj *obj)
{
	egpu_map *m = NULL;

	while ((m = egpu_obj_next_map(obj, m))) {
		uint32_t t = egpu_map_type(m);

		if (t == EGPU_MAP_RINGBUF || t == EGPU_MAP_GPU_RINGBUF ||
		    t == EGPU_MAP_PERF_EVENT_ARRAY)
			return m;
	}
	return NULL;
}

int trace_file_start(egpu_obj *obj, const char *path)
{
	EGPU_OPTS(egpu_ringbuf_opts, o, .path = path);
	egpu_map *m = ring_of(obj);

	if (!m) {
		fprintf(stderr, ATTACH_MSG "--trace %s: the probe has no ring map\n",
			path);
		return -1;
	}
	rb = egpu_ringbuf_new_opts(m, NULL, NULL, &o);
	if (!rb) {
		fprintf(stderr, ATTACH_MSG "--trace %s: %s\n", path, egpu_errmsg());
		return -1;
	}
	trace_path = path;
	t_start = now_s();
	draining = !pthread_create(&drainer, NULL, drain_loop, NULL);
	if (!draining) {
		fprintf(stderr, ATTACH_MSG "--trace %s: no drain thread\n", path);
		egpu_ringbuf_free(rb);
		rb = NULL;
		return -1;
	}
	return 0;
}

void trace_file_stop(FILE *report)
{
	EGPU_OPTS(egpu_ringbuf_stats, s);
	double secs;
	int n;

	if (!rb)
		return;
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	pthread_join(drainer, NULL);
	/* What the kernels that ended published; spans a trap left open stay. */
	while ((n = egpu_ringbuf_consume(rb)) > 0)
		;
	secs = now_s() - t_start;
	if (n < 0 || egpu_ringbuf_stats(rb, &s))
		fprintf(report, ATTACH_MSG "--trace %s: %s\n", trace_path,
			egpu_errmsg());
	else
		fprintf(report, ATTACH_MSG "--trace %s: %llu records, %.1f MB in %.2f s (%.1f MB/s), %llu dropped\n",
			trace_path, (unsigned long long)s.records, s.bytes / 1e6,
			secs, secs > 0 ? s.bytes / 1e6 / secs : 0.0,
			(unsigned long long)s.drops);
	egpu_ringbuf_free(rb); /* closes the file */
	rb = NULL;
}
