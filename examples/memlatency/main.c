// SPDX-License-Identifier: MIT
/*
 * memlatency: every global load of two kernels made slower by a delay (a
 * memory probe that sleeps), as memory further away would be, and the
 * slowdown against the uninstrumented kernels: a vector add, whose many
 * loads in flight hide latency, and a pointer chase, which waits for each.
 *
 *   memlatency [--check] [--delay NS] [PROBE.bpf.o KERNELS.ptx]
 *
 * --delay (repeatable): these delays (default: 0 to 3200 ns). --check: the default
 * delays; every instrumented run computes bit-identical results, and the
 * time grows with the delay (within 10% noise; at 3200 ns at least 1.5x
 * the time at 0 ns).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

#define VEC_N (1 << 24)
#define CHASE_LEN (1 << 24) /* 64 MiB of links: beyond the L2 */
#define CHASE_THREADS 8192
#define HOPS 256
#define BLOCK 256
#define RUNS 5
#define MAX_DELAYS 16
#define NOISE 0.9
#define MIN_GROWTH 1.5

static const uint64_t default_delays[] = { 0, 100, 200, 400, 800, 1600, 3200 };

struct workload {
	const char *name;
	const char *kernel;
	dim3 grid;
	void **args;
	void *out; /* device output */
	size_t out_bytes;
	void *want; /* host copy of the uninstrumented output */
	float plain_ms;
	float ms[MAX_DELAYS];
	bool same[MAX_DELAYS];
};

struct delays {
	uint64_t ns[MAX_DELAYS];
	int cnt;
};

