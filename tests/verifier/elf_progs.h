/* SPDX-License-Identifier: MIT */
/* The programs and maps of a clang-built corpus object, through lib/object. */
#ifndef EGPU_TEST_ELF_PROGS_H
#define EGPU_TEST_ELF_PROGS_H

#include <stddef.h>

#include "core/bpf.h"

struct elf_progs {
	struct prog_spec *progs;
	size_t prog_cnt;
	struct map_spec *maps;
	size_t map_cnt;
};

/* 0 or -1 with a message on stderr. */
int elf_progs_load(const char *path, struct elf_progs *out);
void elf_progs_free(struct elf_progs *ep);

#endif
