// Shared-memory tiled SGEMM: C = alpha * A * B + beta * C, row-major.
template <int TILE>
__global__ void sgemm_tiled(int m, int n, int k, float alpha, const float *a,
			    const float *b, float beta, float *c)
{
	__shared__ float as[TILE][TILE];
	__shared__ float bs[TILE][TILE + 1];
	int row = blockIdx.y * TILE + threadIdx.y;
	int col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0.0f;

	for (int t = 0; t < (k + TILE - 1) / TILE; t++) {
		int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;

		as[threadIdx.y][threadIdx.x] = row < m && ac < k ? a[row * k + ac] : 0.0f;
		bs[threadIdx.y][threadIdx.x] = br < k && col < n ? b[br * n + col] : 0.0f;
		__syncthreads();
#pragma unroll 4
		for (int i = 0; i < TILE; i++)
			acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
		__syncthreads();
	}
	if (row < m && col < n)
		c[row * n + col] = alpha * acc + beta * c[row * n + col];
}

template __global__ void sgemm_tiled<16>(int, int, int, float, const float *,
					 const float *, float, float *);
template __global__ void sgemm_tiled<32>(int, int, int, float, const float *,
					 const float *, float, float *);

__global__ void sgemm_naive(int m, int n, int k, const float *a,
			    const float *b, float *c)
{
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	float acc = 0.0f;

	if (row >= m || col >= n)
		return;
#pragma unroll 1
	for (int i = 0; i < k; i++)
		acc += a[row * k + i] * b[i * n + col];
	c[row * n + col] = acc;
}
