// SPDX-License-Identifier: MIT
// Benchmark workloads: memory-bound vector add, compute-bound tiled SGEMM.

extern "C" __global__ void vecadd(const float *a, const float *b, float *c,
				  int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

#define TILE 32

// C = A * B, all n x n, row-major; blockDim = (TILE, TILE).
// Launch bounds: heavy probes (trace spans) would otherwise take it past
// the 64 registers a 1,024-thread block allows (docs/ptx.md).
extern "C" __global__ void __launch_bounds__(TILE * TILE)
sgemm_tiled(const float *A, const float *B, float *C, int n)
{
	__shared__ float As[TILE][TILE];
	__shared__ float Bs[TILE][TILE];
	int row = blockIdx.y * TILE + threadIdx.y;
	int col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0.0f;

	for (int t = 0; t < n; t += TILE) {
		As[threadIdx.y][threadIdx.x] = A[row * n + t + threadIdx.x];
		Bs[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * n + col];
		__syncthreads();
		for (int k = 0; k < TILE; k++)
			acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
		__syncthreads();
	}
	C[row * n + col] = acc;
}
