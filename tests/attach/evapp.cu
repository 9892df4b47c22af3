// SPDX-License-Identifier: MIT
// A CUDA program that knows nothing of libegpu, built as bpftime's
// examples are (nvcc -cudart shared, no -arch; and with the static
// runtime): vec_scale launched LAUNCHES times over GRID x BLOCK threads.
// It checks its results and prints what it launched, so that attach_gpu
// can check the events, seeded maps and print lines of events.bpf.o.
#include <cstdio>

#define GRID 8
#define BLOCK 128
#define LAUNCHES 2
#define N (GRID * BLOCK)

__global__ void vec_scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = x[i] * a;
}

int main()
{
	static float host[N];
	float *x;
	int wrong = 0;

	for (int i = 0; i < N; i++)
		host[i] = (float)i;
	if (cudaMalloc(&x, sizeof(host)) != cudaSuccess ||
	    cudaMemcpy(x, host, sizeof(host), cudaMemcpyHostToDevice) != cudaSuccess) {
		fprintf(stderr, "evapp: no GPU memory\n");
		return 2;
	}
	for (int l = 0; l < LAUNCHES; l++)
		vec_scale<<<GRID, BLOCK>>>(x, 2.0f, N);
	if (cudaMemcpy(host, x, sizeof(host), cudaMemcpyDeviceToHost) != cudaSuccess) {
		fprintf(stderr, "evapp: %s\n", cudaGetErrorString(cudaGetLastError()));
		return 2;
	}
	for (int i = 0; i < N; i++)
		wrong += host[i] != (float)i * (1 << LAUNCHES);
	printf("vec_scale: %d launches of %d x %d threads\n", LAUNCHES, GRID, BLOCK);
	printf("results: %s (%d wrong)\n", wrong ? "WRONG" : "correct", wrong);
	cudaFree(x);
	return wrong != 0;
}
