// SPDX-License-Identifier: MIT
/*
 * egpu memcheck's suite: small CUDA programs, each one case, chosen by
 * name (`memcheck_suite CASE`; no argument lists them with the tag of
 * their bug, "-" for a correct case). A buggy case makes one kind of bad
 * access, on the line marked "BUG:TAG KIND SPACE", which
 * scripts/memcheck_suite.sh and memcheck_suite_gpu.py expect a checker
 * to name (the GPU test also the access's kind and space, in the words of
 * egpu memcheck's report); a correct case must be reported clean.
 * Built with -lineinfo for sm_90, PTX embedded. The bugs are small (one
 * element, inside the allocator's padding or pool), so without a checker
 * they run to the end; the VMM one reads an unmapped page and faults.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda.h>
#include <cuda_runtime.h>

#define CK(call)                                                              \
	do {                                                                  \
		cudaError_t e_ = (call);                                      \
		if (e_ != cudaSuccess) {                                      \
			fprintf(stderr, "%s: %s\n", #call,                    \
				cudaGetErrorString(e_));                      \
			exit(2);                                              \
		}                                                             \
	} while (0)

enum { N = 1 << 20, T = 256 };

__global__ void copy(const float *in, float *out, int n, int shift)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = in[i + shift]; // BUG:copy load global (shift != 0)
}

__global__ void store_one(float *p, int at)
{
	if (blockIdx.x == 0 && threadIdx.x == 0)
		p[at] = 1.0f; // BUG:store store global (at out of range)
}

__device__ float table[64];

__global__ void read_table(float *out, int at)
{
	if (threadIdx.x == 0)
		out[0] = table[at]; // BUG:table load global (at == 64)
}

__global__ void shared_write(float *out, int at)
{
	extern __shared__ float s[];

	s[threadIdx.x] = threadIdx.x;
	__syncthreads();
	if (threadIdx.x == 0)
		s[at] = 0; // BUG:shared store shared (at == blockDim.x)
	__syncthreads();
	out[threadIdx.x] = s[threadIdx.x];
}

/* A tile loop (sgemm_tiled's shape): the shared addresses do not change
 * inside it, so the check tests them once per pass of the outer loop
 * (docs/memcheck.md); the second pass reads one past the end. */
__global__ void shared_tile(float *out, int at, int n)
{
	extern __shared__ float s[];
	float acc = 0;

	for (int r = 0; r < 2; r++) {
		int k = r ? at : threadIdx.x;

#pragma unroll 1
		for (int t = 0; t < n; t++) {
			s[threadIdx.x] = t;
			__syncthreads();
			acc += s[k]; // BUG:tile load shared (k == blockDim.x)
			__syncthreads();
		}
	}
	out[threadIdx.x] = acc;
}

__global__ void local_array(float *out, int at)
{
	volatile float a[8];

	for (int i = 0; i < 8; i++)
		a[i] = i * out[i];
	out[threadIdx.x] = a[at]; // BUG:local load local (at == 8)
}

/* Correct: loads past the end are formed, guarded and never made. */
__global__ void masked(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	const float *p = in + i;
	float v = 0;

	if (i < n)
		v = *p;
	if (i < n)
		out[i] = v;
}

__global__ void vec4(const float4 *in, float4 *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = in[i];
}

static float *dev(size_t n)
{
	float *p;

	CK(cudaMalloc(&p, n * sizeof(float)));
	CK(cudaMemset(p, 0, n * sizeof(float)));
	return p;
}

static int blocks(int n)
{
	return (n + T - 1) / T;
}

static void global_after(void)
{
	float *p = dev(N);

	store_one<<<1, 1>>>(p, N);
}

static void global_before(void)
{
	float *pad = dev(N), *in = dev(N), *out = dev(N);

	(void)pad;
	copy<<<blocks(N), T>>>(in, out, N, -1);
}

static void adjacent(void)
{
	float *a = dev(1024), *b = dev(1024);

	(void)b;
	copy<<<blocks(1024), T>>>(a, a, 1024, 1);
}

static void pool_after(void)
{
	float *p, *q;

	CK(cudaMallocAsync(&p, 1000 * sizeof(float), 0));
	CK(cudaMallocAsync(&q, 1000 * sizeof(float), 0));
	copy<<<blocks(1000), T>>>(p, q, 1000, 1);
}

static void pool_freed(void)
{
	float *p, *q;

	CK(cudaMallocAsync(&p, 1000 * sizeof(float), 0));
	CK(cudaMallocAsync(&q, 1000 * sizeof(float), 0));
	CK(cudaFreeAsync(p, 0));
	copy<<<blocks(1000), T>>>(p, q, 1000, 0);
}

/* The module is loaded (a launch) before the free: loaded lazily after
 * it, its variables could take the freed address, and the store would
 * then be a correct one into `table`. */
static void freed(void)
{
	float *keep = dev(N), *p = dev(N);

	store_one<<<1, 1>>>(keep, 0);
	CK(cudaDeviceSynchronize());
	CK(cudaFree(p));
	store_one<<<1, 1>>>(p, 0);
}

static void device_array(void)
{
	read_table<<<1, 32>>>(dev(1), 64);
}

