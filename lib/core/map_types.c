/* SPDX-License-Identifier: MIT */
/*
 * The map-type table. bpftime's 1501, 1504, 1512 and 1513 behave as its
 * documentation describes them with libegpu's HASH, GPU_ARRAY and
 * PERTHREAD_ARRAY (docs/maps.md, "bpftime's map types").
 */
#include "core/map_types.h"
#include "core/core.h"

#define ARR (MAP_T_ARRAY | MAP_T_DIRECT_VALUE | MAP_T_KEYED)
#define PER_THREAD (MAP_T_ARRAY | MAP_T_PER_THREAD | MAP_T_KEYED)

const struct map_type_info map_types[] = {
	{ EGPU_MAP_HASH, EGPU_MAP_HASH, "hash", MAP_T_KEYED },
	{ EGPU_MAP_ARRAY, EGPU_MAP_ARRAY, "array", ARR },
	{ EGPU_MAP_PERF_EVENT_ARRAY, EGPU_MAP_PERF_EVENT_ARRAY,
	  "perf_event_array", MAP_T_RING | MAP_T_PERF_OUT },
	{ EGPU_MAP_PERCPU_ARRAY, EGPU_MAP_PERCPU_ARRAY, "percpu_array",
	  PER_THREAD },
	{ EGPU_MAP_RINGBUF, EGPU_MAP_RINGBUF, "ringbuf",
	  MAP_T_RING | MAP_T_RINGBUF_OUT },
	{ EGPU_MAP_GPU_HASH, EGPU_MAP_HASH, "gpu_hash", MAP_T_KEYED },
	{ EGPU_MAP_PERTHREAD_ARRAY, EGPU_MAP_PERTHREAD_ARRAY,
	  "perthread_array", PER_THREAD },
	{ EGPU_MAP_GPU_ARRAY, EGPU_MAP_GPU_ARRAY, "gpu_array", ARR },
	{ EGPU_MAP_GPU_KERNEL_SHARED_ARRAY, EGPU_MAP_GPU_ARRAY,
	  "gpu_kernel_shared_array", ARR },
	{ EGPU_MAP_PERTHREAD_ARRAY_HOST, EGPU_MAP_PERTHREAD_ARRAY,
	  "perthread_array_host", PER_THREAD | MAP_T_HOST_MEMORY },
	{ EGPU_MAP_GPU_ARRAY_HOST, EGPU_MAP_GPU_ARRAY, "gpu_array_host",
	  ARR | MAP_T_HOST_MEMORY },
	{ EGPU_MAP_GPU_RINGBUF, EGPU_MAP_GPU_RINGBUF, "gpu_ringbuf",
	  MAP_T_RING | MAP_T_RINGBUF_OUT | MAP_T_PERF_OUT },
	/* Registers, not memory: no direct value access. */
	{ EGPU_MAP_THREAD_LOCAL, EGPU_MAP_THREAD_LOCAL, "thread_local",
	  MAP_T_ARRAY | MAP_T_KEYED },
	{ EGPU_MAP_SM_ARRAY, EGPU_MAP_SM_ARRAY, "sm_array", PER_THREAD },
};

const size_t map_type_cnt = ARRAY_SIZE(map_types);

const struct map_type_info *map_type_find(uint32_t type)
{
	for (size_t i = 0; i < map_type_cnt; i++)
		if (map_types[i].type == type)
			return &map_types[i];
	return NULL;
}

const char *map_type_name(uint32_t type)
{
	const struct map_type_info *t = map_type_find(type);

	return t ? t->name : "unknown";
}

bool map_type_has(uint32_t type, unsigned trait)
{
	const struct map_type_info *t = map_type_find(type);

	return t && (t->traits & trait);
}
