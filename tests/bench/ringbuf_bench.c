// SPDX-License-Identifier: MIT
/*
 * Event ring benchmark: every thread of a 16M-thread grid emits one record
 * at exit into a 256 MiB ring that a host thread consumes meanwhile.
 * Measured: records and payload bytes delivered per second (launch to the
 * last record consumed), records dropped, the kernel's device time with the
 * ring probe over without probes (CUDA events, median); then host
 * egpu_map_lookup latency (median) on an array and a hash map in GPU
 * memory, and hash map updates per second from the GPU. Prints Markdown.
 *
 *   ringbuf_bench [RUNS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"

#define THREADS (16u << 20)
#define BLOCK 256
#define LOOKUPS 2001
#define HASH_KEYS (1u << 20)
#define WAIT_S 30 /* for a run's records, before calling them lost */

static int runs = 5;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* Device time of one launch of touch<<<THREADS / BLOCK, BLOCK>>>, ms. */
static double time_launch(cudaKernel_t k, float *x)
{
	void *args[] = { &x };

	return app_time_launch(k, (dim3){ THREADS / BLOCK, 1, 1 },
			       (dim3){ BLOCK, 1, 1 }, args);
}

/* A libegpu context with @prog of ringbuf.bpf.o attached to touch's exit. */
struct setup {
	egpu_ctx *ctx;
	egpu_obj *obj;
	cudaLibrary_t lib;
	cudaKernel_t k;
};

static void setup_probe(struct setup *s, const char *ptx, size_t len,
			const char *prog)
{
	char *out = NULL;
	size_t out_len;

	s->ctx = egpu_ctx_new(NULL);
	EGPU_CHECK(s->ctx);
	s->obj = egpu_load(s->ctx, BENCH_DIR "/ringbuf.bpf.o", NULL);
	EGPU_CHECK(s->obj);
	EGPU_CHECK(egpu_attach_kernel(egpu_obj_prog(s->obj, prog), "touch",
				      EGPU_ATTACH_EXIT, NULL));
	EGPU_CHECK(!egpu_instrument_ptx(s->ctx, ptx, len, &out, &out_len, NULL));
	s->lib = app_load_ptx(out);
	s->k = app_kernel(s->lib, "touch");
	free(out);
}

static void setup_free(struct setup *s)
{
	cudaLibraryUnload(s->lib);
	egpu_ctx_free(s->ctx);
}

/* The consumer: a host thread polling the ring while kernels run. */
struct consumer {
	egpu_ringbuf *rb;
	uint64_t records, bytes, sum;
	bool stop;
};

static int on_record(void *user, const void *data, size_t size)
{
	struct consumer *c = user;

	/* One writer; the main thread reads the count while it runs. */
	__atomic_store_n(&c->records, c->records + 1, __ATOMIC_RELAXED);
	c->bytes += size;
	c->sum += *(const uint64_t *)data; /* touch the record */
	return 0;
}

static void *consume(void *arg)
{
	struct consumer *c = arg;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE))
		if (egpu_ringbuf_poll(c->rb, 1) < 0)
			break;
	return NULL;
}

static uint64_t delivered(struct consumer *c)
{
	return __atomic_load_n(&c->records, __ATOMIC_RELAXED);
}

