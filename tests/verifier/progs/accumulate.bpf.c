/* SPDX-License-Identifier: MIT */
/*
 * Loops that accumulate: sums, maxima and flags collected over many
 * iterations must not multiply the paths (the branch of a running maximum
 * decides nothing but the maximum), while loops that never end stay
 * refused.
 */
#include "bpf_prog.h"

#define VALUES 256

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, VALUES);
	__type(key, u32);
	__type(value, u64);
} input SEC(".maps");

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, 2);
	__type(key, u32);
	__type(value, u64);
} output SEC(".maps");

struct table {
	u32 n;
	u32 pad;
	u64 v[64];
};

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct table);
} table SEC(".maps");

static __inline_always struct table *get_table(void)
{
	u32 key = 0;

	return bpf_map_lookup_elem(&table, &key);
}

static __inline_always void put(u32 key, u64 value)
{
	bpf_map_update_elem(&output, &key, &value, 0);
}

/* examples/directly_run_on_gpu: the key lives on the stack, clang spills
 * the sum and the maximum there too. */
/* expect: accept */
SEC("run/0")
int sum_max_stack_key(void *ctx)
{
	u64 sum = 0, max = 0;
	u32 key;

	for (key = 0; key < VALUES; key++) {
		u64 *v = bpf_map_lookup_elem(&input, &key);

		if (!v)
			return -1;
		sum += *v;
		if (*v > max)
			max = *v;
	}
	key = 0;
	bpf_map_update_elem(&output, &key, &sum, 0);
	key = 1;
	bpf_map_update_elem(&output, &key, &max, 0);
	return (int)sum;
}

/* expect: accept */
SEC("gpu/exit/sum_max")
int sum_max_reg_counter(struct egpu_kernel_ctx *ctx)
{
	struct table *t = get_table();
	u64 sum = 0, max = 0, min = ~0ULL;

	if (!t)
		return 0;
	for (int i = 0; i < 64; i++) {
		u64 x = t->v[i];

		sum += x;
		if (x > max)
			max = x;
		if (x < min)
			min = x;
	}
	put(0, sum);
	put(1, max - min);
	return 0;
}

/* expect: accept */
SEC("gpu/exit/flags")
int nested_flags(struct egpu_kernel_ctx *ctx)
{
	struct table *t = get_table();
	u64 flags = 0;

	if (!t)
		return 0;
	for (int i = 0; i < 8; i++) {
		for (int j = 0; j < 8; j++) {
			u64 x = t->v[i * 8 + j];

			if (x & 1)
				flags |= 1ULL << j;
			if (x > ctx->kernel_id)
				flags |= 0x100ULL << i;
			if (!x)
				flags |= 1ULL << 32;
		}
	}
	put(0, flags);
	return 0;
}

/* expect: accept */
SEC("gpu/exit/clamped_max")
int max_clamped_bound(struct egpu_kernel_ctx *ctx)
{
	struct table *t = get_table();
	u64 max = 0;
	u32 n;

	if (!t)
		return 0;
	n = t->n;
	if (n > 64)
		n = 64;
	for (u32 i = 0; i < n; i++)
		if (t->v[i] > max)
			max = t->v[i];
	put(1, max);
	return 0;
}

/* A 32-bit counter up to an unchanging bound: it ends within 2^32
 * iterations, and i & 63 keeps the accesses in bounds
 * (docs/verifier.md, "Loops with a bound the verifier cannot see"). */
/* expect: accept */
SEC("gpu/exit/unclamped_max")
int max_unclamped_bound(struct egpu_kernel_ctx *ctx)
{
	struct table *t = get_table();
	u64 max = 0;

	if (!t)
		return 0;
	for (u32 i = 0; i < t->n; i++)
		if (t->v[i & 63] > max)
			max = t->v[i & 63];
	put(1, max);
	return 0;
}

/* expect: reject "infinite loop" */
SEC("gpu/exit/to_ten")
int count_to_ten(struct egpu_kernel_ctx *ctx)
{
	struct table *t = get_table();
	u64 i;

	if (!t)
		return 0;
	i = t->v[0];
	while (i != 10) {
		i++;
		bpf_membar();
	}
	return 0;
}

/* The maximum changes, the key never does: the loop never ends. */
/* expect: reject "infinite loop" */
SEC("gpu/exit/stuck_key")
int max_stuck_key(struct egpu_kernel_ctx *ctx)
{
	u64 max = 0;
	u32 key = 0;

	for (;;) {
		u64 *v = bpf_map_lookup_elem(&input, &key);

		if (!v)
			break;
		if (*v > max)
			max = *v;
	}
	put(1, max);
	return 0;
}
