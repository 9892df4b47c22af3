/* SPDX-License-Identifier: MIT */
/*
 * The maps of an eBPF object as libbpf reads them (BTF map definitions,
 * global data sections). Kept apart from lib/core/bpf.h, whose struct
 * bpf_insn libbpf's headers define again.
 */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_maps.h"

#define RDONLY_PROG (1U << 7) /* BPF_F_RDONLY_PROG */

static void read_map(const struct bpf_map *m, struct elf_map *s)
{
	size_t len = 0;
	const void *init = bpf_map__initial_value((struct bpf_map *)m, &len);

	s->name = strdup(bpf_map__name(m));
	s->type = bpf_map__type(m);
	s->key_size = bpf_map__key_size(m);
	s->value_size = bpf_map__value_size(m);
	s->max_entries = bpf_map__max_entries(m);
	s->readonly = !!(bpf_map__map_flags(m) & RDONLY_PROG);
	if (init && len && (s->init = malloc(len))) {
		memcpy(s->init, init, len);
		s->init_len = len;
	}
}

int elf_maps_read(const char *path, struct elf_map **out, size_t *cnt)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_map *m;
	size_t n = 0;

	if (!obj) {
		fprintf(stderr, "libbpf cannot open %s\n", path);
		return -1;
	}
	bpf_object__for_each_map(m, obj)
		n++;
	*out = calloc(n ? n : 1, sizeof(**out));
	*cnt = 0;
	if (*out)
		bpf_object__for_each_map(m, obj)
			read_map(m, &(*out)[(*cnt)++]);
	bpf_object__close(obj);
	return *out ? 0 : -1;
}
