// SPDX-License-Identifier: MIT
// Kernels the in-process checker instruments through the API
// (test_memcheck_api, test_memcheck_api_gpu): one correct, one writing
// one element past the end of its buffer, on the line marked BUG:past.
extern "C" __global__ void fill(float *a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		a[i] = 1.0f;
}

extern "C" __global__ void fill_past(float *a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i <= n)
		a[i] = 2.0f; // BUG:past store global
}
