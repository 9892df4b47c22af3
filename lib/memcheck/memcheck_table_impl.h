/* SPDX-License-Identifier: MIT */
/*
 * The allocation table's records, shared by memcheck_table.c (changes and
 * the index) and memcheck_describe.c (words for a report).
 */
#ifndef EGPU_MEMCHECK_TABLE_IMPL_H
#define EGPU_MEMCHECK_TABLE_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "memcheck/memcheck_table.h"

#define MC_HISTORY 256 /* freed allocations remembered for reports */

struct mc_rec {
	uint64_t base, end;
	uint64_t serial; /* identifies it to a pending free's host function */
	uint32_t slot;
	uint32_t origin; /* its call stack (memcheck_origin.h), 0: none */
	uint8_t kind;
	bool freeing;    /* its stream-ordered free is on its way */
	bool graph;      /* a captured graph's, or freed in one: never
			  * leaves, named by no hint */
};

struct mc_table {
	pthread_mutex_t lock;     /* everything below but published */
	pthread_mutex_t pub_lock; /* publishing, in version order */
	struct mc_backend be;
	struct mc_origins *origins; /* NULL: stacks not kept */
	struct mc_rec *recs;
	size_t nrec, rec_cap;
	uint32_t *free_slots; /* state 0, reusable */
	size_t nfree, free_cap;
	uint32_t *retired;    /* reusable after a quiesce */
	size_t nretired, retired_cap;
	uint32_t next_slot;
	uint64_t serial;
	uint64_t version, published;
	_Atomic uint64_t changes; /* that may end an allocation: its tags */
	struct mc_rec freed[MC_HISTORY];
	size_t nfreed; /* ever freed; freed[nfreed % MC_HISTORY] is next */
};

/* First record with base >= @base (records are sorted by base). */
size_t mc_rec_lower(const struct mc_table *t, uint64_t base);

#endif
