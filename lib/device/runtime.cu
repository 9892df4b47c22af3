/* SPDX-License-Identifier: MIT */
/*
 * The device runtime: the helpers that translated programs call by name,
 * egpu_dev_<helper name of lib/core/helpers.c>. Every argument and the
 * result are 64-bit (.param .b64), pointers are generic addresses, the
 * first argument of a map helper is the map's handle (the device address of
 * its struct dev_map_desc). Errors are Linux errno values, negated, as a
 * program expects. Built to PTX and embedded (see CMakeLists.txt).
 */
#include "map_array.cuh"
#include "map_hash.cuh"
#include "call.cuh"
#include "print.cuh"
#include "ring.cuh"
#include "span_trace.cuh"
#include "warp_trace.cuh"

/* Called from translated code, never inlined into a caller here. */
#define RT_API extern "C" __device__ __noinline__

RT_INLINE struct dev_map_desc *rt_map(uint64_t handle)
{
	return (struct dev_map_desc *)(uintptr_t)handle;
}

RT_INLINE const void *rt_ptr(uint64_t addr)
{
	return (const void *)(uintptr_t)addr;
}

/* A negative errno as the 64-bit register a program reads. */
RT_INLINE uint64_t rt_err(int64_t err)
{
	return (uint64_t)err;
}

RT_INLINE bool rt_is_array(const struct dev_map_desc *m)
{
	return m->type == EGPU_MAP_ARRAY || m->type == EGPU_MAP_GPU_ARRAY ||
	       array_is_per_thread(m);
}

/* Address of the value of key, or 0. */
RT_API uint64_t egpu_dev_map_lookup_elem(uint64_t map, uint64_t key)
{
	struct dev_map_desc *m = rt_map(map);

	if (rt_is_array(m))
		return (uint64_t)(uintptr_t)array_lookup(m, rt_ptr(key));
	if (m->type == EGPU_MAP_HASH)
		return (uint64_t)(uintptr_t)hash_lookup(m, rt_ptr(key));
	return 0;
}

/* 0, -EINVAL (flags), -EEXIST, -ENOENT, -E2BIG (full, or index too big). */
RT_API uint64_t egpu_dev_map_update_elem(uint64_t map, uint64_t key,
					 uint64_t value, uint64_t flags)
{
	struct dev_map_desc *m = rt_map(map);

	if (rt_is_array(m))
		return rt_err(array_update(m, rt_ptr(key), rt_ptr(value),
					    flags));
	if (m->type == EGPU_MAP_HASH)
		return rt_err(hash_update(m, rt_ptr(key), rt_ptr(value),
					   flags));
	return rt_err(-EOPNOTSUPP);
}

/* 0, -ENOENT; array entries cannot be deleted: -EINVAL, as in Linux. */
RT_API uint64_t egpu_dev_map_delete_elem(uint64_t map, uint64_t key)
{
	struct dev_map_desc *m = rt_map(map);

	if (rt_is_array(m))
		return rt_err(-EINVAL);
	if (m->type == EGPU_MAP_HASH)
		return rt_err(hash_delete(m, rt_ptr(key)));
	return rt_err(-EOPNOTSUPP);
}

/* ---- event rings (ring.cuh) and printing (print.cuh) ---- */

/* Linux's flags: bpf_ringbuf_output's wakeup hints, perf's CPU index. */
#define RB_WAKEUP_FLAGS 3ull
#define PERF_INDEX_MASK 0xffffffffull

/* The ring of a ring map's handle, or NULL for any other map. */
RT_INLINE struct dev_ring *rt_ring(uint64_t map)
{
	struct dev_map_desc *m = rt_map(map);

	uint32_t type = __ldg(&m->type); /* no launch changes a map's kind */

	if (type != EGPU_MAP_RINGBUF && type != EGPU_MAP_GPU_RINGBUF &&
	    type != EGPU_MAP_PERF_EVENT_ARRAY)
		return NULL;
	return (struct dev_ring *)(uintptr_t)__ldg(&m->data);
}

