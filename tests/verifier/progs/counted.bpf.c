/* SPDX-License-Identifier: MIT */
/*
 * Loops counted up (or down) to a bound read from a map, which the
 * verifier cannot follow iteration by iteration (up to 2^32 of them): a
 * 32-bit counter stepping by one toward a bound no iteration changes
 * ends, and the body is verified once for every iteration (a GEMM's inner
 * product, as bpftime's directly_run_on_gpu example computes). Counters
 * that may never reach their bound, bounds that move, and bodies that are
 * unsafe for some iteration stay refused.
 */
#include "bpf_prog.h"

#define CELLS 64

struct dims {
	u32 m, n, k;
	u32 pad;
};

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct dims);
} dims SEC(".maps");

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, 4096);
	__type(key, u32);
	__type(value, s32);
} mat_a SEC(".maps");

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, 4096);
	__type(key, u32);
	__type(value, s32);
} mat_b SEC(".maps");

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64[CELLS]);
} cells SEC(".maps");

static __inline_always struct dims *get_dims(void)
{
	u32 key = 0;

	return bpf_map_lookup_elem(&dims, &key);
}

static __inline_always u64 *get_cells(void)
{
	u32 key = 0;

	return bpf_map_lookup_elem(&cells, &key);
}

/* One cell of C = A * B, the inner dimension from the map: the counter is
 * 32 bits, the bound kept on the stack across the lookups. */
/* expect: accept */
SEC("run/0")
int gemm_cell(void *ctx)
{
	struct dims *d = get_dims();
	s64 acc = 0;
	u32 row = 1, col = 2, n, k;

	if (!d)
		return 0;
	n = d->n;
	k = d->k;
	for (u32 i = 0; i < k; i++) {
		u32 ai = row * k + i, bi = i * n + col;
		s32 *a = bpf_map_lookup_elem(&mat_a, &ai);
		s32 *b = bpf_map_lookup_elem(&mat_b, &bi);

		acc += (s64)(a ? *a : 0) * (s64)(b ? *b : 0);
	}
	return (int)acc;
}

/* Counting down to zero. */
/* expect: accept */
SEC("run/0")
int count_down(void *ctx)
{
	struct dims *d = get_dims();
	u64 *c = get_cells();
	u32 i;

	if (!d || !c)
		return 0;
	for (i = d->k; i != 0; i--)
		c[i & (CELLS - 1)] += 1;
	return 0;
}

/* The counter indexes the array unmasked: for i >= 64 the access is out
 * of bounds, and the verifier must see it although it never follows the
 * loop that far. */
/* expect: reject "out-of-bounds" */
SEC("run/0")
int unmasked_index(void *ctx)
{
	struct dims *d = get_dims();
	u64 *c = get_cells();

	if (!d || !c)
		return 0;
	for (u32 i = 0; i < d->k; i++)
		c[i] += 1;
	return 0;
}

/* Steps of two may jump over the bound: refused. */
/* expect: reject "not proven to terminate" */
SEC("run/0")
int step_two(void *ctx)
{
	struct dims *d = get_dims();
	u64 *c = get_cells();
	u32 k;

	if (!d || !c)
		return 0;
	k = d->k;
	for (u32 i = 0; i != k; i += 2)
		c[i & (CELLS - 1)] += 1;
	return 0;
}

/* The bound is read again from the map in every iteration, where another
 * thread may change it: refused. */
/* expect: reject "not proven to terminate" */
SEC("run/0")
int bound_reread(void *ctx)
{
	struct dims *d = get_dims();
	u64 *c = get_cells();

	if (!d || !c)
		return 0;
	for (u32 i = 0; i < *(volatile u32 *)&d->k; i++)
		c[i & (CELLS - 1)] += 1;
	return 0;
}

/* A 64-bit counter up to a 64-bit bound could run 2^64 times: refused. */
/* expect: reject "not proven to terminate" */
SEC("run/0")
int counter_64(void *ctx)
{
	u64 *c = get_cells();
	u64 k;

	if (!c)
		return 0;
	k = c[0];
	for (u64 i = 0; i < k; i++)
		c[1 + (i & 31)] += 1;
	return 0;
}
