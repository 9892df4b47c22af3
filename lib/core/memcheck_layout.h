/* SPDX-License-Identifier: MIT */
/*
 * egpu memcheck's allocation index as the GPU reads it (docs/memcheck.md),
 * and the lookup itself: one source for the host's tests and the probe.
 *
 * An index version is one immutable buffer, replaced whole when the set of
 * allocations changes (the host publishes a new one and swaps the 8-byte
 * pointer the probe reads):
 *
 *   struct mc_index_hdr
 *   uint64_t bounds[nseg + 1]       strictly increasing segment bounds
 *   uint32_t cover[nseg][MC_COVER]  entries covering each segment
 *   struct mc_entry ent[nent]       allocations, by base
 *
 * Whether an entry is live is not in the index but in its slot's state
 * word (states[slot], a stable array written in stream order), so a
 * stream-ordered free takes effect when its stream reaches it, without a
 * new index.
 */
#ifndef EGPU_MEMCHECK_LAYOUT_H
#define EGPU_MEMCHECK_LAYOUT_H

#include <stdint.h>

#ifdef __CUDACC__
#define MC_FN static __device__ __forceinline__
#else
#define MC_FN static inline
#endif

#define MC_COVER 4           /* entries one segment lists */
#define MC_NONE 0xffffffffu  /* no entry in this cover position */
#define MC_WILD 0xfffffffeu  /* more than MC_COVER overlap: not checked */

struct mc_index_hdr {
	uint32_t nseg; /* segments; 0: an empty table */
	uint32_t nent; /* entries */
};

struct mc_entry {
	uint64_t base;
	uint64_t end;  /* one past the last byte */
	uint32_t slot;  /* its state word */
	uint16_t kind;  /* enum mc_kind */
	uint16_t flags; /* MC_ENTRY_* */
};

/* A graph's allocation, or one a graph frees: its state changes at each
 * replay, which no tag follows, so no hint names it (struct mc_hint). */
#define MC_ENTRY_NO_HINT 1

MC_FN const uint64_t *mc_bounds(const struct mc_index_hdr *h)
{
	return (const uint64_t *)(h + 1);
}

MC_FN const uint32_t *mc_cover(const struct mc_index_hdr *h)
{
	return (const uint32_t *)(mc_bounds(h) + h->nseg + 1);
}

MC_FN const struct mc_entry *mc_entries(const struct mc_index_hdr *h)
{
	return (const struct mc_entry *)(mc_cover(h) + (uint64_t)h->nseg *
							  MC_COVER);
}

/* Bytes of an index of @nseg segments and @nent entries. */
MC_FN uint64_t mc_index_bytes(uint32_t nseg, uint32_t nent)
{
	return sizeof(struct mc_index_hdr) + (nseg + 1ull) * 8 +
	       (uint64_t)nseg * MC_COVER * 4 + (uint64_t)nent *
	       sizeof(struct mc_entry);
}

/*
 * The segment holding @addr: the largest i < nseg with bounds[i] <= addr,
 * or -1 outside every bound. log2(nseg) loads, no scan.
 */
