// SPDX-License-Identifier: MIT
// The application's kernel: y[i] = log of x[i] after a few damping steps,
// a NaN wherever x[i] is negative.
extern "C" __global__ void step(const float *x, float *y, int n, int iters)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v;

	if (i >= n)
		return;
	v = x[i];
	for (int k = 0; k < iters; k++)
		v = v * 0.999f + 0.001f * (v > 0.0f ? 1.0f : -1.0f);
	y[i] = logf(v);
}
