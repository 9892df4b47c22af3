/* SPDX-License-Identifier: MIT */
/* GPU probes in the style of existing tools, and the mistakes they invite. */
#include "bpf_prog.h"

struct {
	__uint(type, MAP_PERTHREAD_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} thread_hits SEC(".maps");

struct {
	__uint(type, MAP_HASH);
	__uint(max_entries, 1024);
	__type(key, u64);
	__type(value, u64);
} start_ts SEC(".maps");

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, 64);
	__type(key, u32);
	__type(value, u64);
} latency_hist SEC(".maps");

struct {
	__uint(type, MAP_RINGBUF);
	__uint(max_entries, 1 << 20);
} trace SEC(".maps");

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, 32);
	__type(key, u32);
	__type(value, u64);
} warp_hits SEC(".maps");

struct mem_event {
	u64 addr;
	u32 size;
	u32 flags;
	u32 lane;
	u32 sm;
};

u64 table[16];
const char names[4][8] = { "load", "store", "atomic", "other" };
const char tag[4] SEC(".rodata.tag") = { 'g', 'p', 'u', '!' };

static __inline_always u32 log2_bucket(u64 v)
{
	u32 b = 0;

	for (int i = 0; i < 63; i++) {
		if (v <= 1)
			break;
		v >>= 1;
		b++;
	}
	return b;
}

/* expect: accept */
SEC("kprobe/_Z9vectorAddPKfS0_Pfi")
int threadhist(struct egpu_kernel_ctx *ctx)
{
	u32 key = 0;
	u64 *v = bpf_map_lookup_elem(&thread_hits, &key);

	if (v)
		*v += 1;
	return 0;
}

/* expect: accept */
SEC("kprobe/launch_start")
int launch_start(struct egpu_kernel_ctx *ctx)
{
	u64 id = ctx->kernel_id, t = bpf_get_globaltimer();

	return bpf_map_update_elem(&start_ts, &id, &t, 0);
}

/* expect: accept */
SEC("kretprobe/launch_end")
int launch_end(struct egpu_kernel_ctx *ctx)
{
	u64 id = ctx->kernel_id;
	u64 *t0 = bpf_map_lookup_elem(&start_ts, &id);
	u64 *bucket;
	u32 b;

	if (!t0)
		return 0;
	b = log2_bucket(bpf_get_globaltimer() - *t0);
	bucket = bpf_map_lookup_elem(&latency_hist, &b);
	if (bucket)
		__sync_fetch_and_add(bucket, 1);
	return 0;
}

