/* SPDX-License-Identifier: MIT */
/*
 * The forward pass on the GPU. Each step is its own function, so the
 * host stack of every launch tells which step it was: the same
 * matmul_kernel is launched from qkv_proj, attn_out, mlp_up, mlp_down and
 * lm_head, and a trace separates their GPU time by those paths.
 */
#include <math.h>
#include <stdlib.h>

#include "app.h"
#include "model.h"

#define NORM_THREADS 256  /* as in kernels.cu */
#define ATTN_THREADS 128
#define TILE 16
#define GELU_THREADS 256

struct layer {
	float *norm1, *wqkv, *wo, *norm2, *wup, *wdown;
};

struct gpu_model {
	struct config c;
	cudaStream_t stream;
	cudaLibrary_t lib;
	cudaKernel_t embedding, rmsnorm, matmul, attention, gelu;
	cudaGraphExec_t graph;  /* made at the first gpu_forward_graph() */
	int *tokens;
	float *embed, *norm_final, *lm_head;
	struct layer *layers;
	float *x, *h, *qkv, *u, *logits;  /* activations */
};

static float *upload(const float *host, size_t n)
{
	float *dev;

	CUDA_CHECK(cudaMalloc((void **)&dev, n * sizeof(float)));
	CUDA_CHECK(cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice));
	return dev;
}

static float *scratch(size_t n)
{
	float *dev;

	CUDA_CHECK(cudaMalloc((void **)&dev, n * sizeof(float)));
	return dev;
}

static void upload_weights(struct gpu_model *m, const struct weights *w)
{
	size_t d = (size_t)m->c.dim, f = (size_t)m->c.ffn, v = (size_t)m->c.vocab;

	CUDA_CHECK(cudaMalloc((void **)&m->tokens, (size_t)m->c.seq * sizeof(int)));
	CUDA_CHECK(cudaMemcpy(m->tokens, w->tokens, (size_t)m->c.seq * sizeof(int),
			      cudaMemcpyHostToDevice));
	m->embed = upload(w->embed, v * d);
	m->layers = xmalloc((size_t)m->c.layers * sizeof(*m->layers));
	for (int l = 0; l < m->c.layers; l++) {
		m->layers[l] = (struct layer){
			.norm1 = upload(w->norm1[l], d),
			.wqkv = upload(w->wqkv[l], d * 3 * d),
			.wo = upload(w->wo[l], d * d),
			.norm2 = upload(w->norm2[l], d),
			.wup = upload(w->wup[l], d * f),
			.wdown = upload(w->wdown[l], f * d),
		};
	}
	m->norm_final = upload(w->norm_final, d);
	m->lm_head = upload(w->lm_head, d * v);
}

