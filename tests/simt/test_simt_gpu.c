/* SPDX-License-Identifier: MIT */
/*
 * The SIMT helpers on a GPU (ctest label gpu; skipped without one): an exit
 * probe (simt_exit.bpf.c) calls each of them in every thread of two
 * blocks of 80 threads (warps of 32, 32 and 16 lanes), and each lane's
 * results must be what a warp of that shape gives.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cu.h"
#include "egpu.h"
#include "simt_test.h"
#include "test_util.h"

#define SIMT_OBJ EGPU_TEST_BUILD "/simt_exit.bpf.o"
#define SIMT_PTX EGPU_TEST_BUILD "/kernels.ptx"

static struct simt_lane lanes[SIMT_THREADS];
static uint64_t counters[2];
static struct simt_atomics atomics;

/* Run simt_kernel instrumented; its own results must stay right. */
static void run(void)
{
	const struct cu_driver *d = cu();
	egpu_ctx *ctx = egpu_ctx_new(NULL);
	egpu_obj *obj;
	CUdeviceptr out;
	CUmodule mod;
	CUfunction f;
	void *args[] = { &out };
	int got[SIMT_THREADS];
	size_t len;
	char *ptx = tu_read_file(SIMT_PTX, &len);

	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, SIMT_OBJ, NULL);
	ck_assert_msg(obj, "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_attach_all(obj), 1);
	/* and32 starts with every bit set, so each lane's clear shows */
	ck_assert_int_eq(egpu_map_update(egpu_obj_map(obj, "atomics"), &(uint32_t){ 0 },
					 &(struct simt_atomics){ .and32 = UINT32_MAX }, 0), 0);
	ck_assert_msg(!egpu_module_load(ctx, &mod, ptx, len), "%s", egpu_errmsg());
	CK_CU(d->cuModuleGetFunction(&f, mod, "simt_kernel"));
	CK_CU(d->cuMemAlloc(&out, sizeof(got)));
	CK_CU(d->cuLaunchKernel(f, SIMT_GRID, 1, 1, SIMT_BLOCK, 1, 1, 0, NULL, args,
				NULL));
	CK_CU(d->cuCtxSynchronize());
	CK_CU(d->cuMemcpyDtoH(got, out, sizeof(got)));
	for (int i = 0; i < SIMT_THREADS; i++)
		ck_assert_int_eq(got[i], 2 * i + 1);
	for (uint32_t k = 0; k < SIMT_THREADS; k++)
		ck_assert_int_eq(egpu_map_lookup(egpu_obj_map(obj, "lanes"), &k,
						 &lanes[k]), 0);
	for (uint32_t k = 0; k < 2; k++)
		ck_assert_int_eq(egpu_map_lookup(egpu_obj_map(obj, "counters"), &k,
						 &counters[k]), 0);
	ck_assert_int_eq(egpu_map_lookup(egpu_obj_map(obj, "atomics"), &(uint32_t){ 0 },
					 &atomics), 0);
	d->cuMemFree(out);
	d->cuModuleUnload(mod);
	egpu_ctx_free(ctx);
	free(ptx);
}

/* Thread @t's lane and the active mask of its warp. */
static uint32_t lane_of(int t)
{
	return (uint32_t)(t % SIMT_BLOCK % 32);
}

static uint64_t warp_mask(int t)
{
	int first = t - (int)lane_of(t);
	int n = SIMT_BLOCK - first % SIMT_BLOCK < 32 ? SIMT_BLOCK - first % SIMT_BLOCK : 32;

	return n == 32 ? 0xffffffffull : (1ull << n) - 1;
}

START_TEST(votes_matches_shuffles)
{
	for (int t = 0; t < SIMT_THREADS; t++) {
		const struct simt_lane *r = &lanes[t];
		uint32_t lane = lane_of(t);
		uint64_t mask = warp_mask(t);

		ck_assert_uint_eq(r->lane, lane);
		ck_assert_uint_eq(r->mask, mask);
		ck_assert_uint_eq(r->ballot, mask & 0xaaaaaaaa);
		ck_assert_uint_eq(r->match, mask & (0xfull << (lane / 4 * 4)));
		ck_assert_uint_eq(r->shfl, (uint64_t)(t - (int)lane) << 32 | 3);
		ck_assert_uint_eq(r->slept, 0);
	}
}
END_TEST

