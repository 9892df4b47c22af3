/* SPDX-License-Identifier: MIT */
/*
 * ELF -> programs and map specs (lib/core/bpf.h), with libbpf. Relocations
 * to maps and global data are applied, subprograms in .text are appended to
 * each program that calls them, attach points come from section names.
 */
#ifndef EGPU_OBJECT_H
#define EGPU_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include "core/bpf.h"

struct btf; /* object/btf_value.h */

struct object_spec {
	struct prog_spec *progs;
	size_t prog_cnt;
	struct map_spec *maps;
	size_t map_cnt;
	struct btf *btf; /* the object's types, NULL without a .BTF */
};

/*
 * Parse an ELF image. @name is used in messages. On failure returns a
 * negative EGPU_E* code with a message naming the program, instruction and
 * reason; *out is untouched.
 */
int object_parse_elf(const void *elf, size_t len, const char *name,
		     struct object_spec *out);
/* One program named "prog" from raw instructions; no maps. */
int object_parse_raw(const void *insns, size_t len,
		     struct object_spec *out);
void object_spec_free(struct object_spec *spec);

/* Attach point and kernel pattern named by a section, e.g. "gpu/exit/k*". */
int object_attach_from_section(const char *section, char **kernel);
/*
 * The state spaces and access kinds gpu/mem/K/SPACES/KINDS names, as masks
 * of (1u << EGPU_SPACE_*) and (1u << EGPU_MEM_*); 0 where not named or
 * "*" (all). EGPU_EFORMAT for an unknown name.
 */
int object_mem_filter_from_section(const char *section, uint32_t *spaces,
				   uint32_t *kinds);

#endif
