/* SPDX-License-Identifier: MIT */
/* Map use that must be accepted, and the map mistakes that must not. */
#include "bpf_prog.h"

struct {
	__uint(type, MAP_HASH);
	__uint(max_entries, 1024);
	__type(key, u64);
	__type(value, u64);
} calls SEC(".maps");

struct stats {
	u64 count;
	u64 total_ns;
	u64 hist[16];
};

struct {
	__uint(type, MAP_ARRAY);
	__uint(max_entries, 4);
	__type(key, u32);
	__type(value, struct stats);
} stats SEC(".maps");

struct {
	__uint(type, MAP_PERTHREAD_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} per_thread SEC(".maps");

struct {
	__uint(type, MAP_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} per_cpu SEC(".maps");

struct {
	__uint(type, MAP_RINGBUF);
	__uint(max_entries, 4096);
} ring SEC(".maps");

u64 total_calls;
u64 last_kernel = 7;
const volatile u32 shift = 4;
const char greeting[] = "hello from the GPU";

/* expect: accept */
SEC("gpu/entry/count")
int count_calls(struct egpu_kernel_ctx *ctx)
{
	u64 key = ctx->kernel_id, one = 1;
	u64 *v = bpf_map_lookup_elem(&calls, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&calls, &key, &one, 0);
	return 0;
}

/* expect: accept */
SEC("gpu/exit/hist")
int exit_histogram(struct egpu_kernel_ctx *ctx)
{
	u32 key = 0;
	struct stats *s = bpf_map_lookup_elem(&stats, &key);
	u64 t = bpf_get_globaltimer();
	u32 bucket;

	if (!s)
		return 0;
	bucket = (t >> shift) & 15;
	s->hist[bucket]++;
	s->count++;
	s->total_ns += t;
	return 0;
}

/* expect: accept */
SEC("gpu/entry/bucket")
int clamped_bucket(struct egpu_kernel_ctx *ctx)
{
	u32 key = 1;
	struct stats *s = bpf_map_lookup_elem(&stats, &key);
	u64 b = ctx->params_size;

	if (!s)
		return 0;
	if (b > 15)
		b = 15;
	s->hist[b] += 1;
	return 0;
}

/* expect: reject "pointer arithmetic with unbounded" */
SEC("gpu/entry/bucket_unchecked")
int unchecked_bucket(struct egpu_kernel_ctx *ctx)
{
	u32 key = 1;
	struct stats *s = bpf_map_lookup_elem(&stats, &key);

	if (!s)
		return 0;
	s->hist[ctx->params] += 1;
	return 0;
}

/* expect: reject "out-of-bounds access to map value of 'stats'" */
SEC("gpu/entry/bucket_off_by_one")
int bucket_off_by_one(struct egpu_kernel_ctx *ctx)
{
	u32 key = 1;
	struct stats *s = bpf_map_lookup_elem(&stats, &key);
	u64 b = ctx->params_size;

	if (!s)
		return 0;
	if (b > 16)
		b = 16;
	s->hist[b] += 1;
	return 0;
}

/* expect: reject "may be NULL (result of map_lookup_elem at insn" */
SEC("gpu/entry/unchecked")
int unchecked_lookup(struct egpu_kernel_ctx *ctx)
{
	u64 key = ctx->kernel_id;
	u64 *v = bpf_map_lookup_elem(&calls, &key);

	return *v;
}

/* expect: reject "out-of-bounds access to map value of 'calls': off 8 size 1" */
SEC("gpu/entry/one_byte_past")
int one_byte_past(struct egpu_kernel_ctx *ctx)
{
	u64 key = ctx->kernel_id;
	u8 *v = bpf_map_lookup_elem(&calls, &key);

	if (!v)
		return 0;
	return v[8];
}

/* expect: accept */
SEC("gpu/entry/last_byte")
int last_byte(struct egpu_kernel_ctx *ctx)
{
	u64 key = ctx->kernel_id;
	u8 *v = bpf_map_lookup_elem(&calls, &key);

	if (!v)
		return 0;
	return v[7];
}

/* expect: accept */
SEC("gpu/entry/per_thread")
int per_thread_counter(struct egpu_kernel_ctx *ctx)
{
	u32 key = 0;
	u64 *v = bpf_map_lookup_elem(&per_thread, &key);

	if (v)
		*v += 1;
	v = bpf_map_lookup_elem(&per_cpu, &key);
	if (v)
		*v += 2;
	return 0;
}

/* expect: accept */
SEC("gpu/entry/globals")
int global_data(struct egpu_kernel_ctx *ctx)
{
	__sync_fetch_and_add(&total_calls, 1);
	last_kernel = ctx->kernel_id;
	return shift;
}

/* expect: accept */
SEC("gpu/entry/puts")
int say_hello(struct egpu_kernel_ctx *ctx)
{
	return bpf_puts(greeting);
}

/* expect: reject "must point to a constant string in read-only data" */
SEC("gpu/entry/puts_stack")
int puts_from_stack(struct egpu_kernel_ctx *ctx)
{
	char buf[8] = "hi";

	return bpf_puts(buf);
}

/* expect: reject "reading uninitialised stack" */
SEC("gpu/entry/uninit_value")
int uninitialised_value(struct egpu_kernel_ctx *ctx)
{
	u64 key = ctx->kernel_id, value;

	return bpf_map_update_elem(&calls, &key, &value, 0);
}

/* expect: reject "reading uninitialised stack" */
SEC("gpu/entry/uninit_key")
int uninitialised_key(struct egpu_kernel_ctx *ctx)
{
	struct { u32 a; u32 b; } key;
	u64 one = 1;

	key.a = 1;
	return bpf_map_update_elem(&calls, &key, &one, 0);
}

/* expect: accept (the address becomes a number in the value) */
SEC("gpu/entry/leak_pointer")
int leak_pointer(struct egpu_kernel_ctx *ctx)
{
	u64 key = 1;
	u64 *v = bpf_map_lookup_elem(&calls, &key);

	if (v)
		*v = (u64)v;
	return 0;
}

/* expect: reject "write into read-only map" */
SEC("gpu/entry/write_rodata")
int write_rodata(struct egpu_kernel_ctx *ctx)
{
	*(volatile u32 *)&shift = 3;
	return 0;
}

/* expect: accept */
SEC("gpu/entry/delete")
int delete_entry(struct egpu_kernel_ctx *ctx)
{
	u64 key = ctx->kernel_id;

	return bpf_map_delete_elem(&calls, &key);
}

/* expect: reject "cannot be used with map_lookup_elem" */
SEC("gpu/entry/lookup_wrong_map")
int lookup_wrong_map(struct egpu_kernel_ctx *ctx)
{
	u32 key = 0;

	return bpf_map_lookup_elem(&ring, &key) != 0;
}
