/* SPDX-License-Identifier: MIT */
/*
 * The launches run through fleet.bpf.c, and so the metrics expected:
 *
 *   kernel id  name            launches  ns each (log2 bucket)
 *   0          vec_add         5         100  (6: le 127)
 *   1          matmul<float>   3         3000 (11: le 4095)
 *   2          odd"k\          2         1    (0: le 1)
 *   3          tiny            1         20   (4: le 31)
 *   4          (unnamed)       1         5    (2: le 7)
 *
 * 12 launches of 256 threads each: egpu_threads_total 3072. With top 3,
 * egpu_launches_total has vec_add 5, matmul<float> 3, odd"k\ 2 and
 * other 2 (tiny and kernel_4).
 */
#include <stdio.h>
#include <string.h>

#include "fleet_fixture.h"

static const struct {
	unsigned kernel, launches, ns;
} plan[] = {
	{ 0, 5, 100 }, { 1, 3, 3000 }, { 2, 2, 1 }, { 3, 1, 20 }, { 4, 1, 5 },
};

static const char *const names[] = { "vec_add", "matmul<float>",
				     "odd\"k\\", "tiny" };

static int run_plan(egpu_prog *prog)
{
	for (size_t i = 0; i < sizeof(plan) / sizeof(plan[0]); i++) {
		for (unsigned n = 0; n < plan[i].launches; n++) {
			unsigned in[3] = { plan[i].kernel, plan[i].ns, 256 };
			EGPU_OPTS(egpu_run_opts, ro, .ctx = in,
				  .ctx_len = sizeof(in));

			if (egpu_prog_run(prog, &ro))
				return -1;
		}
	}
	return 0;
}

int fleet_open(struct fleet *f, const char *path)
{
	egpu_prog *prog;

	memset(f, 0, sizeof(*f));
	f->ctx = egpu_ctx_new(NULL);
	f->obj = f->ctx ? egpu_load(f->ctx, path, NULL) : NULL;
	prog = f->obj ? egpu_obj_prog(f->obj, "launch") : NULL;
	if (!prog || run_plan(prog)) {
		fprintf(stderr, "fleet fixture: %s\n", egpu_errmsg());
		fleet_close(f);
		return -1;
	}
	for (unsigned i = 0; i < 4; i++)
		f->kernels[i] = (struct egpu_kernel_report){
			.name = names[i], .demangled = names[i],
			.kernel_id = i };
	f->report = (struct egpu_report){ .sz = sizeof(f->report),
					  .kernel_cnt = 4,
					  .kernels = f->kernels };
	return 0;
}

void fleet_close(struct fleet *f)
{
	egpu_ctx_free(f->ctx);
	memset(f, 0, sizeof(*f));
}
