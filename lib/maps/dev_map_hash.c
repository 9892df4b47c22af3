/* SPDX-License-Identifier: MIT */
/*
 * Hash maps in GPU memory, host side: open addressing over slots (layout.h),
 * read in batches of consecutive slots (one small copy usually covers a
 * whole probe chain), written in the device's order so a kernel reading
 * the map meanwhile sees whole slots.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maps/dev_map_impl.h"

/*
 * Bytes of consecutive hash slots one probe copy reads. A small device to
 * host copy costs its latency, not its size, so one copy usually covers the
 * whole probe chain (chains are short: the table is at most half full).
 */
#define PROBE_BYTES 1024
/* Bytes of slots next_key scans per copy. */
#define SCAN_BYTES (64 * 1024)
#define NO_SLOT UINT32_MAX

/* A walk along a key's probe chain, and what it found. */
struct probe {
	uint32_t home;
	uint32_t walked;    /* slots looked at, from home on */
	uint32_t slot;      /* the key's slot, NO_SLOT when absent */
	uint32_t word;      /* its state word */
	uint32_t free_dist; /* first reusable slot's distance from home, or NO_SLOT */
	uint32_t free_word; /* its state word */
};

static uint64_t slot_off(const struct dev_map *m, uint32_t i)
{
	return DEV_MAP_DATA_OFFSET + (uint64_t)i * m->desc.slot_size;
}

static uint32_t slot_word(const uint8_t *slot)
{
	struct dev_slot_hdr hdr;

	memcpy(&hdr, slot, sizeof(hdr));
	return hdr.state;
}

static uint32_t probe_index(const struct dev_map *m, const struct probe *p,
			    uint32_t dist)
{
	return (uint32_t)(((uint64_t)p->home + dist) % m->desc.slot_cnt);
}

/*
 * Look at @n slots copied from distance p->walked on. With a key, stop
 * (return 1) at the key or at an EMPTY slot; without, at a reusable slot.
 */
static int probe_batch(const struct dev_map *m, const uint8_t *buf,
		       uint32_t n, const void *key, void *value,
		       struct probe *p)
{
	const uint32_t ss = m->desc.slot_size;

	for (uint32_t j = 0; j < n; j++) {
		const uint8_t *s = buf + (size_t)j * ss;
		uint32_t word = slot_word(s), state = dev_slot_state_of(word);

		if ((state == DEV_SLOT_EMPTY || state == DEV_SLOT_DELETED) &&
		    p->free_dist == NO_SLOT) {
			p->free_dist = p->walked + j;
			p->free_word = word;
			if (!key)
				return 1;
		}
		if (state == DEV_SLOT_EMPTY)
			return 1;
		if (key && state == DEV_SLOT_USED &&
		    !memcmp(s + dev_slot_key_offset(), key, m->desc.key_size)) {
			p->slot = probe_index(m, p, p->walked + j);
			p->word = word;
			if (value)
				memcpy(value, s + dev_slot_value_offset(m->desc.key_size),
				       m->desc.value_size);
			return 1;
		}
	}
	return 0;
}

/*
 * Walk on from p->walked in copies of PROBE_BYTES until probe_batch stops
 * (returns 1) or @limit slots were looked at (returns 0).
 */
static int probe_walk(struct dev_map *m, const void *key, void *value,
		      struct probe *p, uint32_t limit)
{
	const uint32_t ss = m->desc.slot_size, cnt = m->desc.slot_cnt;
	uint32_t batch = PROBE_BYTES / ss ? PROBE_BYTES / ss : 1;
	uint8_t *buf = malloc((size_t)batch * ss);
	int ret = 0;

	if (!buf) {
		err_set(EGPU_ENOMEM, "map '%s': out of memory", m->name);
		return -ENOMEM;
	}
	while (!ret && p->walked < limit) {
		uint32_t i = probe_index(m, p, p->walked);
		uint32_t n = batch < cnt - i ? batch : cnt - i;

		if (n > limit - p->walked)
			n = limit - p->walked;
		ret = dev_map_dtoh(m, buf, slot_off(m, i), (size_t)n * ss);
		if (!ret && !(ret = probe_batch(m, buf, n, key, value, p)))
			p->walked += n;
	}
	free(buf);
	return ret;
}

/*
 * Walk @key's probe chain, copying its value into @value (if given) when
 * found. The first copy from home usually settles it; otherwise the walk
 * goes no farther than desc.max_probe, which bounds every key's distance
 * from home (tombstones may have replaced every EMPTY slot).
 */
static int hash_probe(struct dev_map *m, const void *key, void *value,
		      struct probe *p)
{
	const uint32_t cnt = m->desc.slot_cnt;
	uint32_t first = PROBE_BYTES / m->desc.slot_size, max_probe;
	int ret;

	*p = (struct probe){ .home = dev_hash_key(key, m->desc.key_size) % cnt,
			     .slot = NO_SLOT, .free_dist = NO_SLOT };
	first = first < 1 ? 1 : first < cnt ? first : cnt;
	ret = probe_walk(m, key, value, p, first);
	if (ret)
		return ret < 0 ? ret : 0;
	ret = dev_map_dtoh(m, &max_probe,
			   offsetof(struct dev_map_desc, max_probe),
			   sizeof(max_probe));
	if (!ret && max_probe >= first)
		ret = probe_walk(m, key, value, p,
				 max_probe < cnt ? max_probe + 1 : cnt);
	return ret < 0 ? ret : 0;
}

