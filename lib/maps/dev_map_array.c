/* SPDX-License-Identifier: MIT */
/*
 * Array-like maps in GPU memory (arrays, per-thread arrays, SM arrays),
 * host side: an entry is one span of values (layout.h), copied at once.
 * Entries cannot be deleted.
 */
#include <errno.h>
#include <string.h>

#include "maps/dev_map_impl.h"

/*
 * Where key @idx's values are: all threads' side by side for per-thread
 * maps, one row per SM for SM arrays (an SM's values of every key are
 * side by side: layout.h).
 */
static struct span array_span(const struct dev_map *m, uint32_t idx)
{
	const struct dev_map_desc *d = &m->desc;
	size_t vs = d->value_size;

	if (d->type == EGPU_MAP_SM_ARRAY)
		return (struct span){ .addr = m->base + DEV_MAP_DATA_OFFSET + idx * vs,
				      .width = vs, .rows = d->threads,
				      .pitch = dev_map_sm_stride(d->max_entries, d->value_size) };
	vs *= d->threads;
	return (struct span){ .addr = m->base + DEV_MAP_DATA_OFFSET + idx * vs,
			      .width = vs, .rows = 1, .pitch = vs };
}

static int array_lookup(struct dev_map *m, const struct kv_args *a)
{
	uint32_t idx;
	struct span s;

	memcpy(&idx, a->key, sizeof(idx));
	if (idx >= m->desc.max_entries)
		return -ENOENT;
	s = array_span(m, idx);
	return dev_map_copy_span(m, &s, a->out, false);
}

static int array_update(struct dev_map *m, const struct kv_args *a)
{
	uint32_t idx;
	struct span s;

	memcpy(&idx, a->key, sizeof(idx));
	if (idx >= m->desc.max_entries)
		return -E2BIG;
	if (a->flags == EGPU_NOEXIST)
		return -EEXIST; /* every array entry always exists */
	s = array_span(m, idx);
	return dev_map_copy_span(m, &s, (void *)a->in, true); /* only read */
}

static int array_next_key(struct dev_map *m, const struct kv_args *a)
{
	uint32_t idx = 0;

	if (a->key) {
		memcpy(&idx, a->key, sizeof(idx));
		idx = idx < m->desc.max_entries ? idx + 1 : 0;
	}
	if (idx >= m->desc.max_entries)
		return -ENOENT;
	memcpy(a->out, &idx, sizeof(idx));
	return 0;
}

kv_fn *const dev_array_ops[KV_OP_CNT] = {
	[KV_LOOKUP] = array_lookup,
	[KV_UPDATE] = array_update,
	[KV_NEXT_KEY] = array_next_key,
};
