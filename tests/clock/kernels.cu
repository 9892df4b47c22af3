// SPDX-License-Identifier: MIT
// Kernels of the clock tests: one that writes the GPU timer when it runs,
// one that keeps the GPU busy for a while.

__device__ __forceinline__ unsigned long long globaltimer(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : : "memory");
	return t;
}

extern "C" __global__ void stamp(unsigned long long *out)
{
	*out = globaltimer();
}

extern "C" __global__ void spin(unsigned long long ns)
{
	unsigned long long start = globaltimer();

	while (globaltimer() - start < ns)
		;
}
