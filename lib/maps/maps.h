/* SPDX-License-Identifier: MIT */
/*
 * Host side of the maps. A map's storage lives in host memory for the CPU
 * back end; the same layout is mirrored in GPU memory for the GPU (the
 * device side shares lib/maps/layout.h).
 *
 * The map_host_* functions are what CPU-translated programs call for
 * helpers 1-3, so they return Linux errno values (-ENOENT, -EEXIST, -E2BIG)
 * as a program expects; @map is the address the JIT put in the program
 * (jit_map.addr).
 */
#ifndef EGPU_MAPS_H
#define EGPU_MAPS_H

#include <stdint.h>

struct host_map;

void *map_host_lookup(struct host_map *map, const void *key);
long map_host_update(struct host_map *map, const void *key, const void *value,
		     uint64_t flags);
long map_host_delete(struct host_map *map, const void *key);

#endif
