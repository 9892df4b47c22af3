/* SPDX-License-Identifier: MIT */
/* Pre-BTF map definitions in a "maps" section (libbpf 1.x refuses them). */
#include <egpu/bpf_helpers.h>

struct legacy_map_def {
	unsigned int type, key_size, value_size, max_entries, map_flags;
};

struct legacy_map_def SEC("maps") old_style = { 2, 4, 8, 16, 0 };

GPU_ENTRY("k") int p(void)
{
	u32 key = 0;

	return bpf_map_lookup_elem(&old_style, &key) != 0;
}
