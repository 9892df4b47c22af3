/* SPDX-License-Identifier: MIT */
/*
 * Link probe and runtime modules into the application's module, as one
 * module would have been written:
 * - headers and debug data (.version, .target, .address_size, .file,
 *   .section, .loc) of linked modules are dropped;
 * - module-local definitions (no linkage directive) stay private to their
 *   module: one whose name another module uses is renamed NAME_egpuN;
 * - a global (.visible/.weak/.common) symbol defined twice must be defined
 *   identically (kept once), unless one is weak (the first stays);
 *   otherwise both definitions are named in an EGPU_EEXIST error;
 * - declarations of symbols some linked module defines are dropped (every
 *   linked function gets a prototype), other declarations are kept once;
 * - application functions that linked code uses get a prototype (the
 *   linked block comes first); application variables cannot be used.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/link.h"

static int sym_add(struct symtab *t, const struct ptx_module *m,
		   const struct ptx_item *it)
{
	if (!ARRAY_GROW(t->v, t->cap, t->n, 64))
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	t->v[t->n++] = (struct sym){ m, it };
	return 0;
}

static bool has_name(const struct ptx_module *m, const struct ptx_item *it,
		     const char *s, size_t n)
{
	const struct tok *t = &m->toks[it->name];

	return (it->kind == IT_FUNC || it->kind == IT_VAR ||
		it->kind == IT_ALIAS) &&
	       t->len == n && !memcmp(m->text + t->off, s, n);
}

static const struct sym *sym_find(const struct symtab *t,
				  const struct ptx_module *m,
				  const struct ptx_item *it)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (has_name(t->v[i].m, t->v[i].it, tok_text(m, it->name),
			     m->toks[it->name].len))
			return &t->v[i];
	return NULL;
}

static bool same_text(const struct ptx_module *a, const struct ptx_item *x,
		      const struct ptx_module *b, const struct ptx_item *y)
{
	uint32_t ax = a->toks[x->first].off, bx = b->toks[y->first].off;
	uint32_t n = tok_end(a, x->last - 1) - ax;

	return n == tok_end(b, y->last - 1) - bx &&
	       !memcmp(a->text + ax, b->text + bx, n);
}

static bool is_weak(const struct ptx_item *it)
{
	return it->linkage == LINK_WEAK || it->linkage == LINK_COMMON;
}

static bool is_local_definition(const struct ptx_item *it)
{
	return is_definition(it) && it->linkage == LINK_NONE;
}

/* Whether @m defines the symbol that @it (an item of @im) names. */
static bool defined_in(const struct ptx_module *m, const struct ptx_module *im,
		       const struct ptx_item *it)
{
	uint32_t j;

	for (j = 0; j < m->nitems; j++)
		if (is_definition(&m->items[j]) &&
		    has_name(m, &m->items[j], tok_text(im, it->name),
			     im->toks[it->name].len))
			return true;
	return false;
}

bool link_defined_by(struct ptx_module *const *mods, size_t nmod,
		     const struct ptx_module *m, const struct ptx_item *it)
{
	for (size_t i = 0; i < nmod; i++)
		if (defined_in(mods[i], m, it))
			return true;
	return false;
}

static bool module_names(const struct ptx_module *m, const char *s, size_t n)
{
	uint32_t j;

	for (j = 0; j < m->nitems; j++)
		if (has_name(m, &m->items[j], s, n))
			return true;
	return false;
}

/* Whether a module other than @self (or any, if NULL) names @s. */
static bool name_used(const struct linker *l, const struct ptx_module *self,
		      const char *s, size_t n)
{
	size_t i, k;

	if (module_names(l->app, s, n))
		return true;
	for (i = 0; i < l->nmod; i++) {
		const struct link_module *lm = &l->mods[i];

		if (lm->m != self && module_names(lm->m, s, n))
			return true;
		for (k = 0; !self && k < lm->renames->n; k++)
			if (strlen(lm->renames->v[k].name) == n &&
			    !memcmp(lm->renames->v[k].name, s, n))
				return true;
	}
	return false;
}

static int add_rename(struct linker *l, struct link_module *lm,
		      const struct ptx_item *it, size_t index)
{
	const char *old = tok_text(lm->m, it->name);
	uint32_t len = lm->m->toks[it->name].len;
	struct rename *v;
	struct strbuf sb;
	unsigned k;

	v = realloc(lm->renames->v, (lm->renames->n + 1) * sizeof(*v));
	if (!v)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	lm->renames->v = v;
	for (k = 0;; k++) {
		sb_init(&sb);
		sb_printf(&sb, "%.*s_egpu%zu", (int)len, old, index + 1);
		if (k)
			sb_printf(&sb, "_%u", k);
		if (!sb_ok(&sb))
			return err_set(EGPU_ENOMEM, "PTX: out of memory");
		if (!name_used(l, NULL, sb.buf, sb.len))
			break;
		sb_free(&sb);
	}
	v[lm->renames->n++] = (struct rename){ old, len, sb_detach(&sb, NULL) };
	return 0;
}

