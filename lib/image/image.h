/* SPDX-License-Identifier: MIT */
/*
 * Module images as the CUDA driver takes them: PTX text, fatbins (nvcc
 * -fatbin, the runtime's registered containers) and cubins. This stage
 * finds the PTX an image carries for a target, or says what it is when it
 * carries none.
 */
#ifndef EGPU_IMAGE_H
#define EGPU_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum image_kind {
	IMAGE_PTX,     /* NUL-terminated PTX text */
	IMAGE_FATBIN,  /* 0xBA55ED50 container, or the runtime's wrapper */
	IMAGE_CUBIN,   /* an ELF with SASS */
	IMAGE_UNKNOWN,
};

/* What an image holds, for messages and for the SASS-only list. */
struct image_info {
	enum image_kind kind;
	size_t size;           /* bytes of the image, 0 when not known */
	unsigned ptx_archs[8]; /* compute_XX of its PTX entries */
	unsigned nptx;
	unsigned sass_archs[8];/* sm_XX of its ELF entries (or the cubin's) */
	unsigned nsass;
};

/*
 * Kind and size of @image. @len is its length, or 0 when the caller has
 * only a pointer (the driver's cuModuleLoadData contract): headers then
 * give the size.
 */
enum image_kind image_probe(const void *image, size_t len,
			    struct image_info *info);

/*
 * PTX of @image for target @sm ("sm_90"): the text itself for PTX (all
 * @len bytes, NULs included, for the parser to judge), the
 * newest PTX entry not newer than the target for a fatbin (decompressed).
 * *ptx is malloc'ed and NUL-terminated. EGPU_ENOTSUP naming what the image
 * holds (SASS for sm_XX) and how to embed PTX when it has none usable;
 * EGPU_EFORMAT for a malformed container.
 */
int image_ptx(const void *image, size_t len, const char *sm, char **ptx,
	      size_t *ptx_len, struct image_info *info);

/* NN of the ".target sm_NN" of PTX @text (NUL-terminated), 0 if none. */
unsigned image_ptx_target(const char *text);

/* "SASS for sm_90, sm_80" / "PTX for compute_90" into @buf. */
void image_describe(const struct image_info *info, char *buf, size_t len);

/* LZ4 block format, as nvcc --compress-mode=speed writes PTX entries. */
int lz4_block_decode(const uint8_t *src, size_t len, uint8_t *dst,
		     size_t dst_len);

#endif
