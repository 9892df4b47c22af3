/* SPDX-License-Identifier: MIT */
/*
 * Fatbins and cubins. A fatbin (what nvcc -fatbin writes and what the CUDA
 * runtime registers, then hands to the driver) is a 16-byte header (magic
 * 0xBA55ED50, version, header size, size of what follows) and entries, each
 * a header (kind 1 = PTX, 2 = ELF/SASS; the target arch; flags) and its
 * payload. The runtime wraps it in a 24-byte struct (magic 0x466243b1)
 * pointing at it. Entries may be compressed: flag 0x2000 is an LZ4 block
 * (nvcc --compress-mode=speed), 0x8000 a zstd frame (default, size,
 * balance: what nvcc 13 writes for PTX). Layout learnt from nvcc 13's own
 * output (tests/image builds one of each).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/core.h"
#include "core/target.h"
#include "image/image.h"

#define FATBIN_MAGIC 0xBA55ED50u
#define WRAPPER_MAGIC 0x466243b1u
#define ELF_MAGIC 0x464c457fu /* "\x7f" "ELF" */
#define FATBIN_HEADER_SIZE 16
#define ENTRY_HEADER_MIN 64
#define ENTRY_PTX 1
#define ENTRY_ELF 2
#define FLAG_LZ4 0x2000u
#define FLAG_ZSTD 0x8000u
#define ELF_EM_CUDA 190

struct entry {
	uint16_t kind;
	unsigned arch;
	uint64_t flags;
	const uint8_t *data;
	uint64_t size;     /* payload bytes (padded) */
	uint32_t csize;    /* compressed bytes, 0 if stored */
	uint64_t dsize;    /* decompressed bytes */
};

static uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/*
 * Whether @p, of @len bytes (0: not known), starts with the 4 bytes of
 * @magic (little-endian), read no further than the first that differs: an
 * image of unknown length may be a PTX string shorter than 4 bytes, and
 * its NUL is no magic's byte.
 */
static bool has_magic(const uint8_t *p, size_t len, uint32_t magic)
{
	if (len && len < 4)
		return false;
	for (unsigned i = 0; i < 4; i++)
		if (p[i] != (uint8_t)(magic >> (8 * i)))
			return false;
	return true;
}

/* Whether @image of @len bytes (0: not known) starts as a runtime wrapper. */
static bool is_wrapper(const uint8_t *image, size_t len)
{
	return (!len || len >= 24) && has_magic(image, len, WRAPPER_MAGIC);
}

/*
 * The fatbin a runtime wrapper points at, else @image itself. Only an
 * image given without a length (the driver's contract: the caller's own
 * loaded memory) is unwrapped: bytes of a known length hold no pointer
 * worth following (a fuzzed one read anywhere).
 */
static const uint8_t *unwrap(const void *image, size_t *len)
{
	const uint8_t *p = image;
	const void *data;

	if (*len || !is_wrapper(p, 0))
		return p;
	memcpy(&data, p + 8, sizeof(data));
	return data; /* *len stays 0: the wrapper says nothing of the size */
}

static size_t elf_size(const uint8_t *p)
{
	uint64_t shoff = rd64(p + 40), phoff = rd64(p + 32);
	uint64_t sh = shoff + (uint64_t)rd16(p + 58) * rd16(p + 60);
	uint64_t ph = phoff + (uint64_t)rd16(p + 54) * rd16(p + 56);

	return sh > ph ? sh : ph;
}

/* sm_XX of a CUDA ELF: e_flags bits 8-15 in the current ABI (EI_OSABI
 * 0x41), bits 0-7 before it. */
static unsigned elf_arch(const uint8_t *p)
{
	uint32_t flags = rd32(p + 48);

	return p[7] >= 0x41 ? (flags >> 8) & 0xff : flags & 0xff;
}

static bool is_elf(const uint8_t *p, size_t len)
{
	return (!len || len >= 64) && has_magic(p, len, ELF_MAGIC);
}

static void add_arch(unsigned *list, unsigned *n, unsigned arch)
{
	for (unsigned i = 0; i < *n; i++)
		if (list[i] == arch)
			return;
	if (*n < 8)
		list[(*n)++] = arch;
}

/* Decode the entry header at @p (with @left bytes up to the container's
 * end) into @e; its total size into @step. */
