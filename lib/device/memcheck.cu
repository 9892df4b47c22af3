/* SPDX-License-Identifier: MIT */
/*
 * egpu memcheck's device side (docs/memcheck.md): what the check at each
 * memory site calls (lib/ptx/memcheck_site.c). egpu_dev_mc_find looks
 * an address up in the allocation table (mc_check, the one source in
 * core/memcheck_layout.h); a bad access of any space is counted for its
 * site and, the first time, written to the log the host reads. Nothing
 * here can fault: it reads only the published index, the state words and
 * its own buffers, whose addresses the instrumenting context defines in a
 * module of its own (lib/api/memcheck.c).
 *
 * Arguments are the site's words: @who = site << 32 | kernel id, @what =
 * size | kind << 32 | space << 48 (as egpu_mem_ctx), @line its .loc line.
 */
#include <stdint.h>

#include "core/memcheck_layout.h"

extern "C" __device__ uint64_t egpu_dev_mc_cell;   /* the index's address */
extern "C" __device__ uint64_t egpu_dev_mc_states; /* uint32_t[slots] */
extern "C" __device__ uint64_t egpu_dev_mc_counts; /* struct mc_counts */
extern "C" __device__ uint64_t egpu_dev_mc_log;    /* struct mc_log_rec[] */
extern "C" __device__ uint64_t egpu_dev_mc_hints;  /* struct mc_hint[] */

#define MC_API extern "C" __device__ __noinline__

/* Count the bad access; the first of its site goes to the log. */
static __device__ void mc_send(uint64_t addr, uint64_t who, uint64_t what,
			       uint32_t line, uint32_t bound)
{
	struct mc_counts *c = (struct mc_counts *)(uintptr_t)egpu_dev_mc_counts;
	uint32_t site = (uint32_t)(who >> 32);
	uint32_t k = site < c->max_sites ? site : c->max_sites - 1;
	struct mc_log_rec *r;
	uint32_t i;

	if (atomicAdd(&c->counts[k], 1u))
		return;
	i = atomicAdd(&c->next, 1u);
	if (i >= c->log_cap)
		return;
	r = (struct mc_log_rec *)(uintptr_t)egpu_dev_mc_log + i;
	r->v.addr = addr;
	r->v.site = site;
	r->v.kernel_id = (uint32_t)who;
	r->v.size = (uint32_t)what;
	r->v.kind = (uint16_t)(what >> 32);
	r->v.space = (uint16_t)(what >> 48);
	r->v.line = line;
	r->v.bound = bound;
	r->v.block[0] = blockIdx.x;
	r->v.block[1] = blockIdx.y;
	r->v.block[2] = blockIdx.z;
	r->v.thread[0] = threadIdx.x;
	r->v.thread[1] = threadIdx.y;
	r->v.thread[2] = threadIdx.z;
	__threadfence_system(); /* the record before its ready word */
	*(volatile uint32_t *)&r->ready = 1;
}

/* Where an access may go without another lookup: [lo, hi). */
struct mc_range {
	uint64_t lo, hi;
};

/*
 * The live allocation holding [addr, addr + size) (mc_find), noted in the
 * site's hint, or, when no table is published yet or the access lies
 * where too many allocations overlap, that access alone; {0, 0}: none,
 * and the access was sent. The site tried its hint before calling.
 */
MC_API struct mc_range egpu_dev_mc_find(uint64_t addr, uint64_t who,
					uint64_t what, uint32_t line)
{
	/* A plain load: caches are coherent at kernel boundaries, and an
	 * index published while the kernel runs may be missed (safe: the
	 * index a kernel read stays until every kernel has finished). */
	const struct mc_index_hdr *h =
		*(const struct mc_index_hdr *const *)(uintptr_t)egpu_dev_mc_cell;
	struct mc_range r = { addr, addr + (uint32_t)what };
	const struct mc_entry *e = NULL;
	ulonglong2 *hint;

	if (!h)
		return r;
	if (mc_find(h, (const uint32_t *)(uintptr_t)egpu_dev_mc_states, addr,
		    (uint32_t)what, &e)) {
		if (!e)
			return r;
		/* one 16-byte store: a hint read whole names one entry */
		hint = (ulonglong2 *)(uintptr_t)egpu_dev_mc_hints +
		       (uint32_t)(who >> 32) % MC_HINTS;
		*hint = make_ulonglong2((uint64_t)(uintptr_t)h,
					(uint64_t)(uintptr_t)e);
		return (struct mc_range){ e->base, e->end };
	}
	mc_send(addr, who, what, line, 0);
	return (struct mc_range){ 0, 0 };
}

/* A shared or local access outside its window: @off its offset there,
 * @bound the window's bytes. */
MC_API void egpu_dev_mc_window(uint64_t off, uint64_t who, uint64_t what,
			       uint32_t line, uint32_t bound)
{
	mc_send(off, who, what, line, bound);
}
