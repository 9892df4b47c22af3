// SPDX-License-Identifier: MIT
// An ordinary CUDA runtime program that knows nothing of libegpu: a vector
// add launched 3 times over 1<<20 threads and a strided loop (threadhist's
// kernel) launched twice over 80 x 128 threads. It checks its results and
// prints what it launched, so `egpu attach` runs can be checked exactly.
// `vecapp SECONDS` then keeps launching stride_work for SECONDS (a process
// to scrape `egpu attach --metrics` from while its kernels run).
#include <chrono>
#include <cstdio>
#include <cstdlib>

#define N (1 << 20)
#define ADD_BLOCK 256
#define ADD_LAUNCHES 3
#define WORK_GRID 80
#define WORK_BLOCK 128
#define WORK_LAUNCHES 2

__global__ void vec_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

__global__ void stride_work(float *x, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		x[i] = x[i] * 2.0f + 1.0f;
}

#define CHECK(call)                                                           \
	do {                                                                  \
		cudaError_t e = (call);                                       \
		if (e != cudaSuccess) {                                       \
			fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e)); \
			return 1;                                             \
		}                                                             \
	} while (0)

/* stride_work launched again and again for @seconds; the launch count. */
static long keep_working(float *x, double seconds)
{
	auto end = std::chrono::steady_clock::now() +
		   std::chrono::duration<double>(seconds);
	long n = 0;

	while (std::chrono::steady_clock::now() < end) {
		stride_work<<<WORK_GRID, WORK_BLOCK>>>(x, N);
		if (++n % 64 == 0 && cudaDeviceSynchronize() != cudaSuccess)
			return -1;
	}
	return cudaDeviceSynchronize() == cudaSuccess ? n : -1;
}

int main(int argc, char **argv)
{
	size_t bytes = N * sizeof(float);
	float *a, *b, *c, *x, *h = (float *)malloc(bytes);
	int bad = 0;

	CHECK(cudaMalloc(&a, bytes));
	CHECK(cudaMalloc(&b, bytes));
	CHECK(cudaMalloc(&c, bytes));
	CHECK(cudaMalloc(&x, bytes));
	for (int i = 0; i < N; i++)
		h[i] = (float)(i % 1000);
	CHECK(cudaMemcpy(a, h, bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(b, h, bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(x, h, bytes, cudaMemcpyHostToDevice));
	for (int l = 0; l < ADD_LAUNCHES; l++)
		vec_add<<<N / ADD_BLOCK, ADD_BLOCK>>>(a, b, c, N);
	for (int l = 0; l < WORK_LAUNCHES; l++)
		stride_work<<<WORK_GRID, WORK_BLOCK>>>(x, N);
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(h, c, bytes, cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		bad += h[i] != 2.0f * (float)(i % 1000);
	CHECK(cudaMemcpy(h, x, bytes, cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		bad += h[i] != ((float)(i % 1000) * 2.0f + 1.0f) * 2.0f + 1.0f;
	printf("vec_add: %d launches x %d threads\n", ADD_LAUNCHES, N);
	printf("stride_work: %d launches x %d threads\n", WORK_LAUNCHES,
	       WORK_GRID * WORK_BLOCK);
	printf("results: %s (%d wrong)\n", bad ? "WRONG" : "correct", bad);
	if (argc > 1) {
		long n = keep_working(x, atof(argv[1]));

		printf("stride_work: %ld more launches in %s s\n", n, argv[1]);
		bad += n < 0;
	}
	free(h);
	return bad != 0;
}
