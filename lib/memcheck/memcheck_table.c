/* SPDX-License-Identifier: MIT */
/*
 * The allocation table (memcheck_table.h, docs/memcheck.md). Records are
 * kept sorted by base; every change builds a new index under the lock and
 * publishes it outside the lock, newest wins. A record leaves the table
 * when it is freed (synchronous free) or when its stream reaches its free
 * (a host function on that stream); its slot is retired then and reused
 * only after a quiesce, since a kernel may still hold an index naming it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/memcheck_layout.h"
#include "memcheck/memcheck_origin.h"
#include "memcheck/memcheck_table.h"
#include "memcheck/memcheck_table_impl.h"
#include "core/core.h"

/* A stream-ordered free's note to its host function. */
struct pending_free {
	struct mc_table *t;
	uint64_t serial;
};

static const char *const kind_names[MC_KIND_COUNT] = {
	[MC_KIND_ALLOC] = "cudaMalloc",
	[MC_KIND_PITCH] = "cudaMallocPitch",
	[MC_KIND_MANAGED] = "cudaMallocManaged",
	[MC_KIND_HOST] = "cudaHostAlloc",
	[MC_KIND_REGISTERED] = "cudaHostRegister",
	[MC_KIND_ASYNC] = "cudaMallocAsync",
	[MC_KIND_POOL] = "cudaMallocFromPoolAsync",
	[MC_KIND_VMM] = "cuMemMap",
	[MC_KIND_GLOBAL] = "__device__ variable",
};

const char *mc_kind_name(enum mc_kind kind)
{
	return (unsigned)kind < MC_KIND_COUNT ? kind_names[kind] : "unknown";
}

struct mc_table *mc_table_new(const struct mc_backend *be)
{
	struct mc_table *t = calloc(1, sizeof(*t));

	if (!t) {
		err_set(EGPU_ENOMEM, "memcheck: no memory for the allocation table");
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->pub_lock, NULL);
	t->be = *be;
	return t;
}

int mc_table_keep_origins(struct mc_table *t)
{
	if (!t->origins && !(t->origins = mc_origins_new()))
		return err_set(EGPU_ENOMEM, "memcheck: no memory for allocation stacks");
	return 0;
}

/* The calling thread's stack, where stacks are kept. */
static uint32_t take_origin(struct mc_table *t)
{
	return t->origins ? mc_origin_take(t->origins) : 0;
}

void mc_table_free(struct mc_table *t)
{
	if (!t)
		return;
	mc_origins_free(t->origins);
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->pub_lock);
	free(t->recs);
	free(t->free_slots);
	free(t->retired);
	free(t);
}

/* First record with base >= @base (records are sorted by base). */
size_t mc_rec_lower(const struct mc_table *t, uint64_t base)
{
	size_t lo = 0, hi = t->nrec;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->recs[mid].base < base)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int insert(struct mc_table *t, const struct mc_rec *r)
{
	size_t at;

	if (!ARRAY_GROW(t->recs, t->rec_cap, t->nrec, 64))
		return err_set(EGPU_ENOMEM, "memcheck: no memory for %zu allocations",
			       t->nrec + 1);
	at = mc_rec_lower(t, r->base + 1); /* after records of the same base */
	memmove(&t->recs[at + 1], &t->recs[at],
		(t->nrec - at) * sizeof(*t->recs));
	t->recs[at] = *r;
	t->nrec++;
	return 0;
}

static bool push_slot(uint32_t **v, size_t *cap, size_t *n, uint32_t slot)
{
	if (!array_grow((void **)v, cap, *n, 64, sizeof(**v)))
		return false;
	(*v)[(*n)++] = slot;
	return true;
}

/* Drop record @i: its slot waits for a quiesce; @gone (NULL: nothing)
 * is remembered as freed. */
static void drop(struct mc_table *t, size_t i, const struct mc_rec *gone)
{
	/* A slot that cannot be listed is lost, not reused early. */
	(void)push_slot(&t->retired, &t->retired_cap, &t->nretired,
			t->recs[i].slot);
	if (gone)
		t->freed[t->nfreed++ % MC_HISTORY] = *gone;
	memmove(&t->recs[i], &t->recs[i + 1],
		(t->nrec - i - 1) * sizeof(*t->recs));
	t->nrec--;
}

/* A slot whose state is 0, MC_NONE when all are taken. */
static uint32_t take_slot(struct mc_table *t)
{
	if (t->nfree)
		return t->free_slots[--t->nfree];
	if (t->next_slot < t->be.max_slots)
		return t->next_slot++;
	return MC_NONE;
}

/*
 * A slot for a new record, with the lock held; when all are taken, waits
 * for the GPU (outside the lock: a stream's host function may be waiting
 * for it) and reuses the retired ones.
 */
