/* SPDX-License-Identifier: MIT */
/*
 * Map and clock helpers of host code that shares its object's maps with
 * GPU probes (jit_input.gpu_maps: egpu attach's uprobes). The maps live in
 * GPU memory, which the CPU cannot address, so a lookup copies the value
 * into a buffer of the calling thread and the program works on the copy;
 * when the program returns, jit_host_call_gpu() writes back each copy it
 * changed. Updates and deletes go to the GPU at once. A host write is
 * therefore visible to the next kernel's probes (not atomic with a kernel
 * writing the same value concurrently: docs/attach.md). The clocks read
 * the GPU's %globaltimer as of now (CLOCK_MONOTONIC plus the context's
 * calibrated offset), so host and GPU timestamps compare directly.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/helpers.h"
#include "host_helpers.h"
#include "maps/dev_map.h"

/* Lookups one run may hold; past it lookups return NULL. */
#define LOOKUPS_MAX 32

struct copy {
	struct dev_map *map;
	void *key, *value, *orig; /* one allocation: key, value, orig */
	uint32_t key_size, value_size;
};

static __thread struct copy copies[LOOKUPS_MAX];
static __thread unsigned ncopies;
static __thread int64_t timer_offset;

static struct dev_map *dev_of(uint64_t map)
{
	return (struct dev_map *)(uintptr_t)map;
}

static struct copy *copy_find(struct dev_map *m, const void *key)
{
	for (unsigned i = 0; i < ncopies; i++)
		if (copies[i].map == m &&
		    !memcmp(copies[i].key, key, copies[i].key_size))
			return &copies[i];
	return NULL;
}

static void copy_drop(struct copy *c)
{
	free(c->key);
	*c = copies[--ncopies];
}

static uint64_t gpu_map_lookup_elem(uint64_t map, uint64_t key)
{
	struct dev_map *m = dev_of(map);
	struct copy *c = copy_find(m, (const void *)(uintptr_t)key);
	uint32_t ks, vs;
	char *buf;

	dev_map_sizes(m, &ks, &vs);
	if (c)
		return (uintptr_t)c->value;
	if (ncopies == LOOKUPS_MAX || dev_map_threads(m) > 1)
		return 0;
	buf = malloc((size_t)ks + 2 * (size_t)vs);
	if (!buf)
		return 0;
	memcpy(buf, (const void *)(uintptr_t)key, ks);
	if (dev_map_lookup(m, buf, buf + ks)) {
		free(buf);
		return 0;
	}
	memcpy(buf + ks + vs, buf + ks, vs);
	copies[ncopies] = (struct copy){ m, buf, buf + ks, buf + ks + vs, ks, vs };
	return (uintptr_t)copies[ncopies++].value;
}

static uint64_t gpu_map_update_elem(uint64_t map, uint64_t key,
				    uint64_t value, uint64_t flags)
{
	struct dev_map *m = dev_of(map);
	struct copy *c = copy_find(m, (const void *)(uintptr_t)key);
	int err;

	if (dev_map_threads(m) > 1)
		return (uint64_t)-EOPNOTSUPP;
	err = dev_map_update(m, (const void *)(uintptr_t)key,
			     (const void *)(uintptr_t)value, flags);
	if (!err && c) { /* a held copy now shows the stored value */
		memcpy(c->value, (const void *)(uintptr_t)value, c->value_size);
		memcpy(c->orig, c->value, c->value_size);
	}
	return (uint64_t)(int64_t)err;
}

static uint64_t gpu_map_delete_elem(uint64_t map, uint64_t key)
{
	struct dev_map *m = dev_of(map);
	struct copy *c = copy_find(m, (const void *)(uintptr_t)key);

	if (c)
		copy_drop(c);
	return (uint64_t)(int64_t)dev_map_delete(m, (const void *)(uintptr_t)key);
}

static uint64_t gpu_ktime_get_ns(void)
{
	return now_ns() + (uint64_t)timer_offset;
}

#define GPU_HELPER(id, fn) { id, #fn, (void (*)(void))fn }

static const struct host_helper gpu_map_helpers[] = {
	GPU_HELPER(HELPER_MAP_LOOKUP, gpu_map_lookup_elem),
	GPU_HELPER(HELPER_MAP_UPDATE, gpu_map_update_elem),
	GPU_HELPER(HELPER_MAP_DELETE, gpu_map_delete_elem),
	GPU_HELPER(HELPER_KTIME_GET_NS, gpu_ktime_get_ns),
	GPU_HELPER(HELPER_GLOBALTIMER, gpu_ktime_get_ns),
};

const struct host_helper *host_gpu_helpers(size_t *n)
{
	*n = ARRAY_SIZE(gpu_map_helpers);
	return gpu_map_helpers;
}

const struct host_helper *host_gpu_helper_find(int32_t id)
{
	for (size_t i = 0; i < ARRAY_SIZE(gpu_map_helpers); i++)
		if (gpu_map_helpers[i].id == id)
			return &gpu_map_helpers[i];
	return NULL;
}

void host_gpu_begin(int64_t offset)
{
	timer_offset = offset;
}

int host_gpu_end(void)
{
	int err = 0;

	while (ncopies) {
		struct copy *c = &copies[ncopies - 1];

		if (memcmp(c->value, c->orig, c->value_size) && !err)
			err = dev_map_update(c->map, c->key, c->value, 0);
		copy_drop(c);
	}
	return err;
}