/* 0, -EINVAL (map, flags), -E2BIG (size), -EAGAIN (full: dropped). */
RT_API uint64_t egpu_dev_ringbuf_output(uint64_t map, uint64_t data,
					uint64_t size, uint64_t flags)
{
	struct dev_ring *r = rt_ring(map);

	if (!r || (flags & ~RB_WAKEUP_FLAGS))
		return rt_err(-EINVAL);
	return rt_err(ring_output(r, rt_ptr(data), size, -EAGAIN));
}

/* bpf_egpu_trace_warp: 0, -EINVAL (map), -EAGAIN (dropped), -E2BIG. */
RT_API uint64_t egpu_dev_trace_warp(uint64_t map, uint64_t addr, uint64_t info,
				    uint64_t tag)
{
	struct dev_ring *r = rt_ring(map);

	if (!r)
		return rt_err(-EINVAL);
	return rt_err(warp_trace(r, addr, info, tag));
}

/*
 * bpf_egpu_trace_warp_batch: the calling lane's new span state (the
 * others' unchanged); a bad map leaves every state as it was.
 */
RT_API uint64_t egpu_dev_trace_warp_batch(uint64_t map, uint64_t state,
					  uint64_t addr, uint64_t info,
					  uint64_t tag)
{
	struct dev_ring *r = rt_ring(map);

	return r ? warp_trace_batch(r, state, addr, info, tag) : state;
}

/* bpf_egpu_trace_flush: 0, or -EINVAL (map). */
RT_API uint64_t egpu_dev_trace_flush(uint64_t map, uint64_t state)
{
	struct dev_ring *r = rt_ring(map), v;

	if (!r)
		return rt_err(-EINVAL);
	v = ring_shape(r);
	warp_span_close(r, &v, state);
	return 0;
}

/*
 * bpf_egpu_trace_span: the calling lane's new span state; a bad map
 * leaves every state as it was.
 */
RT_API uint64_t egpu_dev_trace_span(uint64_t map, uint64_t state,
				    uint64_t addr, uint64_t info)
{
	struct dev_ring *r = rt_ring(map);

	return r ? span_trace(r, state, addr, info, false) : state;
}

/* bpf_egpu_trace_span_flush: 0, or -EINVAL (map). */
RT_API uint64_t egpu_dev_trace_span_flush(uint64_t map, uint64_t state)
{
	struct dev_ring *r = rt_ring(map);

	if (!r)
		return rt_err(-EINVAL);
	span_flush(r, state);
	return 0;
}

/*
 * The splicer's trace mode, where its inline code does not store the
 * record itself (lib/ptx/trace_site.c): bpf_egpu_trace_span's call, the
 * lane's registers after it. The map is a ring: the API checked it.
 */
RT_API struct span_regs egpu_dev_trace_site(uint64_t map, uint64_t state,
					    uint64_t addr, uint64_t info)
{
	struct dev_ring *r = rt_ring(map);

	return span_regs_of(r, span_trace(r, state, addr, info, true));
}

/*
 * Trace mode, the leader of an affine access that owns no span, no lane of
 * its group owning one (trace_site.c's claim_span), where the site does
 * not claim inline, or in a lossless ring where the inline claim found no
 * room (then @held: what reserved held before its @slots were added, the
 * reservation handed on, not given back: span_claim; else SPAN_NOT_HELD):
 * a span claimed after @state's as span_place claims it, the registers
 * with its cursor at slot 1, where the site then stores the record
 * inline; or, when the claim dropped it (counted), @state owning none.
 * Only a group of the whole warp claims here, and its span may stay open:
 * the site publishes it before every wait (docs/events.md, "Lossless
 * rings").
 */
RT_API struct span_regs egpu_dev_trace_claim(uint64_t map, uint64_t state,
					     uint64_t held, uint32_t slots)
{
	struct dev_ring *r = rt_ring(map), v = ring_shape(r);
	uint32_t tag = span_ring_tag((uintptr_t)r);
	uint64_t st = span_claim(r, &v, ring_shard_here(&v), tag,
				 span_asks_slots(state, tag), 1, false, held,
				 slots);

	return span_regs_of(r, st ? st : state & ~SPAN_OWN);
}

/*
 * Trace mode at a site of a .func, which has no registers of the
 * kernel's: the record alone in a span of its own, published at once.
 */
