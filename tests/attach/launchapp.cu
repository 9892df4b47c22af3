// SPDX-License-Identifier: MIT
/*
 * An unmodified application for host probes: LAUNCHES launches of tick,
 * launch i with a grid of i + 1 blocks (so a probe can tell the launches
 * apart by the grid), each waited for; memory calls around them. Prints
 * "results: correct" when every launch wrote what it should.
 */
#include <cstdio>

#define LAUNCHES 50
#define THREADS 64

__global__ void tick(int *out, int launch)
{
	if (threadIdx.x == 0)
		atomicAdd(&out[launch], 1);
}

int main()
{
	int *d, h[LAUNCHES] = { 0 };
	bool ok = true;

	if (cudaMalloc(&d, sizeof(h)) != cudaSuccess ||
	    cudaMemset(d, 0, sizeof(h)) != cudaSuccess) {
		puts("results: no device memory");
		return 1;
	}
	for (int i = 0; i < LAUNCHES; i++) {
		tick<<<i + 1, THREADS>>>(d, i);
		ok &= cudaDeviceSynchronize() == cudaSuccess;
	}
	ok &= cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost) == cudaSuccess;
	for (int i = 0; i < LAUNCHES; i++)
		ok &= h[i] == i + 1;
	cudaFree(d);
	printf("results: %s\n", ok ? "correct" : "WRONG");
	return ok ? 0 : 1;
}
