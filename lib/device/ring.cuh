/* SPDX-License-Identifier: MIT */
/*
 * Event ring producers on the GPU (layout: lib/maps/ring_layout.h; the
 * whole protocol: docs/events.md). Many threads of a grid write at once;
 * nothing here waits for the host: a record that does not fit is dropped
 * and counted.
 *
 * Reserving takes two counters in device memory, both only ever added to
 * with atomics, one per warp (the lanes that call at once are served
 * together; a lane alone claims without warp votes: ring_claim_one); a
 * ring in GPU memory has a pair per shard, and a thread uses its SM's
 * (ring_shard_of), so the warps of different SMs do not queue on the same
 * words:
 *   1. reserved += total; the lanes whose records fit below
 *      consumer + capacity keep their share, the rest is subtracted again;
 *   2. prod += kept bytes gives the positions.
 * A position comes from prod only after its bytes were promised by
 * reserved, so a record never overlaps one the host has not consumed yet,
 * and no position is handed out and then abandoned (a hole the consumer
 * would wait at forever). Proof sketch: of the records placed below mine,
 * take the one whose reservation came last; when it reserved, all the
 * others had reserved (and none of them gives back bytes it keeps: a
 * claim that keeps part of what it asked, ring_claim_one, returns only
 * the rest), so its check covered all of them and mine.
 *
 * The consumer position a check uses is cons_seen, loaded alongside the
 * reserved atomic (not after it, so the two round trips overlap), or the
 * host's when that looks full. cons_seen only grows and only ever holds
 * positions the host published, so a value older than the atomic is only
 * stricter: the check stays sound. That position was published by the
 * host (after it zeroed the space) before the prod atomic that follows
 * the check: the bytes kept, hence the prod addition, depend on the loaded
 * position, so the atomic issues only once the load returned; every
 * position at or above it is handed out later still.
 *
 * Publishing: payload, a system-scope release fence, then the header with
 * a volatile store; the host reads the header with acquire semantics.
 * bpf_ringbuf_output by several lanes at once with records of one size
 * makes one batch record: the warp writes it with coalesced stores and
 * fences once (ring_output_batch).
 */
#ifndef EGPU_DEVICE_RING_CUH
#define EGPU_DEVICE_RING_CUH

#include "maps/ring_layout.h"
#include "rt.cuh"

RT_INLINE uint32_t rt_lane(void)
{
	uint32_t lane;

	asm("mov.u32 %0, %%laneid;" : "=r"(lane));
	return lane;
}

RT_INLINE uint32_t rt_lanes_below(void)
{
	uint32_t mask;

	asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
	return mask;
}

/*
 * The words of a ring's descriptor that no launch changes, through the
 * read-only path (the counters beside them are only touched by atomics
 * and volatile loads, which bypass it).
 */
RT_INLINE struct dev_ring ring_shape(const struct dev_ring *r)
{
	struct dev_ring v;

	v.mask = __ldg(&r->mask);
	v.data = __ldg(&r->data);
	v.ctl = __ldg(&r->ctl);
	v.max_record = __ldg(&r->max_record);
	v.flags = __ldg(&r->flags);
	v.shards = __ldg(&r->shards);
	v.stride = __ldg(&r->stride);
	v.wait_ns = __ldg(&r->wait_ns);
	return v;
}

RT_INLINE bool ring_is_local(const struct dev_ring *r)
{
	return __ldg(&r->flags) & RING_IN_DEVICE_MEMORY;
}

/*
 * Where this thread's records go: the ring itself, or, in a ring in GPU
 * memory, its SM's shard (a thread never changes SM, so its records stay
 * in order; all lanes of a warp share one).
 */
struct ring_shard {
	struct ring_counters *ctr;
	uint64_t cons;  /* address of the consumer position */
	uint64_t drops; /* address of the drop count */
	uint64_t data;  /* address of the records */
	uint64_t mask;  /* capacity - 1 */
	uint64_t stall; /* address of the stall word (lossless rings) */
	uint64_t wait_ns; /* the longest wait for room; 0: drop at once */
	uint64_t done;  /* address of the published-bytes word, 0: none */
};

