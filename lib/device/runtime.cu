/* SPDX-License-Identifier: MIT */
/*
 * The device runtime: the helpers that translated programs call by name,
 * egpu_dev_<helper name of lib/core/helpers.c>. Every argument and the
 * result are 64-bit (.param .b64), pointers are generic addresses, the
 * first argument of a map helper is the map's handle (the device address of
 * its struct dev_map_desc). Errors are Linux errno values, negated, as a
 * program expects. Built to PTX and embedded (see CMakeLists.txt).
 */
#include "map_array.cuh"
#include "map_hash.cuh"

/* Called from translated code, never inlined into a caller here. */
#define RT_API extern "C" __device__ __noinline__

RT_INLINE struct dev_map_desc *rt_map(uint64_t handle)
{
	return (struct dev_map_desc *)(uintptr_t)handle;
}

RT_INLINE const void *rt_ptr(uint64_t addr)
{
	return (const void *)(uintptr_t)addr;
}

/* A negative errno as the 64-bit register a program reads. */
RT_INLINE uint64_t rt_err(int64_t err)
{
	return (uint64_t)err;
}

RT_INLINE bool rt_is_array(const struct dev_map_desc *m)
{
	return m->type == EGPU_MAP_ARRAY || m->type == EGPU_MAP_GPU_ARRAY ||
	       array_is_per_thread(m);
}

/* Address of the value of key, or 0. */
RT_API uint64_t egpu_dev_map_lookup_elem(uint64_t map, uint64_t key)
{
	struct dev_map_desc *m = rt_map(map);

	if (rt_is_array(m))
		return (uint64_t)(uintptr_t)array_lookup(m, rt_ptr(key));
	if (m->type == EGPU_MAP_HASH)
		return (uint64_t)(uintptr_t)hash_lookup(m, rt_ptr(key));
	return 0;
}

/* 0, -EINVAL (flags), -EEXIST, -ENOENT, -E2BIG (full, or index too big). */
RT_API uint64_t egpu_dev_map_update_elem(uint64_t map, uint64_t key,
					 uint64_t value, uint64_t flags)
{
	struct dev_map_desc *m = rt_map(map);

	if (rt_is_array(m))
		return rt_err(array_update(m, rt_ptr(key), rt_ptr(value),
					    flags));
	if (m->type == EGPU_MAP_HASH)
		return rt_err(hash_update(m, rt_ptr(key), rt_ptr(value),
					   flags));
	return rt_err(-EOPNOTSUPP);
}

/* 0, -ENOENT; array entries cannot be deleted: -EINVAL, as in Linux. */
RT_API uint64_t egpu_dev_map_delete_elem(uint64_t map, uint64_t key)
{
	struct dev_map_desc *m = rt_map(map);

	if (rt_is_array(m))
		return rt_err(-EINVAL);
	if (m->type == EGPU_MAP_HASH)
		return rt_err(hash_delete(m, rt_ptr(key)));
	return rt_err(-EOPNOTSUPP);
}
