// SPDX-License-Identifier: MIT
/*
 * The probe of egpu attach's event, seeding and printk tests, shaped like
 * bpftime's: kernel_trace's record on the stack sent with
 * bpf_perf_event_output to a GPU ring (1527) whose value type names it,
 * atomizer's maps a loader fills before the application starts. The same
 * work runs in evapp's vec_scale (attach_gpu) and directly on the CPU
 * (attach_typed: seed_and_emit).
 */
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

enum phase { PHASE_ENTRY = 1, PHASE_EXIT = 2 };

/* sent to `events`, whose value type names it */
struct block_event {
	__u64 block;
	__u64 ns;
	__s32 bias;  /* config's */
	enum phase phase;
	char tag[8]; /* config's */
};

/* sent to `exits`, a RINGBUF naming no type: the only 16-byte struct */
struct exit_note {
	__u64 blocks_seen;
	__u32 level;
	__u32 magic;
};

/* what a loader sets (--set, --set-file) */
struct config {
	__u32 every; /* one block in `every` sends an event (0: none) */
	__s32 bias;
	char tag[8];
	__u8 verbose : 1, level : 3;
};

struct {
	__uint(type, BPF_MAP_TYPE_GPU_RINGBUF_MAP);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct block_event);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} exits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct config);
} config SEC(".maps");

/* atomizer's shape: u64 values at u32 keys; scale[0] is added to
 * totals[0] by each block */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} scale SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} totals SEC(".maps");

/* a subprogram taking the record puts its type in the BTF */
static __noinline int send_exit(struct exit_note *n)
{
	return bpf_ringbuf_output(&exits, n, sizeof(*n), 0);
}

/* Block @block's share: totals[0] += scale[0]; every config.every-th
 * block sends an event. Returns 1 when it sent. */
static __always_inline int on_block(__u64 block, __u64 ns)
{
	__u32 zero = 0;
	struct config *c = bpf_map_lookup_elem(&config, &zero);
	__u64 *s = bpf_map_lookup_elem(&scale, &zero);
	__u64 *t = bpf_map_lookup_elem(&totals, &zero);
	struct block_event ev;

	if (!c || !s || !t)
		return 0;
	__sync_fetch_and_add(t, *s);
	if (!c->every || block % c->every)
		return 0;
	ev.block = block;
	ev.ns = ns;
	ev.bias = c->bias;
	ev.phase = PHASE_ENTRY;
	__builtin_memcpy(ev.tag, c->tag, sizeof(ev.tag));
	bpf_perf_event_output(NULL, &events, 0, &ev, sizeof(ev));
	return 1;
}

static __always_inline int on_last(__u64 blocks)
{
	__u32 zero = 0;
	struct config *c = bpf_map_lookup_elem(&config, &zero);
	struct exit_note n = { .blocks_seen = blocks, .magic = 0xe61d };

	if (c)
		n.level = c->level;
	return send_exit(&n);
}

/* Direct run (CPU): ctx = { block, ns }; then the exit note with
 * blocks_seen = block + 1. */
SEC("egpu/run")
int seed_and_emit(__u64 *ctx)
{
	int sent = on_block(ctx[0], ctx[1]);

	on_last(ctx[0] + 1);
	return sent;
}

GPU_ENTRY("vec_scale")
int block_entry(struct egpu_kernel_ctx *ctx)
{
	__u64 x, y, z;

	bpf_get_thread_idx(&x, &y, &z);
	if (x | y | z)
		return 0;
	bpf_get_block_idx(&x, &y, &z);
	if (on_block(x, bpf_get_globaltimer()) && x == 0)
		bpf_printk("block %llu sent its event", x);
	return 0;
}

GPU_EXIT("vec_scale")
int block_exit(struct egpu_kernel_ctx *ctx)
{
	__u64 x, y, z, bx, by, bz;

	bpf_get_thread_idx(&x, &y, &z);
	bpf_get_block_idx(&bx, &by, &bz);
	if (x | y | z | bx | by | bz)
		return 0;
	bpf_get_grid_dim(&x, &y, &z);
	on_last(x);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
