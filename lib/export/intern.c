/* SPDX-License-Identifier: MIT */
/*
 * Strings interned to dense ids 0, 1, 2, ... in first-seen order (pprof's
 * string table, its functions and locations, the keys of its samples):
 * open addressing on FNV-1a, the strings copied into the table.
 */
#include <stdlib.h>
#include <string.h>

#include "export/pprof.h"

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static int grow(struct intern *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	uint32_t *slots = malloc(cap * sizeof(*slots));
	char **strs = realloc(t->strs, cap / 2 * sizeof(*strs));

	if (strs)
		t->strs = strs;
	if (!slots || !strs) {
		free(slots);
		return err_set(EGPU_ENOMEM, "pprof: out of memory");
	}
	memset(slots, 0xff, cap * sizeof(*slots));
	for (size_t i = 0; i < t->n; i++) {
		size_t h = fnv1a(t->strs[i], strlen(t->strs[i])) & (cap - 1);

		while (slots[h] != UINT32_MAX)
			h = (h + 1) & (cap - 1);
		slots[h] = (uint32_t)i;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

int intern(struct intern *t, const char *s, size_t n, uint32_t *id)
{
	size_t h;

	if ((t->n + 1) * 2 > t->cap && grow(t))
		return EGPU_ENOMEM;
	h = fnv1a(s, n) & (t->cap - 1);
	for (; t->slots[h] != UINT32_MAX; h = (h + 1) & (t->cap - 1)) {
		const char *o = t->strs[t->slots[h]];

		if (!strncmp(o, s, n) && !o[n]) {
			*id = t->slots[h];
			return 0;
		}
	}
	t->strs[t->n] = strndup(s, n);
	if (!t->strs[t->n])
		return err_set(EGPU_ENOMEM, "pprof: out of memory");
	t->slots[h] = (uint32_t)t->n;
	*id = (uint32_t)t->n++;
	return 0;
}

void intern_free(struct intern *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->slots);
	*t = (struct intern){ 0 };
}