/* Shard @i of ring @r of shape @v (a ring in host memory is its own). */
RT_INLINE struct ring_shard ring_shard_at(struct dev_ring *r,
					  const struct dev_ring *v, uint32_t i)
{
	uint64_t wait = v->flags & RING_LOSSLESS ? v->wait_ns : 0;

	if (!(v->flags & RING_IN_DEVICE_MEMORY))
		return (struct ring_shard){
			(struct ring_counters *)r,
			v->ctl + offsetof(struct ring_ctl, cons),
			v->ctl + offsetof(struct ring_ctl, drops), v->data,
			v->mask, (uint64_t)(uintptr_t)&r->stall, wait, 0 };
	return (struct ring_shard){
		(struct ring_counters *)(uintptr_t)ring_shard_counters(v, i),
		ring_shard_cons(v, i), ring_shard_drops(v, i),
		ring_shard_data(v, i), v->mask, ring_shard_stall(v, i), wait,
		ring_shard_done(v, i) };
}

/* The shard index of this thread in a ring of shape @v (0: in host memory). */
RT_INLINE uint32_t ring_shard_here(const struct dev_ring *v)
{
	return v->flags & RING_IN_DEVICE_MEMORY ?
	       ring_shard_index(v, rt_smid()) : 0;
}

RT_INLINE struct ring_shard ring_shard_of(struct dev_ring *r)
{
	struct dev_ring v = ring_shape(r);

	return ring_shard_at(r, &v, ring_shard_here(&v));
}

/* The consumer position (system scope: from host memory, not cached). */
RT_INLINE uint64_t ring_host_cons(const struct ring_shard *s)
{
	uint64_t v;

	asm volatile("ld.acquire.sys.u64 %0, [%1];"
		     : "=l"(v) : "l"(s->cons) : "memory");
	return v;
}

/*
 * A lossless ring's wait (docs/events.md "Lossless rings"): the host's
 * consumer position once @need bytes from @before fit, or once the
 * position stood still for s->wait_ns (the stall word then set: a live
 * consumer that moves it keeps the wait going, however slowly it gives
 * room back), or at once when a wait ran out at this very position
 * before. The caller holds no unpublished record (a reservation is not
 * one: no position was handed out for it yet).
 */
RT_INLINE uint64_t ring_wait_room(const struct ring_shard *s, uint64_t before,
				  uint64_t need, uint64_t cons)
{
	uint64_t cap = s->mask + 1, t0 = rt_globaltimer(), seen = cons, stall;

	for (;;) {
		asm volatile("ld.volatile.global.u64 %0, [%1];"
			     : "=l"(stall) : "l"(s->stall) : "memory");
		if (before + need <= cons + cap || !ring_may_wait(stall, cons))
			return cons;
		if (cons != seen) {
			seen = cons;
			t0 = rt_globaltimer();
		}
		if (rt_globaltimer() - t0 > s->wait_ns) {
			asm volatile("st.volatile.global.u64 [%0], %1;"
				     :: "l"(s->stall), "l"(cons + 1) : "memory");
			return cons;
		}
		__nanosleep(2000);
		cons = ring_host_cons(s);
	}
}

/*
 * ring_room's slow path: the host's consumer position (after a lossless
 * ring's wait), kept in cons_seen. Not inlined: the wait loop's registers
 * would count in every instrumented kernel that claims, full ring or not
 * (sgemm_tiled under bpf_egpu_trace_warp: 70 registers, past the 64 its
 * 1024-thread blocks allow; 62 with this call). Named egpu_dev_ as all
 * the runtime's module-level symbols are (merged into application PTX).
 */
