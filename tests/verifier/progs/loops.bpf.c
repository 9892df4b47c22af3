/* SPDX-License-Identifier: MIT */
/* Loops: bounded ones are accepted, the rest refused. */
#include "bpf_prog.h"

struct data {
	u32 n;
	u32 pad;
	u64 items[32];
};

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct data);
} data SEC(".maps");

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, 64);
	__type(key, u32);
	__type(value, u64);
} slots SEC(".maps");

static __inline_always struct data *get_data(void)
{
	u32 key = 0;

	return bpf_map_lookup_elem(&data, &key);
}

/* expect: accept */
SEC("gpu/entry/sum")
int sum_items(struct egpu_kernel_ctx *ctx)
{
	struct data *d = get_data();
	u64 sum = 0;

	if (!d)
		return 0;
	for (int i = 0; i < 32; i++)
		sum += d->items[i];
	return sum;
}

/* expect: accept */
SEC("gpu/entry/clamped")
int clamped_count(struct egpu_kernel_ctx *ctx)
{
	struct data *d = get_data();
	u64 sum = 0;
	u32 n;

	if (!d)
		return 0;
	n = d->n;
	if (n > 32)
		n = 32;
	for (u32 i = 0; i < n; i++)
		sum += d->items[i];
	return sum;
}

/* expect: reject "not proven to terminate" */
SEC("gpu/entry/map_bound")
int map_bound(struct egpu_kernel_ctx *ctx)
{
	struct data *d = get_data();
	u64 sum = 0;

	if (!d)
		return 0;
	for (u32 i = 0; i < d->n; i++)
		sum += bpf_get_sm_id();
	return sum;
}

/* expect: reject "out-of-bounds access to map value of 'data': off 264" */
SEC("gpu/entry/map_bound_index")
int map_bound_index(struct egpu_kernel_ctx *ctx)
{
	struct data *d = get_data();
	u64 sum = 0;

	if (!d)
		return 0;
	for (u32 i = 0; i < d->n; i++)
		sum += d->items[i];
	return sum;
}

/* expect: reject "infinite loop" */
SEC("gpu/entry/spin")
int spin_forever(struct egpu_kernel_ctx *ctx)
{
	for (;;)
		;
	return 0;
}

/* expect: reject "infinite loop" */
SEC("gpu/exit/wait")
int wait_for_flag(struct egpu_kernel_ctx *ctx)
{
	struct data *d = get_data();

	if (!d)
		return 0;
	while (!*(volatile u32 *)&d->n)
		;
	return 0;
}

/* expect: reject "infinite loop" */
SEC("gpu/exit/delay")
int busy_delay(struct egpu_kernel_ctx *ctx)
{
	u64 until = bpf_get_globaltimer() + 1000;

	while (bpf_get_globaltimer() < until)
		;
	return 0;
}

/* expect: accept */
SEC("gpu/entry/nested")
int nested_loops(struct egpu_kernel_ctx *ctx)
{
	u64 sum = 0;

	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			sum += bpf_get_lane_id() * i + j;
	return sum;
}

/* expect: accept */
SEC("gpu/entry/search")
int linear_search(struct egpu_kernel_ctx *ctx)
{
	struct data *d = get_data();

	if (!d)
		return -1;
	for (int i = 0; i < 32; i++)
		if (d->items[i] == ctx->kernel_id)
			return i;
	return -1;
}

/* expect: accept */
SEC("gpu/entry/countdown")
int countdown(struct egpu_kernel_ctx *ctx)
{
	u32 n = ctx->params_size & 63;
	u64 acc = 0;

	while (n) {
		acc += bpf_get_warp_id();
		n--;
	}
	return acc;
}

/* expect: accept */
SEC("gpu/entry/fill_slots")
int fill_slots(struct egpu_kernel_ctx *ctx)
{
	for (u32 i = 0; i < 64; i++) {
		u64 *v = bpf_map_lookup_elem(&slots, &i);

		if (v)
			*v = i;
	}
	return 0;
}

/* expect: accept */
SEC("gpu/entry/bits")
int count_bits(struct egpu_kernel_ctx *ctx)
{
	u64 x = ctx->kernel_id;
	int bits = 0;

	for (int i = 0; i < 64; i++)
		bits += (x >> i) & 1;
	return bits;
}

/* expect: reject "not proven to terminate" */
SEC("gpu/entry/collatz")
int collatz(struct egpu_kernel_ctx *ctx)
{
	u64 x = ctx->kernel_id | 1;
	int steps = 0;

	while (x != 1) {
		x = (x & 1) ? 3 * x + 1 : x / 2;
		steps++;
	}
	return steps;
}

/* expect: accept */
SEC("gpu/entry/stack_array")
int stack_array(struct egpu_kernel_ctx *ctx)
{
	u64 buf[16];
	u64 sum = 0;

	for (int i = 0; i < 16; i++)
		buf[i] = bpf_get_lane_id() + i;
	for (int i = 0; i < 16; i++)
		sum += buf[(i * 7) & 15];
	return sum;
}
