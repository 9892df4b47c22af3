// SPDX-License-Identifier: MIT
/*
 * gpuflame's kernels: the pieces of a small decoder-only transformer, in
 * float32. Plain and readable over fast; model.c launches them and
 * reference.c does the same arithmetic on the CPU.
 */

/* x[t, :] = table[tokens[t], :] */
extern "C" __global__ void embedding_kernel(const int *tokens, const float *table,
					    float *x, int dim)
{
	int t = blockIdx.x;
	const float *row = table + (size_t)tokens[t] * dim;

	for (int i = threadIdx.x; i < dim; i += blockDim.x)
		x[(size_t)t * dim + i] = row[i];
}

struct add_op {
	__device__ float operator()(float a, float b) const { return a + b; }
};
struct max_op {
	__device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

/* @v of every thread combined with @op (blockDim.x a power of two, <=
 * 1024), the same in every thread. */
template <typename Op>
__device__ float block_reduce(float v, float *scratch, Op op)
{
	scratch[threadIdx.x] = v;
	__syncthreads();
	for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s)
			scratch[threadIdx.x] = op(scratch[threadIdx.x],
						  scratch[threadIdx.x + s]);
		__syncthreads();
	}
	v = scratch[0];
	__syncthreads();
	return v;
}

#define NORM_THREADS 256

/* y[r, :] = x[r, :] / rms(x[r, :]) * w, one block per row. */
extern "C" __global__ void rmsnorm_kernel(const float *x, const float *w, float *y,
					  int dim, float eps)
{
	__shared__ float scratch[NORM_THREADS];
	const float *in = x + (size_t)blockIdx.x * dim;
	float *out = y + (size_t)blockIdx.x * dim;
	float ss = 0;

	for (int i = threadIdx.x; i < dim; i += blockDim.x)
		ss += in[i] * in[i];
	ss = block_reduce(ss, scratch, add_op());
	float inv = rsqrtf(ss / dim + eps);
	for (int i = threadIdx.x; i < dim; i += blockDim.x)
		out[i] = in[i] * inv * w[i];
}

#define TILE 16

/*
 * C[m, n] = sum_k A[m, k] B[k, n] (+ R[m, n] when R is given: the
 * residual), row-major, tiled through shared memory. C may be R.
 */
extern "C" __global__ void matmul_kernel(const float *A, const float *B,
					 const float *R, float *C, int M, int N, int K)
{
	__shared__ float a[TILE][TILE], b[TILE][TILE + 1];
	int row = blockIdx.y * TILE + threadIdx.y;
	int col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0;

	for (int k0 = 0; k0 < K; k0 += TILE) {
		int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;

		a[threadIdx.y][threadIdx.x] = row < M && ka < K ? A[(size_t)row * K + ka] : 0;
		b[threadIdx.y][threadIdx.x] = kb < K && col < N ? B[(size_t)kb * N + col] : 0;
		__syncthreads();
		for (int k = 0; k < TILE; k++)
			acc += a[threadIdx.y][k] * b[k][threadIdx.x];
		__syncthreads();
	}
	if (row < M && col < N)
		C[(size_t)row * N + col] = acc + (R ? R[(size_t)row * N + col] : 0);
}

#define ATTN_THREADS 128

/*
 * Causal attention of query @t in head @h (block (t, h)): scores against
 * keys 0..t, softmax, weighted sum of values. qkv rows hold q, k, v of
 * all heads ([T, 3 * heads * hd]); out rows [T, heads * hd]. Dynamic
 * shared memory: T floats of scores.
 */
extern "C" __global__ void attention_kernel(const float *qkv, float *out, int T,
					    int heads, int hd, float scale)
{
	extern __shared__ float p[];
	__shared__ float scratch[ATTN_THREADS];
	int t = blockIdx.x, h = blockIdx.y, dim = heads * hd;
	const float *q = qkv + (size_t)t * 3 * dim + h * hd;
	float m = -INFINITY, sum = 0;

	for (int j = threadIdx.x; j <= t; j += blockDim.x) {
		const float *k = qkv + (size_t)j * 3 * dim + dim + h * hd;
		float s = 0;

		for (int d = 0; d < hd; d++)
			s += q[d] * k[d];
		p[j] = s * scale;
		m = fmaxf(m, p[j]);
	}
	m = block_reduce(m, scratch, max_op());
	for (int j = threadIdx.x; j <= t; j += blockDim.x) {
		p[j] = expf(p[j] - m);
		sum += p[j];
	}
	sum = block_reduce(sum, scratch, add_op());
	for (int d = threadIdx.x; d < hd; d += blockDim.x) {
		float acc = 0;

		for (int j = 0; j <= t; j++)
			acc += p[j] * qkv[(size_t)j * 3 * dim + 2 * dim + h * hd + d];
		out[(size_t)t * dim + h * hd + d] = acc / sum;
	}
}

/* x = gelu(x), tanh form. */
extern "C" __global__ void gelu_kernel(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		float v = x[i];

		x[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
	}
}
