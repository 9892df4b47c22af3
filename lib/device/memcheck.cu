/* SPDX-License-Identifier: MIT */
/*
 * egpu memcheck's device side (docs/memcheck.md): what the check at each
 * memory site runs when its fast path cannot answer (lib/ptx/
 * memcheck_site.c). egpu_dev_mc_find looks an address up in the
 * allocation table (mc_find, the one source in core/memcheck_layout.h);
 * a bad access of any space is counted for its site and, the first time,
 * written to the log the host reads. Nothing here can fault: it reads
 * only the published index, the state words and its own buffers, whose
 * addresses the instrumenting context defines in a module of its own
 * (lib/api/memcheck.c).
 *
 * Both functions have a probe's shape (a ctx, its length, a result), so
 * the splicer copies their bodies into the sites, the ctx's loads
 * folded into the site's constants and registers (struct mc_site_ctx),
 * instead of calling them: a call makes ptxas keep every value live
 * across it, which cost a 1,024-thread SGEMM half its occupancy.
 */
#include <stdint.h>

#include "core/memcheck_layout.h"
#include "rt.cuh"

extern "C" __device__ uint64_t egpu_dev_mc_cell;   /* struct mc_cell */
extern "C" __device__ uint64_t egpu_dev_mc_states; /* uint32_t[slots] */
extern "C" __device__ uint64_t egpu_dev_mc_counts; /* struct mc_counts */
extern "C" __device__ uint64_t egpu_dev_mc_log;    /* struct mc_log_rec[] */
extern "C" __device__ uint64_t egpu_dev_mc_hints;  /* struct mc_hint[] */

#define MC_API extern "C" __device__ __noinline__

/* The first bad access of @c's site into the log, if it has room, out
 * in host memory when this returns. */
static __device__ void mc_log(const struct mc_site_ctx *c, struct mc_counts *n)
{
	uint32_t i = atomicAdd(&n->next, 1u);
	struct mc_log_rec *r;

	if (i >= n->log_cap)
		return;
	r = (struct mc_log_rec *)(uintptr_t)egpu_dev_mc_log + i;
	r->v.addr = c->addr;
	r->v.site = c->site;
	r->v.kernel_id = c->kernel_id;
	r->v.size = c->size;
	r->v.kind = c->kind;
	r->v.space = c->space;
	r->v.line = c->line;
	r->v.bound = c->bound;
	r->v.block[0] = blockIdx.x;
	r->v.block[1] = blockIdx.y;
	r->v.block[2] = blockIdx.z;
	r->v.thread[0] = threadIdx.x;
	r->v.thread[1] = threadIdx.y;
	r->v.thread[2] = threadIdx.z;
	__threadfence_system(); /* the record before its ready word */
	*(volatile uint32_t *)&r->ready = 1;
	__threadfence_system(); /* ready before the access, which may fault */
}

/*
 * Count the bad access of @c; the first of its site goes to the log, and
 * the others wait until it is out (struct mc_counts): a load past
 * shared memory faults, and a fault ends the context before a record
 * still on its way reaches the host.
 */
static __device__ void mc_send(const struct mc_site_ctx *c)
{
	struct mc_counts *n = (struct mc_counts *)(uintptr_t)egpu_dev_mc_counts;
	uint32_t k = c->site < n->max_sites ? c->site : n->max_sites - 1;
	volatile uint32_t *logged = &n->counts[n->max_sites + k];
	uint64_t t0;

	if (!atomicAdd(&n->counts[k], 1u)) {
		mc_log(c, n);
		*logged = 1;
		return;
	}
	for (t0 = rt_globaltimer(); !*logged &&
				    rt_globaltimer() - t0 < MC_LOGGED_WAIT_NS;)
		;
}

/*
 * The live entry holding [c->addr, c->addr + c->size) (mc_find), noted in
 * the site's hint; MC_FOUND_OK when no table is published yet or the
 * access lies where too many allocations overlap; MC_FOUND_BAD when none
 * holds it, the access sent. The site tried its hint first.
 */
MC_API uint64_t egpu_dev_mc_find(const struct mc_site_ctx *c, uint64_t len)
{
	const struct mc_cell *cell =
		(const struct mc_cell *)(uintptr_t)egpu_dev_mc_cell;
	/* The tag before the index and the states (an acquire, which also
	 * leaves no older copy of them in L1): a hint made with it names an
	 * allocation live after the change that set it. An index published
	 * while the kernel runs may be missed (safe: the index a kernel read
	 * stays until every kernel has finished). */
	uint32_t tag = rt_load_acquire(&cell->tag);
	const struct mc_index_hdr *h =
		(const struct mc_index_hdr *)(uintptr_t)cell->index;
	const struct mc_entry *e = NULL;
	struct mc_hint hint;

	(void)len;
	if (!h)
		return MC_FOUND_OK;
	if (mc_find(h, (const uint32_t *)(uintptr_t)egpu_dev_mc_states,
		    c->addr, c->size, &e)) {
		if (!e)
			return MC_FOUND_OK;
		/* one 16-byte store: a hint read whole is one allocation's */
		if (mc_hint_of(e, tag, &hint))
			((ulonglong2 *)(uintptr_t)egpu_dev_mc_hints)
				[c->site % MC_HINTS] =
				make_ulonglong2(hint.base, hint.end);
		return (uint64_t)(uintptr_t)e;
	}
	mc_send(c);
	return MC_FOUND_BAD;
}

/* A shared or local access outside its window: c->addr its offset there,
 * c->bound the window's bytes. */
MC_API uint64_t egpu_dev_mc_window(const struct mc_site_ctx *c, uint64_t len)
{
	(void)len;
	mc_send(c);
	return 0;
}
