/* SPDX-License-Identifier: MIT */
/* The collector's lock-free map (collect_impl.h). */
#include <stdlib.h>

#include "collect_impl.h"

#define LF_BUSY ((uintptr_t)1)   /* a slot being filled */

int lfmap_init(struct lfmap *m, size_t cap)
{
	m->slot = calloc(cap, sizeof(*m->slot));
	m->cap = cap;
	atomic_init(&m->used, 0);
	return m->slot ? 0 : -1;
}

bool lfmap_get(const struct lfmap *m, uintptr_t key, uint64_t *val)
{
	uintptr_t k;

	for (size_t i = hash_word(key) & (m->cap - 1);;
	     i = (i + 1) & (m->cap - 1)) {
		k = atomic_load_explicit(&m->slot[i].key, memory_order_acquire);
		if (k == key) {
			*val = m->slot[i].val;
			return true;
		}
		if (!k)
			return false;
	}
}

void lfmap_put(struct lfmap *m, uintptr_t key, uint64_t val)
{
	uintptr_t k;

	/* three quarters full: no more (callers work without the entry) */
	if (atomic_load(&m->used) >= m->cap / 4 * 3)
		return;
	for (size_t i = hash_word(key) & (m->cap - 1);;
	     i = (i + 1) & (m->cap - 1)) {
		k = atomic_load_explicit(&m->slot[i].key, memory_order_acquire);
		if (k == key)
			return;
		if (k)
			continue;
		if (atomic_compare_exchange_strong(&m->slot[i].key, &k,
						   LF_BUSY)) {
			atomic_fetch_add(&m->used, 1);
			m->slot[i].val = val;
			atomic_store_explicit(&m->slot[i].key, key,
					      memory_order_release);
			return;
		}
		i = (i - 1) & (m->cap - 1);    /* taken meanwhile: look again */
	}
}

void lfmap_free(struct lfmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = 0;
}
