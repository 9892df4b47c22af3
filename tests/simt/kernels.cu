// SPDX-License-Identifier: MIT
// One straight-line kernel: every lane of a warp reaches the exit together.

extern "C" __global__ void simt_kernel(int *out)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	out[i] = 2 * i + 1;
}
