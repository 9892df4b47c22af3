/* SPDX-License-Identifier: MIT */
/*
 * egpu memcheck's hooks of the driver's allocation API (memcheck_hook.c),
 * for hook.c's lookups, and the table they keep for the probe.
 */
#ifndef EGPU_MEMCHECK_HOOK_H
#define EGPU_MEMCHECK_HOOK_H

#include <stdbool.h>

#include <cuda.h>

struct mc_dev;
struct mc_table;

/*
 * The wrapper for driver function @name (versioned: "cuMemAlloc_v2";
 * "_ptsz" variants included) whose driver function is @real_fn, or NULL:
 * not ours, or EGPU_MEMCHECK unset.
 */
void *memcheck_wrap(const char *name, void *real_fn);
/*
 * How the exports (programs linked with -lcuda) find the driver's own
 * function @name, NULL without a driver; hook.c sets it before main.
 * Unset, the exports return CUDA_ERROR_NOT_INITIALIZED.
 */
void memcheck_driver_lookup(void *(*lookup)(const char *name));
/* The versioned name cuGetProcAddress(@symbol, @version) hands out. */
const char *memcheck_proc_name(const char *symbol, int version);
/*
 * Instrumented PTX @ptx was loaded as @mod (or @lib): its .global and
 * .const variables join the table (nothing with EGPU_MEMCHECK unset).
 */
void memcheck_loaded(const char *ptx, CUmodule mod, CUlibrary lib);
/* Whether EGPU_MEMCHECK asks for memcheck (and it has not failed). */
bool memcheck_on(void);
/* The table, made now in the current context if not yet; NULL: off
 * (unset, or it could not be made: said once on stderr). */
struct mc_table *memcheck_start(void);
/* The table and its GPU side, NULL until the first allocation seen. */
struct mc_table *memcheck_table(void);
struct mc_dev *memcheck_dev(void);

#endif
