/* SPDX-License-Identifier: MIT */
/*
 * Per-context state made at its first use (core.h, lazy_make): threads
 * may race to make it; one copy is published, the others undone.
 */
#include <stdlib.h>

#include "core/core.h"

void *lazy_make(void **slot, size_t size, void (*init)(void *),
		void (*fini)(void *), const char *what)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE), *none = NULL;

	if (p)
		return p;
	p = calloc(1, size);
	if (!p) {
		err_set(EGPU_ENOMEM, "%s: out of memory", what);
		return NULL;
	}
	init(p);
	if (__atomic_compare_exchange_n(slot, &none, p, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return p;
	fini(p); /* another thread made it first */
	free(p);
	return none;
}
