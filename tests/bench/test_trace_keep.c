/* SPDX-License-Identifier: MIT */
/*
 * bench_mem's oracle (trace_keep.c): a trace of a small vecadd, made as
 * spans of affine and scattered records and kept as the ring would deliver
 * it, passes the check exactly when every element was accessed its times
 * and nothing else was.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "core/span_record.h"
#include "egpu.h"
#include "egpu/ctx.h"
#include "test_util.h"
#include "trace_keep.h"

#define N 96 /* three warps */
#define A 0x7f0000000000ull
#define B 0x7f0000100000ull
#define C 0x7f0000200000ull

static const struct trace_expect ex[] = {
	{ A, N, 4, EGPU_MEM_LOAD, 1 },
	{ B, N, 4, EGPU_MEM_LOAD, 1 },
	{ C, N, 4, EGPU_MEM_STORE, 1 },
};

/* A span of a warp's three accesses at element @first: a and c affine,
 * b scattered (one-byte deltas, lanes in pairs swapped). */
static size_t vecadd_span(uint64_t *w, uint32_t first)
{
	uint8_t *d;

	w[0] = 0; /* span_info */
	w[1] = span_word0(SPAN_AFFINE, 0, EGPU_MEM_LOAD, 4, 1, UINT32_MAX);
	w[2] = span_affine_w1(A + 4 * first, 4);
	w[3] = span_word0(SPAN_SCATTERED, 0, EGPU_MEM_LOAD, 4, 2, UINT32_MAX);
	w[4] = B + 4 * first;
	d = (uint8_t *)&w[5];
	for (int lane = 0; lane < 32; lane++)
		d[lane] = (uint8_t)(4 * (lane ^ 1));
	w[9] = span_word0(SPAN_AFFINE, 0, EGPU_MEM_STORE, 4, 3, UINT32_MAX);
	w[10] = span_affine_w1(C + 4 * first, 4);
	return 11 * 8;
}

static uint64_t records;

static uint64_t check(struct trace_keep *k, char *why)
{
	return trace_keep_check(k, ex, 3, &records, why, 256);
}

START_TEST(complete_trace_passes)
{
	struct trace_keep k;
	uint64_t span[11];
	char why[256] = "";

	ck_assert_int_eq(trace_keep_init(&k, 4096), 0);
	for (uint32_t i = 0; i < N; i += 32)
		trace_keep_span(&k, span, vecadd_span(span, i));
	ck_assert_uint_eq(check(&k, why), 3 * N);
	ck_assert_uint_eq(records, 3 * N / 32);
	trace_keep_free(&k);
}
END_TEST

START_TEST(missing_duplicate_and_stray_accesses_fail)
{
	struct trace_keep k;
	uint64_t span[11];
	char why[256] = "";
	size_t len = vecadd_span(span, 0);

	ck_assert_int_eq(trace_keep_init(&k, 4096), 0);
	trace_keep_span(&k, span, vecadd_span(span, 0));
	trace_keep_span(&k, span, vecadd_span(span, 32));
	ck_assert_uint_eq(check(&k, why), 0); /* the third warp is missing */
	ck_assert_ptr_nonnull(strstr(why, "element 64 of array 0 accessed 0 times"));
	trace_keep_span(&k, span, vecadd_span(span, 64));
	trace_keep_span(&k, span, vecadd_span(span, 64));
	ck_assert_uint_eq(check(&k, why), 0);
	ck_assert_ptr_nonnull(strstr(why, "accessed 2 times"));
	/* A store where loads are expected. */
	trace_keep_reset(&k);
	for (uint32_t i = 0; i < N; i += 32)
		trace_keep_span(&k, span, vecadd_span(span, i));
	span[1] = span_word0(SPAN_AFFINE, 0, EGPU_MEM_STORE, 4, 1, 1);
	trace_keep_span(&k, span, len);
	ck_assert_uint_eq(check(&k, why), 0);
	ck_assert_ptr_nonnull(strstr(why, "site 1: 4-byte access of kind 2"));
	/* Past the arrays. */
	trace_keep_reset(&k);
	span[1] = span_word0(SPAN_AFFINE, 0, EGPU_MEM_LOAD, 4, 1, 1);
	span[2] = span_affine_w1(C + 4 * N, 4);
	trace_keep_span(&k, span, 24);
	ck_assert_uint_eq(check(&k, why), 0);
	ck_assert_ptr_nonnull(strstr(why, "outside the kernel's arrays"));
	trace_keep_free(&k);
}
END_TEST

/* Chunks kept whole (discards skipped), and more than fits: a failure. */
START_TEST(chunks_and_overflow)
{
	struct trace_keep k;
	uint64_t chunk[3 * 12 + 2] = { 0 };
	char why[256] = "";
	size_t at = 0;

	for (uint32_t i = 0; i < N; i += 32) {
		uint64_t *rec = &chunk[at];

		rec[0] = (uint64_t)(EGPU_REC_COMMIT | EGPU_REC_SPAN) << 32 |
			 vecadd_span(rec + 1, i);
		at += 12;
	}
	chunk[at] = (uint64_t)(EGPU_REC_COMMIT | EGPU_REC_DISCARD) << 32 | 8;
	ck_assert_int_eq(trace_keep_init(&k, sizeof(chunk)), 0);
	trace_keep_chunk(&k, chunk, sizeof(chunk));
	ck_assert_uint_eq(check(&k, why), 3 * N);
	trace_keep_chunk(&k, chunk, 8);
	ck_assert_uint_eq(check(&k, why), 0);
	ck_assert_ptr_nonnull(strstr(why, "more than the"));
	trace_keep_free(&k);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("trace_keep");
	TCase *tc = tcase_create("trace_keep");

	tcase_add_test(tc, complete_trace_passes);
	tcase_add_test(tc, missing_duplicate_and_stray_accesses_fail);
	tcase_add_test(tc, chunks_and_overflow);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
