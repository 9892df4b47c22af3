/* SPDX-License-Identifier: MIT */
/* State shared by symbol resolution (link.c) and emission (link_emit.c). */
#ifndef EGPU_PTX_LINK_H
#define EGPU_PTX_LINK_H

#include "ptx/instr.h"

/* The lines around the linked block (split.c finds it by them). */
#define LINKED_BEGIN "// begin egpu linked code"
#define LINKED_END "// end egpu linked code\n"

enum action { DROP, EMIT };

struct link_module {
	const struct ptx_module *m;
	enum action *act;        /* per item */
	struct renames *renames; /* the result's, for this module */
};

struct sym {
	const struct ptx_module *m;
	const struct ptx_item *it;
};

struct symtab {
	struct sym *v;
	size_t n;
	size_t cap;
};

struct linker {
	const struct ptx_module *app;
	struct link_module *mods;
	size_t nmod;
	struct symtab defs;  /* the application's, then linked global ones */
	struct symtab decls; /* declarations kept */
	/* Application functions that linked code calls: their prototypes
	 * go first, as the definitions come after the linked block. */
	struct symtab app_protos;
};

static inline bool is_definition(const struct ptx_item *it)
{
	if (it->kind == IT_FUNC)
		return it->func->defined;
	return it->kind == IT_VAR && it->linkage != LINK_EXTERN;
}

static inline bool is_declaration(const struct ptx_item *it)
{
	return (it->kind == IT_FUNC || it->kind == IT_VAR) && !is_definition(it);
}

/* Append the linked block: declarations, prototypes, data, functions. */
void link_emit(const struct linker *l, struct strbuf *block, size_t *funcs);

#endif
