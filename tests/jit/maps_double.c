/* SPDX-License-Identifier: MIT */
/*
 * Test double for the host map entry points (lib/maps/maps.h), so the CPU
 * back end's map helpers can be tested before lib/maps exists. The
 * definitions are weak: once lib/maps is linked, drop this file and point
 * the map tests at real maps.
 *
 * A "map" here is a struct fake_map: up to 8 u32 keys with u64 values.
 */
#include <string.h>

#include "maps/maps.h"
#include "maps_double.h"

static struct fake_map *fake(struct host_map *map)
{
	return (struct fake_map *)map;
}

static int find(struct fake_map *m, const void *key)
{
	uint32_t k;

	memcpy(&k, key, sizeof(k));
	for (int i = 0; i < m->n; i++)
		if (m->keys[i] == k)
			return i;
	return -1;
}

__attribute__((weak)) void *map_host_lookup(struct host_map *map,
					     const void *key)
{
	int i = find(fake(map), key);

	fake(map)->lookups++;
	return i < 0 ? NULL : &fake(map)->values[i];
}

__attribute__((weak)) long map_host_update(struct host_map *map,
					   const void *key, const void *value,
					   uint64_t flags)
{
	struct fake_map *m = fake(map);
	int i = find(m, key);

	(void)flags;
	if (i < 0) {
		if (m->n == FAKE_MAP_MAX)
			return -7; /* E2BIG */
		i = m->n++;
		memcpy(&m->keys[i], key, sizeof(m->keys[i]));
	}
	memcpy(&m->values[i], value, sizeof(m->values[i]));
	return 0;
}

__attribute__((weak)) long map_host_delete(struct host_map *map,
					   const void *key)
{
	struct fake_map *m = fake(map);
	int i = find(m, key);

	if (i < 0)
		return -2; /* ENOENT */
	m->n--;
	m->keys[i] = m->keys[m->n];
	m->values[i] = m->values[m->n];
	return 0;
}
