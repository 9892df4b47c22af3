// Launch bounds, register limits and cluster dimensions: .maxntid,
// .minnctapersm, .maxnreg, .reqnctapercluster, .explicitcluster.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void __launch_bounds__(256, 2) bounded(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = sqrtf(p[i]);
}

__global__ void __launch_bounds__(128) bounded_one(float *p)
{
	p[threadIdx.x] *= 2.0f;
}

__global__ void __maxnreg__(40) few_registers(double *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = exp(p[i]) + log1p(p[i]);
}

__global__ void __cluster_dims__(2, 1, 1) clustered(int *out)
{
	cg::cluster_group cluster = cg::this_cluster();

	cluster.sync();
	out[blockIdx.x * blockDim.x + threadIdx.x] = cluster.block_rank();
}
