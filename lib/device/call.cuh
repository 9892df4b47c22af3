/* SPDX-License-Identifier: MIT */
/*
 * User helpers on the GPU (egpu_helper_register): the call becomes a record
 * (struct call_rec) in the context's call ring, holding the helper number,
 * the scalar arguments and copies of the buffer arguments; the host makes
 * the call later (lib/api/helper.c). The GPU never waits for it.
 *
 * Which ring: egpu_dev_call_ring, declared here and defined, as the print
 * ring is (print.cuh), by a small module libegpu links next to the runtime:
 * the context's call ring, or 0 when no probe calls a user helper.
 */
#ifndef EGPU_DEVICE_CALL_CUH
#define EGPU_DEVICE_CALL_CUH

#include "ring.cuh"

extern "C" __device__ struct dev_ring *egpu_dev_call_ring;

/* Record bytes a call of @layout (CALL_LAYOUT_*) takes. */
RT_INLINE uint32_t call_len(uint64_t layout)
{
	uint32_t nargs = CALL_LAYOUT_NARGS(layout);
	uint32_t len = (uint32_t)sizeof(struct call_rec) + 8 * nargs;

	for (uint32_t i = 0; i < nargs; i++)
		len += CALL_BUF_BYTES(CALL_LAYOUT_SIZE(layout, i));
	return len;
}

/* 0 once queued; -ENODEV without a call ring, -EAGAIN when it is full. */
RT_INLINE int64_t call_emit(uint32_t id, uint64_t layout, const uint64_t *a)
{
	struct dev_ring *r = egpu_dev_call_ring;
	uint32_t len = call_len(layout), nargs = CALL_LAYOUT_NARGS(layout);
	struct call_rec *c;
	struct ring_hdr *h;
	uint64_t *buf;

	if (!r)
		return -ENODEV;
	h = ring_reserve(r, len);
	if (!h)
		return -EAGAIN;
	c = (struct call_rec *)(h + 1);
	c->id = id;
	c->nargs = nargs;
	buf = c->args + nargs;
	for (uint32_t i = 0; i < nargs; i++) {
		uint32_t size = CALL_LAYOUT_SIZE(layout, i);

		c->args[i] = size ? 0 : a[i];
		if (size) {
			ring_copy_out(buf, (const void *)(uintptr_t)a[i], size);
			buf += CALL_BUF_BYTES(size) / 8;
		}
	}
	ring_publish(r, h, len, RING_COMMIT);
	return 0;
}

#endif
