/* SPDX-License-Identifier: MIT */
/*
 * The allocation table's GPU side: the state array, the cell holding the
 * current index's address (what the check reads), the published indexes,
 * the check's counts, log and hints, and the mc_backend that writes them
 * through the driver (docs/memcheck.md). Used by the attach agent and by
 * egpu_memcheck_new(); the agent's guard sets its busy flag around every
 * driver call, so the table's own allocations pass its hooks untracked.
 */
#ifndef EGPU_MEMCHECK_DEV_H
#define EGPU_MEMCHECK_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "memcheck/memcheck_table.h"

#define MC_MAX_SITES (1u << 20) /* sites counted apart (memcheck_layout.h) */
#define MC_LOG_CAP 16384u       /* first bad accesses kept */

struct mc_dev;
struct mc_log_rec;

/* Around each of the backend's driver calls (NULL: nothing): enter()'s
 * result is what leave() is given. */
struct mc_guard {
	bool (*enter)(void);
	void (*leave)(bool was);
};

/* In the current context; 0 or an EGPU_* error (message set). @guard
 * (NULL: none) is copied. */
int mc_dev_new(uint32_t max_slots, const struct mc_guard *guard,
	       struct mc_dev **out);
/* Everything it allocated goes, the log included; the caller waited for
 * every kernel that may still read or write them. */
void mc_dev_free(struct mc_dev *d);
/* Whether @stream (a CUstream) is being captured into a graph. */
bool mc_dev_capturing(const struct mc_dev *d, void *stream);
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
