// SPDX-License-Identifier: MIT
/*
 * The collector's cost per launch on the CPU, without a GPU: launches
 * through the stand-in libcupti (its callbacks on this thread, as the
 * driver makes them) from a stack DEPTH frames deep (a PyTorch launch has
 * about 100 native frames), untraced and traced, best of ROUNDS. CUPTI's
 * and the driver's own costs are not in it: this is the collector's part.
 * With PATHS > 1 the launches take turns among that many call paths that
 * part some frames below the launch (a model's layer alternates a cuBLAS
 * launch and an elementwise one).
 *
 *     tracecol_bench [LAUNCHES [DEPTH [ROUNDS [PATHS [FILE [stream]]]]]]
 *
 * Prints the microseconds per launch of each mode, the difference, the
 * time egpu_trace_stop() took and how many kernels matched their launch;
 * with FILE, writes the last round's Perfetto trace there and prints its
 * bytes per launch; with "stream", the trace streams it while it runs
 * (egpu_trace_opts.stream_path).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_fake.h"
#include "egpu.h"

static volatile int sink;
static int paths = 1;
static const char *perfetto_file;
static bool stream;

static void launches(long n)
{
	for (long i = 0; i < n; i++)
		bench_launch(i, paths, 0);
}

/* Seconds for @n launches made @depth frames below this one. */
static __attribute__((noinline)) double nested(int depth, long n)
{
	double t0, dt;

	if (depth > 0) {
		dt = nested(depth - 1, n);
		sink++;     /* not a tail call: each level keeps its frame */
		return dt;
	}
	t0 = bench_now();
	launches(n);
	return bench_now() - t0;
}

struct result {
	double plain, traced, stop;
	struct egpu_trace_stats st;
};

static int round_once(long n, int depth, struct result *r)
{
	egpu_trace *t;
	double t0;

	r->plain = nested(depth, n);
	t = egpu_trace_start(&(struct egpu_trace_opts){ .sz = sizeof(struct
		egpu_trace_opts), .stream_path = stream ? perfetto_file : NULL });
	if (!t) {
		fprintf(stderr, "egpu_trace_start: %s\n", egpu_errmsg());
		return -1;
	}
	r->traced = nested(depth, n);
	t0 = bench_now();
	if (egpu_trace_stop(t)) {
		fprintf(stderr, "egpu_trace_stop: %s\n", egpu_errmsg());
		egpu_trace_free(t);
		return -1;
	}
	r->stop = bench_now() - t0;
	if (perfetto_file &&
	    egpu_trace_write(t, EGPU_TRACE_PERFETTO, perfetto_file))
		fprintf(stderr, "egpu_trace_write: %s\n", egpu_errmsg());
	r->st.sz = sizeof(r->st);
	egpu_trace_stats(t, &r->st);
	egpu_trace_free(t);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int depth = argc > 2 ? atoi(argv[2]) : 100;
	int rounds = argc > 3 ? atoi(argv[3]) : 3;
	struct result best = { 1e9, 1e9, 1e9, { 0 } }, r;

	if (bench_fake_open("tracecol_bench"))
		return 1;
	paths = argc > 4 ? atoi(argv[4]) : 1;
	perfetto_file = argc > 5 ? argv[5] : NULL;
	stream = argc > 6 && !strcmp(argv[6], "stream");
	if (n < 1 || depth < 0 || rounds < 1 || paths < 1 ||
	    (argc > 6 && !stream)) {
		fprintf(stderr, "usage: %s [LAUNCHES [DEPTH [ROUNDS [PATHS "
			"[FILE [stream]]]]]]\n", argv[0]);
		return 2;
	}
	for (int i = 0; i < rounds; i++) {
		if (round_once(n, depth, &r))
			return 1;
		best.plain = r.plain < best.plain ? r.plain : best.plain;
		best.traced = r.traced < best.traced ? r.traced : best.traced;
		best.stop = r.stop < best.stop ? r.stop : best.stop;
		best.st = r.st;
	}
	printf("launches %ld, %d frames deep, %d call paths, best of %d\n",
	       n, depth, paths, rounds);
	printf("plain   %8.3f us/launch\n", best.plain * 1e6 / (double)n);
	printf("traced  %8.3f us/launch\n", best.traced * 1e6 / (double)n);
	printf("cost    %8.3f us/launch\n",
	       (best.traced - best.plain) * 1e6 / (double)n);
	printf("stop    %8.1f ms\n", best.stop * 1e3);
	printf("stacks  %llu, %llu finished from a previous walk, %llu by "
	       "backtrace()\n", (unsigned long long)best.st.stacks,
	       (unsigned long long)best.st.stacks_reused,
	       (unsigned long long)best.st.stacks_slow);
	printf("matched %llu of %llu kernels, %llu launches\n",
	       (unsigned long long)best.st.matched,
	       (unsigned long long)best.st.kernels,
	       (unsigned long long)best.st.launches);
	if (perfetto_file) {
		FILE *f = fopen(perfetto_file, "rb");

		if (f && !fseek(f, 0, SEEK_END))
			printf("perfetto %ld bytes, %.1f bytes/launch\n",
			       ftell(f), (double)ftell(f) / (double)n);
		if (f)
			fclose(f);
	}
	return best.st.matched == (uint64_t)n && best.st.kernels == (uint64_t)n
		? 0 : 1;
}