static __device__ __noinline__ uint64_t egpu_dev_ring_cons_now(const struct ring_shard *s,
						  uint64_t before, uint32_t need)
{
	uint64_t cons = ring_host_cons(s);

	if (s->wait_ns)
		cons = ring_wait_room(s, before, need, cons);
	atomicMax((unsigned long long *)&s->ctr->cons_seen, cons);
	return cons;
}

/* The cached consumer position (relaxed: only ever stricter, see above). */
RT_INLINE uint64_t ring_cons_seen(const struct ring_shard *s)
{
	uint64_t cons;

	asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];"
		     : "=l"(cons) : "l"(&s->ctr->cons_seen) : "memory");
	return cons;
}

/*
 * How many bytes past the reservation from @before must fit for a claim of
 * @total (at least @need of them kept): the room they have, the cached
 * consumer position @cons usually answering (see above); the host's is
 * read only when the ring looks full, and a lossless ring waits there
 * until @need bytes fit (ring_wait_room).
 */
RT_INLINE uint64_t ring_room(const struct ring_shard *s, uint64_t before,
			     uint32_t total, uint32_t need, uint64_t cons)
{
	uint64_t cap = s->mask + 1;

	if (before + total - cons > cap)
		cons = egpu_dev_ring_cons_now(s, before, need);
	return cons + cap > before ? cons + cap - before : 0;
}

/*
 * The first half of a claim, by its one leader: @total bytes added to
 * reserved, and how many bytes from the position before that fit
 * (ring_room; the cached position loaded before the atomic).
 */
RT_INLINE uint64_t ring_take(const struct ring_shard *s, uint32_t total,
			     uint32_t need)
{
	uint64_t cons = ring_cons_seen(s);
	uint64_t before = atomicAdd((unsigned long long *)&s->ctr->reserved,
				    total);

	return ring_room(s, before, total, need, cons);
}

/*
 * The second half, by the same leader: the @total - @kept bytes that did
 * not fit are given back, @dropped records counted, and the position of
 * the @kept bytes returned.
 */
RT_INLINE uint64_t ring_settle(const struct ring_shard *s, uint32_t total,
			       uint32_t kept, uint32_t dropped)
{
	if (kept < total)
		atomicAdd((unsigned long long *)&s->ctr->reserved,
			  (unsigned long long)kept - total);
	if (dropped)
		atomicAdd_system((unsigned long long *)(uintptr_t)s->drops,
				 (unsigned long long)dropped);
	return kept ? atomicAdd((unsigned long long *)&s->ctr->prod, kept) : 0;
}

/*
 * What a lone lane's claim of @want bytes (@need at least) waits for in a
 * lossless ring: all of them. Bytes given back to reserved while others
 * wait would stay in the checks of every reservation made since, which
 * then wait for positions never handed out, and may wait out the bound
 * with the ring empty (docs/events.md, "Lossless rings"); so a lossless
 * ring gives bytes back only when a wait ran out.
 */
RT_INLINE uint32_t ring_wait_for(const struct ring_shard *s, uint32_t need,
				 uint32_t want)
{
	return s->wait_ns ? want : need;
}

/* The claim's end for the @room bytes a lone lane's claim found. */
RT_INLINE uint32_t ring_keep_one(const struct ring_shard *s, uint64_t room,
				 uint32_t need, uint32_t want, uint64_t *pos)
{
	uint32_t kept = room >= want ? want : room >= need ? (uint32_t)room : 0;

	*pos = ring_settle(s, want, kept, kept ? 0 : 1);
	return kept;
}

/*
 * A claim by a lane alone (no warp votes): @want bytes, or as many as fit
 * if that is at least @need. The bytes kept, 0 when not even @need fit
 * (one record dropped and counted), and their position in *@pos.
 */
RT_INLINE uint32_t ring_claim_one(const struct ring_shard *s, uint32_t need,
				  uint32_t want, uint64_t *pos)
{
	uint64_t room = ring_take(s, want, ring_wait_for(s, need, want));

	return ring_keep_one(s, room, need, want, pos);
}