MC_FN int64_t mc_segment(const struct mc_index_hdr *h, uint64_t addr)
{
	const uint64_t *b = mc_bounds(h);
	uint32_t lo = 0, hi = h->nseg;

	if (!h->nseg || addr < b[0] || addr >= b[h->nseg])
		return -1;
	while (hi - lo > 1) { /* b[lo] <= addr < b[hi] */
		uint32_t mid = lo + (hi - lo) / 2;

		if (b[mid] <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Whether [@addr, @addr + @size) lies inside one live allocation: 1 yes,
 * *@ent that allocation's entry (a checker may pass later accesses
 * inside it without a search), or NULL where the segment lists too many
 * overlapping entries to check; 0 no. @states is the slot array the
 * index's entries name.
 */
MC_FN int mc_find(const struct mc_index_hdr *h, const uint32_t *states,
		  uint64_t addr, uint32_t size, const struct mc_entry **ent)
{
	int64_t seg = mc_segment(h, addr);
	const uint32_t *c;
	uint64_t last = addr + (size ? size : 1);

	if (seg < 0 || last < addr)
		return 0;
	c = mc_cover(h) + (uint64_t)seg * MC_COVER;
	for (int k = 0; k < MC_COVER && c[k] != MC_NONE; k++) {
		const struct mc_entry *e;

		if (c[k] == MC_WILD) {
			*ent = 0;
			return 1;
		}
		e = mc_entries(h) + c[k];
		if (addr >= e->base && last <= e->end && states[e->slot]) {
			*ent = e;
			return 1;
		}
	}
	return 0;
}

/* mc_find() without the entry. */
MC_FN int mc_check(const struct mc_index_hdr *h, const uint32_t *states,
		   uint64_t addr, uint32_t size)
{
	const struct mc_entry *e;

	return mc_find(h, states, addr, size, &e);
}

/* Where the host publishes (egpu_memcheck_opts.index_cell). */
struct mc_cell {
	uint64_t index; /* struct mc_index_hdr *; 0: none yet */
	uint32_t tag;   /* mc_tag_word() of the table's changes */
};

/*
 * The lookup's hints, one per site (modulo MC_HINTS): the allocation the
 * site's last search found, as its base and end, each with the tag of
 * the table's state then in its top 16 bits (addresses take 48). So the
 * site's test is one load, with no dependent one: [addr, addr + size)
 * inside the hint's range, after both words are XORed with the current
 * tag. A stale hint's base keeps bits over 2^48 and never holds an
 * address under 2^48, the only ones the test takes.
 *
 * The table's tag (the word after the index's address in the cell)
 * changes after every change that may end an allocation: an index
 * published, a state set to 0 (in the freeing stream's order). A hint
 * is written in one 16-byte store, with a tag read before the search's
 * loads: one read stale costs a search, never a wrong verdict. Tags
 * wrap after 65,536 changes, where the hints are zeroed; a zeroed hint
 * holds nothing under any tag (its range is empty, or over 2^48).
 */
#define MC_HINTS 65536u
#define MC_HINT_ADDR_BITS 48
struct mc_hint {
	uint64_t base; /* ^ the tag word << 32 */
	uint64_t end;  /* one past the last byte, ^ the tag word << 32 */
};

/* The cell's tag word for the table's change count @n: what a hint's
 * words' high halves are XORed with. 0 once every 65,536. */
MC_FN uint32_t mc_tag_word(uint64_t n)
{
	return (uint32_t)(n & 0xffff) << (MC_HINT_ADDR_BITS - 32);
}

/* The hint for entry @e under tag word @tag; 0: none (a graph's entry,
 * MC_ENTRY_NO_HINT, or an end past 2^48, which cannot be tagged). */
MC_FN int mc_hint_of(const struct mc_entry *e, uint32_t tag,
		     struct mc_hint *h)
{
	if ((e->flags & MC_ENTRY_NO_HINT) || (e->end >> MC_HINT_ADDR_BITS))
		return 0;
	h->base = e->base ^ (uint64_t)tag << 32;
	h->end = e->end ^ (uint64_t)tag << 32;
	return 1;
}

/* Whether hint @h, read under tag word @tag, holds [@addr, @addr +
 * @size) (@size >= 1): the site's test (lib/ptx/memcheck_site.c). */
MC_FN int mc_hint_holds(const struct mc_hint *h, uint32_t tag,
			uint64_t addr, uint32_t size)
{
	uint64_t base = h->base ^ (uint64_t)tag << 32;
	uint64_t end = h->end ^ (uint64_t)tag << 32;

	return !(addr >> MC_HINT_ADDR_BITS) && addr >= base &&
	       addr + size <= end;
}

/*
 * A site's words about one access, 32 bytes: the fields of egpu_mem_ctx,
 * and for a shared or local access its offset in the window, in addr,
 * and the window's size, in bound. The head of both structs below.
 */
#define MC_ACCESS_WORDS                                                    \
	uint64_t addr;                                                     \
	uint32_t site;      /* egpu_mem_ctx.site */                        \
	uint32_t kernel_id; /* egpu_mem_ctx.kernel_id */                   \
	uint32_t size;      /* bytes accessed */                           \
	uint16_t kind;      /* EGPU_MEM_* */                               \
	uint16_t space;     /* EGPU_SPACE_* */                             \
	uint32_t line;      /* egpu_mem_ctx.line */                        \
	uint32_t bound;     /* shared: the block's bytes; local: the frame's */

/*
 * What the check hands the device runtime at a site (lib/device/
 * memcheck.cu), whose functions are copied into the site with the loads
 * of it folded (ptx/inline_ctx.c, ctx_layout_mc): constants of the site,
 * but the address, the site (a group of shared accesses reports its
 * members from one copy), a size in a register and the window's bytes.
 */
struct mc_site_ctx {
	MC_ACCESS_WORDS
};

/* What egpu_dev_mc_find answers: the live entry holding the access (its
 * address), or one of these. */
#define MC_FOUND_BAD 0  /* outside every live allocation: sent */
#define MC_FOUND_OK 1   /* passed without an entry: no table, or too many
			 * overlapping entries to check */

/* What the check sends the host for a bad access, 56 bytes: the site's
 * words and where the thread is. */
struct mc_violation {
	MC_ACCESS_WORDS
	uint32_t block[3];
	uint32_t thread[3];
};

/*
 * Where the check's reports go (lib/device/memcheck.cu): the first bad
 * access of each site becomes one record of the log, in mapped host
 * memory, which the host reads without a CUDA call; every bad access is
 * counted per site in GPU memory (the count also says "first").
 */
struct mc_log_rec {
	struct mc_violation v;
	uint32_t ready; /* written last, after a system fence: 1 */
	uint32_t pad;
};

/*
 * GPU memory: the log's next free record, the per-site counts, then a
 * word per site: its first bad access is out (in the log, or the log
 * full). The other bad accesses of the site wait for it, bounded by
 * MC_LOGGED_WAIT_NS, since one of them may fault and take the context,
 * and the log with it, before the first one's record reached the host.
 */
struct mc_counts {
	uint32_t next;      /* records taken (may pass log_cap: dropped) */
	uint32_t log_cap;   /* records the log holds */
	uint32_t max_sites; /* counts[]; a site past it counts in the last */
	uint32_t pad;
	uint32_t counts[];  /* [max_sites] counts, then the logged words */
};

#define MC_LOGGED_WAIT_NS 1000000u /* 1 ms: a record's writes take µs */

/* Bytes of struct mc_counts for @max_sites sites. */
#define MC_COUNTS_BYTES(max_sites)                                         \
	(sizeof(struct mc_counts) + 2 * (size_t)(max_sites) * sizeof(uint32_t))

#endif
