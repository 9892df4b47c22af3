// SPDX-License-Identifier: MIT
// A grid-stride loop whose element count is not a multiple of the grid:
// the first threads get one more trip than the rest.

extern "C" __global__ void stride_work(float *x, int n, int rounds)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x) {
		float v = x[i];

		for (int r = 0; r < rounds; r++)
			v = v * 0.999f + 0.5f;
		x[i] = v;
	}
}
