// Warp-level primitives: shuffles, votes, match, cooperative-groups tiles.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void warp_reduce(const float *in, float *out)
{
	float v = in[blockIdx.x * blockDim.x + threadIdx.x];

	for (int off = 16; off > 0; off >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, off);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(out, v);
}

__global__ void votes(const int *in, unsigned *out)
{
	int v = in[threadIdx.x];
	unsigned ballot = __ballot_sync(0xffffffffu, v > 0);

	if (__all_sync(0xffffffffu, v != 0))
		out[0] = ballot;
	if (__any_sync(ballot, v < 0))
		out[1] = __match_any_sync(0xffffffffu, v);
}

__global__ void tile_sum(const int *in, int *out)
{
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
	int v = in[block.thread_rank()];

	v = cg::reduce(tile, v, cg::plus<int>());
	tile.sync();
	if (tile.thread_rank() == 0)
		atomicAdd(out, v);
	block.sync();
}