static int plan_renames(struct linker *l)
{
	size_t i;
	uint32_t j;
	int err = 0;

	for (i = 0; i < l->nmod && !err; i++) {
		struct link_module *lm = &l->mods[i];

		for (j = 0; j < lm->m->nitems && !err; j++) {
			const struct ptx_item *it = &lm->m->items[j];

			if (is_local_definition(it) &&
			    name_used(l, lm->m, tok_text(lm->m, it->name),
				      lm->m->toks[it->name].len))
				err = add_rename(l, lm, it, i);
		}
	}
	return err;
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

/*
 * Linked code refers to @def of the application, which comes after the
 * linked block: functions get a prototype, variables cannot be declared.
 */
static int use_app_symbol(struct linker *l, const struct sym *def,
			  const struct ptx_module *m, const struct ptx_item *it)
{
	size_t i;

	if (def->it->kind != IT_FUNC)
		return err_set(EGPU_ENOTSUP,
			       "%s uses variable '%.*s' of the application; linked code may not",
			       m->name, (int)m->toks[it->name].len,
			       tok_text(m, it->name));
	for (i = 0; i < l->app_protos.n; i++)
		if (l->app_protos.v[i].it == def->it)
			return 0;
	return sym_add(&l->app_protos, def->m, def->it);
}

/* Global definitions are linked once; local ones always are. */
static int resolve_definitions(struct linker *l)
{
	size_t i;
	uint32_t j;
	int err = 0;

	for (j = 0; j < l->app->nitems && !err; j++)
		if (is_definition(&l->app->items[j]))
			err = sym_add(&l->defs, l->app, &l->app->items[j]);
	for (i = 0; i < l->nmod && !err; i++) {
		struct link_module *lm = &l->mods[i];

		for (j = 0; j < lm->m->nitems && !err; j++) {
			const struct ptx_item *it = &lm->m->items[j];
			const struct sym *old;

			if (!is_definition(it))
				continue;
			lm->act[j] = EMIT;
			if (is_local_definition(it))
				continue;
			old = sym_find(&l->defs, lm->m, it);
			if (!old) {
				err = sym_add(&l->defs, lm->m, it);
				continue;
			}
			if (!same_text(old->m, old->it, lm->m, it) &&
			    !is_weak(old->it) && !is_weak(it))
				return clash(old, lm->m, it);
			lm->act[j] = DROP;
			if (old->m == l->app)
				err = use_app_symbol(l, old, lm->m, it);
		}
	}
	return err;
}

static int resolve_declaration(struct linker *l, struct link_module *lm,
			       uint32_t j)
{
	const struct ptx_module *m = lm->m;
	const struct ptx_item *it = &m->items[j];
	const struct sym *def, *decl;

	if (defined_in(m, m, it))
		return 0;
	def = sym_find(&l->defs, m, it);
	if (def && def->m == l->app)
		return use_app_symbol(l, def, m, it);
	decl = def ? NULL : sym_find(&l->decls, m, it);
	if (def || (decl && same_text(decl->m, decl->it, m, it)))
		return 0;
	lm->act[j] = EMIT;
	return sym_add(&l->decls, m, it);
}

static int resolve_declarations(struct linker *l)
{
	size_t i;
	uint32_t j;
	int err = 0;

	for (i = 0; i < l->nmod && !err; i++)
		for (j = 0; j < l->mods[i].m->nitems && !err; j++)
			if (is_declaration(&l->mods[i].m->items[j]))
				err = resolve_declaration(l, &l->mods[i], j);
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

static void higher_version(struct link_result *res, const struct ptx_module *m)
{
	if (m->version_major > res->version_major ||
	    (m->version_major == res->version_major &&
	     m->version_minor > res->version_minor)) {
		res->version_major = m->version_major;
		res->version_minor = m->version_minor;
	}
}

/* Pragmas and aliases are kept; the rest is decided by resolution. */
static int init_modules(struct linker *l, struct ptx_module *const *mods)
{
	size_t i;
	uint32_t j;

	for (i = 0; i < l->nmod; i++) {
		struct link_module *lm = &l->mods[i];

		lm->m = mods[i];
		lm->act = calloc(mods[i]->nitems + 1, sizeof(*lm->act));
		if (!lm->act)
			return err_set(EGPU_ENOMEM, "PTX: out of memory");
		for (j = 0; j < mods[i]->nitems; j++) {
			uint8_t k = mods[i]->items[j].kind;

			lm->act[j] = k == IT_PRAGMA || k == IT_ALIAS ? EMIT : DROP;
		}
	}
	return 0;
}

static int link_all(struct linker *l, struct ptx_module *const *mods,
		    struct strbuf *block, struct link_result *res)
{
	int err = init_modules(l, mods);
	size_t i;

	for (i = 0; i < l->nmod && !err; i++) {
		err = check_module(l->app, mods[i]);
		higher_version(res, mods[i]);
	}
	if (!err)
		err = plan_renames(l);
	if (!err)
		err = resolve_definitions(l);
	if (!err)
		err = resolve_declarations(l);
	if (err)
		return err;
	link_emit(l, block, &res->funcs);
	return sb_ok(block) ? 0 : err_set(EGPU_ENOMEM, "PTX: out of memory");
}

int link_modules(const struct ptx_module *app, struct ptx_module *const *mods,
		 size_t nmod, struct strbuf *block, struct link_result *res)
{
	struct linker l = { .app = app, .nmod = nmod };
	int err;
	size_t i;

	res->version_major = app->version_major;
	res->version_minor = app->version_minor;
	res->funcs = 0;
	res->renames = calloc(nmod + 1, sizeof(*res->renames));
	res->nmod = nmod;
	l.mods = calloc(nmod + 1, sizeof(*l.mods));
	if (!l.mods || !res->renames) {
		free(l.mods);
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	}
	for (i = 0; i < nmod; i++)
		l.mods[i].renames = &res->renames[i];
	err = link_all(&l, mods, block, res);
	for (i = 0; i < nmod; i++)
		free(l.mods[i].act);
	free(l.mods);
	free(l.defs.v);
	free(l.decls.v);
	free(l.app_protos.v);
	return err;
}

void link_result_free(struct link_result *res)
{
	for (size_t i = 0; res->renames && i < res->nmod; i++) {
		for (size_t k = 0; k < res->renames[i].n; k++)
			free(res->renames[i].v[k].name);
		free(res->renames[i].v);
	}
	free(res->renames);
	res->renames = NULL;
	res->nmod = 0;
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
