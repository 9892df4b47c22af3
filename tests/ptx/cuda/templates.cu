// Templates, functors and namespaces: long mangled names, and kernels that
// share a base name across namespaces.
#include <cstdint>

namespace ops {
struct Add {
	template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct Max {
	template <typename T> __device__ T operator()(T a, T b) const { return a > b ? a : b; }
};
} // namespace ops

namespace outer {
namespace inner {
template <typename T, typename Op, int UNROLL>
__global__ void transform(const T *a, const T *b, T *c, int n, Op op)
{
	int base = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;

#pragma unroll
	for (int u = 0; u < UNROLL; u++)
		if (base + u < n)
			c[base + u] = op(a[base + u], b[base + u]);
}
} // namespace inner

template <typename T> __global__ void transform(T *p, int n)
{
	if (threadIdx.x < n)
		p[threadIdx.x] = -p[threadIdx.x];
}
} // namespace outer

template __global__ void outer::inner::transform<float, ops::Add, 4>(
	const float *, const float *, float *, int, ops::Add);
template __global__ void outer::inner::transform<int64_t, ops::Max, 2>(
	const int64_t *, const int64_t *, int64_t *, int, ops::Max);
template __global__ void outer::transform<short>(short *, int);

template <typename... Ts> __global__ void variadic(int *out, Ts... args)
{
	out[threadIdx.x] = (int)sizeof...(Ts) + (int(args) + ...);
}

template __global__ void variadic<int, char, long>(int *, int, char, long);
