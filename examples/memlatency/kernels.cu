// SPDX-License-Identifier: MIT
// memlatency's kernels: a vector add, bound by bandwidth (many loads in
// flight hide their latency), and a pointer chase, bound by latency (each
// load waits for the one before).

extern "C" __global__ void vecadd(const float *a, const float *b, float *c,
				  int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

// Each thread follows `hops` links of the permutation `next` from its own
// index and writes where it ended.
extern "C" __global__ void chase(const int *next, int *end, int hops)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int j = i;

	for (int h = 0; h < hops; h++)
		j = next[j];
	end[i] = j;
}
