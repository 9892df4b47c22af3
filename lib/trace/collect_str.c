/* SPDX-License-Identifier: MIT */
/*
 * Interned strings (every name in the trace data is one pool's copy, so
 * equal names are equal pointers) and an open-addressing pointer map.
 */
#include <stdlib.h>
#include <string.h>

#include "collect_impl.h"

/* libstdc++'s demangler (the Itanium C++ ABI's entry point). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */

	while (n--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static uint64_t hash_word(uintptr_t k)
{
	uint64_t h = k * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 29);
}

/* Slot of @s in @slot (cap a power of two): its copy, or the empty one. */
static size_t str_slot(char **slot, size_t cap, const char *s, size_t n)
{
	size_t i = hash_bytes(s, n) & (cap - 1);

	while (slot[i] && (strncmp(slot[i], s, n) || slot[i][n]))
		i = (i + 1) & (cap - 1);
	return i;
}

static int strpool_grow(struct strpool *p)
{
	size_t cap = p->cap ? p->cap * 2 : 256;
	char **slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -1;
	for (size_t i = 0; i < p->cap; i++)
		if (p->slot[i])
			slot[str_slot(slot, cap, p->slot[i],
				      strlen(p->slot[i]))] = p->slot[i];
	free(p->slot);
	p->slot = slot;
	p->cap = cap;
	return 0;
}

const char *strpool_add(struct strpool *p, const char *s, size_t n)
{
	size_t i;

	if ((p->n + 1) * 2 > p->cap && strpool_grow(p))
		return NULL;
	i = str_slot(p->slot, p->cap, s, n);
	if (!p->slot[i]) {
		p->slot[i] = strndup(s, n);
		if (!p->slot[i])
			return NULL;
		p->n++;
	}
	return p->slot[i];
}

void strpool_free(struct strpool *p)
{
	for (size_t i = 0; i < p->cap; i++)
		free(p->slot[i]);
	free(p->slot);
	memset(p, 0, sizeof(*p));
}

const char *strpool_demangled(struct strpool *p, const char *name)
{
	char *d = NULL;
	const char *out;
	int status;

	if (!strncmp(name, "_Z", 2))
		d = __cxa_demangle(name, NULL, NULL, &status);
	out = d ? strpool_add(p, d, strlen(d))
		: strpool_add(p, name, strlen(name));
	free(d);
	return out;
}

static size_t ptr_slot(const uintptr_t *key, size_t cap, uintptr_t k)
{
	size_t i = hash_word(k) & (cap - 1);

	while (key[i] && key[i] != k)
		i = (i + 1) & (cap - 1);
	return i;
}

void *ptrmap_get(const struct ptrmap *m, uintptr_t k)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = ptr_slot(m->key, m->cap, k);
	return m->key[i] ? m->val[i] : NULL;
}

static int ptrmap_grow(struct ptrmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 256;
	uintptr_t *key = calloc(cap, sizeof(*key));
	void **val = calloc(cap, sizeof(*val));

	if (!key || !val) {
		free(key);
		free(val);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (m->key[i]) {
			size_t j = ptr_slot(key, cap, m->key[i]);

			key[j] = m->key[i];
			val[j] = m->val[i];
		}
	}
	free(m->key);
	free(m->val);
	m->key = key;
	m->val = val;
	m->cap = cap;
	return 0;
}

int ptrmap_put(struct ptrmap *m, uintptr_t k, void *v)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && ptrmap_grow(m))
		return EGPU_ENOMEM;
	i = ptr_slot(m->key, m->cap, k);
	if (!m->key[i])
		m->n++;
	m->key[i] = k;
	m->val[i] = v;
	return 0;
}

void ptrmap_free(struct ptrmap *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof(*m));
}

/* ---- the lock-free map ---- */

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
