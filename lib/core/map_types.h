/* SPDX-License-Identifier: MIT */
/*
 * The map types libegpu implements (numbers: include/egpu.h): one table,
 * read by the loader (which types exist and what implements them), the
 * verifier, the maps, the JIT and the API (egpu_map_type_str).
 */
#ifndef EGPU_CORE_MAP_TYPES_H
#define EGPU_CORE_MAP_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a type is like (struct map_type_info.traits). */
enum map_trait {
	MAP_T_ARRAY = 1 << 0,        /* 4-byte index keys, values in place */
	MAP_T_PER_THREAD = 1 << 1,   /* several values per key: per thread
				      * slot or per SM */
	MAP_T_RING = 1 << 2,         /* records, no keys (maps/ring.h) */
	MAP_T_HOST_MEMORY = 1 << 3,  /* values in mapped host memory */
	MAP_T_DIRECT_VALUE = 1 << 4, /* programs may address its values
				      * directly (lddw BPF_PSEUDO_MAP_VALUE) */
	/* Which helpers take it (struct helper_info.maps, core/helpers.h): */
	MAP_T_KEYED = 1 << 5,       /* map_lookup/update/delete_elem */
	MAP_T_RINGBUF_OUT = 1 << 6, /* ringbuf_output/reserve, trace_warp */
	MAP_T_PERF_OUT = 1 << 7,    /* perf_event_output */
};

struct map_type_info {
	uint32_t type;   /* as declared */
	uint32_t impl;   /* the type whose implementation it uses */
	const char *name;
	unsigned traits; /* enum map_trait */
};

/* Every implemented type, in the order messages list them. */
extern const struct map_type_info map_types[];
extern const size_t map_type_cnt;

/* The entry of @type, NULL: not implemented. */
const struct map_type_info *map_type_find(uint32_t type);
/* Its name ("hash", "gpu_array_host", ...), "unknown" if none. */
const char *map_type_name(uint32_t type);
bool map_type_has(uint32_t type, unsigned trait);

static inline bool map_type_is_array(uint32_t type)
{
	return map_type_has(type, MAP_T_ARRAY);
}

static inline bool map_type_is_ring(uint32_t type)
{
	return map_type_has(type, MAP_T_RING);
}

static inline bool map_type_per_thread(uint32_t type)
{
	return map_type_has(type, MAP_T_PER_THREAD);
}

#endif