/*
 * ring_claim_one for @want bytes already added to reserved, which held
 * @before until then (the splicer's inline claim that found no room in a
 * lossless ring hands its reservation on instead of giving it back).
 */
RT_INLINE uint32_t ring_claim_held(const struct ring_shard *s,
				   uint64_t before, uint32_t need,
				   uint32_t want, uint64_t *pos)
{
	uint64_t room = ring_room(s, before, want, ring_wait_for(s, need, want),
				  ring_cons_seen(s));

	return ring_keep_one(s, room, need, want, pos);
}

/* This lane's offset among the bytes @group asks for, and their total. */
RT_INLINE void ring_scan(uint32_t group, uint32_t need, uint32_t *prefix,
			 uint32_t *total)
{
	uint32_t below = group & rt_lanes_below(), lane = rt_lane();
	int same;

	__match_all_sync(group, need, &same);
	if (same) { /* fixed-size records: no shuffles */
		*prefix = __popc(below) * need;
		*total = __popc(group) * need;
		return;
	}
	*prefix = 0;
	*total = 0;
	for (uint32_t m = group; m; m &= m - 1) {
		uint32_t src = __ffs(m) - 1;
		uint32_t v = __shfl_sync(group, need, src);

		if (src < lane)
			*prefix += v;
		*total += v;
	}
}

/*
 * Reserve for the lanes of @group, which call together: @total bytes in
 * all, this lane's share ending @end bytes in (ends grow in lane order).
 * One lane adds to reserved and prod for all. The lanes whose shares fit
 * are a prefix of @group, so a ring with room for a few takes a few, not
 * none; the others are dropped and counted. Returns the lanes that fit
 * and, in *@base, the position of the group's first byte.
 */
RT_INLINE uint32_t ring_claim(const struct ring_shard *s, uint32_t group,
			      uint32_t end, uint32_t total, uint64_t *base)
{
	uint32_t leader = __ffs(group) - 1, lane = rt_lane(), kept = 0, fit;
	unsigned long long room = 0, pos = 0;

	if (lane == leader)
		room = ring_take(s, total, total);
	room = __shfl_sync(group, room, leader);
	fit = __ballot_sync(group, end <= room);
	if (fit)
		kept = __shfl_sync(group, end, 31 - __clz(fit));
	if (lane == leader)
		pos = ring_settle(s, total, kept, __popc(group & ~fit));
	*base = __shfl_sync(group, pos, leader);
	return fit;
}

/*
 * Room for a record of @len payload bytes (len <= max_record - 8) in
 * shard @s of @r, or NULL when it is full (the drop is counted). Lanes of
 * a warp calling at once for the same ring reserve together (ring_claim).
 */
RT_INLINE struct ring_hdr *ring_reserve_in(struct dev_ring *r,
					   const struct ring_shard *s,
					   uint32_t len)
{
	uint32_t need = (uint32_t)ring_record_size(len);
	uint32_t group = __match_any_sync(__activemask(), (uint64_t)(uintptr_t)r);
	uint32_t prefix, total, fit;
	uint64_t base;

	ring_scan(group, need, &prefix, &total);
	fit = ring_claim(s, group, prefix + need, total, &base);
	if (!(fit & (1u << rt_lane())))
		return NULL;
	return (struct ring_hdr *)(uintptr_t)(s->data + ((base + prefix) & s->mask));
}

/* ring_reserve_in() in this thread's shard. */
RT_INLINE struct ring_hdr *ring_reserve(struct dev_ring *r, uint32_t len)
{
	struct ring_shard s = ring_shard_of(r);

	return ring_reserve_in(r, &s, len);
}

