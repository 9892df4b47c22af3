/* SPDX-License-Identifier: MIT */
/*
 * A GPU played by host memory for the allocation table's tests: the state
 * array, the published index, and streams as queues of state writes and
 * host functions that run when the test (or a "driver" thread) says the
 * stream got there. A check runs mc_check() as a kernel would, on what
 * the GPU holds at that moment; a site's check, with its hint, as the
 * instrumented site and the device runtime's search do.
 */
#ifndef EGPU_SIM_GPU_H
#define EGPU_SIM_GPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/memcheck_layout.h"
#include "memcheck/memcheck_table.h"

struct sim_op {
	void (*fn)(void *); /* a host function, or NULL: a write */
	void *arg;
	uint32_t slot, v;
	bool tag;           /* the write is the cell's tag = v */
};

struct sim_stream {
	struct sim_op *ops;
	size_t nops, cap;
};

struct sim_gpu {
	pthread_mutex_t lock;
	uint32_t *states;
	void *index;        /* the index a kernel would read now */
	size_t index_bytes;
	uint32_t tag;       /* the cell's tag word */
	unsigned publishes, quiesces, tags, wraps;
	struct sim_stream *streams; /* those quiesce drains */
	size_t nstreams;
	struct mc_backend be;
};

void sim_init(struct sim_gpu *g, uint32_t max_slots, struct sim_stream *s,
	      size_t nstreams);
void sim_fini(struct sim_gpu *g);
/* The stream reaches everything queued on it so far. */
void sim_run(struct sim_gpu *g, struct sim_stream *s);
/* mc_check() on the GPU's current index and states. */
int sim_check(struct sim_gpu *g, uint64_t addr, uint32_t size);
/* A site's check with its @hint (zeroed at first): the hint's test, else
 * the search, which refreshes the hint. */
int sim_site_check(struct sim_gpu *g, struct mc_hint *hint, uint64_t addr,
		   uint32_t size);

#endif
