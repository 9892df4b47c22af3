/* SPDX-License-Identifier: MIT */
/* Maps and data but no program. */
#include <egpu/bpf_helpers.h>

struct {
	__uint(type, EGPU_MAP_ARRAY);
	__uint(max_entries, 8);
	__type(key, u32);
	__type(value, u64);
} lonely SEC(".maps");

u64 counter = 3;
