/* SPDX-License-Identifier: MIT */
/* Map accessors and the host-side map operations. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "core/map_types.h"
#include "maps/ring.h"

const char *egpu_map_type_str(uint32_t type)
{
	return map_type_name(type);
}

const char *egpu_map_name(const egpu_map *map)
{
	return map ? map->spec->name : "";
}

uint32_t egpu_map_type(const egpu_map *map)
{
	if (!map)
		return 0;
	return map->spec->declared_type ? map->spec->declared_type :
					  map->spec->type;
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

int egpu_map_set_ring_wait(egpu_map *map, uint32_t wait_ms)
{
	if (!map || !map->ring)
		return err_set(EGPU_EINVAL, "map '%s': not a ring map",
			       map ? map->spec->name : "(null)");
	return ring_set_wait(map->ring, (uint64_t)wait_ms * 1000000);
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
	case -EOPNOTSUPP:
		return err_set(EGPU_ENOTSUP, "map '%s': %s: not supported on map type %u",
			       map->spec->name, op, map->spec->type);
	case -ENOMEM:
		return err_set(EGPU_ENOMEM, "map '%s': %s: out of memory", map->spec->name, op);
	case -EIO:
		err_prefix("map '%s': %s", map->spec->name, op);
		return EGPU_ECUDA;
	default:
		if (!strcmp(op, "delete") && map->spec->type != EGPU_MAP_HASH)
			return err_set(EGPU_EINVAL, "map '%s': delete: array entries cannot be deleted",
				       map->spec->name);
		return err_set(EGPU_EINVAL, "map '%s': %s: invalid argument",
			       map->spec->name, op);
	}
}

/* An update's -E2BIG: a full hash map, or an array key past the end. */
static int refuse_too_big(const egpu_map *map, const void *key)
{
	uint32_t max = map->spec->max_entries, idx;

	if (!map_type_is_array(map->spec->type))
		return err_set(EGPU_E2BIG, "map '%s': update: full (%u of %u entries)",
			       map->spec->name, max, max);
	memcpy(&idx, key, sizeof(idx));
	return err_set(EGPU_E2BIG,
		       "map '%s': update: key %u is past the array's end (max_entries %u)",
		       map->spec->name, idx, max);
}

/* Ring maps have records, not keys: egpu_ringbuf_* reads them. */
static int refuse_ring(const egpu_map *map, const char *op)
{
	return err_set(EGPU_ENOTSUP,
		       "map '%s': %s: a ring buffer has no keys (read it with egpu_ringbuf_new)",
		       map->spec->name, op);
}

/* Thread-local values live in the registers of running GPU threads. */
static int refuse_thread_local(const egpu_map *map, const char *op)
{
	return err_set(EGPU_ENOTSUP,
		       "map '%s': %s: a thread-local map's values live in the registers of each GPU thread for one launch; the host cannot reach them (copy what it needs into another map)",
		       map->spec->name, op);
}

/* Operations no key-value map of these kinds has: ENOTSUP with why. */
static int refuse_keyless(const egpu_map *map, const char *op)
{
	if (map->ring)
		return refuse_ring(map, op);
	if (map->spec->type == EGPU_MAP_THREAD_LOCAL)
		return refuse_thread_local(map, op);
	return 0;
}

uint32_t egpu_map_values_per_key(const egpu_map *map)
{
	return map && map->dev ? dev_map_threads(map->dev) : 1;
}

void words_add(void *sum, const void *val, uint32_t size)
{
	uint32_t word = size % 8 ? 4 : 8;

	for (uint32_t off = 0; off + word <= size; off += word) {
		uint64_t a = 0, b = 0;

		memcpy(&a, (uint8_t *)sum + off, word);
		memcpy(&b, (const uint8_t *)val + off, word);
		a += b;
		memcpy((uint8_t *)sum + off, &a, word);
	}
}