static int entry_read(const uint8_t *p, uint64_t left, struct entry *e,
		      uint64_t *step)
{
	uint32_t hs;

	if (left < ENTRY_HEADER_MIN)
		return err_set(EGPU_EFORMAT, "fatbin: entry header cut short (%llu bytes left)",
			       (unsigned long long)left);
	hs = rd32(p + 4);
	*e = (struct entry){ .kind = rd16(p), .size = rd64(p + 8),
			     .csize = rd32(p + 16), .arch = rd32(p + 28),
			     .flags = rd64(p + 40), .dsize = rd64(p + 56),
			     .data = p + hs };
	if (hs < ENTRY_HEADER_MIN || hs > left || e->size > left - hs ||
	    e->csize > e->size)
		return err_set(EGPU_EFORMAT, "fatbin: entry of %llu bytes (header %u) runs past the container's %llu",
			       (unsigned long long)e->size, hs,
			       (unsigned long long)left);
	*step = hs + e->size;
	return 0;
}

/* Walk the entries of the fatbin at @p: fill @info; keep in @best the PTX
 * entry newest but not newer than @target (0: none wanted). */
static int fatbin_walk(const uint8_t *p, size_t len, unsigned target,
		       struct image_info *info, struct entry *best)
{
	uint16_t hs;
	uint64_t body, off;

	if (len && len < FATBIN_HEADER_SIZE)
		return err_set(EGPU_EFORMAT, "fatbin: %zu bytes, less than its header", len);
	hs = rd16(p + 6);
	body = rd64(p + 8);
	if (hs < FATBIN_HEADER_SIZE || (len && (hs > len || body > len - hs)) ||
	    body > (1ull << 40))
		return err_set(EGPU_EFORMAT, "fatbin: header says %llu bytes after %u, the image has %zu",
			       (unsigned long long)body, hs, len);
	info->size = hs + body;
	for (off = hs; off < hs + body;) {
		struct entry e;
		uint64_t step = 0;
		int err = entry_read(p + off, hs + body - off, &e, &step);

		if (err)
			return err;
		if (e.kind == ENTRY_PTX) {
			add_arch(info->ptx_archs, &info->nptx, e.arch);
			if (e.arch <= target && (!best->data || e.arch > best->arch))
				*best = e;
		} else if (e.kind == ENTRY_ELF) {
			add_arch(info->sass_archs, &info->nsass, e.arch);
		}
		off += step;
	}
	return 0;
}

enum image_kind image_probe(const void *image, size_t len,
			    struct image_info *info)
{
	const uint8_t *p = unwrap(image, &len);
	struct entry none = { 0 };

	memset(info, 0, sizeof(*info));
	if (has_magic(p, len, FATBIN_MAGIC)) {
		/* a malformed one is still a fatbin: image_ptx() says why */
		info->kind = IMAGE_FATBIN;
		if (fatbin_walk(p, len, 0, info, &none))
			info->size = 0;
	} else if (is_elf(p, len) && rd16(p + 18) == ELF_EM_CUDA) {
		info->kind = IMAGE_CUBIN;
		info->size = elf_size(p);
		add_arch(info->sass_archs, &info->nsass, elf_arch(p));
	} else if (is_elf(p, len) || is_wrapper(p, len)) {
		info->kind = IMAGE_UNKNOWN;
	} else {
		info->kind = IMAGE_PTX;
		info->size = len ? len : strlen((const char *)p) + 1;
	}
	return info->kind;
}

static void list_archs(char *buf, size_t len, const char *what,
		       const char *prefix, const unsigned *a, unsigned n)
{
	size_t used = strlen(buf);

	if (!n)
		return;
	used += snprintf(buf + used, used < len ? len - used : 0, "%s%s for ",
			 used ? ", " : "", what);
	for (unsigned i = 0; i < n && used < len; i++)
		used += snprintf(buf + used, len - used, "%s%s%u", i ? "/" : "",
				 prefix, a[i]);
}

void image_describe(const struct image_info *info, char *buf, size_t len)
{
	buf[0] = '\0';
	list_archs(buf, len, "SASS", "sm_", info->sass_archs, info->nsass);
	list_archs(buf, len, "PTX", "compute_", info->ptx_archs, info->nptx);
	if (!buf[0])
		snprintf(buf, len, "nothing");
}

