// SPDX-License-Identifier: MIT
// Kernels for the API tests: one with an early return, one template.

extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	y[i] = a * x[i] + y[i];
}

template <typename T>
__global__ void fill(T *out, T v, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		out[i] = v;
}

template __global__ void fill<int>(int *, int, int);
