// SPDX-License-Identifier: MIT
// The kernel the event GPU tests instrument: a little work per thread.
extern "C" __global__ void work(float *x, int n, int rounds)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	float v = x[i];
	for (int r = 0; r < rounds; r++)
		v = v * 0.999f + 0.5f;
	x[i] = v;
}