/* Add @n values of @size bytes word by word into @sum. */
static void sum_values(const uint8_t *vals, uint32_t n, uint32_t size, void *sum)
{
	memset(sum, 0, size);
	for (uint32_t t = 0; t < n; t++)
		words_add(sum, vals + (size_t)t * size, size);
}

int egpu_map_lookup_sum(egpu_map *map, const void *key, void *sum)
{
	uint32_t n = egpu_map_values_per_key(map);
	uint8_t *vals;
	int err;

	if (!map || !key || !sum)
		return err_set(EGPU_EINVAL, "egpu_map_lookup_sum: NULL argument");
	err = refuse_keyless(map, "lookup_sum");
	if (err)
		return err;
	vals = malloc((size_t)n * map->spec->value_size);
	if (!vals)
		return err_set(EGPU_ENOMEM, "map '%s': out of memory", map->spec->name);
	err = egpu_map_lookup_values(map, key, vals);
	if (!err)
		sum_values(vals, n, map->spec->value_size, sum);
	free(vals);
	return err;
}

/* SM arrays answer a lookup with the sum of their SMs' copies. */
int egpu_map_lookup(egpu_map *map, const void *key, void *value)
{
	if (map && map->spec->type == EGPU_MAP_SM_ARRAY)
		return egpu_map_lookup_sum(map, key, value);
	return egpu_map_lookup_values(map, key, value);
}

/* Maps live in GPU memory once their object used the GPU. */
int egpu_map_lookup_values(egpu_map *map, const void *key, void *value)
{
	void *v;
	int err;

	if (!map || !key || !value)
		return err_set(EGPU_EINVAL, "egpu_map_lookup: NULL argument");
	err = refuse_keyless(map, "lookup");
	if (err)
		return err;
	if (map->dev)
		return map_result(map, dev_map_lookup(map->dev, key, value), "lookup");
	v = host_map_lookup(map->host, key);
	if (!v)
		return map_result(map, -ENOENT, "lookup");
	memcpy(value, v, map->spec->value_size);
	return 0;
}

int egpu_map_update(egpu_map *map, const void *key, const void *value,
		    uint64_t flags)
{
	long res;

	if (!map || !key || !value)
		return err_set(EGPU_EINVAL, "egpu_map_update: NULL argument");
	if (map->ring || map->spec->type == EGPU_MAP_THREAD_LOCAL)
		return refuse_keyless(map, "update");
	if (map->spec->readonly)
		return err_set(EGPU_EINVAL, "map '%s': read-only (.rodata)",
			       map->spec->name);
	if (flags > EGPU_EXIST)
		return err_set(EGPU_EINVAL, "map '%s': update: unknown flags %#llx (want EGPU_ANY 0, EGPU_NOEXIST 1 or EGPU_EXIST 2)",
			       map->spec->name, (unsigned long long)flags);
	res = map->dev ? dev_map_update(map->dev, key, value, flags) :
			 host_map_update(map->host, key, value, flags);
	return res == -E2BIG ? refuse_too_big(map, key) :
			       map_result(map, res, "update");
}

int egpu_map_delete(egpu_map *map, const void *key)
{
	if (!map || !key)
		return err_set(EGPU_EINVAL, "egpu_map_delete: NULL argument");
	if (map->ring || map->spec->type == EGPU_MAP_THREAD_LOCAL)
		return refuse_keyless(map, "delete");
	return map_result(map, map->dev ? dev_map_delete(map->dev, key) :
			  host_map_delete(map->host, key), "delete");
}

int egpu_map_next_key(egpu_map *map, const void *key, void *next_key)
{
	if (!map || !next_key)
		return err_set(EGPU_EINVAL, "egpu_map_next_key: NULL argument");
	if (map->ring || map->spec->type == EGPU_MAP_THREAD_LOCAL)
		return refuse_keyless(map, "next_key");
	return map_result(map, map->dev ? dev_map_next_key(map->dev, key, next_key) :
			  host_map_next_key(map->host, key, next_key), "next_key");
}

