/* SPDX-License-Identifier: MIT */
/*
 * Walking a chunk of records (egpu_ringbuf_opts.chunk_fn, a record file's
 * body): the ring's own format, whose flags the public header names.
 */
#include <string.h>

#include "api/internal.h"
#include "maps/ring_layout.h"
#include "maps/span_layout.h"

_Static_assert(EGPU_REC_COMMIT == RING_COMMIT && EGPU_REC_DISCARD == RING_DISCARD &&
	       EGPU_REC_BATCH == RING_BATCH && EGPU_REC_SPAN == RING_SPAN,
	       "the public record flags are the ring's");
_Static_assert(sizeof(struct egpu_rec_hdr) == RING_HDR_SIZE, "record header");

int egpu_chunk_next(struct egpu_chunk_iter *it, struct egpu_chunk_rec *rec)
{
	struct ring_hdr h;

	if (!it || !rec)
		return err_set(EGPU_EINVAL, "egpu_chunk_next: NULL argument");
	for (;;) {
		size_t left = (size_t)(it->end - it->at);

		if (!left)
			return 0;
		if (left < sizeof(h))
			return err_set(EGPU_EFORMAT,
				       "egpu_chunk_next: a record header cut short (%zu bytes left)",
				       left);
		memcpy(&h, it->at, sizeof(h));
		if (ring_record_size(h.len) > left)
			return err_set(EGPU_EFORMAT,
				       "egpu_chunk_next: a record of %u bytes (flags %u) where %zu bytes are left",
				       h.len, h.flags, left);
		*rec = (struct egpu_chunk_rec){ .data = it->at + sizeof(h),
						.size = h.len, .flags = h.flags };
		it->at += ring_record_size(h.len);
		if (!(h.flags & RING_DISCARD))
			return 1;
	}
}
