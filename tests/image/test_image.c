/* SPDX-License-Identifier: MIT */
/*
 * Fatbins and cubins as module images: the PTX a fatbin carries is found
 * for the target, in every compression nvcc 13 writes (none, LZ4, zstd),
 * and is the PTX nvcc writes for the same source; images without usable
 * PTX are refused with EGPU_ENOTSUP naming what they hold; corrupt
 * containers are refused, never read past their end.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egpu.h"
#include "image/image.h"
#include "test_util.h"

static char *build_file(const char *name, size_t *len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", EGPU_TEST_BUILD, name);
	return tu_read_file(path, len);
}

/* @ptx without comments and whitespace: nvcc blanks the comments of the
 * copy it puts in a fatbin. */
static char *bare(const char *ptx)
{
	char *out = malloc(strlen(ptx) + 1), *o = out;

	for (const char *p = strstr(ptx, ".version"); *p; p++) {
		if (p[0] == '/' && p[1] == '/')
			p += strcspn(p, "\n");
		if (*p && !strchr(" \t\n", *p))
			*o++ = *p;
		if (!*p)
			break;
	}
	*o = '\0';
	return out;
}

static void same_ptx(const char *got, const char *want, const char *what)
{
	char *a = bare(got), *b = bare(want);

	ck_assert_msg(!strcmp(a, b), "%s: the fatbin's PTX differs from nvcc -ptx", what);
	free(a);
	free(b);
}

/* The PTX of k_MODE.fatbin for @sm, checked against nvcc's own -ptx. */
static void check_mode(const char *mode)
{
	char name[64], *ptx, *want, *img;
	size_t len, plen, wlen;
	struct image_info info;

	snprintf(name, sizeof(name), "k_%s.fatbin", mode);
	img = build_file(name, &len);
	want = build_file("k.ptx", &wlen);
	ck_assert_int_eq(image_probe(img, len, &info), IMAGE_FATBIN);
	ck_assert_uint_eq(info.size, len);
	ck_assert_uint_eq(info.nptx, 2);
	ck_assert_uint_eq(info.nsass, 2);
	ck_assert_msg(!image_ptx(img, len, "sm_90", &ptx, &plen, &info),
		      "%s: %s", mode, egpu_errmsg());
	ck_assert_uint_eq(plen, strlen(ptx));
	same_ptx(ptx, want, mode);
	free(ptx);
	/* sm_86 takes the compute_80 entry, with its own .target */
	ck_assert(!image_ptx(img, len, "sm_86", &ptx, &plen, &info));
	ck_assert_ptr_nonnull(strstr(ptx, ".target sm_80"));
	free(ptx);
	/* the length unknown (the driver's contract) and the runtime wrapper */
	struct { uint32_t magic, version; const void *data, *name; } wrap = {
		0x466243b1u, 1, img, NULL };
	ck_assert(!image_ptx(&wrap, 0, "sm_90", &ptx, &plen, &info));
	same_ptx(ptx, want, "wrapped");
	free(ptx);
	/* a wrapper as bytes of a known length: its pointer is not followed
	 * (fuzz_fatbin's first crash: a wrapper in its input read anywhere) */
	wrap.data = (const void *)(uintptr_t)0x6480018000ull;
	ck_assert_int_eq(image_ptx(&wrap, sizeof(wrap), "sm_90", &ptx, &plen, &info),
			 EGPU_EFORMAT);
	ck_assert_msg(strstr(egpu_errmsg(), "is a CUDA runtime fatbin wrapper"), "%s",
		      egpu_errmsg());
	free(img);
	free(want);
}

START_TEST(compress_modes)
{
	check_mode("none");
	check_mode("speed");   /* LZ4 */
	check_mode("size");    /* zstd, the ELF entries too */
	check_mode("default"); /* zstd PTX */
}
END_TEST

static void check_refused(const char *name, const char *sm, const char *what)
{
	size_t len, plen;
	char *img = build_file(name, &len), *ptx = NULL;
	struct image_info info;

	ck_assert_int_eq(image_ptx(img, len, sm, &ptx, &plen, &info), EGPU_ENOTSUP);
	ck_assert_msg(strstr(egpu_errmsg(), what) &&
		      strstr(egpu_errmsg(), "code=compute_"),
		      "%s: %s", name, egpu_errmsg());
	free(img);
}

START_TEST(no_ptx)
{
	check_refused("k.cubin", "sm_90", "a cubin with SASS for sm_90");
	check_refused("k_sass.fatbin", "sm_90", "a fatbin with SASS for sm_90");
	check_refused("k_ptx100.fatbin", "sm_90", "PTX for compute_100");
}
END_TEST

