// SPDX-License-Identifier: MIT
/*
 * Host map lookup latency: egpu_map_lookup on an array and a hash map of
 * 1M entries in GPU memory (the hash filled by a GPU probe), next to the
 * bare copies a lookup is made of, so the floor shows:
 *   - cudaMemcpy of 8 bytes into pageable memory (what lookups were);
 *   - cudaMemcpy of 8 bytes into page-locked memory;
 *   - cudaMemcpyAsync of 8 bytes into page-locked memory on a non-blocking
 *     stream, then cudaStreamSynchronize, or spinning on cudaStreamQuery
 *     (what lookups do now, through the driver API);
 * and array lookups while a kernel runs on the legacy default stream
 * (they must not wait for it). Median, p90 and p99 of LOOKUPS each, in
 * microseconds, as Markdown.
 *
 *   lookup_bench [LOOKUPS]
 */
#include <stdio.h>
#include <stdlib.h>

#include "event_bench.h"

#define KEYS (1u << 20)
#define SPIN_NS 2000000000ull /* the busy kernel: 2 s, far longer than the loop */

static int lookups = 5001;

/* Times one operation @lookups times; prints a table row. */
#define MEASURE(label, op)                                                    \
	do {                                                                  \
		double *v_ = calloc((size_t)lookups, sizeof(double));         \
		for (int i = 0; i < lookups; i++) {                           \
			uint32_t key = (uint32_t)(i * 2654435761u) % KEYS;    \
			double t0_ = bench_now_s();                           \
			(void)key;                                            \
			op;                                                   \
			v_[i] = (bench_now_s() - t0_) * 1e6;                  \
		}                                                             \
		row(label, v_);                                               \
		free(v_);                                                     \
	} while (0)

static void row(const char *label, double *us)
{
	printf("| %s | %.2f | %.2f | %.2f |\n", label,
	       bench_percentile(us, lookups, 50), bench_percentile(us, lookups, 90),
	       bench_percentile(us, lookups, 99));
}

static void wait_query(cudaStream_t s)
{
	cudaError_t e;

	while ((e = cudaStreamQuery(s)) == cudaErrorNotReady)
		;
	CUDA_CHECK(e);
}

static void bare_copies(const uint64_t *dev)
{
	uint64_t pageable, *pinned;
	cudaStream_t s;

	CUDA_CHECK(cudaMallocHost((void **)&pinned, sizeof(*pinned)));
	CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	MEASURE("cudaMemcpy 8 B, pageable", CUDA_CHECK(cudaMemcpy(&pageable,
		dev + key, 8, cudaMemcpyDeviceToHost)));
	MEASURE("cudaMemcpy 8 B, page-locked", CUDA_CHECK(cudaMemcpy(pinned,
		dev + key, 8, cudaMemcpyDeviceToHost)));
	MEASURE("cudaMemcpyAsync 8 B, page-locked, non-blocking stream, synchronize",
		CUDA_CHECK(cudaMemcpyAsync(pinned, dev + key, 8,
					   cudaMemcpyDeviceToHost, s));
		CUDA_CHECK(cudaStreamSynchronize(s)));
	MEASURE("cudaMemcpyAsync 8 B, page-locked, non-blocking stream, spin on query",
		CUDA_CHECK(cudaMemcpyAsync(pinned, dev + key, 8,
					   cudaMemcpyDeviceToHost, s));
		wait_query(s));
	CUDA_CHECK(cudaStreamDestroy(s));
	CUDA_CHECK(cudaFreeHost(pinned));
}

static void lookups_of(egpu_obj *obj)
{
	egpu_map *array = egpu_obj_map(obj, "array"), *hash = egpu_obj_map(obj, "hash");
	uint64_t value;

	MEASURE("egpu_map_lookup, array", EGPU_CHECK(!egpu_map_lookup(array, &key, &value)));
	MEASURE("egpu_map_lookup, hash, key present",
		EGPU_CHECK(!egpu_map_lookup(hash, &key, &value)));
	MEASURE("egpu_map_lookup, hash, key absent", key += KEYS;
		EGPU_CHECK(egpu_map_lookup(hash, &key, &value) == EGPU_ENOENT));
}

/* Lookups while spin runs on the legacy default stream. */
static void lookups_beside_a_kernel(egpu_obj *obj, cudaKernel_t spin)
{
	egpu_map *array = egpu_obj_map(obj, "array");
	unsigned long long ns = SPIN_NS;
	void *args[] = { &ns };
	uint64_t value;
	cudaError_t running;

	CUDA_CHECK(cudaLaunchKernel((const void *)spin, (dim3){ 1, 1, 1 },
				    (dim3){ 1, 1, 1 }, args, 0, 0));
	MEASURE("egpu_map_lookup, array, kernel running on the default stream",
		EGPU_CHECK(!egpu_map_lookup(array, &key, &value)));
	running = cudaStreamQuery(0);
	printf("\n(the kernel was %s when the last lookup returned)\n",
	       running == cudaErrorNotReady ? "still running, as it should be" :
	       "already finished: the lookups waited for it");
	CUDA_CHECK(cudaDeviceSynchronize());
}

int main(int argc, char **argv)
{
	struct cudaDeviceProp prop;
	struct bench_probe s;
	const char *why;
	uint64_t *dev;
	size_t len;
	char *ptx;
	float *x;

	if (argc > 1 && atoi(argv[1]) > 0)
		lookups = atoi(argv[1]);
	if (!app_gpu_present(&why)) {
		printf("no GPU (%s): nothing to measure\n", why);
		return APP_SKIP;
	}
	CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
	CUDA_CHECK(cudaMalloc((void **)&x, BENCH_THREADS * sizeof(float)));
	CUDA_CHECK(cudaMalloc((void **)&dev, KEYS * sizeof(uint64_t)));
	CUDA_CHECK(cudaMemset(dev, 0, KEYS * sizeof(uint64_t)));
	ptx = app_read_file(BENCH_DIR "/ringbuf_kernels.ptx", &len);
	bench_probe_load(&s, ptx, len, "hash_update");
	bench_touch(s.k, x); /* fills the hash map: keys 0 .. KEYS - 1 */

	printf("GPU: %s, libegpu %s, %d lookups of keys spread over %u entries\n\n",
	       prop.name, egpu_version(), lookups, KEYS);
	printf("| operation | median us | p90 us | p99 us |\n|---|---|---|---|\n");
	bare_copies(dev);
	lookups_of(s.obj);
	lookups_beside_a_kernel(s.obj, app_kernel(s.lib, "spin"));
	bench_probe_free(&s);
	cudaFree(dev);
	cudaFree(x);
	free(ptx);
	return 0;
}
