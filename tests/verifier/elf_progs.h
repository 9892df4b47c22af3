/* SPDX-License-Identifier: MIT */
/*
 * A test-only mini loader: the programs of a clang-built eBPF object with
 * their map references and .text calls linked the way lib/object links
 * them (BPF_PSEUDO_MAP_IDX / _IDX_VALUE, pc-relative calls), maps from
 * libbpf. It will give way to the object loader once that is merged.
 */
#ifndef EGPU_TEST_ELF_PROGS_H
#define EGPU_TEST_ELF_PROGS_H

#include <stddef.h>

#include "core/bpf.h"

struct elf_progs {
	struct bpf_prog_spec *progs;
	size_t prog_cnt;
	struct bpf_map_spec *maps;
	size_t map_cnt;
};

/* 0 or -1 with a message on stderr. */
int elf_progs_load(const char *path, struct elf_progs *out);
void elf_progs_free(struct elf_progs *ep);
/* Attach point named by a section ("gpu/entry/k", "kretprobe/k", ...). */
int section_attach(const char *section);

#endif