/* One add per lane of 1: tickets 0..T-1, consecutive in lane order per warp. */
START_TEST(same_delta_tickets)
{
	static bool seen[SIMT_THREADS];

	ck_assert_uint_eq(counters[0], SIMT_THREADS);
	for (int t = 0; t < SIMT_THREADS; t++) {
		uint64_t k = lanes[t].ticket;
		int leader = t - (int)lane_of(t);

		ck_assert_uint_lt(k, SIMT_THREADS);
		ck_assert(!seen[k]);
		seen[k] = true;
		ck_assert_uint_eq(k, lanes[leader].ticket + lane_of(t));
	}
}
END_TEST

static int by_fetched(const void *a, const void *b)
{
	uint64_t x = lanes[*(const int *)a].fetched, y = lanes[*(const int *)b].fetched;

	return (x > y) - (x < y);
}

/* Adds of lane + 1: in fetched order each lane saw the sum of those before. */
START_TEST(mixed_delta_fetches)
{
	static int order[SIMT_THREADS];
	uint64_t sum = 0;

	for (int t = 0; t < SIMT_THREADS; t++)
		order[t] = t;
	qsort(order, SIMT_THREADS, sizeof(order[0]), by_fetched);
	for (int i = 0; i < SIMT_THREADS; i++) {
		ck_assert_uint_eq(lanes[order[i]].fetched, sum);
		sum += lane_of(order[i]) + 1;
	}
	ck_assert_uint_eq(counters[1], sum);
}
END_TEST

/*
 * Fetching atomics with a different operand per lane: within a warp each
 * lane fetched its first lane's value combined with the operands of the
 * lanes below it (the serial order of docs/jit.md), and the memory ends
 * at every operand combined.
 */
START_TEST(per_lane_fetches)
{
	uint64_t add = 0, or = 0, xor = 0;
	uint32_t add32 = 0;

	for (int t = 0; t < SIMT_THREADS; t++) {
		const struct simt_lane *r = &lanes[t], *first = &lanes[t - (int)lane_of(t)];
		uint64_t below_add = 0, below_or = 0, below_xor = 0;
		uint32_t below_add32 = 0, below_and32 = UINT32_MAX;

		for (int u = t - (int)lane_of(t); u < t; u++) {
			uint64_t v = SIMT_VAL(u, lane_of(u));

			below_add += v;
			below_or |= 1ull << (u % 64);
			below_xor ^= v;
			below_add32 += (uint32_t)v;
			below_and32 &= ~(1u << lane_of(u));
		}
		ck_assert_uint_eq(r->add64 - first->add64, below_add);
		ck_assert_uint_eq(r->or64, first->or64 | below_or);
		ck_assert_uint_eq(r->xor64 ^ first->xor64, below_xor);
		ck_assert_uint_eq((uint32_t)(r->add32 - first->add32), below_add32);
		ck_assert_uint_eq(r->and32, first->and32 & below_and32);
		add += SIMT_VAL(t, lane_of(t));
		or |= 1ull << (t % 64);
		xor ^= SIMT_VAL(t, lane_of(t));
		add32 += (uint32_t)SIMT_VAL(t, lane_of(t));
	}
	ck_assert_uint_eq(atomics.add64, add);
	ck_assert_uint_eq(atomics.plain64, add);
	ck_assert_uint_eq(atomics.or64, or);
	ck_assert_uint_eq(atomics.xor64, xor);
	ck_assert_uint_eq(atomics.add32, add32);
	ck_assert_uint_eq(atomics.and32, 0); /* every lane's bit cleared */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("simt_gpu");
	TCase *tc = tcase_create("gpu");

	tu_require_gpu();
	tcase_set_timeout(tc, 60);
	tcase_add_unchecked_fixture(tc, run, NULL);
	tcase_add_test(tc, votes_matches_shuffles);
	tcase_add_test(tc, same_delta_tickets);
	tcase_add_test(tc, mixed_delta_fetches);
	tcase_add_test(tc, per_lane_fetches);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, false);
}
