/* SPDX-License-Identifier: MIT */
/*
 * The CPU back end's producer: the same records and results as the GPU's
 * (lib/device/ring.cuh), with a mutex instead of warp-aggregated atomics:
 * CPU runs are one program at a time per thread, not a grid.
 */
#include <errno.h>
#include <string.h>

#include "maps/ring_impl.h"

/* Linux's bpf_ringbuf_output flags: wakeups, meaningless here. */
#define RB_NO_WAKEUP 1u
#define RB_FORCE_WAKEUP 2u

static struct ring_hdr *ring_cpu_claim(struct event_ring *r, uint64_t size)
{
	uint64_t need = ring_record_size(size), cons;
	struct ring_hdr *h = NULL;

	pthread_mutex_lock(&r->lock);
	cons = __atomic_load_n(&r->ctl->cons, __ATOMIC_ACQUIRE);
	if (r->prod + need - cons <= r->cap) {
		h = (struct ring_hdr *)(r->data + (r->prod & (r->cap - 1)));
		__atomic_store_n(&h->len, (uint32_t)size, __ATOMIC_RELAXED);
		r->prod += need;
	} else {
		__atomic_fetch_add(&r->ctl->drops, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&r->lock);
	return h;
}

/* 0 when a record of @size may be reserved, else the error a program gets. */
static long ring_cpu_check(struct event_ring *r, uint64_t size, uint64_t flags,
			   uint64_t allowed_flags)
{
	if (!map_type_is_ring(r->type) || (flags & ~allowed_flags))
		return -EINVAL;
	if (size > ring_max_payload(r))
		return -E2BIG;
	/* Positions now advance on the GPU, in device memory. */
	if (ring_on_gpu(r))
		return -EBUSY;
	return 0;
}

void *ring_cpu_reserve(struct event_ring *r, uint64_t size, uint64_t flags)
{
	struct ring_hdr *h;

	if (ring_cpu_check(r, size, flags, 0))
		return NULL;
	h = ring_cpu_claim(r, size);
	return h ? h + 1 : NULL;
}

void ring_cpu_commit(void *data, bool discard)
{
	struct ring_hdr *h = (struct ring_hdr *)data - 1;

	__atomic_store_n(&h->flags, RING_COMMIT | (discard ? RING_DISCARD : 0),
			 __ATOMIC_RELEASE);
}

/* 0, -EINVAL (flags, not a ring), -E2BIG (size), -EBUSY, -EAGAIN (full). */
long ring_cpu_output(struct event_ring *r, const void *data, uint64_t size,
		     uint64_t flags)
{
	long err = ring_cpu_check(r, size, flags, RB_NO_WAKEUP | RB_FORCE_WAKEUP);
	struct ring_hdr *h;

	if (err)
		return err;
	h = ring_cpu_claim(r, size);
	if (!h)
		return -EAGAIN;
	memcpy(h + 1, data, size);
	ring_cpu_commit(h + 1, false);
	return 0;
}
