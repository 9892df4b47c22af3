// SPDX-License-Identifier: MIT
// mem_trace's kernel: a vector add, whose warps read and write 32
// consecutive floats (coalesced), next to a gather with a stride of
// `stride` floats, whose warps touch a 32-byte sector per lane.

extern "C" __global__ void add_and_gather(const float *a, const float *b,
					  float *c, const float *src, float *dst,
					  int n, int stride)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		c[i] = a[i] + b[i];
		dst[i] = src[(long long)i * stride % n];
	}
}
