/* SPDX-License-Identifier: MIT */
/*
 * Host-memory maps. Arrays are plain value arrays. Hash maps use open
 * addressing with linear probing, the layout the GPU side uses too, so one
 * algorithm serves both; deleted slots become tombstones so probe chains
 * stay intact.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/core.h"
#include "maps/host_map.h"

enum slot_state { SLOT_EMPTY = 0, SLOT_USED = 1, SLOT_DELETED = 2 };

#define SLOT_HDR 8 /* state word, keeps key and value 8-byte aligned */

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static size_t slot_size(const struct host_map *m)
{
	return SLOT_HDR + round8(m->key_size) + round8(m->value_size);
}

static uint8_t *slot_at(const struct host_map *m, uint32_t i)
{
	return m->data + (size_t)i * slot_size(m);
}

static uint8_t *slot_key(uint8_t *slot)
{
	return slot + SLOT_HDR;
}

static uint8_t *slot_value(const struct host_map *m, uint8_t *slot)
{
	return slot + SLOT_HDR + round8(m->key_size);
}

/* FNV-1a: keys are small and arbitrary bytes. */
static uint32_t hash_key(const void *key, uint32_t len)
{
	const uint8_t *p = key;
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* A map larger than this machine's memory is refused before allocating. */
static int fits_host(const char *name, uint64_t bytes)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t mem = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page :
					       UINT64_MAX;

	if (bytes <= mem && bytes <= SIZE_MAX)
		return 0;
	return err_set(EGPU_ENOMEM,
		       "map '%s': %llu bytes exceed this machine's memory (%llu bytes)",
		       name, (unsigned long long)bytes, (unsigned long long)mem);
}

/* The data's size: an array's values, or a hash table at most half full. */
static int data_bytes(const struct map_spec *spec, struct host_map *m,
		      uint64_t *bytes)
{
	uint64_t slots = (uint64_t)spec->max_entries * 2 + 1;

	*bytes = 0;
	if (spec->type != EGPU_MAP_HASH) {
		*bytes = (uint64_t)spec->max_entries * spec->value_size;
	} else if (slots > UINT32_MAX) {
		return err_set(EGPU_ENOMEM, "map '%s': %u entries: a hash map holds at most %u",
			       spec->name, spec->max_entries, UINT32_MAX / 2);
	} else {
		m->slot_cnt = (uint32_t)slots;
		*bytes = slots * slot_size(m);
	}
	return fits_host(spec->name, *bytes);
}

/*
 * The data, zero: anonymous pages of its own, allocated only where
 * written, so that a large zero map (a .bss of gigabytes) costs nothing
 * until used, and given back whole when freed. (calloc does the first
 * too, but under AddressSanitizer it marks the shadow of a region it
 * hands out, an eighth of its size: a fuzzed object's 21 GB map cost
 * 2.6 GB and 9 s there.)
 */