static int new_slot(struct mc_table *t, uint32_t *slot)
{
	*slot = take_slot(t);
	if (*slot != MC_NONE)
		return 0;
	pthread_mutex_unlock(&t->lock);
	if (t->be.quiesce && !t->be.quiesce(t->be.user))
		mc_table_quiesced(t);
	pthread_mutex_lock(&t->lock);
	*slot = take_slot(t);
	if (*slot == MC_NONE)
		return err_set(EGPU_ENOMEM, "memcheck: more than %u allocations live",
			       t->be.max_slots);
	return 0;
}

/* Where @addr falls among the @n sorted @bounds (it is one of them). */
static uint32_t bound_at(const uint64_t *bounds, uint32_t n, uint64_t addr)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (bounds[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorted distinct bounds of every record into @b; their number. */
static uint32_t collect_bounds(const struct mc_table *t, uint64_t *b)
{
	uint32_t n = 0, k = 0;

	for (size_t i = 0; i < t->nrec; i++) {
		b[n++] = t->recs[i].base;
		b[n++] = t->recs[i].end;
	}
	qsort(b, n, sizeof(*b), cmp_u64);
	for (uint32_t i = 0; i < n; i++)
		if (!k || b[k - 1] != b[i])
			b[k++] = b[i];
	return k;
}

/* Entry @e covers segments [@from, @to): list it in each. */
static void cover_range(uint32_t *cover, uint32_t from, uint32_t to,
			uint32_t e)
{
	for (uint32_t s = from; s < to; s++) {
		uint32_t *c = cover + (uint64_t)s * MC_COVER;
		int k = 0;

		while (k < MC_COVER && c[k] != MC_NONE && c[k] != MC_WILD)
			k++;
		if (k == MC_COVER)
			c[0] = MC_WILD, c[1] = MC_NONE;
		else if (c[k] == MC_NONE)
			c[k] = e;
	}
}

/* The index of the records as they are now, malloc'd; NULL: no memory. */
static void *build_index(const struct mc_table *t, size_t *bytes)
{
	uint32_t nb, nseg, nent = (uint32_t)t->nrec;
	uint64_t *b = malloc((t->nrec * 2 + 1) * sizeof(*b));
	struct mc_index_hdr *h = NULL;

	if (!b)
		return NULL;
	nb = collect_bounds(t, b);
	nseg = nb ? nb - 1 : 0;
	*bytes = mc_index_bytes(nseg, nent);
	h = malloc(*bytes);
	if (h) {
		uint32_t *cover;
		struct mc_entry *ent;

		h->nseg = nseg;
		h->nent = nent;
		memcpy((uint64_t *)mc_bounds(h), b, (nseg + 1ull) * sizeof(*b));
		if (!nb)
			*(uint64_t *)mc_bounds(h) = 0;
		cover = (uint32_t *)mc_cover(h);
		memset(cover, 0xff, (size_t)nseg * MC_COVER * sizeof(*cover));
		ent = (struct mc_entry *)mc_entries(h);
		for (uint32_t i = 0; i < nent; i++) {
			const struct mc_rec *r = &t->recs[i];

			ent[i] = (struct mc_entry){
				r->base, r->end, r->slot, r->kind,
				r->graph ? MC_ENTRY_NO_HINT : 0 };
			cover_range(cover, bound_at(b, nb, r->base),
				    bound_at(b, nb, r->end), i);
		}
	}
	free(b);
	return h;
}

/*
 * A change that may have ended an allocation (an index published, a
 * state set to 0; @stream NULL: made now) ends every hint a kernel may
 * hold: a new tag, written after it in the same order.
 */
static void new_tag(struct mc_table *t, void *stream)
{
	uint32_t tag = mc_tag_word(atomic_fetch_add(&t->changes, 1) + 1);

	if (!stream || t->be.set_tag(t->be.user, tag, stream))
		t->be.set_tag(t->be.user, tag, NULL);
}

/* states[@slot] = 0, now (@stream NULL) or in @stream's order. */
static void set_dead(struct mc_table *t, uint32_t slot, void *stream)
{
	t->be.set_state(t->be.user, slot, 0, stream);
	new_tag(t, stream);
}

/*
 * Publish the table as it is; called with the lock held, releases it.
 * Builds run in lock order, so a version older than the one published
 * (a racing thread's) is dropped.
 */
static int publish_unlock(struct mc_table *t)
{
	size_t bytes = 0;
	void *ix = build_index(t, &bytes);
	uint64_t ver = ++t->version;
	int err = 0;

	pthread_mutex_unlock(&t->lock);
	if (!ix)
		return err_set(EGPU_ENOMEM, "memcheck: no memory for an index of %zu allocations",
			       mc_table_count(t));
	pthread_mutex_lock(&t->pub_lock);
	if (ver > t->published) {
		err = t->be.publish(t->be.user, ix, bytes);
		if (!err) {
			t->published = ver;
			new_tag(t, NULL);
		}
	}
	pthread_mutex_unlock(&t->pub_lock);
	free(ix);
	return err ? err_set(EGPU_EIO, "memcheck: publishing the allocation index: CUDA error %d",
			     err)
		   : 0;
}

static int check_range(uint64_t base, uint64_t size)
{
	if (!size || base + size < base)
		return err_set(EGPU_EINVAL, "memcheck: bad range 0x%llx + %llu",
			       (unsigned long long)base,
			       (unsigned long long)size);
	return 0;
}

/* Whether module variable @r is in the table already. */
static bool known_global(const struct mc_table *t, const struct mc_rec *r)
{
	for (size_t i = mc_rec_lower(t, r->base);
	     i < t->nrec && t->recs[i].base == r->base; i++)
		if (t->recs[i].end == r->end && t->recs[i].kind == MC_KIND_GLOBAL)
			return true;
	return false;
}

/* Add a record live now (state 1) or in @stream's order; publish. */
static int add(struct mc_table *t, uint64_t base, uint64_t size,
	       enum mc_kind kind, void *stream, bool graph)
{
	struct mc_rec r = { .base = base, .end = base + size, .kind = kind,
			    .graph = graph };
	int err = check_range(base, size);

	if (err)
		return err;
	r.origin = take_origin(t);
	pthread_mutex_lock(&t->lock);
	if (kind == MC_KIND_GLOBAL && known_global(t, &r)) {
		pthread_mutex_unlock(&t->lock);
		return 0; /* asked for again */
	}
	err = new_slot(t, &r.slot);
	if (!err) {
		r.serial = ++t->serial;
		err = insert(t, &r);
		if (err)
			(void)push_slot(&t->free_slots, &t->free_cap, &t->nfree,
					r.slot);
	}
	if (err) {
		pthread_mutex_unlock(&t->lock);
		return err;
	}
	/* A stream that cannot take the write makes it live now: a missed
	 * use-before-allocation beats a false report. */
	if (!stream || t->be.set_state(t->be.user, r.slot, 1, stream))
		t->be.set_state(t->be.user, r.slot, 1, NULL);
	return publish_unlock(t);
}

int mc_table_alloc(struct mc_table *t, uint64_t base, uint64_t size,
		   enum mc_kind kind)
{
	return add(t, base, size, kind, NULL, false);
}

int mc_table_alloc_async(struct mc_table *t, uint64_t base, uint64_t size,
			 enum mc_kind kind, void *stream, bool capturing)
{
	return add(t, base, size, kind, stream, capturing);
}

/* The record of the live allocation at @base; SIZE_MAX: none. */
static size_t find_live(const struct mc_table *t, uint64_t base)
{
	size_t i = mc_rec_lower(t, base), found = SIZE_MAX;

	for (; i < t->nrec && t->recs[i].base == base; i++)
		if (!t->recs[i].freeing)
			found = i; /* the newest of a reused address */
	return found;
}

static void freed_in_stream(void *arg)
{
	struct pending_free *p = arg;
	struct mc_table *t = p->t;

	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->nrec; i++)
		if (t->recs[i].serial == p->serial) {
			drop(t, i, &t->recs[i]);
			break;
		}
	pthread_mutex_unlock(&t->lock);
	free(p);
}

/* Ask @stream to drop record @r when it gets there; false: cannot. */
static bool drop_in_stream(struct mc_table *t, const struct mc_rec *r,
			   void *stream)
{
	struct pending_free *p = malloc(sizeof(*p));

	if (!p)
		return false;
	*p = (struct pending_free){ t, r->serial };
	if (t->be.host_fn(t->be.user, stream, freed_in_stream, p)) {
		free(p);
		return false;
	}
	return true;
}

int mc_table_free_at(struct mc_table *t, uint64_t base, void *stream,
		     bool capturing)
{
	size_t i;

	pthread_mutex_lock(&t->lock);
	i = find_live(t, base);
	if (i == SIZE_MAX) {
		pthread_mutex_unlock(&t->lock);
		return err_set(EGPU_ENOENT, "memcheck: no live allocation at 0x%llx",
			       (unsigned long long)base);
	}
	if (!stream) {
		drop(t, i, &t->recs[i]);
		return publish_unlock(t);
	}
	/* Its state goes to 0 in stream order; the record stays in the
	 * index until the stream gets there (a graph's stays). */
	t->recs[i].freeing = true;
	if (capturing) {
		/* each replay sets the state, with no new tag: the entry
		 * takes no more hints, and the new index ends the old */
		t->recs[i].graph = true;
		t->be.set_state(t->be.user, t->recs[i].slot, 0, stream);
		return publish_unlock(t);
	}
	set_dead(t, t->recs[i].slot, stream);
	if (!t->recs[i].graph && !drop_in_stream(t, &t->recs[i], stream))
		t->recs[i].graph = true; /* kept: its state says it is dead */
	pthread_mutex_unlock(&t->lock);
	return 0;
}

/* Drop the VMM records meeting [base, end) (@touch: or adjacent), the
 * pieces of them outside it into @keep (two at most: one each side). */
static int cut_vmm(struct mc_table *t, uint64_t base, uint64_t end,
		   bool touch, struct mc_rec keep[2], int *nkeep)
{
	struct mc_rec gone;

	*nkeep = 0;
	for (size_t i = t->nrec; i-- > 0;) {
		const struct mc_rec *r = &t->recs[i];
		bool meets = touch ? r->base <= end && r->end >= base
				   : r->base < end && r->end > base;

		if (r->kind != MC_KIND_VMM || !meets)
			continue;
		if (*nkeep + (r->base < base) + (r->end > end) > 2)
			return err_set(EGPU_EINVAL, "memcheck: cuMemMap records overlap at 0x%llx",
				       (unsigned long long)r->base);
		if (r->base < base)
			keep[(*nkeep)++] = (struct mc_rec){
				.base = r->base, .end = base, .origin = r->origin };
		if (r->end > end)
			keep[(*nkeep)++] = (struct mc_rec){
				.base = end, .end = r->end, .origin = r->origin };
		gone = *r;
		gone.base = r->base > base ? r->base : base;
		gone.end = r->end < end ? r->end : end;
		drop(t, i, touch ? NULL : &gone); /* a merge frees nothing */
	}
	return 0;
}

/*
 * VMM maps are synchronous: the table changes now. Records are replaced,
 * never zeroed: a kernel still reading the old index sees the old ranges
 * (at worst an unmapped byte passes), never a false report.
 */
static int vmm_change(struct mc_table *t, uint64_t base, uint64_t size,
		      bool map)
{
	struct mc_rec keep[2], merged;
	int nkeep, err = check_range(base, size);
	uint64_t end = base + size;
	uint32_t origin = map ? take_origin(t) : 0;

	if (err)
		return err;
	pthread_mutex_lock(&t->lock);
	err = cut_vmm(t, base, end, map, keep, &nkeep);
	if (!err && map) {
		merged = (struct mc_rec){ .base = base, .end = end,
					  .origin = origin };
		for (int k = 0; k < nkeep; k++) {
			merged.base = keep[k].base < merged.base ? keep[k].base
								  : merged.base;
			merged.end = keep[k].end > merged.end ? keep[k].end
							     : merged.end;
		}
		keep[0] = merged;
		nkeep = 1;
	}
	for (int k = 0; !err && k < nkeep; k++) {
		keep[k].kind = MC_KIND_VMM;
		keep[k].serial = ++t->serial;
		err = new_slot(t, &keep[k].slot);
		if (!err)
			err = insert(t, &keep[k]);
		if (!err)
			t->be.set_state(t->be.user, keep[k].slot, 1, NULL);
	}
	if (err) {
		pthread_mutex_unlock(&t->lock);
		return err;
	}
	return publish_unlock(t);
}

int mc_table_map(struct mc_table *t, uint64_t base, uint64_t size)
{
	return vmm_change(t, base, size, true);
}

int mc_table_unmap(struct mc_table *t, uint64_t base, uint64_t size)
{
	return vmm_change(t, base, size, false);
}

void mc_table_quiesced(struct mc_table *t)
{
	uint32_t *slots;
	size_t n;

	pthread_mutex_lock(&t->lock);
	slots = t->retired;
	n = t->nretired;
	t->retired = NULL;
	t->nretired = t->retired_cap = 0;
	pthread_mutex_unlock(&t->lock);
	/* no new tag: their records left the index, whose publishing
	 * changed it */
	for (size_t i = 0; i < n; i++)
		t->be.set_state(t->be.user, slots[i], 0, NULL);
	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < n; i++)
		(void)push_slot(&t->free_slots, &t->free_cap, &t->nfree,
				slots[i]);
	pthread_mutex_unlock(&t->lock);
	free(slots);
}

size_t mc_table_count(struct mc_table *t)
{
	size_t n;

	pthread_mutex_lock(&t->lock);
	n = t->nrec;
	pthread_mutex_unlock(&t->lock);
	return n;
}
