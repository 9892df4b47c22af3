/* SPDX-License-Identifier: MIT */
/*
 * Decoding span records (bpf_egpu_trace_span): the layout is
 * lib/maps/span_layout.h's, which the GPU writes; docs/events.md, "Spans".
 */
#include <stdbool.h>
#include <stddef.h>
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

/*
 * The lanes' addresses of a scattered or long record whose deltas are at
 * @p, lanes outside the mask 0. A full warp's deltas are the lanes' in
 * order: a loop the compiler unrolls, no bit scan per lane.
 */
static void span_scattered(struct egpu_warp_rec *rec, uint64_t base,
			   const uint8_t *p, uint32_t width)
{
	uint32_t i = 0;

	if (rec->mask == UINT32_MAX) {
		for (uint32_t lane = 0; lane < 32; lane++)
			rec->addr[lane] = base + (uint64_t)span_delta(p, width, lane);
		return;
	}
	for (uint32_t lane = 0; lane < 32; lane++) {
		bool on = rec->mask >> lane & 1;

		rec->addr[lane] = on ? base + (uint64_t)span_delta(p, width, i) : 0;
		i += on;
	}
}

/* Branch-free over the 32 lanes (vectorised): lanes outside the mask 0. */
static void span_affine(struct egpu_warp_rec *rec, uint64_t w1)
{
	uint32_t low = (uint32_t)__builtin_ctz(rec->mask);
	uint64_t base = w1 & ((1ull << SPAN_ADDR_BITS) - 1);

	rec->affine = 1;
	rec->stride = (int16_t)(uint16_t)(w1 >> SPAN_ADDR_BITS);
	base -= (uint64_t)((int64_t)low * rec->stride);
	for (uint32_t lane = 0; lane < 32; lane++)
		rec->addr[lane] = (base + (uint64_t)((int64_t)lane * rec->stride)) &
				  -(uint64_t)(rec->mask >> lane & 1);
}

/* A short record: an affine one of the whole warp at a stride of its size. */
static void span_short(struct egpu_warp_rec *rec, uint64_t w)
{
	rec->mask = UINT32_MAX;
	rec->size = span_short_size(w);
	rec->kind = (uint16_t)span_short_kind(w);
	rec->site = span_short_site(w);
	span_affine(rec, span_affine_w1(span_short_base(w), (int32_t)rec->size));
}

/*
 * The record at *@at (before @end), its first word in *@w0: its bytes
 * (8 for a short record, else its slots' bytes), 0 at the span's end (a
 * zero word at a slot's start: unused slots read zero), or EGPU_EFORMAT
 * naming @who. A zero word in a slot's second half is the padding a short
 * record left before a record of whole slots: skipped, *@at moved on.
 */
static int span_rec_head(const uint8_t **at, const uint8_t *end,
			 uint64_t *w0, const char *who)
{
	/* The slots end a multiple of 16 bytes after span_info. */
	bool half = (size_t)(end - *at) % SPAN_SLOT != 0;
	uint32_t fmt, mask, slots;

	if (end - *at < (ptrdiff_t)SPAN_SHORT_BYTES)
		return 0;
	memcpy(w0, *at, sizeof(*w0));
	if (half && !*w0) {
		*at += SPAN_SHORT_BYTES;
		return span_rec_head(at, end, w0, who);
	}
	if (!*w0)
		return 0;
	if (span_w0_short(*w0))
		return SPAN_SHORT_BYTES;
	fmt = span_w0_fmt(*w0);
	mask = span_w0_mask(*w0);
	slots = span_rec_slots(fmt, (uint32_t)__builtin_popcount(mask),
			       span_w0_width(*w0));
	if (half || !fmt || !mask || (size_t)slots * SPAN_SLOT > (size_t)(end - *at))
		return err_set(EGPU_EFORMAT,
			       "%s: record of format %u, lanes 0x%x, %u slots, where %zu bytes are left in the span%s",
			       who, fmt, mask, slots, (size_t)(end - *at),
			       half ? " (in a slot's second half)" : "");
	return (int)(slots * SPAN_SLOT);
}

int egpu_span_count(const void *data, size_t size, uint64_t *lanes)
{
	struct egpu_span_iter it;
	uint64_t w0, n = 0;
	int records = 0, bytes;
	int err = egpu_span_begin(&it, data, size, NULL);

	if (err)
		return err;
	while ((bytes = span_rec_head(&it.at, it.end, &w0,
				      "egpu_span_count")) > 0) {
		n += span_w0_short(w0) ? 32 :
		     (uint64_t)__builtin_popcount(span_w0_mask(w0));
		records++;
		it.at += bytes;
	}
	if (bytes < 0)
		return bytes;
	if (lanes)
		*lanes = n;
	return records;
}

int egpu_span_next(struct egpu_span_iter *it, struct egpu_warp_rec *rec)
{
	uint64_t w[2];
	uint32_t fmt, width;
	int bytes;

	if (!it || !rec)
		return err_set(EGPU_EINVAL, "egpu_span_next: NULL argument");
	bytes = span_rec_head(&it->at, it->end, &w[0], "egpu_span_next");
	if (bytes <= 0)
		return bytes;
	rec->bytes = (uint32_t)bytes;
	if (bytes == SPAN_SHORT_BYTES) {
		span_short(rec, w[0]);
		it->at += bytes;
		return 1;
	}
	memcpy(&w[1], it->at + 8, sizeof(w[1]));
	fmt = span_w0_fmt(w[0]);
	width = span_w0_width(w[0]);
	/* Every field set below: addr[] by the format's decoder, whole. */
	rec->mask = span_w0_mask(w[0]);
	rec->affine = 0;
	rec->stride = 0;
	rec->kind = (uint16_t)span_w0_kind(w[0]);
	rec->size = span_w0_size(w[0]);
	rec->site = span_w0_site(w[0]);
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
