// Atomics on global and shared memory, globals with initializers,
// constant tables and printf (vprintf and string constants).
#include <cstdio>

__constant__ float weights[8] = { 0.5f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f, 3.5f, 4.0f };
__device__ int histogram_bins = 16;
__device__ unsigned long long counters[4] = { 1, 2, 3, 4 };

__device__ double atomic_max_double(double *addr, double v)
{
	unsigned long long *p = (unsigned long long *)addr, old = *p, assumed;

	do {
		assumed = old;
		if (__longlong_as_double(assumed) >= v)
			break;
		old = atomicCAS(p, assumed, __double_as_longlong(v));
	} while (old != assumed);
	return __longlong_as_double(old);
}

__global__ void histogram(const int *in, int n, unsigned *bins)
{
	__shared__ unsigned local[64];
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (threadIdx.x < 64)
		local[threadIdx.x] = 0;
	__syncthreads();
	if (i < n)
		atomicAdd(&local[in[i] % histogram_bins], 1u);
	__syncthreads();
	if (threadIdx.x < 64)
		atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

__global__ void weighted_max(const double *in, double *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		atomic_max_double(out, in[i] * weights[i & 7]);
	atomicAdd(&counters[i & 3], 1ull);
	atomicExch((int *)&counters[0], 5);
}

__global__ void say_hello(int tag)
{
	if (threadIdx.x == 0)
		printf("hello \"%d\" from block %d\n", tag, blockIdx.x);
}
