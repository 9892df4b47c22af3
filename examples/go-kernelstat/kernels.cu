// SPDX-License-Identifier: MIT
// kernelstat's workload: kernels of different lengths, each taking
// (float *x, int n), which is how the tool launches every kernel it finds.

// One light pass, one element per thread per trip.
extern "C" __global__ void scale(float *x, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		x[i] = x[i] * 0.5f + 1.0f;
}

// The same trips with a dependent arithmetic chain: many times longer.
extern "C" __global__ void iterate(float *x, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x) {
		float v = x[i];

		for (int r = 0; r < 256; r++)
			v = v * 0.999f + 0.001f;
		x[i] = v;
	}
}

// A template: its PTX name is mangled, the table shows it demangled.
template <typename T>
__global__ void clamp(T *x, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		x[i] = x[i] < T(0) ? T(0) : x[i] > T(4) ? T(4) : x[i];
}

template __global__ void clamp<float>(float *, int);
