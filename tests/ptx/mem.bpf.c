// SPDX-License-Identifier: MIT
// Memory probes for the PTX tests: one reading nothing, one reading the
// constant fields, one reading every field, one reading only the size.
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct access {
	__u64 text;
	__u32 kernel_id;
	__u32 site;
	__u32 size;
	__u16 kind;
	__u16 space;
	__u32 line;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct access);
} accesses SEC(".maps");

GPU_MEM("*")
int mem_empty(struct egpu_mem_ctx *ctx)
{
	return 0;
}

/* counts[kind * 8 + space] += 1 */
GPU_MEM("*")
int mem_count(struct egpu_mem_ctx *ctx)
{
	__u32 key = (ctx->kind & 7) * 8 + (ctx->space & 7);
	__u64 *v = bpf_map_lookup_elem(&counts, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

/* accesses[addr] = every other field */
GPU_MEM("*")
int mem_record(struct egpu_mem_ctx *ctx)
{
	__u64 addr = ctx->addr;
	struct access a = {
		.text = ctx->text, .kernel_id = ctx->kernel_id,
		.site = ctx->site, .size = ctx->size, .kind = ctx->kind,
		.space = ctx->space, .line = ctx->line,
	};

	bpf_map_update_elem(&accesses, &addr, &a, BPF_ANY);
	return 0;
}

/* counts[63] += size */
GPU_MEM("*")
int mem_bytes(struct egpu_mem_ctx *ctx)
{
	__u32 key = 63;
	__u64 *v = bpf_map_lookup_elem(&counts, &key);

	if (v)
		__sync_fetch_and_add(v, ctx->size);
	return 0;
}
