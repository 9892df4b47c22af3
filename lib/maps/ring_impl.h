/* SPDX-License-Identifier: MIT */
/* struct event_ring, shared by ring.c, ring_consume.c and ring_cpu.c only. */
#ifndef EGPU_MAPS_RING_IMPL_H
#define EGPU_MAPS_RING_IMPL_H

#include <pthread.h>

#include "maps/ring.h"

struct event_ring {
	uint32_t type;       /* first: see ring_type() in ring.h */
	uint32_t max_record; /* header + payload, at most */
	uint64_t cap;        /* bytes of records, a power of two */
	char *name;
	void *mem;           /* control page, records, tail pad */
	size_t mem_len;
	struct ring_ctl *ctl;
	uint8_t *data;
	/* Consumer. */
	bool claimed;
	uint64_t cons;       /* records before this position were handed over */
	uint32_t cons_sub;   /* ... and this many of the batch at cons */
	uint8_t *unpacked;   /* one record of a batch, made contiguous */
	/* CPU producers, until the ring is mapped into the GPU. */
	pthread_mutex_t lock;
	uint64_t prod;
	/* GPU. */
	void *cu_ctx;        /* CUcontext of the registration */
	uint64_t dev_mem;    /* device address of mem, 0 until mapped */
};

#endif