struct gpu_model *gpu_model_new(const struct config *c, const struct weights *w,
				const char *ptx)
{
	struct gpu_model *m = xmalloc(sizeof(*m));
	size_t t = (size_t)c->seq;

	m->c = *c;
	CUDA_CHECK(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
	m->lib = app_load_ptx(ptx);
	m->embedding = app_kernel(m->lib, "embedding_kernel");
	m->rmsnorm = app_kernel(m->lib, "rmsnorm_kernel");
	m->matmul = app_kernel(m->lib, "matmul_kernel");
	m->attention = app_kernel(m->lib, "attention_kernel");
	m->gelu = app_kernel(m->lib, "gelu_kernel");
	upload_weights(m, w);
	m->x = scratch(t * (size_t)c->dim);
	m->h = scratch(t * (size_t)c->dim);
	m->qkv = scratch(t * 3 * (size_t)c->dim);
	m->u = scratch(t * (size_t)c->ffn);
	m->logits = scratch(t * (size_t)c->vocab);
	return m;
}

void gpu_model_free(struct gpu_model *m)
{
	float *bufs[] = { m->embed, m->norm_final, m->lm_head, m->x, m->h,
			  m->qkv, m->u, m->logits };

	for (int l = 0; l < m->c.layers; l++) {
		struct layer *y = &m->layers[l];
		float *lb[] = { y->norm1, y->wqkv, y->wo, y->norm2, y->wup, y->wdown };

		for (size_t i = 0; i < sizeof(lb) / sizeof(lb[0]); i++)
			cudaFree(lb[i]);
	}
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		cudaFree(bufs[i]);
	cudaFree(m->tokens);
	if (m->graph)
		cudaGraphExecDestroy(m->graph);
	cudaLibraryUnload(m->lib);
	cudaStreamDestroy(m->stream);
	free(m->layers);
	free(m);
}

static void launch(struct gpu_model *m, cudaKernel_t k, dim3 grid, dim3 block,
		   size_t shared, void **args)
{
	CUDA_CHECK(cudaLaunchKernel((const void *)k, grid, block, args, shared,
				    m->stream));
}

static void embed(struct gpu_model *m)
{
	void *args[] = { &m->tokens, &m->embed, &m->x, &m->c.dim };

	launch(m, m->embedding, (dim3){ (unsigned)m->c.seq, 1, 1 },
	       (dim3){ 128, 1, 1 }, 0, args);
}

static void rmsnorm(struct gpu_model *m, float *x, float *w, float *y)
{
	float eps = RMS_EPS;
	void *args[] = { &x, &w, &y, &m->c.dim, &eps };

	launch(m, m->rmsnorm, (dim3){ (unsigned)m->c.seq, 1, 1 },
	       (dim3){ NORM_THREADS, 1, 1 }, 0, args);
}

/* C[seq, n] = A[seq, k] B[k, n] (+ R) */
static void matmul(struct gpu_model *m, float *A, float *B, float *R, float *C,
		   int n, int k)
{
	void *args[] = { &A, &B, &R, &C, &m->c.seq, &n, &k };
	dim3 grid = { (unsigned)(n + TILE - 1) / TILE,
		      (unsigned)(m->c.seq + TILE - 1) / TILE, 1 };

	launch(m, m->matmul, grid, (dim3){ TILE, TILE, 1 }, 0, args);
}

static void qkv_proj(struct gpu_model *m, const struct layer *y)
{
	matmul(m, m->h, y->wqkv, NULL, m->qkv, 3 * m->c.dim, m->c.dim);
}

static void attention(struct gpu_model *m)
{
	int hd = m->c.dim / m->c.heads;
	float scale = 1.0f / sqrtf((float)hd);
	void *args[] = { &m->qkv, &m->h, &m->c.seq, &m->c.heads, &hd, &scale };

	launch(m, m->attention, (dim3){ (unsigned)m->c.seq, (unsigned)m->c.heads, 1 },
	       (dim3){ ATTN_THREADS, 1, 1 }, (size_t)m->c.seq * sizeof(float), args);
}

/* x += attention output projected back */
static void attn_out(struct gpu_model *m, const struct layer *y)
{
	matmul(m, m->h, y->wo, m->x, m->x, m->c.dim, m->c.dim);
}

static void gelu(struct gpu_model *m)
{
	int n = m->c.seq * m->c.ffn;
	void *args[] = { &m->u, &n };

	launch(m, m->gelu, (dim3){ (unsigned)(n + GELU_THREADS - 1) / GELU_THREADS, 1, 1 },
	       (dim3){ GELU_THREADS, 1, 1 }, 0, args);
}

static void mlp_up(struct gpu_model *m, const struct layer *y)
{
	matmul(m, m->h, y->wup, NULL, m->u, m->c.ffn, m->c.dim);
	gelu(m);
}

/* x += the MLP's output */
static void mlp_down(struct gpu_model *m, const struct layer *y)
{
	matmul(m, m->u, y->wdown, m->x, m->x, m->c.dim, m->c.ffn);
}

static void layer(struct gpu_model *m, const struct layer *y)
{
	rmsnorm(m, m->x, y->norm1, m->h);
	qkv_proj(m, y);
	attention(m);
	attn_out(m, y);
	rmsnorm(m, m->x, y->norm2, m->h);
	mlp_up(m, y);
	mlp_down(m, y);
}

static void lm_head(struct gpu_model *m)
{
	matmul(m, m->h, m->lm_head, NULL, m->logits, m->c.vocab, m->c.dim);
}

void gpu_forward(struct gpu_model *m)
{
	embed(m);
	for (int l = 0; l < m->c.layers; l++)
		layer(m, &m->layers[l]);
	rmsnorm(m, m->x, m->norm_final, m->h);
	lm_head(m);
}

int gpu_launches_per_forward(const struct config *c)
{
	return 1 + 8 * c->layers + 2;
}

static void capture_graph(struct gpu_model *m)
{
	cudaGraph_t g;

	CUDA_CHECK(cudaStreamBeginCapture(m->stream, cudaStreamCaptureModeThreadLocal));
	gpu_forward(m);
	CUDA_CHECK(cudaStreamEndCapture(m->stream, &g));
	CUDA_CHECK(cudaGraphInstantiate(&m->graph, g, 0));
	CUDA_CHECK(cudaGraphDestroy(g));
}

void gpu_forward_graph(struct gpu_model *m, int n)
{
	if (!m->graph)
		capture_graph(m);
	for (int i = 0; i < n; i++)
		CUDA_CHECK(cudaGraphLaunch(m->graph, m->stream));
}

void gpu_logits(struct gpu_model *m, float *logits)
{
	CUDA_CHECK(cudaStreamSynchronize(m->stream));
	CUDA_CHECK(cudaMemcpy(logits, m->logits,
			      (size_t)m->c.seq * m->c.vocab * sizeof(float),
			      cudaMemcpyDeviceToHost));
}
