// SPDX-License-Identifier: MIT
// ringbuf_bench and lookup_bench: touch does almost nothing, so probes
// dominate.
extern "C" __global__ void touch(float *x)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	x[i] += 1.0f;
}

// lookup_bench: keeps the legacy default stream busy for about @ns
// nanoseconds (globaltimer), to show host lookups do not wait for it.
extern "C" __global__ void spin(unsigned long long ns)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
}
