// SPDX-License-Identifier: MIT
// Kernels for the fatbin tests: long enough that nvcc compresses their PTX.
__global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] *= a;
}

__global__ void saxpy(float *y, const float *x, float a, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		y[i] += a * x[i];
}

__global__ void histogram(unsigned *bins, const unsigned char *in, int n)
{
	__shared__ unsigned local[256];

	for (int b = threadIdx.x; b < 256; b += blockDim.x)
		local[b] = 0;
	__syncthreads();
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		atomicAdd(&local[in[i]], 1u);
	__syncthreads();
	for (int b = threadIdx.x; b < 256; b += blockDim.x)
		atomicAdd(&bins[b], local[b]);
}
