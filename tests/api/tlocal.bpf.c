// SPDX-License-Identifier: MIT
// Thread-local and per-SM maps: probes of saxpy sharing thread-local
// values (entry, memory, exit), per-SM counts with a per-SM reference, and
// programs the verifier must refuse (direct-run programs, verified when
// run, so that the object loads).
#include <egpu/bpf_helpers.h>
#include <egpu/ctx.h>

#define MAGIC 0x5a5a

struct tl_val {
	__u64 start;   /* entry: globaltimer */
	__u32 accs;    /* memory probe: accesses of this thread */
	__u32 magic;   /* entry: MAGIC, a narrow store */
};

struct {
	__uint(type, BPF_MAP_TYPE_EGPU_THREAD_LOCAL);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tl_val);
} tl SEC(".maps");

/* 0: threads that saw their own entry's values, 1: those that did not,
 * 2: memory accesses, 3..34: log2 histogram of thread durations */
struct {
	__uint(type, BPF_MAP_TYPE_EGPU_SM_ARRAY);
	__uint(max_entries, 35);
	__type(key, __u32);
	__type(value, __u64);
} per_sm SEC(".maps");

/* The per-SM reference: threads counted in an ARRAY at index %smid. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} ref_sm SEC(".maps");

static __always_inline void count(__u32 key, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&per_sm, &key);

	if (v)
		bpf_egpu_warp_add(v, n);
}

GPU_ENTRY("saxpy")
int tl_entry(void *ctx)
{
	__u32 zero = 0;
	struct tl_val *t = bpf_map_lookup_elem(&tl, &zero);

	t->start = bpf_get_globaltimer();
	t->magic = MAGIC;
	return 0;
}

GPU_MEM("saxpy")
int tl_mem(void *ctx)
{
	__u32 zero = 0;
	struct tl_val *t = bpf_map_lookup_elem(&tl, &zero);

	t->accs++;
	return 0;
}

GPU_EXIT("saxpy")
int tl_exit(void *ctx)
{
	__u32 zero = 0, sm = (__u32)bpf_get_sm_id() & 1023, bucket = 0;
	struct tl_val *t = bpf_map_lookup_elem(&tl, &zero);
	__u64 d = bpf_get_globaltimer() - t->start, *ref;
	int mine = t->magic == MAGIC && d < 1000000000ull;

	count(mine ? 0 : 1, 1);
	count(2, t->accs);
	while (d > 1 && bucket < 31) {
		d >>= 1;
		bucket++;
	}
	count(3 + bucket, 1);
	ref = bpf_map_lookup_elem(&ref_sm, &sm);
	if (ref)
		bpf_egpu_warp_add(ref, 1);
	return 0;
}

/* Refused: a key the verifier cannot know (registers cannot be indexed). */
SEC("egpu/run")
int bad_variable_key(__u8 *ctx)
{
	__u32 key = ctx[0];
	struct tl_val *t = bpf_map_lookup_elem(&tl, &key);

	if (t)
		t->accs = 1;
	return 0;
}

/* Refused: a helper cannot take the address of a register. */
SEC("egpu/run")
int bad_escape(void *ctx)
{
	__u32 zero = 0;
	struct tl_val *t = bpf_map_lookup_elem(&tl, &zero);

	bpf_map_update_elem(&ref_sm, &zero, t, 0);
	return 0;
}

/* Refused: atomics need memory. */
SEC("egpu/run")
int bad_atomic(void *ctx)
{
	__u32 zero = 0;
	struct tl_val *t = bpf_map_lookup_elem(&tl, &zero);

	__sync_fetch_and_add(&t->start, 1);
	return 0;
}

/* Refused: only lookups reach a thread-local map. */
SEC("egpu/run")
int bad_update(void *ctx)
{
	__u32 zero = 0;
	struct tl_val v = {};

	bpf_map_update_elem(&tl, &zero, &v, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
