/* SPDX-License-Identifier: MIT */
/*
 * Maps in GPU memory: the host side. Layout and device protocol are in
 * lib/maps/layout.h and docs/maps.md; the device side is lib/device.
 *
 * dev_map_new() returns 0 or a negative EGPU_E* code with a message. The
 * map operations return Linux errno values, negated, like host_map.c
 * (-ENOENT, -EEXIST, -E2BIG, -EINVAL, -EOPNOTSUPP), and -EIO when the CUDA
 * driver fails (the driver's message is then in egpu_errmsg()).
 *
 * Per-thread maps (PERCPU_ARRAY, PERTHREAD_ARRAY) exchange all of a key's
 * per-thread values at once: the value buffer holds threads * value_size
 * bytes in thread order, as Linux per-CPU maps do for CPUs.
 *
 * Host updates and deletes are meant for when no kernel writes the map: they
 * are not atomic with respect to device inserts (host lookups are safe at any
 * time, a value may be read mid-update).
 */
#ifndef EGPU_DEV_MAP_H
#define EGPU_DEV_MAP_H

#include <stdint.h>

#include "core/bpf.h"
#include "maps/copy.h"

struct dev_map;

/*
 * Allocate a map in the current CUDA context (made current if none), zeroed,
 * global-data bytes copied in. @threads: per-thread slots of per-thread maps,
 * a power of two, or 0 for the default, min(2^20, the largest power of two
 * keeping the data within 256 MiB); other map types ignore it.
 */
int dev_map_new(const struct map_spec *spec, uint32_t threads,
		struct dev_map **out);
void dev_map_free(struct dev_map *m);

/* For jit_map: the handle (device address of the descriptor) ... */
uint64_t dev_map_handle(const struct dev_map *m);
/*
 * ... and, for array-like maps, the device address of entry 0's value (for
 * per-thread maps: of thread slot 0, so only ARRAY and GPU_ARRAY lookups can
 * be inlined with it; per-thread lookups call the runtime).
 */
uint64_t dev_map_value_base(const struct dev_map *m);
/* Per-thread slots per key (1 for maps that are not per-thread). */
uint32_t dev_map_threads(const struct dev_map *m);
/* Bytes of a key and of one value. */
void dev_map_sizes(const struct dev_map *m, uint32_t *key_size,
		   uint32_t *value_size);
/* The device address of the map's data (a ring map's struct dev_ring). */
uint64_t dev_map_data(const struct dev_map *m);

/*
 * Copies (and fills with zeros) at any GPU address of the map's context,
 * for rings whose records live in GPU memory (maps/ring_dev.c), drained
 * while kernels run. Each goes on channel @chan (below
 * DEV_MAP_CHANNELS), a stream of the map's own: channels run at once,
 * the work of one runs in the order asked for. dev_map_read() is
 * complete when it returns; the _async ones are only queued (@src
 * page-locked and unchanged until done) and done by the time a later
 * dev_map_read() or dev_map_sync() of their channel returns. 0 or -EIO
 * with the driver's message.
 */
#define DEV_MAP_CHANNELS 64
int dev_map_read(struct dev_map *m, uint32_t chan, void *dst, uint64_t addr,
		 size_t n);
int dev_map_write_async(struct dev_map *m, uint32_t chan, uint64_t addr,
			const void *src, size_t n);
/* dev_map_read() only queued, into page-locked @dst. */
int dev_map_read_async(struct dev_map *m, uint32_t chan, void *dst,
		       uint64_t addr, size_t n);
int dev_map_zero_async(struct dev_map *m, uint32_t chan, uint64_t addr,
		       size_t n);
/*
 * dev_map_zero_async by the copy engine (copies from page-locked zeros),
 * not by a memset, which the driver runs as a kernel: that waits for a
 * free SM, so behind a grid that fills the GPU it, and everything queued
 * after it on its channel, waits for the grid to end. For what must reach
 * the GPU while its kernels run (a ring's consumed bytes).
 */
int dev_map_clear_async(struct dev_map *m, uint32_t chan, uint64_t addr,
			size_t n);
/* @n copies of one direction queued at once, in no order among them
 * (one driver call where the driver has cuMemcpyBatchAsync). */
int dev_map_batch_async(struct dev_map *m, uint32_t chan,
			enum mem_copy_dir dir, const struct mem_copy *v,
			size_t n);
int dev_map_sync(struct dev_map *m, uint32_t chan);

int dev_map_lookup(struct dev_map *m, const void *key, void *value);
int dev_map_update(struct dev_map *m, const void *key, const void *value,
		   uint64_t flags);
int dev_map_delete(struct dev_map *m, const void *key);
/* First key when @key is NULL or absent; -ENOENT after the last. */
int dev_map_next_key(struct dev_map *m, const void *key, void *next);

#endif
