/* SPDX-License-Identifier: MIT */
/*
 * Array maps on the device: ARRAY and GPU_ARRAY hold one value per key,
 * PERCPU_ARRAY and PERTHREAD_ARRAY one per key and GPU thread (the calling
 * thread's slot is its global id modulo desc->threads, see layout.h),
 * SM_ARRAY one per key and SM (an SM's copy of the array is contiguous,
 * copy %smid modulo desc->threads).
 */
#ifndef EGPU_DEVICE_MAP_ARRAY_CUH
#define EGPU_DEVICE_MAP_ARRAY_CUH

#include "rt.cuh"

RT_INLINE bool array_is_per_thread(const struct dev_map_desc *m)
{
	return m->type == EGPU_MAP_PERCPU_ARRAY ||
	       m->type == EGPU_MAP_PERTHREAD_ARRAY;
}

/* The calling thread's value of @idx; idx < max_entries. */
RT_INLINE uint8_t *array_value(const struct dev_map_desc *m, uint32_t idx)
{
	uint64_t slot = idx, copy = 0;

	if (array_is_per_thread(m))
		slot = slot * m->threads +
		       (rt_global_thread_id() & (m->threads - 1));
	else if (m->type == EGPU_MAP_SM_ARRAY)
		copy = (uint64_t)(rt_smid() & (m->threads - 1)) *
		       dev_map_sm_stride(m->max_entries, m->value_size);
	return (uint8_t *)(uintptr_t)m->data + copy + slot * m->value_size;
}

RT_INLINE void *array_lookup(const struct dev_map_desc *m, const void *key)
{
	uint32_t idx = rt_key_index(key);

	return idx < m->max_entries ? array_value(m, idx) : NULL;
}

/* Linux's array semantics: every entry exists, none can be created. */
RT_INLINE int64_t array_update(const struct dev_map_desc *m, const void *key,
			       const void *value, uint64_t flags)
{
	uint32_t idx = rt_key_index(key);

	if (flags > EGPU_EXIST)
		return -EINVAL;
	if (idx >= m->max_entries)
		return -E2BIG;
	if (flags == EGPU_NOEXIST)
		return -EEXIST;
	rt_copy(array_value(m, idx), value, m->value_size);
	return 0;
}

#endif
