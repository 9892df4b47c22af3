// SPDX-License-Identifier: MIT
// A small kernel whose launches launchlate times: a few microseconds of
// arithmetic per thread, so back-to-back launches queue behind each other.

extern "C" __global__ void tick(float *x, int work)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v = x[i];

	for (int r = 0; r < work; r++)
		v = v * 0.999f + 0.5f;
	x[i] = v;
}
