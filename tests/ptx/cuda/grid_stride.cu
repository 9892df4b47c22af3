// Grid-stride loops in several naming flavours: C++ namespace, extern "C",
// anonymous namespace, plain C++.
namespace ns {
__global__ void vectorAdd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}
} // namespace ns

extern "C" __global__ void saxpy(int n, float a, const float *x, float *y)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += blockDim.x * gridDim.x)
		y[i] = a * x[i] + y[i];
}

namespace {
__global__ void fill(double *p, double v, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)blockDim.x * gridDim.x)
		p[i] = v;
}
} // namespace

__global__ void vectorAdd(const int *a, const int *b, int *c, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += blockDim.x * gridDim.x)
		c[i] = a[i] + b[i];
}

void launch_fill(double *p, size_t n)
{
	fill<<<1, 1>>>(p, 1.0, n);
}
