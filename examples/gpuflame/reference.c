/* SPDX-License-Identifier: MIT */
/*
 * The forward pass on the CPU, the same arithmetic as kernels.cu, for
 * --check. Also the synthetic weights, which both sides start from.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p) {
		fprintf(stderr, "gpuflame: out of memory (%zu bytes)\n", n);
		exit(1);
	}
	return p;
}

/* splitmix64: the same numbers on every machine. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* @n values uniform in [-scale, scale). */
static float *random_floats(uint64_t *s, size_t n, float scale)
{
	float *v = xmalloc(n * sizeof(*v));

	for (size_t i = 0; i < n; i++)
		v[i] = scale * (float)((double)(next(s) >> 11) / 4503599627370496.0 - 1.0);
	return v;
}

static float *ones_plus_noise(uint64_t *s, size_t n)
{
	float *v = random_floats(s, n, 0.1f);

	for (size_t i = 0; i < n; i++)
		v[i] += 1.0f;
	return v;
}

static float **per_layer(int layers)
{
	return xmalloc((size_t)layers * sizeof(float *));
}

void weights_init(struct weights *w, const struct config *c, uint64_t seed)
{
	size_t d = (size_t)c->dim, f = (size_t)c->ffn;

	memset(w, 0, sizeof(*w));
	w->embed = random_floats(&seed, (size_t)c->vocab * d, 1.0f);
	w->norm1 = per_layer(c->layers);
	w->wqkv = per_layer(c->layers);
	w->wo = per_layer(c->layers);
	w->norm2 = per_layer(c->layers);
	w->wup = per_layer(c->layers);
	w->wdown = per_layer(c->layers);
	for (int l = 0; l < c->layers; l++) {
		w->norm1[l] = ones_plus_noise(&seed, d);
		w->wqkv[l] = random_floats(&seed, d * 3 * d, 1.0f / sqrtf((float)d));
		w->wo[l] = random_floats(&seed, d * d, 1.0f / sqrtf((float)d));
		w->norm2[l] = ones_plus_noise(&seed, d);
		w->wup[l] = random_floats(&seed, d * f, 1.0f / sqrtf((float)d));
		w->wdown[l] = random_floats(&seed, f * d, 1.0f / sqrtf((float)f));
	}
	w->norm_final = ones_plus_noise(&seed, d);
	w->lm_head = random_floats(&seed, d * (size_t)c->vocab, 1.0f / sqrtf((float)d));
	w->tokens = xmalloc((size_t)c->seq * sizeof(int));
	for (int t = 0; t < c->seq; t++)
		w->tokens[t] = (int)(next(&seed) % (uint64_t)c->vocab);
}

void weights_free(struct weights *w, const struct config *c)
{
	float **layered[] = { w->norm1, w->wqkv, w->wo, w->norm2, w->wup, w->wdown };

	for (size_t i = 0; i < sizeof(layered) / sizeof(layered[0]); i++) {
		for (int l = 0; l < c->layers; l++)
			free(layered[i][l]);
		free(layered[i]);
	}
	free(w->embed);
	free(w->norm_final);
	free(w->lm_head);
	free(w->tokens);
}

static void rmsnorm(const float *x, const float *w, float *y, int rows, int dim)
{
	for (int r = 0; r < rows; r++) {
		const float *in = x + (size_t)r * dim;
		double ss = 0;

		for (int i = 0; i < dim; i++)
			ss += (double)in[i] * in[i];
		float inv = 1.0f / sqrtf((float)(ss / dim) + RMS_EPS);
		for (int i = 0; i < dim; i++)
			y[(size_t)r * dim + i] = in[i] * inv * w[i];
	}
}

/* C = A B (+ R), as matmul_kernel. */
static void matmul(const float *A, const float *B, const float *R, float *C,
		   int M, int N, int K)
{
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			double acc = 0;

			for (int k = 0; k < K; k++)
				acc += (double)A[(size_t)m * K + k] * B[(size_t)k * N + n];
			C[(size_t)m * N + n] = (float)acc + (R ? R[(size_t)m * N + n] : 0);
		}
}

static void attention(const float *qkv, float *out, int T, int heads, int hd)
{
	int dim = heads * hd;
	double *p = xmalloc((size_t)T * sizeof(*p));

	for (int t = 0; t < T; t++)
		for (int h = 0; h < heads; h++) {
			const float *q = qkv + (size_t)t * 3 * dim + h * hd;
			double m = -INFINITY, sum = 0;

			for (int j = 0; j <= t; j++) {
				const float *k = qkv + (size_t)j * 3 * dim + dim + h * hd;
				double s = 0;

				for (int d = 0; d < hd; d++)
					s += (double)q[d] * k[d];
				p[j] = s / sqrt((double)hd);
				m = fmax(m, p[j]);
			}
			for (int j = 0; j <= t; j++)
				sum += p[j] = exp(p[j] - m);
			for (int d = 0; d < hd; d++) {
				double acc = 0;

				for (int j = 0; j <= t; j++)
					acc += p[j] * qkv[(size_t)j * 3 * dim + 2 * dim + h * hd + d];
				out[(size_t)t * dim + h * hd + d] = (float)(acc / sum);
			}
		}
	free(p);
}

static void gelu(float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] = 0.5f * x[i] * (1.0f + tanhf(0.7978845608f * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}

void reference_forward(const struct config *c, const struct weights *w,
		       float *logits)
{
	size_t T = (size_t)c->seq, d = (size_t)c->dim;
	float *x = xmalloc(T * d * sizeof(float)), *h = xmalloc(T * d * sizeof(float));
	float *qkv = xmalloc(T * 3 * d * sizeof(float));
	float *u = xmalloc(T * (size_t)c->ffn * sizeof(float));

	for (size_t t = 0; t < T; t++)
		memcpy(x + t * d, w->embed + (size_t)w->tokens[t] * d, d * sizeof(float));
	for (int l = 0; l < c->layers; l++) {
		rmsnorm(x, w->norm1[l], h, c->seq, c->dim);
		matmul(h, w->wqkv[l], NULL, qkv, c->seq, 3 * c->dim, c->dim);
		attention(qkv, h, c->seq, c->heads, c->dim / c->heads);
		matmul(h, w->wo[l], x, x, c->seq, c->dim, c->dim);
		rmsnorm(x, w->norm2[l], h, c->seq, c->dim);
		matmul(h, w->wup[l], NULL, u, c->seq, c->ffn, c->dim);
		gelu(u, T * (size_t)c->ffn);
		matmul(u, w->wdown[l], x, x, c->seq, c->dim, c->ffn);
	}
	rmsnorm(x, w->norm_final, h, c->seq, c->dim);
	matmul(h, w->lm_head, NULL, logits, c->seq, c->vocab, c->dim);
	free(x);
	free(h);
	free(qkv);
	free(u);
}
