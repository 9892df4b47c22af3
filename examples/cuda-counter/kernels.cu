// SPDX-License-Identifier: MIT
// The application's kernels: a C-named one and a template (mangled name).

extern "C" __global__ void vectorAdd(const float *a, const float *b, float *c,
				     int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

template <typename T>
__global__ void scale(T *x, T factor, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		x[i] *= factor;
}

template __global__ void scale<float>(float *, float, int);
