/* SPDX-License-Identifier: MIT */
/*
 * Map storage in host memory: what the CPU back end and host API use. The
 * same layout is mirrored in GPU memory for the GPU (dev_map.h, layout.h).
 */
#ifndef EGPU_HOST_MAP_H
#define EGPU_HOST_MAP_H

#include <stdint.h>

#include "core/bpf.h"
#include "core/map_types.h"

struct host_map {
	uint32_t type;
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t count;    /* hash: live entries */
	uint32_t slot_cnt; /* hash: slots in the open-addressing table */
	uint8_t *data;     /* array: values; hash: slots (state, key, value) */
	uint64_t data_len; /* its bytes, as mapped */
};

int host_map_new(const struct map_spec *spec, struct host_map **out);
void host_map_free(struct host_map *map);
/* Address of entry 0's value for array-like maps, NULL otherwise. */
void *host_map_array_base(struct host_map *map);
int host_map_next_key(struct host_map *map, const void *key, void *next);

/*
 * What CPU-translated programs call for helpers 1-3, so they return Linux
 * errno values (-ENOENT, -EEXIST, -E2BIG) as a program expects; @map is
 * the address the JIT put in the program (jit_map.addr).
 */
void *host_map_lookup(struct host_map *map, const void *key);
long host_map_update(struct host_map *map, const void *key, const void *value,
		     uint64_t flags);
long host_map_delete(struct host_map *map, const void *key);

#endif
