// SPDX-License-Identifier: MIT
// A kernel whose memory accesses are known, for the memory-probe GPU test:
// two global loads, a shared store and load, a global store per thread,
// and one predicated global store (thread 0) written as such in PTX.

#define BLOCK 256

extern "C" __global__ void vadd_mem(const float *a, const float *b,
				    float *out, unsigned *flag)
{
	__shared__ float tile[BLOCK];
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	tile[threadIdx.x] = a[i] + b[i];
	__syncthreads();
	out[i] = tile[(threadIdx.x + 1) % BLOCK];
	asm volatile("{\n\t.reg .pred p;\n\tsetp.eq.u32 p, %0, 0;\n"
		     "\t@p st.global.u32 [%1], %2;\n\t}"
		     :: "r"(i), "l"(flag), "r"(1u) : "memory");
}