RT_API void egpu_dev_trace_alone(uint64_t map, uint64_t addr, uint64_t info)
{
	struct dev_ring *r = rt_ring(map);

	span_flush(r, span_trace(r, 0, addr, info, false));
}

/* The record's payload address, or 0 (bad map or flags, too big, full). */
RT_API uint64_t egpu_dev_ringbuf_reserve(uint64_t map, uint64_t size,
					 uint64_t flags)
{
	struct dev_ring *r = rt_ring(map);

	if (!r || flags)
		return 0;
	return (uint64_t)(uintptr_t)ring_reserve_record(r, size);
}

/*
 * @data must come from egpu_dev_ringbuf_reserve (the verifier's job, as in
 * Linux): its header sits just before it.
 */
RT_API uint64_t egpu_dev_ringbuf_submit(uint64_t data, uint64_t flags)
{
	(void)flags;
	if (data)
		ring_publish_flags((struct ring_hdr *)(uintptr_t)data - 1,
				   RING_COMMIT);
	return 0;
}

RT_API uint64_t egpu_dev_ringbuf_discard(uint64_t data, uint64_t flags)
{
	(void)flags;
	if (data)
		ring_publish_flags((struct ring_hdr *)(uintptr_t)data - 1,
				   RING_COMMIT | RING_DISCARD);
	return 0;
}

/*
 * Every ring map type takes perf output (bpftime's probes use it on 1527
 * maps); the CPU index in @flags means nothing: there is one ring. A
 * BPF_F_CTXLEN_MASK part (copy ctx bytes too) is refused: -EINVAL.
 */
RT_API uint64_t egpu_dev_perf_event_output(uint64_t ctx, uint64_t map,
					   uint64_t flags, uint64_t data,
					   uint64_t size)
{
	struct dev_ring *r = rt_ring(map);

	(void)ctx;
	if (!r || (flags & ~PERF_INDEX_MASK))
		return rt_err(-EINVAL);
	return rt_err(ring_output(r, rt_ptr(data), size, -ENOSPC));
}

/*
 * Three arguments always travel; the host's formatter takes what it needs.
 * The print helpers get one argument more than the eBPF helper: the
 * kernel's id from the probe's ctx (lib/jit/ptx_lower.c), for the line's
 * prefix.
 */
RT_API uint64_t egpu_dev_trace_printk(uint64_t fmt, uint64_t fmt_size,
				      uint64_t a, uint64_t b, uint64_t c,
				      uint64_t kernel)
{
	const uint64_t args[3] = { a, b, c };

	return rt_err(print_emit(fmt, (uint32_t)fmt_size, PRINT_PRINTK, args, 3,
				 kernel));
}

/* @data holds data_len / 8 arguments, at most PRINT_MAX_ARGS. */
RT_API uint64_t egpu_dev_trace_vprintk(uint64_t fmt, uint64_t fmt_size,
				       uint64_t data, uint64_t data_len,
				       uint64_t kernel)
{
	if (data_len % 8 || data_len / 8 > PRINT_MAX_ARGS || (data_len && !data))
		return rt_err(-EINVAL);
	return rt_err(print_emit(fmt, (uint32_t)fmt_size, PRINT_PRINTK,
				 rt_ptr(data), (uint32_t)(data_len / 8), kernel));
}

RT_API uint64_t egpu_dev_puts(uint64_t s, uint64_t kernel)
{
	return rt_err(print_emit(s, 0, PRINT_PUTS, NULL, 0, kernel));
}

/* ---- user helpers (call.cuh) ---- */

/*
 * A call of user helper @id, of the shape @layout (CALL_LAYOUT_*), queued
 * for the host: 0, -ENODEV (no call ring) or -EAGAIN (full: dropped).
 */
RT_API uint64_t egpu_dev_user_call(uint64_t id, uint64_t layout, uint64_t a1,
				   uint64_t a2, uint64_t a3, uint64_t a4,
				   uint64_t a5)
{
	const uint64_t a[CALL_MAX_ARGS] = { a1, a2, a3, a4, a5 };

	return rt_err(call_emit((uint32_t)id, layout, a));
}