static void shared(void)
{
	shared_write<<<1, T, T * sizeof(float)>>>(dev(T), T);
}

static void shared_loop(void)
{
	shared_tile<<<1, T, T * sizeof(float)>>>(dev(T), T, 4);
}

static void local(void)
{
	local_array<<<1, 32>>>(dev(32), 8);
}

static void graph(void)
{
	float *p = dev(N);
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t x;

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	store_one<<<1, 1, 0, s>>>(p, N);
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&x, g, 0));
	CK(cudaGraphLaunch(x, s));
	CK(cudaStreamSynchronize(s));
}

/* VMM: two granules reserved, one mapped; a read just past it. */
static CUdeviceptr vmm_map(size_t *gran, int maps)
{
	CUmemAllocationProp prop = {};
	CUmemAccessDesc acc = {};
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;

	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	cuMemGetAllocationGranularity(gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	if (cuMemAddressReserve(&va, 2 * *gran, 0, 0, 0))
		exit(2);
	for (int i = 0; i < maps; i++)
		if (cuMemCreate(&h, *gran, &prop, 0) ||
		    cuMemMap(va + i * *gran, *gran, 0, h, 0) ||
		    cuMemSetAccess(va + i * *gran, *gran, &acc, 1))
			exit(2);
	return va;
}

static void vmm(void)
{
	size_t g;
	CUdeviceptr va;

	CK(cudaFree(0));
	va = vmm_map(&g, 1);
	copy<<<1, 1>>>((float *)va, (float *)va, 1, (int)(g / sizeof(float)));
}

static void ok_masked(void)
{
	masked<<<blocks(1000) + 1, T>>>(dev(1000), dev(1000), 1000);
}

static void ok_vector(void)
{
	vec4<<<blocks(N / 4), T>>>((float4 *)dev(N), (float4 *)dev(N), N / 4);
}

static void ok_managed(void)
{
	float *p;

	CK(cudaMallocManaged(&p, N * sizeof(float)));
	copy<<<blocks(N), T>>>(p, p, N, 0);
}

static void ok_mapped_host(void)
{
	float *h, *d;

	CK(cudaHostAlloc(&h, N * sizeof(float), cudaHostAllocMapped));
	CK(cudaHostGetDevicePointer(&d, h, 0));
	copy<<<blocks(N), T>>>(d, dev(N), N, 0);
}

static void ok_pool(void)
{
	float *p, *q;

	CK(cudaMallocAsync(&p, 1000 * sizeof(float), 0));
	CK(cudaMallocAsync(&q, 1000 * sizeof(float), 0));
	copy<<<blocks(1000), T>>>(p, q, 1000, 0);
	CK(cudaFreeAsync(p, 0));
	CK(cudaMallocAsync(&p, 500 * sizeof(float), 0));
	copy<<<blocks(500), T>>>(p, q, 500, 0);
}

static void ok_view(void)
{
	float *p = dev(N);

	copy<<<blocks(N / 2), T>>>(p + N / 4, p, N / 2, 0);
}

static void ok_vmm(void)
{
	size_t g;
	CUdeviceptr va;

	CK(cudaFree(0));
	va = vmm_map(&g, 2); /* a read across the two maps */
	copy<<<1, 1>>>((float *)(va + g - 4), (float *)va, 2, 0);
}

static void ok_graph(void)
{
	float *p = dev(N), *q;
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t x;

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaMallocAsync(&q, N * sizeof(float), s));
	copy<<<blocks(N), T, 0, s>>>(p, q, N, 0);
	CK(cudaFreeAsync(q, s));
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&x, g, 0));
	for (int i = 0; i < 2; i++)
		CK(cudaGraphLaunch(x, s));
	CK(cudaStreamSynchronize(s));
}

static const struct {
	const char *name;
	const char *bug; /* the BUG: tag of its line, "-": a correct case */
	void (*run)(void);
} cases[] = {
	{ "global_after", "store", global_after },
	{ "global_before", "copy", global_before },
	{ "adjacent", "copy", adjacent },
	{ "pool_after", "copy", pool_after },
	{ "pool_freed", "copy", pool_freed },
	{ "freed", "store", freed },
	{ "device_array", "table", device_array },
	{ "shared", "shared", shared },
	{ "shared_loop", "tile", shared_loop },
	{ "local", "local", local },
	{ "graph", "store", graph },
	{ "vmm", "copy", vmm },
	{ "ok_masked", "-", ok_masked },
	{ "ok_vector", "-", ok_vector },
	{ "ok_managed", "-", ok_managed },
	{ "ok_mapped_host", "-", ok_mapped_host },
	{ "ok_pool", "-", ok_pool },
	{ "ok_view", "-", ok_view },
	{ "ok_vmm", "-", ok_vmm },
	{ "ok_graph", "-", ok_graph },
};

int main(int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc < 2) {
			printf("%s %s\n", cases[i].name, cases[i].bug);
			continue;
		}
		if (strcmp(argv[1], cases[i].name))
			continue;
		cases[i].run();
		CK(cudaDeviceSynchronize());
		return 0;
	}
	if (argc >= 2)
		fprintf(stderr, "no case %s\n", argv[1]);
	return argc >= 2 ? 2 : 0;
}
