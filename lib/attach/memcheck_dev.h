/* SPDX-License-Identifier: MIT */
/*
 * The allocation table's GPU side in the attach agent: the state array,
 * the cell holding the current index's address (what the probe reads),
 * the published indexes, and the mc_backend that writes them through the
 * driver (docs/memcheck.md). Its calls set the agent's busy flag, so the
 * agent's own allocations pass its hooks untracked.
 */
#ifndef EGPU_MEMCHECK_DEV_H
#define EGPU_MEMCHECK_DEV_H

#include <stdint.h>

#include "attach/memcheck_table.h"

#define MC_MAX_SITES (1u << 20) /* sites counted apart (memcheck_layout.h) */
#define MC_LOG_CAP 16384u       /* first bad accesses kept */

struct mc_dev;
struct mc_log_rec;

/* In the current context; 0 or an EGPU_* error (message set). */
int mc_dev_new(uint32_t max_slots, struct mc_dev **out);
/* The backend for mc_table_new(). */
struct mc_backend mc_dev_backend(struct mc_dev *d);
/* Device addresses the probe needs: the index cell and the states. */
uint64_t mc_dev_cell(const struct mc_dev *d);
uint64_t mc_dev_states(const struct mc_dev *d);
/* The check's buffers: the counts, the log and the lookup hints (device
 * addresses), and the log as the host reads it, MC_LOG_CAP records. */
uint64_t mc_dev_counts(const struct mc_dev *d);
uint64_t mc_dev_log(const struct mc_dev *d);
uint64_t mc_dev_hints(const struct mc_dev *d);
const struct mc_log_rec *mc_dev_log_host(const struct mc_dev *d);
/* Bad accesses counted at @site; records the log was asked for (past
 * MC_LOG_CAP: dropped). 0 or a CUDA error. */
int mc_dev_site_count(struct mc_dev *d, uint32_t site, uint32_t *count);
int mc_dev_taken(struct mc_dev *d, uint32_t *next);
/* Every kernel launched so far has finished: old indexes are freed. */
void mc_dev_reclaim(struct mc_dev *d);

#endif
