// Several returns, predicated returns, exits from inline asm, device
// functions inlined and not.
__device__ __forceinline__ int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

__device__ __noinline__ int find_first(const int *p, int n, int key)
{
	for (int i = 0; i < n; i++)
		if (p[i] == key)
			return i;
	return -1;
}

__global__ void early_returns(const int *in, int *out, int n, int key)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	if (in[i] < 0) {
		out[i] = -1;
		return;
	}
	if (in[i] == key) {
		out[i] = find_first(in, n, key);
		return;
	}
	out[i] = clampi(in[i], 0, 100);
}

__global__ void search_loop(const int *in, int *out, int n, int key)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	for (int j = 0; j < n; j++) {
		if (in[(i + j) % n] == key) {
			out[i] = j;
			return;
		}
		if (in[(i + j) % n] < 0)
			return;
	}
	out[i] = -1;
}

__global__ void asm_exit(int *out, int stop)
{
	if (threadIdx.x == (unsigned)stop)
		asm volatile("exit;");
	out[threadIdx.x] = stop;
	if (out[0] == 42)
		asm volatile("{\n\t.reg .pred q;\n\tsetp.eq.u32 q, %0, 7;\n\t@q exit;\n\t}" :: "r"(threadIdx.x));
	out[threadIdx.x] += 1;
}

// Guarded returns survive only from inline assembly: nvcc merges its own.
__global__ void asm_guarded_ret(int *out, unsigned limit)
{
	asm volatile("{\n\t.reg .pred p;\n\tsetp.gt.u32 p, %0, %1;\n\t@!p ret;\n\t}"
		     :: "r"(threadIdx.x), "r"(limit));
	out[threadIdx.x] = 1;
	asm volatile("{\n\t.reg .pred p;\n\tsetp.eq.u32 p, %0, 0;\n\t@p ret;\n\t}"
		     :: "r"(threadIdx.x & 1));
	out[threadIdx.x] = 2;
}

__global__ void trap_on_bad(const float *in, float *out)
{
	float v = in[threadIdx.x];

	if (v != v)
		__trap();
	out[threadIdx.x] = v * 2.0f;
}

__global__ void empty_kernel()
{
}
