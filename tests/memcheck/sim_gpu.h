/* SPDX-License-Identifier: MIT */
/*
 * A GPU played by host memory for the allocation table's tests: the state
 * array, the published index, and streams as queues of state writes and
 * host functions that run when the test (or a "driver" thread) says the
 * stream got there. A check runs mc_check() as a kernel would, on what
 * the GPU holds at that moment.
 */
#ifndef EGPU_SIM_GPU_H
#define EGPU_SIM_GPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "memcheck/memcheck_table.h"

struct sim_op {
	void (*fn)(void *); /* a host function, or NULL: a state write */
	void *arg;
	uint32_t slot, v;
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
	unsigned publishes, quiesces;
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

#endif