unsigned image_ptx_target(const char *text)
{
	const char *t = strstr(text, ".target");

	if (!t)
		return 0;
	t += strlen(".target");
	t += strspn(t, " \t");
	return target_sm(t);
}

static int decompress(const struct entry *e, char *out)
{
	if (e->flags & FLAG_ZSTD) {
		size_t n = ZSTD_decompress(out, e->dsize, e->data, e->csize);

		if (ZSTD_isError(n) || n != e->dsize)
			return err_set(EGPU_EFORMAT, "fatbin: zstd entry for compute_%u: %s",
				       e->arch, ZSTD_isError(n) ?
				       ZSTD_getErrorName(n) : "short");
		return 0;
	}
	if (e->flags & FLAG_LZ4)
		return lz4_block_decode(e->data, e->csize, (uint8_t *)out, e->dsize);
	memcpy(out, e->data, e->size);
	return 0;
}

/* The PTX text of entry @e, decompressed, NUL-terminated. */
static int entry_ptx(const struct entry *e, char **ptx, size_t *ptx_len)
{
	bool packed = e->flags & (FLAG_ZSTD | FLAG_LZ4);
	uint64_t n = packed ? e->dsize : e->size;
	char *out;
	int err;

	if (packed && (!e->csize || n > (1ull << 32)))
		return err_set(EGPU_EFORMAT, "fatbin: compressed PTX entry for compute_%u has sizes %u -> %llu",
			       e->arch, e->csize, (unsigned long long)n);
	if (e->flags & ~(uint64_t)(FLAG_ZSTD | FLAG_LZ4) & 0xf000)
		return err_set(EGPU_ENOTSUP, "fatbin: PTX entry for compute_%u compressed with an unknown scheme (flags 0x%llx)",
			       e->arch, (unsigned long long)e->flags);
	out = malloc(n + 1);
	if (!out)
		return err_set(EGPU_ENOMEM, "fatbin: out of memory");
	err = decompress(e, out);
	if (err) {
		free(out);
		return err;
	}
	out[n] = '\0';
	*ptx = out;
	*ptx_len = strlen(out); /* entries are padded with NULs */
	return 0;
}

static int no_ptx(const struct image_info *info, const char *sm)
{
	char what[160];

	image_describe(info, what, sizeof(what));
	return err_set(EGPU_ENOTSUP, "%s with %s: no PTX for %s to instrument; rebuild with PTX embedded (nvcc -gencode arch=compute_%u,code=compute_%u)",
		       info->kind == IMAGE_CUBIN ? "a cubin" : "a fatbin",
		       what, sm, target_sm(sm), target_sm(sm));
}

int image_ptx(const void *image, size_t len, const char *sm, char **ptx,
	      size_t *ptx_len, struct image_info *info)
{
	const uint8_t *p;
	struct entry best = { 0 };
	int err;

	if (len && len < 4)
		return err_set(EGPU_EFORMAT, "module image of %zu bytes", len);
	switch (image_probe(image, len, info)) {
	case IMAGE_PTX: {
		/* All @len bytes: the parser refuses a NUL inside the text
		 * with its line (trailing NULs are padding). */
		size_t n = len ? len : info->size - 1;

		*ptx = malloc(n + 1);
		if (!*ptx)
			return err_set(EGPU_ENOMEM, "out of memory");
		memcpy(*ptx, image, n);
		(*ptx)[n] = '\0';
		*ptx_len = n;
		return 0;
	}
	case IMAGE_CUBIN:
		return no_ptx(info, sm);
	case IMAGE_UNKNOWN:
		if (is_wrapper(image, len))
			return err_set(EGPU_EFORMAT,
				       "module image of %zu bytes is a CUDA runtime fatbin wrapper, which points at its fatbin: pass the wrapper with length 0 (as cuModuleLoadData takes it) or the fatbin itself",
				       len);
		return err_set(EGPU_EFORMAT, "module image is neither PTX, a fatbin nor a CUDA cubin");
	case IMAGE_FATBIN:
		break;
	}
	p = unwrap(image, &len);
	err = fatbin_walk(p, len, target_sm(sm), info, &best);
	if (err)
		return err;
	if (!best.data)
		return no_ptx(info, sm);
	return entry_ptx(&best, ptx, ptx_len);
}