START_TEST(corrupt)
{
	size_t len, plen;
	char *img = build_file("k_size.fatbin", &len), *ptx;
	struct image_info info;

	/* cut anywhere: refused, never read past the end */
	for (size_t cut = 4; cut < len; cut += 7) {
		char *part = malloc(cut);

		memcpy(part, img, cut);
		ck_assert_int_lt(image_ptx(part, cut, "sm_90", &ptx, &plen, &info), 0);
		free(part);
	}
	/* every zstd frame damaged past its header: refused */
	for (size_t i = 0; i + 40 < len; i++)
		if (!memcmp(img + i, "\x28\xb5\x2f\xfd", 4))
			for (size_t j = i + 12; j < i + 40; j++)
				img[j] ^= 0x5a;
	ck_assert_int_eq(image_ptx(img, len, "sm_90", &ptx, &plen, &info),
			 EGPU_EFORMAT);
	free(img);
}
END_TEST

START_TEST(lz4_bad)
{
	uint8_t out[16];
	/* a match reaching before the start, and one past the output */
	static const uint8_t back[] = { 0x10, 'a', 0x05, 0x00 };
	static const uint8_t over[] = { 0x1f, 'a', 0x01, 0x00, 0x20 };

	ck_assert_int_eq(lz4_block_decode(back, sizeof(back), out, 5), EGPU_EFORMAT);
	ck_assert_int_eq(lz4_block_decode(over, sizeof(over), out, 16), EGPU_EFORMAT);
}
END_TEST

/* egpu_instrument_ptx takes the fatbin and splices into its PTX. */
START_TEST(instrument_fatbin)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);
	EGPU_OPTS(egpu_report, rep);
	egpu_ctx *ctx = egpu_ctx_new(&co);
	char path[4096], *out, *img;
	size_t len, out_len;
	egpu_obj *obj;

	snprintf(path, sizeof(path), "%s/counter.bpf.o", EGPU_TEST_BUILD);
	obj = egpu_load(ctx, path, NULL);
	ck_assert_msg(obj, "%s", egpu_errmsg());
	ck_assert_int_ge(egpu_attach_all(obj), 0);
	img = build_file("k_default.fatbin", &len);
	ck_assert_msg(!egpu_instrument_ptx(ctx, img, len, &out, &out_len, &rep),
		      "%s", egpu_errmsg());
	ck_assert_uint_eq(rep.kernel_cnt, 3);
	ck_assert_uint_eq(rep.kernels_patched, 3);
	ck_assert_ptr_nonnull(strstr(out, "__egpu_probe"));
	free(out);
	free(img);
	img = build_file("k.cubin", &len);
	ck_assert_int_eq(egpu_instrument_ptx(ctx, img, len, &out, &out_len, NULL),
			 EGPU_ENOTSUP);
	free(img);
	egpu_ctx_free(ctx);
}
END_TEST

/*
 * PTX with a NUL byte in a comment: EGPU_EFORMAT naming its line, not the
 * text cut there (the driver would stop reading at the NUL; the cut text
 * lacked its .target and kernels). A NUL terminator counted in the length
 * is padding.
 */
START_TEST(ptx_with_a_nul)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);
	egpu_ctx *ctx = egpu_ctx_new(&co);
	size_t len, out_len;
	char *ptx = build_file("k.ptx", &len), *out, *nul = strstr(ptx, "//");

	ck_assert_ptr_nonnull(nul);
	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, len + 1, &out, &out_len, NULL),
		      "%s", egpu_errmsg());
	free(out);
	nul[1] = '\0';
	ck_assert_int_eq(egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, NULL),
			 EGPU_EFORMAT);
	ck_assert_msg(strstr(egpu_errmsg(), "PTX line 1 col 2: a NUL byte"), "%s",
		      egpu_errmsg());
	free(ptx);
	egpu_ctx_free(ctx);
}
END_TEST

/*
 * Images shorter than any magic number: bytes of a known length, and
 * strings whose length the API takes up to their NUL (len 0), are PTX
 * and read no further than they go (ASan checks; the fuzzer found "").
 */
START_TEST(images_shorter_than_a_magic)
{
	static const char *const texts[] = { "", "x", "\x50\xed", "\177EL" };
	struct image_info info;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		size_t n = strlen(texts[i]);
		char *copy = malloc(n ? n : 1);

		ck_assert_ptr_nonnull(copy);
		memcpy(copy, texts[i], n);
		ck_assert_int_eq(image_probe(texts[i], 0, &info), IMAGE_PTX);
		ck_assert_uint_eq(info.size, n + 1);
		if (n) /* exactly n bytes, no NUL: ASan sees any read past them */
			ck_assert_int_eq(image_probe(copy, n, &info), IMAGE_PTX);
		free(copy);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("image");
	TCase *tc = tcase_create("image");

	tcase_add_test(tc, compress_modes);
	tcase_add_test(tc, no_ptx);
	tcase_add_test(tc, corrupt);
	tcase_add_test(tc, lz4_bad);
	tcase_add_test(tc, instrument_fatbin);
	tcase_add_test(tc, ptx_with_a_nul);
	tcase_add_test(tc, images_shorter_than_a_magic);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
