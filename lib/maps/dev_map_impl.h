/* SPDX-License-Identifier: MIT */
/*
 * Inside the maps in GPU memory (dev_map*.c): the handle, the copy engine
 * (dev_map_copy.c) and the key-value operations of each kind of map
 * (dev_map_array.c, dev_map_hash.c), which dev_map.c dispatches to.
 */
#ifndef EGPU_MAPS_DEV_MAP_IMPL_H
#define EGPU_MAPS_DEV_MAP_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "cuda/cu.h"
#include "maps/dev_map.h"
#include "maps/layout.h"

/*
 * A channel of copies: a stream and its staging buffer, so that copies on
 * different channels (a ring's consumer threads) run at once.
 */
struct map_io {
	pthread_mutex_t lock;     /* one caller at a time on stream and stage */
	CUstream stream;          /* non-blocking; made at the first copy */
	void *stage;              /* page-locked staging buffer */
	void *zeros;              /* page-locked zeros, at the first zeroing */
};

struct dev_map {
	struct dev_map_desc desc; /* host copy; desc.count lives on the device */
	CUdeviceptr base;         /* the descriptor, then the data */
	uint8_t *host;            /* host_memory maps: base's host address */
	CUcontext ctx;
	char *name;
	/* Channel 0: the map's own copies, and a ring's first consumer. */
	struct map_io io[DEV_MAP_CHANNELS];
};

/*
 * Make the map's context current on the calling thread (its stream and
 * staging buffer belong to it); *@prev is what dev_map_leave()
 * restores. 0 or -EIO.
 */
int dev_map_enter(const struct dev_map *m, CUcontext *prev);
/* A thread that had no context keeps the map's. */
void dev_map_leave(const struct dev_map *m, CUcontext prev);

/* Bytes in GPU memory a copy reaches: @rows of @width, @pitch apart. */
struct span {
	uint64_t addr;
	size_t width;
	size_t rows;
	size_t pitch;
};

/*
 * Copy span @s between GPU memory and @host (its rows packed), either way,
 * on the map's stream; through the staging buffer when they fit it. The
 * map's context is current. 0 or -EIO.
 */
int dev_map_copy_span(struct dev_map *m, const struct span *s, void *host,
		  bool to_device);
/* Copies of @n bytes at offset @off from the map's base. */
int dev_map_dtoh(struct dev_map *m, void *dst, uint64_t off, size_t n);
int dev_map_htod(struct dev_map *m, uint64_t off, const void *src, size_t n);

/* A key-value operation's operands; each uses those it needs. */
struct kv_args {
	const void *key;
	void *out;        /* lookup: the value; next_key: the next key */
	const void *in;   /* update: the value */
	uint64_t flags;   /* update: EGPU_ANY, EGPU_NOEXIST or EGPU_EXIST */
};

enum kv_op { KV_LOOKUP, KV_UPDATE, KV_DELETE, KV_NEXT_KEY, KV_OP_CNT };

/* One operation on a map whose context is current: 0 or -errno. */
typedef int kv_fn(struct dev_map *m, const struct kv_args *a);

/* Each kind's operations, by enum kv_op; NULL: it has no such operation. */
extern kv_fn *const dev_array_ops[KV_OP_CNT];
extern kv_fn *const dev_hash_ops[KV_OP_CNT];

#endif
