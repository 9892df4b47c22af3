// Parameter layouts: many scalars, structs by value, __grid_constant__,
// arrays inside structs, no parameters, dynamic shared memory.
#include <cstdint>

struct Small {
	char c;
	short s;
	int i;
};

struct Big {
	double d[3];
	int8_t tag;
	float4 v;
};

__global__ void many_params(int8_t a, int16_t b, int32_t c, int64_t d, float e,
			    double f, const void *g, char h, unsigned short i,
			    unsigned j, unsigned long long k, float *out, int l,
			    double m, char n, float o, int64_t p, int q)
{
	out[threadIdx.x] = a + b + c + d + e + f + (g != nullptr) + h + i + j +
			   k + l + m + n + o + p + q;
}

__global__ void by_value(Small s, Big b, float *out)
{
	out[threadIdx.x] = s.c + s.s + s.i + b.d[threadIdx.x % 3] + b.tag + b.v.w;
}

__global__ void grid_const(const __grid_constant__ Big b, const Big *pb, float *out)
{
	const Big *p = threadIdx.x & 1 ? &b : pb;

	out[threadIdx.x] = p->d[0] + p->v.x;
}

__device__ int no_params_seen;

__global__ void no_params()
{
	__shared__ int x;

	if (threadIdx.x == 0)
		x = blockIdx.x;
	__syncthreads();
	if (threadIdx.x == 1)
		no_params_seen = x;
}

__global__ void dyn_shared(float *out, int n)
{
	extern __shared__ float buf[];

	if (threadIdx.x < n)
		buf[threadIdx.x] = threadIdx.x;
	__syncthreads();
	out[threadIdx.x] = buf[(threadIdx.x + 1) % n];
}
