/* SPDX-License-Identifier: MIT */
/*
 * egpu memcheck's table of the application's live allocations
 * (docs/memcheck.md). The host keeps the records; each change publishes a
 * new immutable index (memcheck_layout.h) through a backend, and
 * stream-ordered allocations and frees flip their slot's state word in
 * their stream's order. The backend is the driver (memcheck_dev.c: the
 * attach agent's and egpu_memcheck's) or a simulated GPU in the unit
 * tests.
 */
#ifndef EGPU_MEMCHECK_TABLE_H
#define EGPU_MEMCHECK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egpu.h"

/* The public kinds (egpu.h, one source), by their table names. */
enum mc_kind {
	MC_KIND_ALLOC = EGPU_MEMCHECK_ALLOC,
	MC_KIND_PITCH = EGPU_MEMCHECK_PITCH,
	MC_KIND_MANAGED = EGPU_MEMCHECK_MANAGED,
	MC_KIND_HOST = EGPU_MEMCHECK_HOST,
	MC_KIND_REGISTERED = EGPU_MEMCHECK_REGISTERED,
	MC_KIND_ASYNC = EGPU_MEMCHECK_ASYNC,
	MC_KIND_POOL = EGPU_MEMCHECK_POOL,
	MC_KIND_VMM = EGPU_MEMCHECK_VMM, /* adjacent maps merged */
	MC_KIND_GLOBAL = EGPU_MEMCHECK_GLOBAL,
	MC_KIND_COUNT = EGPU_MEMCHECK_KIND_COUNT
};

/* "cudaMalloc", ...: the runtime's name where there is one. */
const char *mc_kind_name(enum mc_kind kind);

/* What the table needs of the GPU. Each returns 0 or a CUDA error. */
struct mc_backend {
	void *user;
	/* Make @bytes at @ix the index the probe reads from now on; the
	 * previous index must stay readable until the next quiesce (kernels
	 * running may hold its address). Called in version order, never
	 * with the table's lock held. */
	int (*publish)(void *user, const void *ix, size_t bytes);
	/* states[@slot] = @v: now (@stream NULL) or when @stream reaches
	 * this point. */
	int (*set_state)(void *user, uint32_t slot, uint32_t v, void *stream);
	/* The cell's tag word = @tag (core/memcheck_layout.h, mc_hint):
	 * now (@stream NULL) or when @stream reaches this point; a tag of
	 * 0 (a wrap) zeroes the hints first. */
	int (*set_tag)(void *user, uint32_t tag, void *stream);
	/* @fn(@arg) on some host thread when @stream reaches this point;
	 * @fn takes the table's lock and never calls the backend. */
	int (*host_fn)(void *user, void *stream, void (*fn)(void *), void *arg);
	/* Wait until every kernel launched so far has finished (nothing
	 * holds an old index or a retired slot any more); 0 or an error. */
	int (*quiesce)(void *user);
	uint32_t max_slots; /* size of the state array */
};

struct mc_table;

/* NULL: out of memory (message set). The backend is copied. */
struct mc_table *mc_table_new(const struct mc_backend *be);
void mc_table_free(struct mc_table *t);
/*
 * Keep each allocation's call stack from now on, taken in the call that
 * tells the table of it, for the words ("... made at run_case (from
 * main)"). 0, or EGPU_ENOMEM.
 */
int mc_table_keep_origins(struct mc_table *t);

/*
 * A synchronous allocation [@base, @base + @size), live now (cuMemAlloc,
 * managed, host, registered memory, a module's globals: the same
 * variable again is no change). 0, or EGPU_EINVAL for an empty or
 * wrapping range, EGPU_ENOMEM.
 */
int mc_table_alloc(struct mc_table *t, uint64_t base, uint64_t size,
		   enum mc_kind kind);
/*
 * A stream-ordered allocation: live when @stream reaches it. @capturing:
 * the stream is being captured into a graph, so the allocation belongs to
 * the graph and lives until the table is freed (its state still flips at
 * each replay).
 */
int mc_table_alloc_async(struct mc_table *t, uint64_t base, uint64_t size,
			 enum mc_kind kind, void *stream, bool capturing);
/*
 * Free the allocation starting at @base: now (@stream NULL) or when
 * @stream reaches it. EGPU_ENOENT: no live allocation starts there (the
 * driver will refuse it, or it was never seen).
 */
int mc_table_free_at(struct mc_table *t, uint64_t base, void *stream,
		     bool capturing);
/* cuMemMap: [@base, @base + @size) mapped; merges with adjacent maps. */
int mc_table_map(struct mc_table *t, uint64_t base, uint64_t size);
/* cuMemUnmap, cuMemAddressFree: whatever is mapped in the range goes. */
int mc_table_unmap(struct mc_table *t, uint64_t base, uint64_t size);

/*
 * Every kernel launched so far has finished: retired slots and old
 * indexes can be reused.
 */
void mc_table_quiesced(struct mc_table *t);

/* Live allocations and index segments, for tests and the report. */
size_t mc_table_count(struct mc_table *t);

/*
 * Where [@addr, @addr + @size) lies relative to the allocations, in words,
 * e.g. "4 bytes past the end of a 4,194,304-byte cudaMalloc allocation";
 * freed allocations are remembered for "inside a ... allocation freed
 * earlier". Always NUL-terminates @buf.
 */
void mc_table_describe(struct mc_table *t, uint64_t addr, uint32_t size,
		       char *buf, size_t n);

/* @v with thousands separators, "4,194,304", in @buf. */
const char *mc_commas(uint64_t v, char buf[32]);

#endif