/* @n bytes at @p (n <= 8, any alignment) as a little-endian word. */
RT_INLINE uint64_t rt_load_bytes(const uint8_t *p, uint32_t n)
{
	uint64_t w = 0;

	for (uint32_t i = 0; i < n; i++)
		w |= (uint64_t)p[i] << (8 * i);
	return w;
}

/*
 * Copy @len bytes to words @stride apart (8-aligned, host memory), in whole
 * 8-byte stores, the last one padded with zeros: no byte writes cross the
 * bus. Stride 1 is a plain record; a batch interleaves a warp's records.
 */
RT_INLINE void ring_copy_words(uint64_t *dst, uint32_t stride, const void *src,
			       uint32_t len)
{
	const uint8_t *s = (const uint8_t *)src;
	uint32_t words = len / 8, i;

	if (((uintptr_t)s & 7) == 0) {
		for (i = 0; i < words; i++)
			dst[i * stride] = ((const uint64_t *)s)[i];
	} else if (((uintptr_t)s & 3) == 0) {
		for (i = 0; i < words; i++)
			dst[i * stride] = ((const uint32_t *)s)[2 * i] |
				(uint64_t)((const uint32_t *)s)[2 * i + 1] << 32;
	} else {
		for (i = 0; i < words; i++)
			dst[i * stride] = rt_load_bytes(s + 8 * i, 8);
	}
	if (len % 8)
		dst[words * stride] = rt_load_bytes(s + 8 * words, len % 8);
}

RT_INLINE void ring_copy_out(uint64_t *dst, const void *src, uint32_t len)
{
	ring_copy_words(dst, 1, src, len);
}

/*
 * Everything this thread wrote (and, through a warp barrier before it,
 * its lanes wrote) becomes visible to the host before its next store. A
 * release fence suffices (the host reads headers with acquire semantics)
 * and costs less than __threadfence_system's sequentially consistent one.
 * A ring in GPU memory (@local) is read by the copy engine through L2,
 * where a GPU-scope fence already orders the writes.
 */
RT_INLINE void ring_fence(bool local)
{
	if (local)
		asm volatile("fence.acq_rel.gpu;" ::: "memory");
	else
		asm volatile("fence.acq_rel.sys;" ::: "memory");
}

/*
 * Publish the record at @h, {@len, @flags}: everything written before
 * becomes visible first (@local: a ring in GPU memory, a GPU-scope
 * fence). Given @done, the published-bytes word of its shard, it is
 * marked RING_COUNTED and its bytes are added there after the fence,
 * before the header (relaxed: the one fence orders the record's bytes
 * before both; a copy that sees the sum sees the record's bytes whole,
 * and takes the record once its header reads published, so the host may
 * copy such records once: lib/maps/ring_dev.c, docs/events.md "Copied
 * once").
 */
RT_INLINE void ring_publish_at(bool local, uint64_t h, uint32_t len,
			       uint32_t flags, uint64_t done)
{
	ring_fence(local);
	if (done)
		asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;"
			     :: "l"(done), "l"(ring_record_size(len)) : "memory");
	asm volatile("st.volatile.global.u64 [%0], %1;"
		     :: "l"(h), "l"((uint64_t)(flags | (done ? RING_COUNTED : 0))
				    << 32 | len) : "memory");
}

/* Publish a record of @r, not counted. */
RT_INLINE void ring_publish(const struct dev_ring *r, struct ring_hdr *h,
			    uint32_t len, uint32_t flags)
{
	ring_publish_at(ring_is_local(r), (uint64_t)(uintptr_t)h, len, flags, 0);
}

/* Publish a record of shard @s of @r: counted where the shard has a word. */
RT_INLINE void ring_publish_counted(const struct dev_ring *r,
				    const struct ring_shard *s,
				    struct ring_hdr *h, uint32_t len,
				    uint32_t flags)
{
	ring_publish_at(ring_is_local(r), (uint64_t)(uintptr_t)h, len, flags,
			s->done);
}

