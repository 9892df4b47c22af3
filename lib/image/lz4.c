/* SPDX-License-Identifier: MIT */
/*
 * LZ4 block decoding (the format's public specification): sequences of a
 * token, literals and a back-reference. Fatbin entries compressed with
 * flag 0x2000 hold one such block; no frame, no checksum.
 */
#include <string.h>

#include "core/core.h"
#include "image/image.h"

/* A length that continues in 255-valued bytes after a nibble of 15. */
static int read_len(const uint8_t **p, const uint8_t *end, size_t *n)
{
	uint8_t b;

	if (*n != 15)
		return 0;
	do {
		if (*p >= end)
			return -1;
		b = *(*p)++;
		*n += b;
	} while (b == 255);
	return 0;
}

int lz4_block_decode(const uint8_t *src, size_t len, uint8_t *dst,
		     size_t dst_len)
{
	const uint8_t *p = src, *end = src + len;
	size_t out = 0;

	while (p < end) {
		uint8_t token = *p++;
		size_t lit = token >> 4, match = token & 15, off;

		if (read_len(&p, end, &lit) || lit > (size_t)(end - p) ||
		    lit > dst_len - out)
			goto bad;
		memcpy(dst + out, p, lit);
		p += lit;
		out += lit;
		if (p == end)
			break; /* the last sequence has literals only */
		if (end - p < 2)
			goto bad;
		off = p[0] | (size_t)p[1] << 8;
		p += 2;
		if (read_len(&p, end, &match))
			goto bad;
		match += 4;
		if (!off || off > out || match > dst_len - out)
			goto bad;
		/* byte by byte: the source may overlap what it writes */
		for (size_t i = 0; i < match; i++, out++)
			dst[out] = dst[out - off];
	}
	if (out != dst_len)
		goto bad;
	return 0;
bad:
	return err_set(EGPU_EFORMAT, "fatbin: LZ4 entry corrupt at byte %zu of %zu",
		       (size_t)(p - src), len);
}
