/* SPDX-License-Identifier: MIT */
/*
 * Folded stacks weighted by GPU time, one line per distinct path:
 *
 *   main;forward;cudaLaunchKernel;[GPU_Kernel]matmul_kernel 3100
 *   [unknown launch];[GPU_Memcpy]HtoD 12
 *
 * The weight is microseconds. Lines are rounded so that they add up
 * exactly to the rounded total: each line gets round(T_after) -
 * round(T_before), T being the running sum of nanoseconds in line order.
 * Every line is then within 1 us of its own exact time, and one that ran
 * under half a microsecond may read 0.
 */
#include <stdlib.h>

#include "writers.h"

static uint64_t round_us(uint64_t ns)
{
	return ns / 1000 + (ns % 1000 >= 500);
}

int trace_write_folded(const struct trace_data *td, FILE *f)
{
	bool tag = trace_multi_device(td);
	struct path_group *g = NULL;
	struct strbuf sb;
	struct op_path p;
	uint64_t sum = 0;
	size_t n = 0;
	int err;

	err = path_groups(td, BY_PATH, tag, &g, &n);
	if (err)
		return err;
	sb_init(&sb);
	for (size_t i = 0; i < n; i++) {
		op_path(td, &td->ops[g[i].op], tag, &p);
		path_put(&sb, &p, path_depth(&p));
		sb_printf(&sb, " %llu\n", (unsigned long long)
			  (round_us(sum + g[i].ns) - round_us(sum)));
		sum += g[i].ns;
		out_flush(&sb, f);
	}
	free(g);
	return out_done(&sb, f, "folded stacks");
}
