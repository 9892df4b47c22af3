// SPDX-License-Identifier: MIT
/*
 * Event ring benchmark: every thread of a 16M-thread grid emits one record
 * at exit into a 256 MiB ring that a host thread consumes meanwhile.
 * Measured per payload size (16, 64, 256 bytes): the kernel's device time
 * with the ring probe over without probes (CUDA events, median), the
 * records and payload bytes the kernel emitted (kept or dropped) per second
 * of its device time, those delivered to the host per second (launch to the last record
 * consumed), and the share dropped because the ring was full; then hash
 * map updates per second from the GPU. Prints Markdown. Host lookup
 * latency: lookup_bench.
 *
 *   ringbuf_bench [RUNS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_bench.h"

#define THREADS BENCH_THREADS
#define HASH_KEYS (1u << 20)
#define WAIT_S 30 /* for a run's records, before calling them lost */

static int runs = 5;

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
	struct bench_probe s;
	struct consumer c = { 0 };
	double *kms = calloc((size_t)runs, sizeof(double));
	double *rate = calloc((size_t)runs, sizeof(double));
	uint64_t sent = 0, drops = 0;
	pthread_t t;

	snprintf(prog, sizeof(prog), "emit%d", bytes);
	bench_probe_load(&s, ptx, len, prog);
	c.rb = egpu_ringbuf_new(egpu_obj_map(s.obj, "events"), on_record, &c);
	EGPU_CHECK(c.rb);
	pthread_create(&t, NULL, consume, &c);
	for (int r = 0; r < runs; r++) {
		uint64_t before = delivered(&c) + egpu_ringbuf_drops(c.rb);
		double t0 = bench_now_s();

		kms[r] = bench_touch(s.k, x);
		/* Wait for the consumer to take (or the GPU to drop) them all. */
		while (delivered(&c) + egpu_ringbuf_drops(c.rb) - before < THREADS) {
			if (bench_now_s() - t0 > WAIT_S) {
				printf("(records missing after %d s: %llu of %u)\n", WAIT_S,
				       (unsigned long long)(delivered(&c) +
				       egpu_ringbuf_drops(c.rb) - before), THREADS);
				break;
			}
		}
		rate[r] = (THREADS - (egpu_ringbuf_drops(c.rb) - drops)) /
			  (bench_now_s() - t0);
		drops = egpu_ringbuf_drops(c.rb);
		sent += THREADS;
	}
	__atomic_store_n(&c.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	{
		double k = bench_percentile(kms, runs, 50);
		double rps = bench_percentile(rate, runs, 50), eps = THREADS / (k / 1e3);

		printf("| %4d B | %6.2f%% | %7.3f | %9.3f | %8.1fx | %8.1f M | %6.2f | %8.1f M | %6.2f |\n",
		       bytes, 100.0 * (double)drops / (double)sent, plain_ms, k,
		       k / plain_ms, eps / 1e6, eps * bytes / 1e9, rps / 1e6,
		       rps * bytes / 1e9);
	}
	egpu_ringbuf_free(c.rb);
	bench_probe_free(&s);
	free(kms);
	free(rate);
}

static void bench_maps(const char *ptx, size_t len, float *x, double plain_ms)
{
	double *kms = calloc((size_t)runs, sizeof(double)), k;
	struct bench_probe s;

	bench_probe_load(&s, ptx, len, "hash_update");
	for (int r = 0; r < runs; r++)
		kms[r] = bench_touch(s.k, x);
	k = bench_percentile(kms, runs, 50);
	printf("\n| measure | value |\n|---|---|\n");
	printf("| hash updates from the GPU (%u threads, %u keys) | %.1f M/s (kernel %.3f ms, %.3f ms without probe) |\n",
	       THREADS, HASH_KEYS, THREADS / (k / 1e3) / 1e6, k, plain_ms);
	bench_probe_free(&s);
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
	bench_touch(plain, x); /* warm-up */
	for (int r = 0; r < runs; r++)
		pms[r] = bench_touch(plain, x);
	plain_ms = bench_percentile(pms, runs, 50);

	printf("GPU: %s, libegpu %s, %u threads each emitting one record at exit,\n"
	       "256 MiB ring consumed by a host thread meanwhile, median of %d runs\n\n",
	       prop.name, egpu_version(), THREADS, runs);
	printf("| payload | dropped | kernel ms, no probe | kernel ms, ring | slowdown | emitted rec/s | GB/s | delivered rec/s | GB/s |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		bench_ring(ptx, len, x, plain_ms, sizes[i]);
	bench_maps(ptx, len, x, plain_ms);
	cudaLibraryUnload(plain_lib);
	cudaFree(x);
	free(pms);
	free(ptx);
	return 0;
}
