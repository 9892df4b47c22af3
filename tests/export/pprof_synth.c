/* SPDX-License-Identifier: MIT */
/*
 * pprof_synth OUT.pb.gz: the trace writers' synthetic trace (two devices,
 * plain and graph launches, copies, odd names; tests/trace/synth.c) as a
 * pprof profile, for go tool pprof to read (check_pprof.py).
 */
#include <stdio.h>

#include "egpu.h"
#include "export/pprof.h"
#include "synth.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: pprof_synth OUT.pb.gz\n");
		return 2;
	}
	if (pprof_write(synth_trace(2), false, argv[1])) {
		fprintf(stderr, "pprof_synth: %s\n", egpu_errmsg());
		return 1;
	}
	return 0;
}
