// SPDX-License-Identifier: MIT
/*
 * printk: print from eBPF probes inside a GPU kernel. The probe's lines go
 * through the context's print ring and come out when the host polls
 * (egpu_print_poll); here a callback collects them, the default would be
 * stderr with the block and thread that printed.
 *
 *   printk [--check] [PROBE.bpf.o KERNELS.ptx]
 *
 * --check: exactly the expected lines, each once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

#define GRID 4
#define BLOCK 64
#define MAX_LINES 16

struct lines {
	char text[MAX_LINES][128];
	int n;
};

static void on_line(void *user, const char *line, const struct egpu_print_info *info)
{
	struct lines *l = user;

	printf("  [%s block %u thread %u] %s\n", info->obj ? info->obj : "?",
	       info->block[0], info->thread[0], line);
	if (l->n < MAX_LINES)
		snprintf(l->text[l->n++], sizeof(l->text[0]), "%s", line);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Lines of different blocks come in any order: compare them sorted. */
static int check(struct lines *l)
{
	static const char *const want[] = {
		"entry probe done",
		"grid 4x1x1, kernel 0, 12 parameter bytes",
		"hello from block 0 of 4",
		"hello from block 1 of 4",
		"hello from block 2 of 4",
		"hello from block 3 of 4",
	};
	int n = (int)(sizeof(want) / sizeof(want[0]));

	qsort(l->text, (size_t)l->n, sizeof(l->text[0]), cmp_str);
	for (int i = 0; i < n; i++) {
		if (i >= l->n || strcmp(l->text[i], want[i])) {
			fprintf(stderr, "CHECK FAILED: line %d is \"%s\", expected \"%s\"\n",
				i, i < l->n ? l->text[i] : "(missing)", want[i]);
			return 1;
		}
	}
	if (l->n != n) {
		fprintf(stderr, "CHECK FAILED: %d lines, expected %d\n", l->n, n);
		return 1;
	}
	printf("check passed\n");
	return 0;
}

static int run(struct app *app, bool check_lines)
{
	static struct lines lines;
	cudaKernel_t k = app_kernel(app_load_ptx(app->instrumented), "hello");
	int n = GRID * BLOCK, got;
	float *x;
	void *args[] = { &x, &n };

	EGPU_CHECK(!egpu_print_set_callback(app->ctx, on_line, &lines));
	CUDA_CHECK(cudaMalloc((void **)&x, n * sizeof(float)));
	CUDA_CHECK(cudaLaunchKernel((const void *)k, (dim3){ GRID, 1, 1 },
				    (dim3){ BLOCK, 1, 1 }, args, 0, 0));
	CUDA_CHECK(cudaDeviceSynchronize());
	printf("\nlines printed by the probe:\n");
	while ((got = egpu_print_poll(app->ctx, 100)) > 0)
		;
	EGPU_CHECK(got == 0);
	cudaFree(x);
	if (egpu_print_drops(app->ctx))
		printf("%llu lines dropped\n", (unsigned long long)egpu_print_drops(app->ctx));
	return check_lines ? check(&lines) : 0;
}

int main(int argc, char **argv)
{
	return app_main(argc, argv, EXAMPLE_PROBE, EXAMPLE_PTX, run);
}
