/* SPDX-License-Identifier: MIT */
/*
 * Locals packed into stack slots by narrow stores (issue 24): constants
 * and scalars stored with 1-, 2- and 4-byte stores stay what they were,
 * byte range by byte range; and pointer distances taken before a NULL
 * check are numbers.
 */
#include "bpf_prog.h"

struct kstat {
	u64 ns;
	u64 runs;
};

struct {
	__uint(type, 4096); /* EGPU_THREAD_LOCAL */
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} t0 SEC(".maps");

struct {
	__uint(type, 4097); /* EGPU_SM_ARRAY */
	__uint(max_entries, 256);
	__type(key, u32);
	__type(value, struct kstat);
} kstats SEC(".maps");

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, 4);
	__type(key, u32);
	__type(value, u64[16]);
} tab SEC(".maps");

/* expect: accept */
SEC("gpu/exit/naive")
int key_next_to_local(struct egpu_kernel_ctx *ctx)
{
	u32 z = 0, k = ctx->kernel_id;
	u64 *t = bpf_map_lookup_elem(&t0, &z);
	struct kstat *s = bpf_map_lookup_elem(&kstats, &k);

	if (!s)
		return 0;
	__sync_fetch_and_add(&s->ns, bpf_get_globaltimer() - *t);
	__sync_fetch_and_add(&s->runs, 1);
	return 0;
}

/* expect: accept */
SEC("gpu/exit/bytes")
int byte_locals(struct egpu_kernel_ctx *ctx)
{
	volatile u8 row = 15, other = ctx->site;
	volatile u16 col = ctx->params_size & 7, more = ctx->attach;
	u32 key = other & 3;
	u64 *v = bpf_map_lookup_elem(&tab, &key);

	if (!v)
		return 0;
	v[row] += more;
	v[col] += 1;
	return 0;
}

/* expect: reject "the key in r2 must be a constant on the stack" */
SEC("gpu/exit/key_overwritten")
int key_overwritten(struct egpu_kernel_ctx *ctx)
{
	u32 z = 0;
	u64 *t;

	((volatile u8 *)&z)[1] = ctx->site;
	t = bpf_map_lookup_elem(&t0, &z);
	return *t;
}

/* expect: accept */
SEC("gpu/exit/distance")
int distance_before_check(struct egpu_kernel_ctx *ctx)
{
	u32 a = 0, b = 1;
	char *p = bpf_map_lookup_elem(&tab, &a);
	char *q = bpf_map_lookup_elem(&tab, &b);
	u64 d;

	asm volatile("%0 = %1; %0 -= %2" : "=&r"(d) : "r"(p), "r"(q));
	if (!p)
		return 0;
	*(u64 *)p = d;
	return 0;
}

/* expect: reject "is not a pointer" */
SEC("gpu/exit/distance_deref")
int distance_dereferenced(struct egpu_kernel_ctx *ctx)
{
	u32 a = 0, b = 1;
	char *p = bpf_map_lookup_elem(&tab, &a);
	char *q = bpf_map_lookup_elem(&tab, &b);
	u64 d;

	asm volatile("%0 = %1; %0 -= %2" : "=&r"(d) : "r"(p), "r"(q));
	return *(volatile u64 *)d;
}
