/* SPDX-License-Identifier: MIT */
/* Map accessors and the host-side map operations. */
#include <errno.h>
#include <string.h>

#include "api/internal.h"

const char *egpu_map_name(const egpu_map *map)
{
	return map ? map->spec->name : "";
}

uint32_t egpu_map_type(const egpu_map *map)
{
	return map ? map->spec->type : 0;
}

uint32_t egpu_map_key_size(const egpu_map *map)
{
	return map ? map->spec->key_size : 0;
}

uint32_t egpu_map_value_size(const egpu_map *map)
{
	return map ? map->spec->value_size : 0;
}

uint32_t egpu_map_max_entries(const egpu_map *map)
{
	return map ? map->spec->max_entries : 0;
}

/* Turn a map operation's errno result into an EGPU code and message. */
static int map_result(const egpu_map *map, long res, const char *op)
{
	switch (res) {
	case 0:
		return 0;
	case -ENOENT:
		return err_set(EGPU_ENOENT, "map '%s': %s: no such key", map->spec->name, op);
	case -EEXIST:
		return err_set(EGPU_EEXIST, "map '%s': %s: key exists", map->spec->name, op);
	case -E2BIG:
		return err_set(EGPU_E2BIG, "map '%s': %s: map full or index beyond %u entries",
			       map->spec->name, op, map->spec->max_entries);
	case -EOPNOTSUPP:
		return err_set(EGPU_ENOTSUP, "map '%s': %s: not supported on map type %u",
			       map->spec->name, op, map->spec->type);
	default:
		return err_set(EGPU_EINVAL, "map '%s': %s: invalid argument (%s)",
			       map->spec->name, op,
			       map->spec->type == EGPU_MAP_HASH ? "bad flags" :
			       "array entries cannot be deleted");
	}
}

int egpu_map_lookup(egpu_map *map, const void *key, void *value)
{
	void *v;

	if (!map || !key || !value)
		return err_set(EGPU_EINVAL, "egpu_map_lookup: NULL argument");
	v = map_host_lookup(map->host, key);
	if (!v)
		return map_result(map, -ENOENT, "lookup");
	memcpy(value, v, map->spec->value_size);
	return 0;
}

int egpu_map_update(egpu_map *map, const void *key, const void *value,
		    uint64_t flags)
{
	if (!map || !key || !value)
		return err_set(EGPU_EINVAL, "egpu_map_update: NULL argument");
	if (map->spec->readonly)
		return err_set(EGPU_EINVAL, "map '%s': read-only (.rodata)",
			       map->spec->name);
	return map_result(map, map_host_update(map->host, key, value, flags),
			  "update");
}

int egpu_map_delete(egpu_map *map, const void *key)
{
	if (!map || !key)
		return err_set(EGPU_EINVAL, "egpu_map_delete: NULL argument");
	return map_result(map, map_host_delete(map->host, key), "delete");
}

int egpu_map_next_key(egpu_map *map, const void *key, void *next_key)
{
	if (!map || !next_key)
		return err_set(EGPU_EINVAL, "egpu_map_next_key: NULL argument");
	return map_result(map, host_map_next_key(map->host, key, next_key),
			  "next_key");
}
