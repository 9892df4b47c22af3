/* SPDX-License-Identifier: MIT */
/* gpuflame's model: shapes, weights, and the forward pass on GPU and CPU. */
#ifndef GPUFLAME_MODEL_H
#define GPUFLAME_MODEL_H

#include <stddef.h>
#include <stdint.h>

struct config {
	int vocab, dim, heads, ffn, layers, seq;
};

/* Host copies of every weight, generated from a seed. */
struct weights {
	float *embed;       /* [vocab, dim] */
	float **norm1;      /* per layer [dim] */
	float **wqkv;       /* per layer [dim, 3 dim] */
	float **wo;         /* per layer [dim, dim] */
	float **norm2;      /* per layer [dim] */
	float **wup;        /* per layer [dim, ffn] */
	float **wdown;      /* per layer [ffn, dim] */
	float *norm_final;  /* [dim] */
	float *lm_head;     /* [dim, vocab] */
	int *tokens;        /* [seq] */
};

void weights_init(struct weights *w, const struct config *c, uint64_t seed);
void weights_free(struct weights *w, const struct config *c);

/* Logits [seq, vocab] computed on the CPU (reference.c). */
void reference_forward(const struct config *c, const struct weights *w,
		       float *logits);

/* The same model on the GPU (model.c), kernels from PTX text. */
struct gpu_model;
struct gpu_model *gpu_model_new(const struct config *c, const struct weights *w,
				const char *ptx);
void gpu_model_free(struct gpu_model *m);
/* One forward pass, launched kernel by kernel; returns at once. */
void gpu_forward(struct gpu_model *m);
/* The forward pass captured once as a CUDA graph, launched @n times. */
void gpu_forward_graph(struct gpu_model *m, int n);
/* Wait for the work and copy out the logits [seq, vocab]. */
void gpu_logits(struct gpu_model *m, float *logits);
/* Kernel launches in one forward pass. */
int gpu_launches_per_forward(const struct config *c);

#define RMS_EPS 1e-5f

/* calloc that exits with a message when memory runs out. */
void *xmalloc(size_t n);

#endif
