/* SPDX-License-Identifier: MIT */
/*
 * Interned strings (every name in the trace data is one pool's copy, so
 * equal names are equal pointers) and an open-addressing pointer map.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "symbols.h"

/* libstdc++'s demangler (the Itanium C++ ABI's entry point). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */

	while (n--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
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
