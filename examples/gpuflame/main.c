/* SPDX-License-Identifier: MIT */
/*
 * gpuflame: a small transformer's forward pass (embedding, rmsnorm,
 * attention, a GELU MLP, a few layers, synthetic weights) run on the GPU
 * kernel by kernel and as a CUDA graph, traced with libegpu: which CPU
 * call path spent how much GPU time.
 *
 *   gpuflame [--check] [--trace PREFIX] [--iters N] [KERNELS.ptx]
 *
 * --trace writes PREFIX.folded, PREFIX.json (Chrome / Perfetto), and
 * PREFIX.svg (flame graph) and prints the top kernels. --check runs a
 * small model and compares its logits with the CPU (reference.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "model.h"

static const struct config full = {
	.vocab = 4096, .dim = 512, .heads = 8, .ffn = 2048, .layers = 6, .seq = 128,
};
/* Sizes that are no multiples of the tiles, so the edges are checked. */
static const struct config small = {
	.vocab = 97, .dim = 64, .heads = 4, .ffn = 150, .layers = 2, .seq = 24,
};

struct opts {
	bool check;
	const char *trace;  /* output prefix, or NULL */
	int iters;
	const char *ptx;
};

static int usage(void)
{
	fprintf(stderr, "usage: gpuflame [--check] [--trace PREFIX] [--iters N] "
		"[KERNELS.ptx]\n");
	return 2;
}

static int parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .iters = 10, .ptx = EXAMPLE_PTX };
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check"))
			o->check = true;
		else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
			o->trace = argv[++i];
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			o->iters = atoi(argv[++i]);
		else if (argv[i][0] != '-')
			o->ptx = argv[i];
		else
			return -1;
	}
	return o->iters > 0 ? 0 : -1;
}

static double checksum(const float *v, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

/* Largest difference from the CPU's logits, relative to their range. */
static double reference_error(const struct config *c, const struct weights *w,
			      const float *logits)
{
	size_t n = (size_t)c->seq * c->vocab;
	float *ref = xmalloc(n * sizeof(float));
	double diff = 0, range = 0;

	reference_forward(c, w, ref);
	for (size_t i = 0; i < n; i++) {
		diff = fmax(diff, fabs((double)logits[i] - ref[i]));
		range = fmax(range, fabs((double)ref[i]));
	}
	free(ref);
	return diff / range;
}

/* Kernel by kernel, as an application without graphs runs. */
static void generate(struct gpu_model *m, int iters)
{
	for (int i = 0; i < iters; i++)
		gpu_forward(m);
}

/* The same steps replayed from a CUDA graph: one launch call each. */
static void replay_graph(struct gpu_model *m, int iters)
{
	gpu_forward_graph(m, iters);
}

static egpu_trace *trace_begin(const struct opts *o)
{
	egpu_trace *t;

	if (!o->trace)
		return NULL;
	t = egpu_trace_start(NULL);
	EGPU_CHECK(t);
	return t;
}

static void trace_end(egpu_trace *t, const char *prefix)
{
	static const struct {
		enum egpu_trace_format format;
		const char *ext;
	} outs[] = {
		{ EGPU_TRACE_FOLDED, "folded" },
		{ EGPU_TRACE_CHROME, "json" },
		{ EGPU_TRACE_SVG, "svg" },
	};
	EGPU_OPTS(egpu_trace_stats, st);
	char path[4096];

	EGPU_CHECK(!egpu_trace_stop(t));
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		snprintf(path, sizeof(path), "%s.%s", prefix, outs[i].ext);
		EGPU_CHECK(!egpu_trace_write(t, outs[i].format, path));
		printf("wrote %s\n", path);
	}
	EGPU_CHECK(!egpu_trace_stats(t, &st));
	printf("trace: %llu launch calls, %llu kernels (%llu joined to their "
	       "launch), %llu copies, %llu records lost\n\n",
	       (unsigned long long)st.launches, (unsigned long long)st.kernels,
	       (unsigned long long)st.matched, (unsigned long long)st.copies,
	       (unsigned long long)st.lost);
	fflush(stdout);
	EGPU_CHECK(!egpu_trace_write(t, EGPU_TRACE_SUMMARY, "-"));
	egpu_trace_free(t);
}

static int run(const struct opts *o)
{
	const struct config *c = o->check ? &small : &full;
	size_t n = (size_t)c->seq * c->vocab;
	float *eager = xmalloc(n * sizeof(float)), *graph = xmalloc(n * sizeof(float));
	egpu_trace *t = trace_begin(o);
	struct gpu_model *m;
	struct weights w;
	char *ptx;
	int rc = 0;

	weights_init(&w, c, 42);
	ptx = app_read_file(o->ptx, NULL);
	m = gpu_model_new(c, &w, ptx);
	generate(m, o->iters);
	gpu_logits(m, eager);
	replay_graph(m, o->iters);
	gpu_logits(m, graph);
	printf("gpuflame: %d layers, dim %d, %d heads, seq %d, vocab %d: "
	       "%d forward passes of %d launches, then %d graph launches\n",
	       c->layers, c->dim, c->heads, c->seq, c->vocab, o->iters,
	       gpu_launches_per_forward(c), o->iters);
	printf("checksum %.6f\n", checksum(eager, n));
	if (memcmp(eager, graph, n * sizeof(float))) {
		fprintf(stderr, "the graph's logits differ from the eager run's\n");
		rc = 1;
	}
	if (o->check) {
		double err = reference_error(c, &w, eager);

		printf("largest difference from the CPU: %.2e of the logits' range\n", err);
		if (!(err < 1e-3)) {
			fprintf(stderr, "check failed\n");
			rc = 1;
		}
	}
	gpu_model_free(m);
	if (t)
		trace_end(t, o->trace);
	free(ptx);
	weights_free(&w, c);
	free(eager);
	free(graph);
	return rc;
}

int main(int argc, char **argv)
{
	const char *why;
	struct opts o;

	if (parse(argc, argv, &o))
		return usage();
	if (!app_gpu_present(&why)) {
		printf("gpuflame: no GPU here (%s)\n", why);
		return o.check || o.trace ? APP_SKIP : 0;
	}
	return run(&o);
}