static void *device_copy(const void *host, size_t bytes)
{
	void *d;

	CUDA_CHECK(cudaMalloc(&d, bytes));
	CUDA_CHECK(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
	return d;
}

static float *device_floats(size_t n, float first)
{
	float *h = malloc(n * sizeof(float)), *d;

	if (!h)
		abort();
	for (size_t i = 0; i < n; i++)
		h[i] = first + (float)(i % 977);
	d = device_copy(h, n * sizeof(float));
	free(h);
	return d;
}

/* One cycle through all CHASE_LEN links (Sattolo), from a fixed seed. */
static int *device_cycle(void)
{
	int *h = malloc(CHASE_LEN * sizeof(int)), *d;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	if (!h)
		abort();
	for (int i = 0; i < CHASE_LEN; i++)
		h[i] = i;
	for (int i = CHASE_LEN - 1; i > 0; i--) {
		int j, t;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		j = (int)((x >> 33) % (uint64_t)i);
		t = h[i];
		h[i] = h[j];
		h[j] = t;
	}
	d = device_copy(h, CHASE_LEN * sizeof(int));
	free(h);
	return d;
}

static bool same_output(const struct workload *w)
{
	void *got = malloc(w->out_bytes);
	bool same;

	if (!got)
		abort();
	CUDA_CHECK(cudaMemcpy(got, w->out, w->out_bytes, cudaMemcpyDeviceToHost));
	same = !memcmp(got, w->want, w->out_bytes);
	free(got);
	return same;
}

static void run_plain(cudaKernel_t k, struct workload *w)
{
	w->plain_ms = app_time_median(k, w->grid, (dim3){ BLOCK, 1, 1 }, w->args,
				      RUNS);
	w->want = malloc(w->out_bytes);
	if (!w->want)
		abort();
	CUDA_CHECK(cudaMemcpy(w->want, w->out, w->out_bytes, cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemset(w->out, 0, w->out_bytes));
}

static void run_delayed(cudaKernel_t k, struct workload *w, int d)
{
	w->ms[d] = app_time_median(k, w->grid, (dim3){ BLOCK, 1, 1 }, w->args, RUNS);
	w->same[d] = same_output(w);
	CUDA_CHECK(cudaMemset(w->out, 0, w->out_bytes));
}

static void print_table(const struct workload *w, int nw, const struct delays *dl)
{
	printf("\n| delay ns |");
	for (int i = 0; i < nw; i++)
		printf(" %s ms | slowdown |", w[i].name);
	printf(" results |\n|---:|");
	for (int i = 0; i < nw; i++)
		printf("---:|---:|");
	printf("---|\n| none (plain) |");
	for (int i = 0; i < nw; i++)
		printf(" %.3f | 1.00x |", w[i].plain_ms);
	printf(" reference |\n");
	for (int d = 0; d < dl->cnt; d++) {
		bool same = true;

		printf("| %llu |", (unsigned long long)dl->ns[d]);
		for (int i = 0; i < nw; i++) {
			printf(" %.3f | %.2fx |", w[i].ms[d], w[i].ms[d] / w[i].plain_ms);
			same &= w[i].same[d];
		}
		printf(" %s |\n", same ? "identical" : "DIFFERENT");
	}
}

static int check(const struct workload *w, int nw, const struct delays *dl)
{
	int bad = 0;

	for (int i = 0; i < nw; i++) {
		for (int d = 0; d < dl->cnt; d++) {
			if (!w[i].same[d]) {
				fprintf(stderr, "CHECK FAILED: %s at %llu ns: results differ\n",
					w[i].name, (unsigned long long)dl->ns[d]);
				bad = 1;
			}
			if (d && w[i].ms[d] < NOISE * w[i].ms[d - 1]) {
				fprintf(stderr, "CHECK FAILED: %s faster at %llu ns than at %llu ns\n",
					w[i].name, (unsigned long long)dl->ns[d],
					(unsigned long long)dl->ns[d - 1]);
				bad = 1;
			}
		}
		if (w[i].ms[dl->cnt - 1] < MIN_GROWTH * w[i].ms[0]) {
			fprintf(stderr, "CHECK FAILED: %s: the largest delay costs too little\n",
				w[i].name);
			bad = 1;
		}
	}
	return bad;
}

static uint64_t parse_ns(const char *s)
{
	char *end;
	unsigned long long v = s ? strtoull(s, &end, 0) : 0;

	if (!s || end == s || *end || *s == '-') {
		fprintf(stderr, "memlatency: --delay wants nanoseconds, got '%s'\n",
			s ? s : "");
		exit(2);
	}
	return v;
}

static struct delays parse_delays(int argc, char **argv)
{
	struct delays dl = { .cnt = 0 };

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--delay"))
			continue;
		if (dl.cnt == MAX_DELAYS) {
			fprintf(stderr, "memlatency: at most %d delays\n", MAX_DELAYS);
			exit(2);
		}
		dl.ns[dl.cnt++] = parse_ns(argv[++i]);
	}
	if (!dl.cnt || (argc > 1 && !strcmp(argv[1], "--check"))) {
		dl.cnt = (int)(sizeof(default_delays) / sizeof(default_delays[0]));
		memcpy(dl.ns, default_delays, sizeof(default_delays));
	}
	return dl;
}

static struct delays delays;

static int run(struct app *app, bool want_check)
{
	float *a = device_floats(VEC_N, 1), *b = device_floats(VEC_N, 2);
	float *c = device_floats(VEC_N, 0);
	int *next = device_cycle(), *end;
	int vn = VEC_N, hops = HOPS;
	void *vec_args[] = { &a, &b, &c, &vn };
	void *chase_args[] = { &next, &end, &hops };
	struct workload w[] = {
		{ .name = "vecadd 16M", .kernel = "vecadd",
		  .grid = { VEC_N / BLOCK, 1, 1 }, .args = vec_args, .out = c,
		  .out_bytes = VEC_N * sizeof(float) },
		{ .name = "chase x256", .kernel = "chase",
		  .grid = { CHASE_THREADS / BLOCK, 1, 1 }, .args = chase_args,
		  .out_bytes = CHASE_THREADS * sizeof(int) },
	};
	int nw = (int)(sizeof(w) / sizeof(w[0])), rc = 0;
	egpu_map *delay = egpu_obj_map(app->obj, "delay");
	cudaLibrary_t plain = app_load_ptx(app->ptx);
	cudaLibrary_t lib = app_load_ptx(app->instrumented);
	uint32_t zero = 0;

	EGPU_CHECK(delay);
	CUDA_CHECK(cudaMalloc((void **)&end, CHASE_THREADS * sizeof(int)));
	w[1].out = end;
	for (int i = 0; i < nw; i++)
		run_plain(app_kernel(plain, w[i].kernel), &w[i]);
	for (int d = 0; d < delays.cnt; d++) {
		EGPU_CHECK(!egpu_map_update(delay, &zero, &delays.ns[d], 0));
		for (int i = 0; i < nw; i++)
			run_delayed(app_kernel(lib, w[i].kernel), &w[i], d);
	}
	print_table(w, nw, &delays);
	if (want_check)
		rc = check(w, nw, &delays);
	for (int i = 0; i < nw; i++)
		free(w[i].want);
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	cudaFree(next);
	cudaFree(end);
	cudaLibraryUnload(plain);
	cudaLibraryUnload(lib);
	if (want_check && !rc)
		printf("check passed\n");
	return rc;
}

/* app_main() with the --delay options taken out first. */
int main(int argc, char **argv)
{
	char *rest[4];
	int n = 0;

	delays = parse_delays(argc, argv);
	for (int i = 0; i < argc && n < 4; i++) {
		if (!strcmp(argv[i], "--delay")) {
			i++;
			continue;
		}
		rest[n++] = argv[i];
	}
	if (n > 1 && !strcmp(rest[1], "--check")) {
		const char *why;

		if (!app_gpu_present(&why)) {
			printf("no GPU here (%s): nothing to check\n", why);
			return APP_SKIP;
		}
	}
	return app_main(n, rest, EXAMPLE_PROBE, EXAMPLE_PTX, run);
}
