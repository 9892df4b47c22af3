/* SPDX-License-Identifier: MIT */
/*
 * Hash maps on the device: open addressing with linear probing over the
 * slots of layout.h, safe under concurrent use by every thread of a grid.
 *
 * - Lookups and deletes are lock-free: they walk the probe chain from the
 *   key's home slot, skip DELETED and BUSY slots and stop at EMPTY.
 * - Updates of a key that exists are lock-free too.
 * - Creating a key happens under the lock word of the key's home slot, so
 *   two threads inserting the same new key cannot both create it: the
 *   second finds the first's slot when it re-walks the chain under the
 *   lock. The new slot is claimed by a CAS from EMPTY or DELETED to BUSY
 *   (keys with other homes race for the same slots), filled, then published
 *   as USED with a release store.
 * - desc->count is reserved before claiming, so at most max_entries slots
 *   are ever USED or BUSY and a free slot always exists on the chain.
 * - A slot never goes back to EMPTY, so a chain walked up to an EMPTY slot
 *   has seen every slot that could hold the key. So has a walk of
 *   desc->max_probe + 1 slots: inserters raise max_probe to their distance
 *   from home before they publish. Walks stay short even when tombstones
 *   have replaced every EMPTY slot.
 * - Each claim advances the slot's generation (layout.h), so a delete that
 *   found its key in a slot which was then deleted and reused fails its CAS
 *   instead of deleting the new key.
 */
#ifndef EGPU_DEVICE_MAP_HASH_CUH
#define EGPU_DEVICE_MAP_HASH_CUH

#include "rt.cuh"

RT_INLINE struct dev_slot_hdr *hash_slot(const struct dev_map_desc *m,
					 uint32_t i)
{
	return (struct dev_slot_hdr *)(uintptr_t)(m->data +
						   (uint64_t)i * m->slot_size);
}

RT_INLINE uint8_t *hash_slot_key(struct dev_slot_hdr *s)
{
	return (uint8_t *)s + dev_slot_key_offset();
}

RT_INLINE uint8_t *hash_slot_value(const struct dev_map_desc *m,
				   struct dev_slot_hdr *s)
{
	return (uint8_t *)s + dev_slot_value_offset(m->key_size);
}

RT_INLINE uint32_t hash_home(const struct dev_map_desc *m, const void *key)
{
	return dev_hash_key(key, m->key_size) % m->slot_cnt;
}

RT_INLINE uint32_t hash_next(const struct dev_map_desc *m, uint32_t i)
{
	return i + 1 == m->slot_cnt ? 0 : i + 1;
}

/* The USED slot holding @key and the state word it had, or NULL. */
RT_INLINE struct dev_slot_hdr *hash_find(const struct dev_map_desc *m,
					 const void *key, uint32_t *word)
{
	uint32_t i = hash_home(m, key), limit = rt_load_acquire(&m->max_probe);

	for (uint32_t n = 0; n <= limit && n < m->slot_cnt;
	     n++, i = hash_next(m, i)) {
		struct dev_slot_hdr *s = hash_slot(m, i);
		uint32_t w = rt_load_acquire(&s->state);

		if (dev_slot_state_of(w) == DEV_SLOT_EMPTY)
			return NULL;
		if (dev_slot_state_of(w) == DEV_SLOT_USED &&
		    rt_equal(hash_slot_key(s), key, m->key_size)) {
			*word = w;
			return s;
		}
	}
	return NULL;
}

RT_INLINE void *hash_lookup(const struct dev_map_desc *m, const void *key)
{
	uint32_t word;
	struct dev_slot_hdr *s = hash_find(m, key, &word);

	return s ? hash_slot_value(m, s) : NULL;
}

/*
 * Claim the first free slot from @home on: EMPTY or DELETED -> BUSY, with
 * the next generation, which *word receives; *dist: slots past home.
 */
RT_INLINE struct dev_slot_hdr *hash_claim(const struct dev_map_desc *m,
					  uint32_t home, uint32_t *word,
					  uint32_t *dist)
{
	uint32_t i = home;

	/* Two rounds: a slot passed as taken may be freed behind us. */
	for (uint32_t n = 0; n < 2 * m->slot_cnt; n++, i = hash_next(m, i)) {
		struct dev_slot_hdr *s = hash_slot(m, i);
		uint32_t w = rt_load_acquire(&s->state), state = dev_slot_state_of(w);

		if (state != DEV_SLOT_EMPTY && state != DEV_SLOT_DELETED)
			continue;
		*word = dev_slot_claim_word(w, DEV_SLOT_BUSY);
		*dist = n % m->slot_cnt;
		if (atomicCAS(&s->state, w, *word) == w)
			return s;
	}
	return NULL;
}

/* Reserve one of max_entries live entries; false when the map is full. */
RT_INLINE bool hash_reserve(struct dev_map_desc *m)
{
	if (atomicAdd(&m->count, 1u) < m->max_entries)
		return true;
	atomicSub(&m->count, 1u);
	return false;
}

RT_INLINE int64_t hash_write_existing(const struct dev_map_desc *m,
				      struct dev_slot_hdr *s,
				      const void *value, uint64_t flags)
{
	if (flags == EGPU_NOEXIST)
		return -EEXIST;
	rt_copy(hash_slot_value(m, s), value, m->value_size);
	return 0;
}

/* Create @key; the caller holds the home slot's lock. */
RT_INLINE int64_t hash_insert(struct dev_map_desc *m, uint32_t home,
			      const void *key, const void *value)
{
	struct dev_slot_hdr *s;
	uint32_t word, dist;

	if (!hash_reserve(m))
		return -E2BIG;
	s = hash_claim(m, home, &word, &dist);
	if (!s) {
		atomicSub(&m->count, 1u);
		return -E2BIG;
	}
	atomicMax(&m->max_probe, dist); /* ordered before USED by the release */
	rt_copy(hash_slot_key(s), key, m->key_size);
	rt_copy(hash_slot_value(m, s), value, m->value_size);
	rt_store_release(&s->state, dev_slot_word(word, DEV_SLOT_USED));
	return 0;
}

RT_INLINE int64_t hash_update(struct dev_map_desc *m, const void *key,
			      const void *value, uint64_t flags)
{
	struct dev_slot_hdr *s;
	uint32_t home, word;
	int64_t ret;

	if (flags > EGPU_EXIST)
		return -EINVAL;
	s = hash_find(m, key, &word);
	if (s)
		return hash_write_existing(m, s, value, flags);
	if (flags == EGPU_EXIST)
		return -ENOENT;
	/* Full: no need to queue on the lock to find that out. */
	if (rt_load_acquire(&m->count) >= m->max_entries)
		return -E2BIG;
	home = hash_home(m, key);
	rt_lock(&hash_slot(m, home)->lock);
	s = hash_find(m, key, &word); /* an inserter we waited for made it? */
	if (s)
		ret = hash_write_existing(m, s, value, flags);
	else
		ret = hash_insert(m, home, key, value);
	rt_unlock(&hash_slot(m, home)->lock);
	return ret;
}

RT_INLINE int64_t hash_delete(struct dev_map_desc *m, const void *key)
{
	struct dev_slot_hdr *s;
	uint32_t word;

	/*
	 * The CAS fails if another delete won, or the slot was deleted and
	 * claimed again (the generation moved on): look again.
	 */
	while ((s = hash_find(m, key, &word))) {
		if (atomicCAS(&s->state, word,
			      dev_slot_word(word, DEV_SLOT_DELETED)) == word) {
			atomicSub(&m->count, 1u);
			return 0;
		}
	}
	return -ENOENT;
}

#endif