/*
 * Publish a reserved record, whose header ring_reserve_record() stored.
 * Submit is given the record, not its ring: the RING_RESERVED_LOCAL mark
 * this thread left in the flags word says which fence it needs.
 */
RT_INLINE void ring_publish_flags(struct ring_hdr *h, uint32_t flags)
{
	ring_fence(h->flags & RING_RESERVED_LOCAL);
	asm volatile("st.volatile.u32 [%0], %1;"
		     :: "l"(&h->flags), "r"(flags) : "memory");
}

RT_INLINE uint32_t ring_max_payload(const struct dev_ring *r)
{
	return __ldg(&r->max_record) - RING_HDR_SIZE;
}

/*
 * bpf_ringbuf_output by the lanes of @group, all with @len bytes, as one
 * batch record (struct ring_batch): one reservation, each lane writes its
 * record's words column-major (a store instruction of the warp fills
 * consecutive words), one fence by the first lane after a warp barrier,
 * then its header. Whether this lane's record was kept.
 */
RT_INLINE bool ring_output_batch(struct dev_ring *r, uint32_t group,
				 const void *data, uint32_t len)
{
	uint32_t rank = __popc(group & rt_lanes_below());
	uint32_t rec = (len + 7) & ~7u, fit, kept;
	struct ring_shard s = ring_shard_of(r);
	uint64_t base, *batch;

	fit = ring_claim(&s, group, (uint32_t)ring_batch_size(rank + 1, len),
			 (uint32_t)ring_batch_size(__popc(group), len), &base);
	if (!(fit & (1u << rt_lane())))
		return false;
	kept = __popc(fit);
	batch = (uint64_t *)(uintptr_t)(s.data + (base & s.mask));
	ring_copy_words(batch + 2 + rank, kept, data, len);
	if (rank == 0) /* struct ring_batch { count, len } */
		batch[1] = (uint64_t)len << 32 | kept;
	__syncwarp(fit);
	if (rank == 0)
		ring_publish_counted(r, &s, (struct ring_hdr *)batch,
				     (uint32_t)sizeof(struct ring_batch) + kept * rec,
				     RING_COMMIT | RING_BATCH);
	return true;
}

/*
 * bpf_ringbuf_output: 0, -E2BIG (size), or @full_err when dropped. Lanes
 * outputting records of one size to one ring at once share a batch when
 * it fits a record (max_record); others publish records of their own.
 */
RT_INLINE int64_t ring_output(struct dev_ring *r, const void *data,
			      uint64_t size, int64_t full_err)
{
	uint32_t active, group;
	struct ring_shard s;
	struct ring_hdr *h;

	if (size > ring_max_payload(r))
		return -E2BIG;
	active = __activemask();
	group = __match_any_sync(active, (uint64_t)(uintptr_t)r) &
		__match_any_sync(active, size);
	if (__popc(group) > 1 &&
	    ring_batch_size(__popc(group), size) <= r->max_record)
		return ring_output_batch(r, group, data, (uint32_t)size) ?
		       0 : full_err;
	s = ring_shard_of(r);
	h = ring_reserve_in(r, &s, (uint32_t)size);
	if (!h)
		return full_err;
	ring_copy_out((uint64_t *)(h + 1), data, (uint32_t)size);
	ring_publish_counted(r, &s, h, (uint32_t)size, RING_COMMIT);
	return 0;
}

/* bpf_ringbuf_reserve: the payload's address, or NULL. */
RT_INLINE void *ring_reserve_record(struct dev_ring *r, uint64_t size)
{
	struct ring_hdr *h;

	if (size > ring_max_payload(r))
		return NULL;
	h = ring_reserve(r, (uint32_t)size);
	if (!h)
		return NULL;
	/* Unpublished still: the mark is no RING_COMMIT (submit reads it). */
	*(volatile uint64_t *)h = (uint64_t)(ring_is_local(r) ?
					     RING_RESERVED_LOCAL : 0) << 32 | size;
	return h + 1;
}

#endif
