/* SPDX-License-Identifier: MIT */
/*
 * Decoding span records (bpf_egpu_trace_span): the layout is
 * lib/maps/span_layout.h's, which the GPU writes; docs/events.md, "Spans".
 */
#include <string.h>

#include "api/internal.h"
#include "maps/span_layout.h"

int egpu_span_begin(struct egpu_span_iter *it, const void *data, size_t size,
		    struct egpu_span_info *info)
{
	struct span_info si;

	if (!it || !data || size < sizeof(si) ||
	    (size - sizeof(si)) % SPAN_SLOT)
		return err_set(EGPU_EFORMAT,
			       "egpu_span_begin: %zu bytes are no span record (8 + a multiple of 16)",
			       size);
	memcpy(&si, data, sizeof(si));
	if (info)
		*info = (struct egpu_span_info){ si.block, si.warp, si.smid };
	it->at = (const uint8_t *)data + sizeof(si);
	it->end = (const uint8_t *)data + size;
	return 0;
}

/* Sign-extended delta @i of 1 << @width bytes at @p. */
static int64_t span_delta(const uint8_t *p, uint32_t width, uint32_t i)
{
	uint64_t v = 0;
	uint32_t n = 1u << width;

	memcpy(&v, p + (size_t)i * n, n); /* little-endian */
	return n == 8 ? (int64_t)v : (int64_t)(v << (64 - 8 * n)) >> (64 - 8 * n);
}

/* The lanes' addresses of a scattered or long record whose deltas are at @p. */
static void span_scattered(struct egpu_warp_rec *rec, uint64_t base,
			   const uint8_t *p, uint32_t width)
{
	uint32_t i = 0;

	for (uint32_t m = rec->mask; m; m &= m - 1, i++)
		rec->addr[__builtin_ctz(m)] = base + (uint64_t)span_delta(p, width, i);
}

static void span_affine(struct egpu_warp_rec *rec, uint64_t w1)
{
	uint32_t low = (uint32_t)__builtin_ctz(rec->mask);
	uint64_t base = w1 & ((1ull << SPAN_ADDR_BITS) - 1);

	rec->affine = 1;
	rec->stride = (int16_t)(uint16_t)(w1 >> SPAN_ADDR_BITS);
	for (uint32_t m = rec->mask; m; m &= m - 1) {
		uint32_t lane = (uint32_t)__builtin_ctz(m);

		rec->addr[lane] = base + (uint64_t)((int64_t)(lane - low) * rec->stride);
	}
}

int egpu_span_next(struct egpu_span_iter *it, struct egpu_warp_rec *rec)
{
	uint64_t w[2];
	uint32_t fmt, slots, width;
	size_t left;

	if (!it || !rec)
		return err_set(EGPU_EINVAL, "egpu_span_next: NULL argument");
	left = (size_t)(it->end - it->at);
	if (left < SPAN_SLOT)
		return 0;
	memcpy(w, it->at, sizeof(w));
	if (!w[0]) /* unused slots read zero */
		return 0;
	memset(rec, 0, sizeof(*rec));
	fmt = span_w0_fmt(w[0]);
	width = span_w0_width(w[0]);
	rec->mask = span_w0_mask(w[0]);
	slots = span_rec_slots(fmt, (uint32_t)__builtin_popcount(rec->mask), width);
	if (!fmt || !rec->mask || (size_t)slots * SPAN_SLOT > left)
		return err_set(EGPU_EFORMAT,
			       "egpu_span_next: record of format %u, lanes 0x%x, %u slots, where %zu bytes are left in the span",
			       fmt, rec->mask, slots, left);
	rec->kind = (uint16_t)span_w0_kind(w[0]);
	rec->size = span_w0_size(w[0]);
	rec->site = span_w0_site(w[0]);
	rec->bytes = slots * SPAN_SLOT;
	if (fmt == SPAN_AFFINE) {
		span_affine(rec, w[1]);
	} else if (fmt == SPAN_SCATTERED) {
		span_scattered(rec, w[1], it->at + SPAN_SLOT, width);
	} else {
		struct span_long l;

		memcpy(&l, it->at + SPAN_SLOT, sizeof(l));
		rec->site = l.site;
		rec->size = l.size;
		rec->kind = l.kind;
		span_scattered(rec, w[1], it->at + 2 * SPAN_SLOT, width);
	}
	it->at += rec->bytes;
	return 1;
}
