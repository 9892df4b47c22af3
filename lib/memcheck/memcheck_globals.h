/* SPDX-License-Identifier: MIT */
/*
 * The variables a PTX module defines in global or constant memory
 * (`.global`, `.const` at module scope; `.extern` ones and the device
 * runtime's own, `egpu_dev_*`, left out): what
 * egpu memcheck asks the driver the address and size of when the module
 * is loaded, so that kernels reading their own __device__ and
 * __constant__ variables are checked against them.
 */
#ifndef EGPU_MEMCHECK_GLOBALS_H
#define EGPU_MEMCHECK_GLOBALS_H

#include <stddef.h>
#include <stdint.h>

#include "memcheck/memcheck_table.h"

/* The names into *@names (malloc'd, each and the array; *@n of them). 0,
 * or an EGPU_* error (PTX that does not parse: message set). */
int mc_ptx_globals(const char *ptx, size_t len, char ***names, size_t *n);
void mc_globals_free(char **names, size_t n);

/* Where variable @name of the loaded module lies: 0 with *@addr and
 * *@size, or a CUDA error (the variable is left out). */
typedef int (*mc_global_fn)(void *user, const char *name, uint64_t *addr,
			    size_t *size);
/* The variables of @ptx, at the addresses @where gives, into @t (the same
 * variable again is no change). 0 or the first EGPU_* error (message
 * set; the others still added). */
int mc_table_globals(struct mc_table *t, const char *ptx, size_t len,
		     mc_global_fn where, void *user);

#endif
