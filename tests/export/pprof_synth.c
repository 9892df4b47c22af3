/* SPDX-License-Identifier: MIT */
/*
 * pprof_synth OUT.pb.gz [twice]: the trace writers' synthetic trace (two
 * devices, plain and graph launches, copies, odd names;
 * tests/trace/synth.c) as a pprof profile, for go tool pprof to read
 * (check_pprof.py); "twice": every operation ran twice in a row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egpu.h"
#include "export/pprof.h"
#include "synth.h"

/* @td with each operation repeated once, right after itself. */
static struct trace_data doubled(const struct trace_data *td)
{
	struct trace_data d = *td;
	struct trace_op *ops = calloc(2 * td->op_cnt, sizeof(*ops));

	for (size_t i = 0; ops && i < 2 * td->op_cnt; i++)
		ops[i] = td->ops[i / 2];
	d.ops = ops;
	d.op_cnt = ops ? 2 * td->op_cnt : 0;
	return d;
}

int main(int argc, char **argv)
{
	struct trace_data td;
	int err;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "twice"))) {
		fprintf(stderr, "usage: pprof_synth OUT.pb.gz [twice]\n");
		return 2;
	}
	td = argc == 3 ? doubled(synth_trace(2)) : *synth_trace(2);
	err = pprof_write(&td, false, argv[1]);
	if (argc == 3)
		free(td.ops);
	if (err) {
		fprintf(stderr, "pprof_synth: %s\n", egpu_errmsg());
		return 1;
	}
	return 0;
}
