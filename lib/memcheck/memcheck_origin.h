/* SPDX-License-Identifier: MIT */
/*
 * Where each allocation was made, for a report's words: the allocating
 * thread's stack, taken when the table learns of the allocation and kept
 * once per distinct stack, named when a report asks (trace/symbols.h).
 */
#ifndef EGPU_MEMCHECK_ORIGIN_H
#define EGPU_MEMCHECK_ORIGIN_H

#include <stddef.h>
#include <stdint.h>

struct mc_origins;

struct mc_origins *mc_origins_new(void);
void mc_origins_free(struct mc_origins *o);
/* The calling thread's stack, kept: its id, 0 when it cannot be kept. */
uint32_t mc_origin_take(struct mc_origins *o);
/*
 * " made at run_case (from main)": stack @id's innermost frames outside
 * libegpu and the CUDA libraries and runtime, at most three, up to the
 * program's start; "" when none is left (or @id is 0).
 */
void mc_origin_words(struct mc_origins *o, uint32_t id, char *buf,
		     size_t n);

#endif
