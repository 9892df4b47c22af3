/* SPDX-License-Identifier: MIT */
/*
 * The one door to libbpf. libbpf's headers define struct bpf_insn just as
 * core/bpf.h does, so this interface uses neither: maps and programs are
 * described with plain types and instructions as raw 8-byte records.
 */
#ifndef EGPU_OBJECT_LIBBPF_READ_H
#define EGPU_OBJECT_LIBBPF_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

struct object_map_desc {
	const char *name;
	uint32_t type;
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t flags;        /* 0 for global data */
	const void *init;      /* global data: initial bytes, else NULL */
	size_t init_len;
	bool global_data;      /* .data, .rodata, .bss and their .name forms */
	bool readonly;         /* .rodata forms */
};

struct object_prog_desc {
	const char *name;
	const char *section;
	const void *insns;     /* linked: 8 bytes per instruction */
	size_t insn_cnt;
};

/* Receives what libbpf found; a non-zero return stops the walk. */
struct object_visitor {
	int (*map)(const struct object_map_desc *map, void *arg);
	int (*prog)(const struct object_prog_desc *prog, void *arg);
	void *arg;
};

/*
 * Open the ELF image @elf as the BPF object @obj_name, report every map in
 * index order (the index linked lddw instructions use), link every program
 * and report it. Descriptors are valid only during the callback. Returns 0
 * or a negative EGPU_E* code with a message (libbpf's own reason if it
 * gave one).
 */
int object_read_libbpf(const void *elf, size_t len, const char *obj_name,
		       const struct object_visitor *v);

/*
 * Refuse a .BTF that libbpf 1.1 would follow out of bounds or in circles
 * while opening the object. @image is the writable copy libbpf will get.
 */
int object_check_btf(void *image, size_t len);

/* The bytes of PROGBITS section @name of @elf, or NULL when there is none. */
Elf_Data *object_elf_section(Elf *elf, const char *name);

/*
 * Give each program of @spec its source lines from the .BTF.ext line info
 * of ELF image @elf, where there is any. Malformed line info is ignored
 * (it only annotates messages); fails only for lack of memory.
 */
struct object_spec;
int object_read_lines(const void *elf, size_t len, struct object_spec *spec);

#endif
