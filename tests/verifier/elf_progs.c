/* SPDX-License-Identifier: MIT */
/* The corpus objects through the library's own loader (lib/object). */
#include <stdio.h>
#include <stdlib.h>

#include "egpu.h"
#include "elf_progs.h"
#include "object/btf_value.h"
#include "object/object.h"

int elf_progs_load(const char *path, struct elf_progs *out)
{
	struct object_spec spec;
	FILE *f = fopen(path, "rb");
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	int err = -1;

	while (f && buf) {
		size_t got = fread(buf + len, 1, cap - len, f);

		len += got;
		if (len < cap)
			break;
		buf = realloc(buf, cap *= 2);
	}
	if (f && buf && !object_parse_elf(buf, len, "corpus", &spec)) {
		*out = (struct elf_progs){ .progs = spec.progs, .prog_cnt = spec.prog_cnt,
					   .maps = spec.maps, .map_cnt = spec.map_cnt };
		object_btf_free(spec.btf); /* the verifier needs no types */
		err = 0;
	} else {
		fprintf(stderr, "%s: %s\n", path, f ? egpu_errmsg() : "cannot open");
	}
	if (f)
		fclose(f);
	free(buf);
	return err;
}

void elf_progs_free(struct elf_progs *ep)
{
	struct object_spec spec = { .progs = ep->progs, .prog_cnt = ep->prog_cnt,
					.maps = ep->maps, .map_cnt = ep->map_cnt };

	object_spec_free(&spec);
}
