/* SPDX-License-Identifier: MIT */
/*
 * Moving what the check reported on the GPU (memcheck_layout.h) into a
 * report: the log of each site's first bad access, read from host memory
 * without a CUDA call, and each reported site's count, read from the GPU.
 */
#ifndef EGPU_MEMCHECK_COLLECT_H
#define EGPU_MEMCHECK_COLLECT_H

#include <stdint.h>

#include "memcheck/memcheck_dev.h"
#include "memcheck/memcheck_report.h"

/* The log's records from *@drained on, as far as they are written, into
 * @r; *@drained moves past them. 0, or the first mc_report_add() error
 * (the rest still taken). */
int mc_collect_log(const struct mc_dev *d, struct mc_report *r,
		   uint32_t *drained);
/* Each of @r's sites' count from the GPU; *@lost: sites whose first
 * access the full log dropped. 0 or a CUDA error (counts read so far
 * kept). */
int mc_collect_counts(struct mc_dev *d, struct mc_report *r, uint32_t *lost);

#endif