static void bench_ring(const char *ptx, size_t len, float *x, double plain_ms,
		       int bytes)
{
	char prog[16];
	struct setup s;
	struct consumer c = { 0 };
	double *kms = calloc((size_t)runs, sizeof(double));
	double *rate = calloc((size_t)runs, sizeof(double));
	uint64_t sent = 0, drops = 0;
	pthread_t t;

	snprintf(prog, sizeof(prog), "emit%d", bytes);
	setup_probe(&s, ptx, len, prog);
	c.rb = egpu_ringbuf_new(egpu_obj_map(s.obj, "events"), on_record, &c);
	EGPU_CHECK(c.rb);
	pthread_create(&t, NULL, consume, &c);
	for (int r = 0; r < runs; r++) {
		uint64_t before = delivered(&c) + egpu_ringbuf_drops(c.rb);
		double t0 = now_s();

		kms[r] = time_launch(s.k, x);
		/* Wait for the consumer to take (or the GPU to drop) them all. */
		while (delivered(&c) + egpu_ringbuf_drops(c.rb) - before < THREADS) {
			if (now_s() - t0 > WAIT_S) {
				printf("(records missing after %d s: %llu of %u)\n", WAIT_S,
				       (unsigned long long)(delivered(&c) +
				       egpu_ringbuf_drops(c.rb) - before), THREADS);
				break;
			}
		}
		rate[r] = (THREADS - (egpu_ringbuf_drops(c.rb) - drops)) /
			  (now_s() - t0);
		drops = egpu_ringbuf_drops(c.rb);
		sent += THREADS;
	}
	__atomic_store_n(&c.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	{
		double k = median(kms, runs), rps = median(rate, runs);

		printf("| %4d B | %6.2f%% | %9.3f | %9.3f | %6.2fx | %8.1f M | %6.2f |\n",
		       bytes, 100.0 * (double)drops / (double)sent, plain_ms, k,
		       k / plain_ms, rps / 1e6, rps * bytes / 1e9);
	}
	egpu_ringbuf_free(c.rb);
	setup_free(&s);
	free(kms);
	free(rate);
}

/* Median microseconds of egpu_map_lookup of keys spread over the map. */
static double lookup_us(egpu_map *m, uint32_t keys)
{
	double v[LOOKUPS];
	uint64_t value;

	for (int i = 0; i < LOOKUPS; i++) {
		uint32_t key = (uint32_t)(i * 2654435761u) % keys;
		double t0 = now_s();

		EGPU_CHECK(!egpu_map_lookup(m, &key, &value));
		v[i] = (now_s() - t0) * 1e6;
	}
	return median(v, LOOKUPS);
}

static void bench_maps(const char *ptx, size_t len, float *x, double plain_ms)
{
	double *kms = calloc((size_t)runs, sizeof(double)), k;
	struct setup s;

	setup_probe(&s, ptx, len, "hash_update");
	for (int r = 0; r < runs; r++)
		kms[r] = time_launch(s.k, x);
	k = median(kms, runs);
	printf("\n| measure | value |\n|---|---|\n");
	printf("| hash updates from the GPU (%u threads, %u keys) | %.1f M/s (kernel %.3f ms, %.3f ms without probe) |\n",
	       THREADS, HASH_KEYS, THREADS / (k / 1e3) / 1e6, k, plain_ms);
	printf("| host egpu_map_lookup, array (median of %d) | %.2f us |\n", LOOKUPS,
	       lookup_us(egpu_obj_map(s.obj, "array"), HASH_KEYS));
	printf("| host egpu_map_lookup, hash (median of %d) | %.2f us |\n", LOOKUPS,
	       lookup_us(egpu_obj_map(s.obj, "hash"), HASH_KEYS));
	setup_free(&s);
	free(kms);
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 16, 64, 256 };
	struct cudaDeviceProp prop;
	cudaLibrary_t plain_lib;
	cudaKernel_t plain;
	double *pms, plain_ms;
	const char *why;
	size_t len;
	char *ptx;
	float *x;

	if (argc > 1 && atoi(argv[1]) > 0)
		runs = atoi(argv[1]);
	if (!app_gpu_present(&why)) {
		printf("no GPU (%s): nothing to measure\n", why);
		return APP_SKIP;
	}
	CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
	CUDA_CHECK(cudaMalloc((void **)&x, THREADS * sizeof(float)));
	CUDA_CHECK(cudaMemset(x, 0, THREADS * sizeof(float)));
	ptx = app_read_file(BENCH_DIR "/ringbuf_kernels.ptx", &len);
	plain_lib = app_load_ptx(ptx);
	plain = app_kernel(plain_lib, "touch");
	pms = calloc((size_t)runs, sizeof(double));
	time_launch(plain, x); /* warm-up */
	for (int r = 0; r < runs; r++)
		pms[r] = time_launch(plain, x);
	plain_ms = median(pms, runs);

	printf("GPU: %s, libegpu %s, %u threads each emitting one record at exit,\n"
	       "256 MiB ring consumed by a host thread meanwhile, median of %d runs\n\n",
	       prop.name, egpu_version(), THREADS, runs);
	printf("| payload | dropped | kernel ms, no probe | kernel ms, ring | slowdown | delivered rec/s | GB/s |\n");
	printf("|---------|---------|---------------------|-----------------|----------|-----------------|------|\n");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		bench_ring(ptx, len, x, plain_ms, sizes[i]);
	bench_maps(ptx, len, x, plain_ms);
	cudaLibraryUnload(plain_lib);
	cudaFree(x);
	free(pms);
	free(ptx);
	return 0;
}
