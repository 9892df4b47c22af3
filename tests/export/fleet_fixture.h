/* SPDX-License-Identifier: MIT */
/*
 * fleet.bpf.c loaded and run on the CPU with known launches, for the
 * metrics tests (C, Prometheus server, Python): see fleet_fixture.c for
 * the values every check expects.
 */
#ifndef EGPU_TEST_FLEET_FIXTURE_H
#define EGPU_TEST_FLEET_FIXTURE_H

#include "egpu.h"

/* How the fixture's maps are exported, and its constant label. */
#define FLEET_SPEC "launches=counter/kernel,kernel_lat_hist=histogram/kernel"
#define FLEET_LABELS "team=ml"
#define FLEET_TOP 3

struct fleet {
	egpu_ctx *ctx;
	egpu_obj *obj;
	struct egpu_kernel_report kernels[4];
	struct egpu_report report; /* names kernel ids 0-3; id 4 unnamed */
};

/* Load @path and run its launches; 0, or -1 with a message on stderr. */
int fleet_open(struct fleet *f, const char *path);
void fleet_close(struct fleet *f);

#endif
