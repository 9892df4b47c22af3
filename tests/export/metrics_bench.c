/* SPDX-License-Identifier: MIT */
/*
 * metrics_bench BIG.bpf.o: what one scrape costs for a map of 1M keys (an
 * array and a hash, every key non-zero, labelled by key, top 20 kept):
 * the median time (wall and CPU) of egpu_metrics_render over 5 scrapes, the peak memory
 * a scrape adds, and the text's size. Maps in host memory (no GPU); on a
 * GPU each key is one copy more (docs/fleet.md).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "egpu.h"

#define KEYS (1u << 20)
#define RUNS 5

static double now_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long max_rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static int fill(egpu_map *m, unsigned key_size)
{
	for (uint64_t k = 0; k < KEYS; k++) {
		uint64_t v = k + 1;
		uint32_t k32 = (uint32_t)k;

		if (egpu_map_update(m, key_size == 4 ? (void *)&k32 : (void *)&k,
				    &v, 0))
			return -1;
	}
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int bench(egpu_ctx *ctx, egpu_map *map)
{
	EGPU_OPTS(egpu_metric_desc, d, .kind = EGPU_METRIC_COUNTER,
		  .key = EGPU_METRIC_KEY_INDEX);
	egpu_metrics *m = egpu_metrics_new(ctx, NULL);
	double ms[RUNS], cpu[RUNS];
	long before = max_rss_kib();
	size_t len = 0;

	if (!m || egpu_metrics_add_map(m, map, &d))
		return -1;
	for (int i = 0; i < RUNS; i++) {
		char *text;
		double t = now_ms(CLOCK_MONOTONIC);
		double c = now_ms(CLOCK_THREAD_CPUTIME_ID);

		if (egpu_metrics_render(m, &text, &len))
			return -1;
		ms[i] = now_ms(CLOCK_MONOTONIC) - t;
		cpu[i] = now_ms(CLOCK_THREAD_CPUTIME_ID) - c;
		free(text);
	}
	qsort(ms, RUNS, sizeof(ms[0]), cmp);
	qsort(cpu, RUNS, sizeof(cpu[0]), cmp);
	printf("%-10s %u keys: scrape median %.1f ms (min %.1f, max %.1f), "
	       "CPU %.1f ms, peak memory +%.1f MiB, %zu bytes of text\n",
	       egpu_map_name(map), KEYS, ms[RUNS / 2], ms[0], ms[RUNS - 1],
	       cpu[RUNS / 2],
	       (max_rss_kib() - before) / 1024.0, len);
	egpu_metrics_free(m);
	return 0;
}

int main(int argc, char **argv)
{
	egpu_ctx *ctx = egpu_ctx_new(NULL);
	egpu_obj *obj = ctx && argc == 2 ? egpu_load(ctx, argv[1], NULL) : NULL;
	egpu_map *a = obj ? egpu_obj_map(obj, "big_array") : NULL;
	egpu_map *h = obj ? egpu_obj_map(obj, "big_hash") : NULL;

	if (!a || !h || fill(a, 4) || fill(h, 8) || bench(ctx, a) ||
	    bench(ctx, h)) {
		fprintf(stderr, "metrics_bench: %s\n", argc == 2 ? egpu_errmsg() :
			"usage: metrics_bench BIG.bpf.o");
		return 1;
	}
	egpu_ctx_free(ctx);
	return 0;
}
