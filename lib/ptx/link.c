/* SPDX-License-Identifier: MIT */
/*
 * Link probe and runtime modules into the application's module. Their
 * headers and debug data (.file, .section, .loc) are dropped; a symbol
 * defined twice must be defined identically (kept once); declarations of
 * symbols some module defines are dropped, and every linked function gets
 * a prototype first, so the block declares everything before its use
 * whatever the order of the modules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/instr.h"

enum action { DROP, EMIT };

struct sym {
	const struct ptx_module *m;
	const struct ptx_item *it;
};

struct symtab {
	struct sym *v;
	size_t n;
	size_t cap;
};

static int sym_add(struct symtab *t, const struct ptx_module *m,
		   const struct ptx_item *it)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct sym *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return err_set(EGPU_ENOMEM, "PTX: out of memory");
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = (struct sym){ m, it };
	return 0;
}

static bool same_name(const struct ptx_module *a, const struct ptx_item *x,
		      const struct ptx_module *b, const struct ptx_item *y)
{
	const struct tok *s = &a->toks[x->name], *t = &b->toks[y->name];

	return s->len == t->len &&
	       !memcmp(a->text + s->off, b->text + t->off, s->len);
}

static const struct sym *sym_find(const struct symtab *t,
				  const struct ptx_module *m,
				  const struct ptx_item *it)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (same_name(t->v[i].m, t->v[i].it, m, it))
			return &t->v[i];
	return NULL;
}

static uint32_t item_begin(const struct ptx_module *m, const struct ptx_item *it)
{
	return m->toks[it->first].off;
}

static uint32_t item_end(const struct ptx_module *m, const struct ptx_item *it)
{
	return tok_end(m, it->last - 1);
}

static bool same_text(const struct ptx_module *a, const struct ptx_item *x,
		      const struct ptx_module *b, const struct ptx_item *y)
{
	uint32_t n = item_end(a, x) - item_begin(a, x);

	return n == item_end(b, y) - item_begin(b, y) &&
	       !memcmp(a->text + item_begin(a, x), b->text + item_begin(b, y), n);
}

static bool is_definition(const struct ptx_item *it)
{
	if (it->kind == IT_FUNC)
		return it->func->defined;
	return it->kind == IT_VAR && it->linkage != LINK_EXTERN;
}

static bool is_declaration(const struct ptx_item *it)
{
	return (it->kind == IT_FUNC || it->kind == IT_VAR) && !is_definition(it);
}

static int clash(const struct sym *old, const struct ptx_module *m,
		 const struct ptx_item *it)
{
	return err_set(EGPU_EEXIST,
		       "symbol '%.*s' is defined differently by %s (line %u) and %s (line %u)",
		       (int)m->toks[it->name].len, tok_text(m, it->name),
		       old->m->name, old->m->toks[old->it->first].line, m->name,
		       m->toks[it->first].line);
}

struct linker {
	const struct ptx_module *app;
	struct ptx_module *const *mods;
	size_t nmod;
	enum action **act;   /* per module, per item */
	struct symtab defs;  /* every definition, the application's first */
	struct symtab decls; /* declarations kept in the block */
};

static bool is_weak(const struct ptx_item *it)
{
	return it->linkage == LINK_WEAK || it->linkage == LINK_COMMON;
}

/*
 * A definition is linked unless an identical one already is, or it or
 * the first one is weak (the first stays).
 */
static int resolve_definitions(struct linker *l)
{
	size_t i;
	uint32_t j;
	int err = 0;

	for (j = 0; j < l->app->nitems && !err; j++)
		if (is_definition(&l->app->items[j]))
			err = sym_add(&l->defs, l->app, &l->app->items[j]);
	for (i = 0; i < l->nmod && !err; i++) {
		const struct ptx_module *m = l->mods[i];

		for (j = 0; j < m->nitems && !err; j++) {
			const struct ptx_item *it = &m->items[j];
			const struct sym *old;

			if (!is_definition(it))
				continue;
			old = sym_find(&l->defs, m, it);
			if (!old)
				err = sym_add(&l->defs, m, it);
			else if (!same_text(old->m, old->it, m, it) &&
				 !is_weak(old->it) && !is_weak(it))
				err = clash(old, m, it);
			l->act[i][j] = old ? DROP : EMIT;
		}
	}
	return err;
}

/*
 * A declaration is dropped when a linked module defines the symbol (its
 * prototype comes first) or an identical one is kept already.
 */
static int resolve_declarations(struct linker *l)
{
	size_t i;
	uint32_t j;
	int err = 0;

	for (i = 0; i < l->nmod && !err; i++) {
		const struct ptx_module *m = l->mods[i];

		for (j = 0; j < m->nitems && !err; j++) {
			const struct ptx_item *it = &m->items[j];
			const struct sym *def, *decl;

			if (!is_declaration(it))
				continue;
			def = sym_find(&l->defs, m, it);
			if (def && def->m == l->app)
				return err_set(EGPU_ENOTSUP,
					       "%s uses '%.*s' of the application; linked code may only use symbols of linked modules",
					       m->name, (int)m->toks[it->name].len,
					       tok_text(m, it->name));
			decl = def ? NULL : sym_find(&l->decls, m, it);
			if (def || (decl && same_text(decl->m, decl->it, m, it)))
				continue;
			l->act[i][j] = EMIT;
			err = sym_add(&l->decls, m, it);
		}
	}
	return err;
}

