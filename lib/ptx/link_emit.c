/* SPDX-License-Identifier: MIT */
/*
 * The linked block, in an order that declares everything before its use
 * whatever the order of the modules: kept declarations, prototypes of the
 * application functions it calls and of every linked function, variables
 * and pragmas, function definitions, aliases. Items are copied as they
 * are, but for renamed module-local symbols, the .loc lines whose .file
 * table is dropped, and linked functions made internal.
 */
#include <string.h>

#include "ptx/link.h"

/* Bytes [from, to) of the module, renaming identifiers from token @t on. */
static void copy_span(struct strbuf *sb, const struct link_module *lm,
		      uint32_t from, uint32_t to, uint32_t t)
{
	const struct ptx_module *m = lm->m;

	for (; m->toks[t].kind != TOK_EOF && m->toks[t].off < to; t++) {
		const char *name;

		if (m->toks[t].kind != TOK_IDENT ||
		    !(name = renames_find(lm->renames, m, t)))
			continue;
		sb_addn(sb, m->text + from, m->toks[t].off - from);
		sb_adds(sb, name);
		from = tok_end(m, t);
	}
	sb_addn(sb, m->text + from, to - from);
}

static uint32_t item_end(const struct ptx_module *m, const struct ptx_item *it)
{
	return tok_end(m, it->last - 1);
}

static void emit_item(struct strbuf *sb, const struct link_module *lm,
		      const struct ptx_item *it)
{
	copy_span(sb, lm, lm->m->toks[it->first].off, item_end(lm->m, it),
		  it->first);
	sb_adds(sb, "\n");
}

/*
 * Where a linked function's text starts: past its .visible or .weak.
 * Only the module's own code calls linked functions, and ptxas compiles
 * an internal function for its callers, within a kernel's launch bounds
 * even when the module is compiled relocatable (ptxas -c, cuLink*); a
 * visible one gets registers of its own there, and a bounded kernel
 * calling one that uses more is refused.
 */
static uint32_t linked_func_start(const struct ptx_module *m,
				  const struct ptx_item *it)
{
	bool global = tok_is(m, it->first, ".visible") ||
		      tok_is(m, it->first, ".weak");

	return it->first + (global && !it->func->entry);
}

/* The header from token @from up to the body, as a declaration. */
static void emit_prototype(struct strbuf *sb, const struct link_module *lm,
			   const struct ptx_item *it, uint32_t from)
{
	copy_span(sb, lm, lm->m->toks[from].off,
		  tok_end(lm->m, it->func->body - 1), from);
	sb_adds(sb, ";\n");
}

static void emit_function(struct strbuf *sb, const struct link_module *lm,
			  const struct ptx_item *it)
{
	const struct ptx_module *m = lm->m;
	const struct ptx_func *f = it->func;
	uint32_t t = linked_func_start(m, it), pos = m->toks[t].off, i;

	for (i = 0; i < f->nstmts; i++) {
		const struct ptx_stmt *st = &f->stmts[i];

		if (st->kind != ST_DIR || !tok_is(m, st->op, ".loc"))
			continue;
		copy_span(sb, lm, pos, m->toks[st->first].off, t);
		pos = tok_end(m, st->last - 1);
		t = st->last;
	}
	copy_span(sb, lm, pos, item_end(m, it), t);
	sb_adds(sb, "\n");
}

enum pass { P_DECL, P_PROTO, P_DATA, P_FUNC, P_ALIAS, P_COUNT };

static enum pass pass_of(const struct ptx_item *it)
{
	if (is_declaration(it))
		return P_DECL;
	if (it->kind == IT_FUNC)
		return P_FUNC;
	return it->kind == IT_ALIAS ? P_ALIAS : P_DATA;
}

static void emit_pass(const struct linker *l, struct strbuf *sb,
		      enum pass pass, size_t *funcs)
{
	size_t i;
	uint32_t j;

	for (i = 0; i < l->nmod; i++) {
		const struct link_module *lm = &l->mods[i];

		for (j = 0; j < lm->m->nitems; j++) {
			const struct ptx_item *it = &lm->m->items[j];
			enum pass p = pass_of(it);

			if (lm->act[j] != EMIT)
				continue;
			if (pass == P_PROTO && p == P_FUNC && !it->func->entry) {
				emit_prototype(sb, lm, it,
					       linked_func_start(lm->m, it));
			} else if (pass == P_FUNC && p == P_FUNC) {
				emit_function(sb, lm, it);
				(*funcs)++;
			} else if (pass == p && pass != P_FUNC) {
				emit_item(sb, lm, it);
			}
		}
	}
}

static void emit_app_prototypes(const struct linker *l, struct strbuf *sb)
{
	const struct link_module app = { .m = l->app };
	size_t i;

	for (i = 0; i < l->app_protos.n; i++)
		emit_prototype(sb, &app, l->app_protos.v[i].it,
			       l->app_protos.v[i].it->first);
}

void link_emit(const struct linker *l, struct strbuf *block, size_t *funcs)
{
	int p;

	sb_printf(block, "\n\n" LINKED_BEGIN " (%zu modules)\n", l->nmod);
	for (p = 0; p < P_COUNT; p++) {
		if (p == P_PROTO)
			emit_app_prototypes(l, block);
		emit_pass(l, block, (enum pass)p, funcs);
	}
	sb_adds(block, LINKED_END);
}
