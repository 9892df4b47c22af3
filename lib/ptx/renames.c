/* SPDX-License-Identifier: MIT */
/*
 * The new names the linker (link.c) gives symbols that would clash, as
 * its emitter (link_emit.c) and the inliner (inline.c) look them up.
 */
#include <string.h>

#include "ptx/instr.h"

const char *renames_find(const struct renames *r, const struct ptx_module *m,
			 uint32_t t)
{
	for (size_t i = 0; r && i < r->n; i++)
		if (m->toks[t].len == r->v[i].len &&
		    !memcmp(tok_text(m, t), r->v[i].old, r->v[i].len))
			return r->v[i].name;
	return NULL;
}