static int check_module(const struct ptx_module *app,
			const struct ptx_module *m)
{
	if (m->address_size != app->address_size)
		return err_set(EGPU_EINVAL,
			       "%s has .address_size %u, the application %u",
			       m->name, m->address_size, app->address_size);
	if (m->sm > app->sm)
		return err_set(EGPU_ENOTSUP,
			       "%s targets sm_%u but the application targets sm_%u; translate it for sm_%u",
			       m->name, m->sm, app->sm, app->sm);
	return 0;
}

static void emit_item(struct strbuf *sb, const struct ptx_module *m,
		      const struct ptx_item *it)
{
	sb_addn(sb, m->text + item_begin(m, it),
		item_end(m, it) - item_begin(m, it));
	sb_adds(sb, "\n");
}

/* The header up to the body, as a declaration. */
static void emit_prototype(struct strbuf *sb, const struct ptx_module *m,
			   const struct ptx_item *it)
{
	uint32_t begin = item_begin(m, it);
	uint32_t end = tok_end(m, it->func->body - 1);

	sb_addn(sb, m->text + begin, end - begin);
	sb_adds(sb, ";\n");
}

/* A definition without its .loc lines: their .file table is dropped. */
static void emit_function(struct strbuf *sb, const struct ptx_module *m,
			  const struct ptx_item *it)
{
	const struct ptx_func *f = it->func;
	uint32_t pos = item_begin(m, it), i;

	for (i = 0; i < f->nstmts; i++) {
		const struct ptx_stmt *st = &f->stmts[i];

		if (st->kind != ST_DIR || !tok_is(m, st->op, ".loc"))
			continue;
		sb_addn(sb, m->text + pos, m->toks[st->first].off - pos);
		pos = tok_end(m, st->last - 1);
	}
	sb_addn(sb, m->text + pos, item_end(m, it) - pos);
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

static void emit_pass(struct linker *l, struct strbuf *sb, enum pass pass,
		      size_t *funcs)
{
	size_t i;
	uint32_t j;

	for (i = 0; i < l->nmod; i++) {
		const struct ptx_module *m = l->mods[i];

		for (j = 0; j < m->nitems; j++) {
			const struct ptx_item *it = &m->items[j];
			enum pass p = pass_of(it);

			if (l->act[i][j] != EMIT)
				continue;
			if (pass == P_PROTO && p == P_FUNC && !it->func->entry) {
				emit_prototype(sb, m, it);
			} else if (pass == P_FUNC && p == P_FUNC) {
				emit_function(sb, m, it);
				(*funcs)++;
			} else if (pass == p && pass != P_FUNC) {
				emit_item(sb, m, it);
			}
		}
	}
}

static void mark_kept(struct linker *l)
{
	size_t i;
	uint32_t j;

	for (i = 0; i < l->nmod; i++) {
		const struct ptx_module *m = l->mods[i];

		for (j = 0; j < m->nitems; j++) {
			uint8_t k = m->items[j].kind;

			l->act[i][j] = k == IT_PRAGMA || k == IT_ALIAS ? EMIT : DROP;
		}
	}
}

static void higher_version(struct link_result *res, const struct ptx_module *m)
{
	if (m->version_major > res->version_major ||
	    (m->version_major == res->version_major &&
	     m->version_minor > res->version_minor)) {
		res->version_major = m->version_major;
		res->version_minor = m->version_minor;
	}
}

static int link_all(struct linker *l, struct strbuf *block,
		    struct link_result *res)
{
	int err = 0;
	size_t i;
	int p;

	for (i = 0; i < l->nmod && !err; i++) {
		err = check_module(l->app, l->mods[i]);
		higher_version(res, l->mods[i]);
	}
	mark_kept(l);
	if (!err)
		err = resolve_definitions(l);
	if (!err)
		err = resolve_declarations(l);
	if (err)
		return err;
	sb_printf(block, "\n\n// begin egpu linked code (%zu modules)\n", l->nmod);
	for (p = 0; p < P_COUNT; p++)
		emit_pass(l, block, (enum pass)p, &res->funcs);
	sb_adds(block, "// end egpu linked code\n");
	return sb_ok(block) ? 0 : err_set(EGPU_ENOMEM, "PTX: out of memory");
}

int link_modules(const struct ptx_module *app, struct ptx_module *const *mods,
		 size_t nmod, struct strbuf *block, struct link_result *res)
{
	struct linker l = { .app = app, .mods = mods, .nmod = nmod };
	int err = 0;
	size_t i;

	res->version_major = app->version_major;
	res->version_minor = app->version_minor;
	res->funcs = 0;
	l.act = calloc(nmod ? nmod : 1, sizeof(*l.act));
	for (i = 0; l.act && i < nmod; i++) {
		l.act[i] = calloc(mods[i]->nitems + 1, sizeof(**l.act));
		if (!l.act[i])
			err = EGPU_ENOMEM;
	}
	if (!l.act || err)
		err = err_set(EGPU_ENOMEM, "PTX: out of memory");
	else
		err = link_all(&l, block, res);
	for (i = 0; l.act && i < nmod; i++)
		free(l.act[i]);
	free(l.act);
	free(l.defs.v);
	free(l.decls.v);
	return err;
}

const struct ptx_item *link_find_func(struct ptx_module *const *mods,
				      size_t nmod, const char *name,
				      const struct ptx_module **owner)
{
	size_t i;
	uint32_t j;

	for (i = 0; i < nmod; i++) {
		const struct ptx_module *m = mods[i];

		for (j = 0; j < m->nitems; j++) {
			const struct ptx_item *it = &m->items[j];

			if (it->kind == IT_FUNC && it->func->defined &&
			    !it->func->entry && tok_is(m, it->name, name)) {
				*owner = m;
				return it;
			}
		}
	}
	return NULL;
}
