// SPDX-License-Identifier: MIT
/*
 * directly_run_on_gpu: a program that is not a probe. Run on its own as a
 * one-thread kernel, it reads an array map filled by the host, writes the
 * sum and the maximum to another map, and returns the sum.
 */
#include <egpu/bpf_helpers.h>

#define VALUES 256

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VALUES);
	__type(key, __u32);
	__type(value, __u64);
} input SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} output SEC(".maps"); /* 0: sum, 1: maximum */

SEC("egpu/run")
int sum_values(void *ctx)
{
	__u64 sum = 0, max = 0;
	__u32 key;

	for (key = 0; key < VALUES; key++) {
		__u64 *v = bpf_map_lookup_elem(&input, &key);

		if (!v)
			return -1;
		sum += *v;
		if (*v > max)
			max = *v;
	}
	key = 0;
	bpf_map_update_elem(&output, &key, &sum, EGPU_ANY);
	key = 1;
	bpf_map_update_elem(&output, &key, &max, EGPU_ANY);
	return (int)sum;
}

char LICENSE[] SEC("license") = "GPL";
