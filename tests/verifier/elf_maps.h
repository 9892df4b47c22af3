/* SPDX-License-Identifier: MIT */
#ifndef EGPU_TEST_ELF_MAPS_H
#define EGPU_TEST_ELF_MAPS_H

#include <stddef.h>
#include <stdint.h>

/* The fields of struct bpf_map_spec, without lib/core/bpf.h. */
struct elf_map {
	char *name;
	uint32_t type, key_size, value_size, max_entries;
	void *init;
	size_t init_len;
	int readonly;
};

/* In libbpf's order, which map indices follow. 0 or -1. */
int elf_maps_read(const char *path, struct elf_map **out, size_t *cnt);

#endif
