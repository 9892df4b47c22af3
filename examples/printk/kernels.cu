// SPDX-License-Identifier: MIT
// The kernel printk instruments.

extern "C" __global__ void hello(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = 2.0f * x[i] + 1.0f;
}
