/* SPDX-License-Identifier: MIT */
/* Growing arrays: the one capacity-doubling loop (core.h, array_grow). */
#include <stdint.h>
#include <stdlib.h>

#include "core/core.h"

bool array_grow(void **v, size_t *cap, size_t n, size_t first, size_t size)
{
	size_t c = *cap ? *cap * 2 : first;
	void *p;

	if (n < *cap)
		return true;
	if (c < n + 1 || c > SIZE_MAX / size)
		return false;
	p = realloc(*v, c * size);
	if (!p)
		return false;
	*v = p;
	*cap = c;
	return true;
}