static uint8_t *data_new(uint64_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int host_map_new(const struct map_spec *spec, struct host_map **out)
{
	struct host_map *m = calloc(1, sizeof(*m));
	uint64_t bytes;
	int err;

	if (!m)
		return err_set(EGPU_ENOMEM, "map '%s': out of memory", spec->name);
	m->type = spec->type;
	m->key_size = spec->key_size;
	m->value_size = spec->value_size;
	m->max_entries = spec->max_entries;
	err = data_bytes(spec, m, &bytes);
	if (err) {
		free(m);
		return err;
	}
	/* its initial value is never copied: zero pages stay unallocated */
	m->data_len = bytes ? bytes : 1;
	m->data = data_new(m->data_len);
	if (!m->data) {
		free(m);
		return err_set(EGPU_ENOMEM, "map '%s': cannot allocate %llu bytes",
			       spec->name, (unsigned long long)bytes);
	}
	if (spec->init && map_type_is_array(spec->type))
		memcpy(m->data, spec->init,
		       spec->init_len < bytes ? spec->init_len : bytes);
	*out = m;
	return 0;
}

void host_map_free(struct host_map *map)
{
	if (!map)
		return;
	munmap(map->data, map->data_len);
	free(map);
}

void *host_map_array_base(struct host_map *map)
{
	return map_type_is_array(map->type) ? map->data : NULL;
}

/*
 * Slot holding @key, or (when @free_slot is given) the first reusable slot
 * on its probe chain. Returns NULL when the key is absent.
 */
static uint8_t *hash_find(const struct host_map *m, const void *key,
			  uint8_t **free_slot)
{
	uint32_t i = hash_key(key, m->key_size) % m->slot_cnt;

	if (free_slot)
		*free_slot = NULL;
	for (uint32_t n = 0; n < m->slot_cnt; n++, i = (i + 1) % m->slot_cnt) {
		uint8_t *s = slot_at(m, i);
		uint32_t state = *(uint32_t *)s;

		if (state == SLOT_EMPTY) {
			if (free_slot && !*free_slot)
				*free_slot = s;
			return NULL;
		}
		if (state == SLOT_DELETED) {
			if (free_slot && !*free_slot)
				*free_slot = s;
			continue;
		}
		if (!memcmp(slot_key(s), key, m->key_size))
			return s;
	}
	return NULL;
}

static int array_index(const struct host_map *m, const void *key,
		       uint32_t *idx)
{
	memcpy(idx, key, sizeof(*idx));
	return *idx < m->max_entries ? 0 : -ENOENT;
}

void *host_map_lookup(struct host_map *m, const void *key)
{
	uint32_t idx;
	uint8_t *s;

	if (map_type_is_array(m->type))
		return array_index(m, key, &idx) ? NULL :
		       m->data + (size_t)idx * m->value_size;
	if (m->type != EGPU_MAP_HASH)
		return NULL;
	s = hash_find(m, key, NULL);
	return s ? slot_value(m, s) : NULL;
}

static long hash_update(struct host_map *m, const void *key,
			const void *value, uint64_t flags)
{
	uint8_t *free_slot, *s = hash_find(m, key, &free_slot);

	if (s && flags == EGPU_NOEXIST)
		return -EEXIST;
	if (!s && flags == EGPU_EXIST)
		return -ENOENT;
	if (!s) {
		if (m->count >= m->max_entries || !free_slot)
			return -E2BIG;
		s = free_slot;
		memcpy(slot_key(s), key, m->key_size);
		*(uint32_t *)s = SLOT_USED;
		m->count++;
	}
	memcpy(slot_value(m, s), value, m->value_size);
	return 0;
}

long host_map_update(struct host_map *m, const void *key, const void *value,
		     uint64_t flags)
{
	uint32_t idx;

	if (flags > EGPU_EXIST)
		return -EINVAL;
	if (m->type == EGPU_MAP_HASH)
		return hash_update(m, key, value, flags);
	if (!map_type_is_array(m->type))
		return -EOPNOTSUPP;
	if (array_index(m, key, &idx))
		return -E2BIG;
	if (flags == EGPU_NOEXIST)
		return -EEXIST; /* every array entry always exists */
	memcpy(m->data + (size_t)idx * m->value_size, value, m->value_size);
	return 0;
}

long host_map_delete(struct host_map *m, const void *key)
{
	uint8_t *s;

	if (m->type != EGPU_MAP_HASH)
		return -EINVAL;
	s = hash_find(m, key, NULL);
	if (!s)
		return -ENOENT;
	*(uint32_t *)s = SLOT_DELETED;
	m->count--;
	return 0;
}

static int hash_next_key(struct host_map *m, const void *key, void *next)
{
	uint32_t start = 0;
	uint8_t *s;

	if (key) {
		s = hash_find(m, key, NULL);
		/* A vanished key restarts iteration, as Linux does. */
		start = s ? (uint32_t)((s - m->data) / slot_size(m)) + 1 : 0;
	}
	for (uint32_t i = start; i < m->slot_cnt; i++) {
		s = slot_at(m, i);
		if (*(uint32_t *)s == SLOT_USED) {
			memcpy(next, slot_key(s), m->key_size);
			return 0;
		}
	}
	return -ENOENT;
}

int host_map_next_key(struct host_map *m, const void *key, void *next)
{
	uint32_t idx = 0;

	if (m->type == EGPU_MAP_HASH)
		return hash_next_key(m, key, next);
	if (!map_type_is_array(m->type))
		return -EOPNOTSUPP;
	if (key) {
		memcpy(&idx, key, sizeof(idx));
		idx = idx < m->max_entries ? idx + 1 : 0;
	}
	if (idx >= m->max_entries)
		return -ENOENT;
	memcpy(next, &idx, sizeof(idx));
	return 0;
}
