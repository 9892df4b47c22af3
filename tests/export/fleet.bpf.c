// SPDX-License-Identifier: MIT
// Maps of every shape lib/export turns into metrics, filled by direct
// runs on the CPU (one run = one "launch" described by struct launch).
#include <egpu/bpf_helpers.h>

struct launch {
	__u32 kernel;   /* kernel id */
	__u32 ns;       /* its duration */
	__u32 threads;
};

struct kernel_bucket {
	__u32 kernel;
	__u32 bucket;
};

/* launches per kernel id: a counter labelled by kernel name */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} launches SEC(".maps");

/* log2 histogram of durations (AUTO: the name ends in "hist") */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 32);
	__type(key, __u32);
	__type(value, __u64);
} lat_hist SEC(".maps");

/* the same per kernel: keys { kernel, bucket } */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct kernel_bucket);
	__type(value, __u64);
} kernel_lat_hist SEC(".maps");

/* threads run, one value per thread slot on a GPU: summed */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} threads SEC(".maps");

/* records: not a metric */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

__u64 runs; /* .bss: not a metric */

static __always_inline __u32 log2_bucket(__u64 v)
{
	__u32 b = 0;

	for (int i = 0; i < 63 && v > 1; i++) {
		v >>= 1;
		b++;
	}
	return b;
}

static __always_inline void add(void *map, void *key)
{
	__u64 one = 1, *v = bpf_map_lookup_elem(map, key);

	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(map, key, &one, 0);
}

SEC("egpu/run")
int launch(struct launch *l)
{
	struct kernel_bucket kb = { .kernel = l->kernel,
				    .bucket = log2_bucket(l->ns) };
	__u32 zero = 0, k = l->kernel;
	__u64 *t;

	add(&launches, &k);
	add(&lat_hist, &kb.bucket);
	add(&kernel_lat_hist, &kb);
	t = bpf_map_lookup_elem(&threads, &zero);
	if (t)
		*t += l->threads;
	runs++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
