/* SPDX-License-Identifier: MIT */
/*
 * A copy between the host and GPU memory, as a batch of them is queued at
 * once (ring_copier.batch, dev_map_batch_async): one driver call for a
 * consumer round's windows instead of one per shard.
 */
#ifndef EGPU_MAPS_COPY_H
#define EGPU_MAPS_COPY_H

#include <stddef.h>
#include <stdint.h>

/* @n bytes between @addr in GPU memory and @host (page-locked; unused
 * when zeroing). */
struct mem_copy {
	uint64_t addr;
	void *host;
	size_t n;
};

enum mem_copy_dir {
	MEM_COPY_OUT,  /* GPU memory to the host */
	MEM_COPY_IN,   /* the host to GPU memory */
	MEM_COPY_ZERO, /* zeroes to GPU memory, by the copy engine */
};

#endif