/* expect: accept */
SEC("kprobe/__memcapture")
int mem_trace(struct egpu_mem_ctx *ctx)
{
	struct mem_event *e;

	if (bpf_get_lane_id() != 0)
		return 0;
	e = bpf_ringbuf_reserve(&trace, sizeof(*e), 0);
	if (!e)
		return 0;
	e->addr = ctx->addr;
	e->size = ctx->size;
	e->flags = ctx->kind;
	e->lane = bpf_get_lane_id();
	e->sm = bpf_get_sm_id();
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* expect: accept */
SEC("gpu/mem/stores_only")
int count_stores(struct egpu_mem_ctx *ctx)
{
	u32 w = bpf_get_warp_id() & 31;
	u64 *v;

	if (!(ctx->kind & 2))
		return 0;
	v = bpf_map_lookup_elem(&warp_hits, &w);
	if (v)
		__sync_fetch_and_add(v, ctx->size);
	return 0;
}

/* expect: reject "out-of-bounds access to map value" */
SEC("gpu/mem/warp_index")
int warp_index_unchecked(struct egpu_mem_ctx *ctx)
{
	u32 w = bpf_get_warp_id();
	u64 *v = bpf_map_lookup_elem(&warp_hits, &w);

	if (v)
		v[w & 1] += 1;
	return 0;
}

/* expect: reject "is not NUL-terminated inside map" */
SEC("gpu/mem/names_overrun")
int print_kind_overrun(struct egpu_mem_ctx *ctx)
{
	return bpf_puts(tag + (ctx->kind & 1)) ? 1 : 0;
}

/* expect: accept */
SEC("gpu/entry/table")
int global_table(struct egpu_kernel_ctx *ctx)
{
	u64 i = ctx->kernel_id % 16;

	table[i] += 1;
	return 0;
}

/* expect: reject "pointer arithmetic with unbounded" */
SEC("gpu/entry/table_unchecked")
int global_table_unchecked(struct egpu_kernel_ctx *ctx)
{
	table[ctx->kernel_id] += 1;
	return 0;
}

/* expect: accept */
SEC("gpu/mem/names")
int print_kind(struct egpu_mem_ctx *ctx)
{
	return bpf_puts(names[ctx->kind & 3]) ? 1 : 0;
}

/* expect: accept */
SEC("gpu/entry/divide")
int divide(struct egpu_kernel_ctx *ctx)
{
	u64 n = ctx->params_size;

	return ctx->kernel_id / n + ctx->kernel_id % n;
}

/* expect: accept */
SEC("gpu/entry/switch")
int classify(struct egpu_kernel_ctx *ctx)
{
	switch (ctx->attach) {
	case 0:
		return 10;
	case 1:
		return bpf_get_sm_id();
	case 2:
		return bpf_get_warp_id() * 3;
	default:
		return -1;
	}
}

/* expect: accept */
SEC("gpu/entry/memset")
int zeroed_record(struct egpu_kernel_ctx *ctx)
{
	struct mem_event e;

	__builtin_memset(&e, 0, sizeof(e));
	e.addr = ctx->params;
	return bpf_ringbuf_output(&trace, &e, sizeof(e), 0);
}

/* expect: accept */
SEC("gpu/entry/copy")
int copy_struct(struct egpu_kernel_ctx *ctx)
{
	struct egpu_kernel_ctx local;

	__builtin_memcpy(&local, ctx, sizeof(local));
	return bpf_ringbuf_output(&trace, &local, sizeof(local), 0);
}

/* expect: accept */
SEC("gpu/entry/byteswap")
int byteswap(struct egpu_kernel_ctx *ctx)
{
	return __builtin_bswap32(ctx->params_size) ^
	       __builtin_bswap64(ctx->kernel_id);
}

/* expect: accept */
SEC("gpu/entry/stack_index")
int stack_index(struct egpu_kernel_ctx *ctx)
{
	u32 counts[8] = { 0 };
	u32 i = ctx->params_size & 7;

	counts[i] = 5;
	return counts[(i + 1) & 7] + counts[i];
}

/* expect: reject "uninitialised stack" */
SEC("gpu/entry/stack_index_uninit")
int stack_index_uninit(struct egpu_kernel_ctx *ctx)
{
	volatile u32 counts[8];
	u32 i = ctx->params_size & 7;

	counts[i] = 5;
	return counts[(i + 1) & 7];
}

/* expect: accept (a probe's return value is dropped) */
SEC("gpu/entry/return_pointer")
int return_pointer(struct egpu_kernel_ctx *ctx)
{
	u32 key = 0;

	return (long)bpf_map_lookup_elem(&latency_hist, &key);
}

static __noinline int recurse(int n)
{
	if (n <= 0)
		return 0;
	return recurse(n - 1) + bpf_get_lane_id();
}

/* expect: reject "call depth exceeds 8 frames" */
SEC("gpu/entry/recursion")
int recursion(struct egpu_kernel_ctx *ctx)
{
	return recurse(ctx->params_size);
}

/* expect: accept */
SEC("gpu/entry/shallow_recursion")
int shallow_recursion(struct egpu_kernel_ctx *ctx)
{
	return recurse(ctx->params_size & 3);
}

/* expect: accept */
SEC("gpu/exit/sampled")
int sampled(struct egpu_kernel_ctx *ctx)
{
	u64 x, y, z;

	bpf_get_thread_idx(&x, &y, &z);
	if (x % 32)
		return 0;
	return bpf_trace_printk("thread %llu done\n", 17, x);
}

/* expect: accept */
SEC("gpu/entry/compare_pointers")
int compare_pointers(struct egpu_kernel_ctx *ctx)
{
	u32 a = 0, b = 1;
	u64 *p = bpf_map_lookup_elem(&latency_hist, &a);
	u64 *q = bpf_map_lookup_elem(&latency_hist, &b);

	if (!p || !q)
		return 0;
	return p < q;
}

/* expect: reject "may be NULL" */
SEC("gpu/entry/check_wrong_pointer")
int check_wrong_pointer(struct egpu_kernel_ctx *ctx)
{
	u32 a = 0, b = 1;
	u64 *p = bpf_map_lookup_elem(&latency_hist, &a);
	u64 *q = bpf_map_lookup_elem(&latency_hist, &b);

	if (!p)
		return 0;
	return *q;
}

/* expect: accept */
SEC("gpu/entry/thirty_two")
int thirty_two_bit_loop(struct egpu_kernel_ctx *ctx)
{
	u32 acc = 0;

	for (u32 i = ctx->params_size & 0xff; i < 300; i += 7)
		acc += bpf_get_lane_id();
	return acc;
}

/* expect: reject "not proven to terminate" */
SEC("gpu/entry/unbounded_start")
int unbounded_start(struct egpu_kernel_ctx *ctx)
{
	u32 acc = 0;

	for (u32 i = ctx->params_size; i < 0x7fffffff; i += 7)
		acc += bpf_get_lane_id();
	return acc;
}

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64[24]);
} limits SEC(".maps");

/* expect: accept */
SEC("gpu/exit/flags")
int exceeded_flags(struct egpu_kernel_ctx *ctx)
{
	u32 key = 0;
	u64 *lim = bpf_map_lookup_elem(&limits, &key);
	u64 t = bpf_get_globaltimer(), flags = 0;

	if (!lim)
		return 0;
	/* 24 independent branches: 2^24 paths unless the flags are pruned */
#define F(i) if (t > lim[i]) flags |= 1ULL << (i);
	F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11)
	F(12) F(13) F(14) F(15) F(16) F(17) F(18) F(19) F(20) F(21) F(22)
	F(23)
#undef F
	*lim = flags;
	return 0;
}
