// SPDX-License-Identifier: MIT
// Kernels the GPU user helper test instruments.
extern "C" __global__ void ordered(float *out)
{
	out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}

extern "C" __global__ void flood(float *out)
{
	out[blockIdx.x * blockDim.x + threadIdx.x] = 2.0f;
}

/* Enough work per thread that a launch takes a while. */
extern "C" __global__ void timed(float *out, int iters)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	float x = (float)i;

	for (int k = 0; k < iters; k++)
		x = x * 0.999f + 1.0f;
	out[i] = x;
}
