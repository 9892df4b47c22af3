// SPDX-License-Identifier: MIT
/*
 * The tracer's memory over a long streamed run, without a GPU: LAUNCHES
 * kernel launches through the stand-in libcupti (each from one of two
 * call paths 20 frames deep, CUPTI's buffers flushed every 2048 as its
 * thread would), the trace streaming its Perfetto timeline to FILE. The
 * resident memory (/proc/self/statm) is sampled SAMPLES times:
 *
 *     tracecol_stream_mem LAUNCHES SAMPLES FILE [GROWTH_MB [RATE]]
 *
 * prints "launches seconds rss_mb" per sample (and before the first
 * launch, the trace started), then the file's bytes per
 * launch. With GROWTH_MB, fails (1) unless every launch was joined and
 * written, and the memory of the run's second half stays within
 * GROWTH_MB of the first half's highest: flat once the stream's lag (the
 * last 2 s of calls) has filled; FILE is then removed. RATE: at most so
 * many launches a second. The lag's memory follows the launch rate, so a
 * check of its growth paces them: unpaced, a run whose second half gets
 * more of a shared CPU than its first holds more launches in its lag.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_fake.h"
#include "egpu.h"

#define DEPTH 20

static double rss_mb(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f && fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	if (f)
		fclose(f);
	return (double)resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

/*
 * @n launches from two paths (the second 8 frames deeper), at most @rate
 * a second (0: unpaced). A batch that falls behind does not catch up in a
 * burst: no stretch of the run goes faster than @rate.
 */
static void launches(long from, long n, double rate)
{
	static double start; /* when this batch of 1024 started */

	for (long i = from; i < from + n; i++) {
		bench_launch(i, 2, DEPTH);
		if (rate > 0 && i % 1024 == 1023) {
			double now = bench_now(), end = start + 1024 / rate;

			if (start > 0 && now < end) {
				usleep((useconds_t)((end - now) * 1e6));
				now = end;
			}
			start = now;
		}
	}
}

int main(int argc, char **argv)
{
	long n = argc > 3 ? atol(argv[1]) : 0;
	int samples = argc > 3 ? atoi(argv[2]) : 0;
	double growth = argc > 4 ? atof(argv[4]) : -1, first = 0, second = 0;
	double rate = argc > 5 ? atof(argv[5]) : 0;
	struct egpu_trace_opts o = { .sz = sizeof(o), .no_python = true };
	struct egpu_trace_stats st = { .sz = sizeof(st) };
	double t0, rss;
	egpu_trace *t;
	struct stat sb;

	if (n < 1 || samples < 2 || n < samples) {
		fprintf(stderr, "usage: %s LAUNCHES SAMPLES FILE [GROWTH_MB [RATE]]\n",
			argv[0]);
		return 2;
	}
	if (bench_fake_open("tracecol_stream_mem"))
		return 1;
	o.stream_path = argv[3];
	if (!(t = egpu_trace_start(&o))) {
		fprintf(stderr, "egpu_trace_start: %s\n", egpu_errmsg());
		return 1;
	}
	t0 = bench_now();
	printf("0 0.00 %.1f\n", rss_mb());   /* before any launch */
	for (int s = 0; s < samples; s++) {
		long from = n / samples * s;

		launches(from, s + 1 == samples ? n - from : n / samples, rate);
		rss = rss_mb();
		if (s < samples / 2)
			first = rss > first ? rss : first;
		else
			second = rss > second ? rss : second;
		printf("%ld %.2f %.1f\n", from + n / samples, bench_now() - t0, rss);
		fflush(stdout);
	}
	if (egpu_trace_stop(t) || egpu_trace_stats(t, &st)) {
		fprintf(stderr, "egpu_trace_stop: %s\n", egpu_errmsg());
		return 1;
	}
	egpu_trace_free(t);
	stat(argv[3], &sb);
	printf("launches %llu, matched %llu of %llu kernels; %.1f bytes a "
	       "launch; memory: first half at most %.1f MB, second half %.1f "
	       "MB\n", (unsigned long long)st.launches,
	       (unsigned long long)st.matched, (unsigned long long)st.kernels,
	       (double)sb.st_size / (double)n, first, second);
	if (growth < 0)
		return 0;
	unlink(argv[3]); /* a test leaves no trace of tens of MB behind */
	return st.launches == (uint64_t)n && st.matched == (uint64_t)n &&
	       second <= first + growth ? 0 : 1;
}
