/* SPDX-License-Identifier: MIT */
/* bpf-to-bpf calls: arguments, stack across frames, depth and size limits. */
#include "bpf_prog.h"

struct {
	__uint(type, MAP_HASH);
	__uint(max_entries, 256);
	__type(key, u32);
	__type(value, u64);
} counts SEC(".maps");

static __noinline u64 square(u64 x)
{
	return x * x;
}

static __noinline int bump(u32 key)
{
	u64 *v = bpf_map_lookup_elem(&counts, &key);

	if (!v)
		return -1;
	__sync_fetch_and_add(v, 1);
	return 0;
}

static __noinline void fill(u64 *out, int n)
{
	for (int i = 0; i < 4; i++)
		out[i] = n + i;
}

static __noinline u64 big_frame(u64 seed)
{
	volatile u64 buf[40];

	for (int i = 0; i < 40; i++)
		buf[i] = seed + i;
	return buf[seed & 31];
}

static __noinline u64 bigger_frame(u64 seed)
{
	volatile u64 buf[40];

	for (int i = 0; i < 40; i++)
		buf[i] = seed ^ i;
	return buf[(seed >> 3) & 31] + big_frame(seed);
}

static __noinline u64 *find(u32 key)
{
	return bpf_map_lookup_elem(&counts, &key);
}

static __noinline u64 *local_address(void)
{
	u64 x = 5;
	u64 *volatile p = &x;

	return p;
}

/* expect: accept */
SEC("gpu/entry/square")
int call_square(struct egpu_kernel_ctx *ctx)
{
	return square(ctx->params_size) + square(3);
}

/* expect: accept */
SEC("gpu/entry/bump")
int call_bump(struct egpu_kernel_ctx *ctx)
{
	return bump(ctx->kernel_id & 0xff);
}

/* expect: accept */
SEC("gpu/exit/fill")
int call_fill(struct egpu_kernel_ctx *ctx)
{
	u64 vals[4];

	fill(vals, ctx->params_size);
	return vals[0] + vals[3];
}

/* expect: accept */
SEC("gpu/entry/frames")
int one_big_frame(struct egpu_kernel_ctx *ctx)
{
	volatile u64 buf[20];

	buf[0] = ctx->kernel_id;
	return big_frame(buf[0]);
}

/* expect: reject "combined stack of calls" */
SEC("gpu/entry/deep_frames")
int too_much_stack(struct egpu_kernel_ctx *ctx)
{
	volatile u64 buf[20];

	buf[0] = ctx->kernel_id;
	return bigger_frame(buf[0]);
}

/* expect: reject "may be NULL (result of map_lookup_elem" */
SEC("gpu/entry/find")
int unchecked_find(struct egpu_kernel_ctx *ctx)
{
	return *find(1);
}

/* expect: accept */
SEC("gpu/entry/find_checked")
int checked_find(struct egpu_kernel_ctx *ctx)
{
	u64 *v = find(2);

	return v ? *v : 0;
}

/* expect: reject "function returns a pointer to its own stack" */
SEC("gpu/entry/dangling")
int dangling(struct egpu_kernel_ctx *ctx)
{
	return *local_address();
}
