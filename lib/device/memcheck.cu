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

extern "C" __device__ uint64_t egpu_dev_mc_cell;   /* the index's address */
extern "C" __device__ uint64_t egpu_dev_mc_states; /* uint32_t[slots] */
extern "C" __device__ uint64_t egpu_dev_mc_counts; /* struct mc_counts */
extern "C" __device__ uint64_t egpu_dev_mc_log;    /* struct mc_log_rec[] */
extern "C" __device__ uint64_t egpu_dev_mc_hints;  /* struct mc_hint[] */

#define MC_API extern "C" __device__ __noinline__

/* Count the bad access of @c; the first of its site goes to the log. */
static __device__ void mc_send(const struct mc_site_ctx *c)
{
	struct mc_counts *n = (struct mc_counts *)(uintptr_t)egpu_dev_mc_counts;
	uint32_t site = c->site;
	uint32_t k = site < n->max_sites ? site : n->max_sites - 1;
	struct mc_log_rec *r;
	uint32_t i;

	if (atomicAdd(&n->counts[k], 1u))
		return;
	i = atomicAdd(&n->next, 1u);
	if (i >= n->log_cap)
		return;
	r = (struct mc_log_rec *)(uintptr_t)egpu_dev_mc_log + i;
	r->v.addr = c->addr;
	r->v.site = site;
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
}

/*
 * The live entry holding [c->addr, c->addr + c->size) (mc_find), noted in
 * the site's hint; MC_FOUND_OK when no table is published yet or the
 * access lies where too many allocations overlap; MC_FOUND_BAD when none
 * holds it, the access sent. The site tried its hint first.
 */
MC_API uint64_t egpu_dev_mc_find(const struct mc_site_ctx *c, uint64_t len)
{
	/* A plain load: caches are coherent at kernel boundaries, and an
	 * index published while the kernel runs may be missed (safe: the
	 * index a kernel read stays until every kernel has finished). */
	const struct mc_index_hdr *h =
		*(const struct mc_index_hdr *const *)(uintptr_t)egpu_dev_mc_cell;
	const struct mc_entry *e = NULL;
	ulonglong2 *hint;

	(void)len;
	if (!h)
		return MC_FOUND_OK;
	if (mc_find(h, (const uint32_t *)(uintptr_t)egpu_dev_mc_states,
		    c->addr, c->size, &e)) {
		if (!e)
			return MC_FOUND_OK;
		/* one 16-byte store: a hint read whole names one entry */
		hint = (ulonglong2 *)(uintptr_t)egpu_dev_mc_hints +
		       c->site % MC_HINTS;
		*hint = make_ulonglong2((uint64_t)(uintptr_t)h,
					(uint64_t)e->slot << 32 |
					(uint32_t)((uintptr_t)e - (uintptr_t)h));
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