static int count_add(struct dev_map *m, int32_t delta)
{
	const uint64_t off = offsetof(struct dev_map_desc, count);
	uint32_t count;
	int err = dev_map_dtoh(m, &count, off, sizeof(count));

	if (err)
		return err;
	count += (uint32_t)delta;
	return dev_map_htod(m, off, &count, sizeof(count));
}

static int hash_lookup(struct dev_map *m, const struct kv_args *a)
{
	struct probe p;
	int err = hash_probe(m, a->key, a->out, &p);

	return err ? err : p.slot == NO_SLOT ? -ENOENT : 0;
}

/*
 * Fill the free slot @p found, in the device's order: key and value,
 * max_probe, then the state word, so a device reader sees a whole slot.
 */
static int hash_insert(struct dev_map *m, const struct probe *p,
		       const void *key, const void *value)
{
	const struct dev_map_desc *d = &m->desc;
	size_t key_len = dev_round8(d->key_size), len = key_len + d->value_size;
	uint32_t state = dev_slot_claim_word(p->free_word, DEV_SLOT_USED);
	uint64_t off = slot_off(m, probe_index(m, p, p->free_dist));
	struct dev_map_desc cur;
	uint8_t *buf;
	int err;

	err = dev_map_dtoh(m, &cur, 0, sizeof(cur));
	if (err)
		return err;
	if (cur.count >= d->max_entries)
		return -E2BIG;
	buf = calloc(1, len);
	if (!buf) {
		err_set(EGPU_ENOMEM, "map '%s': out of memory", m->name);
		return -ENOMEM;
	}
	memcpy(buf, key, d->key_size);
	memcpy(buf + key_len, value, d->value_size);
	err = dev_map_htod(m, off + dev_slot_key_offset(), buf, len);
	free(buf);
	if (!err && p->free_dist > cur.max_probe)
		err = dev_map_htod(m, offsetof(struct dev_map_desc, max_probe),
				   &p->free_dist, sizeof(p->free_dist));
	if (!err)
		err = dev_map_htod(m, off, &state, sizeof(state));
	cur.count++;
	return err ? err :
		     dev_map_htod(m, offsetof(struct dev_map_desc, count),
				  &cur.count, sizeof(cur.count));
}

static int hash_update(struct dev_map *m, const struct kv_args *a)
{
	struct probe p;
	int err = hash_probe(m, a->key, NULL, &p);

	if (err)
		return err;
	if (p.slot != NO_SLOT) {
		if (a->flags == EGPU_NOEXIST)
			return -EEXIST;
		return dev_map_htod(m, slot_off(m, p.slot) +
			    dev_slot_value_offset(m->desc.key_size),
			    a->in, m->desc.value_size);
	}
	if (a->flags == EGPU_EXIST)
		return -ENOENT;
	/* Every slot the key may be in was taken: look on for a free one. */
	if (p.free_dist == NO_SLOT &&
	    (err = probe_walk(m, NULL, NULL, &p, m->desc.slot_cnt)) < 0)
		return err;
	if (p.free_dist == NO_SLOT)
		return -E2BIG;
	return hash_insert(m, &p, a->key, a->in);
}

static int hash_delete(struct dev_map *m, const struct kv_args *a)
{
	struct probe p;
	uint32_t state;
	int err = hash_probe(m, a->key, NULL, &p);

	if (err)
		return err;
	if (p.slot == NO_SLOT)
		return -ENOENT;
	state = dev_slot_word(p.word, DEV_SLOT_DELETED);
	err = dev_map_htod(m, slot_off(m, p.slot), &state, sizeof(state));
	return err ? err : count_add(m, -1);
}

/* The first USED slot at or after @from, scanning in large copies. */
static int hash_scan(struct dev_map *m, uint32_t from, void *next)
{
	const uint32_t ss = m->desc.slot_size, cnt = m->desc.slot_cnt;
	uint32_t batch = SCAN_BYTES / ss ? SCAN_BYTES / ss : 1;
	uint8_t *buf = malloc((size_t)batch * ss);
	int err = -ENOENT;

	if (!buf) {
		err_set(EGPU_ENOMEM, "map '%s': out of memory", m->name);
		return -ENOMEM;
	}
	for (uint64_t i = from; i < cnt && err == -ENOENT; i += batch) {
		uint32_t n = batch < cnt - i ? batch : (uint32_t)(cnt - i);

		if (dev_map_dtoh(m, buf, slot_off(m, (uint32_t)i), (size_t)n * ss)) {
			err = -EIO;
			break;
		}
		for (uint32_t j = 0; j < n; j++) {
			const uint8_t *s = buf + (size_t)j * ss;

			if (dev_slot_state_of(slot_word(s)) == DEV_SLOT_USED) {
				memcpy(next, s + dev_slot_key_offset(),
				       m->desc.key_size);
				err = 0;
				break;
			}
		}
	}
	free(buf);
	return err;
}

static int hash_next_key(struct dev_map *m, const struct kv_args *a)
{
	struct probe p = { .slot = NO_SLOT };
	int err = a->key ? hash_probe(m, a->key, NULL, &p) : 0;

	if (err)
		return err;
	/* A vanished key restarts iteration, as Linux does. */
	return hash_scan(m, p.slot == NO_SLOT ? 0 : p.slot + 1, a->out);
}

kv_fn *const dev_hash_ops[KV_OP_CNT] = {
	[KV_LOOKUP] = hash_lookup,
	[KV_UPDATE] = hash_update,
	[KV_DELETE] = hash_delete,
	[KV_NEXT_KEY] = hash_next_key,
};
