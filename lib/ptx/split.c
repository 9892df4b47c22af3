/* SPDX-License-Identifier: MIT */
/*
 * An instrumented module cut in two, to be compiled apart and linked
 * (docs/events.md, "The runtime compiled apart"): the application's code,
 * and the linked block (link_emit.c: the device runtime, the probes). ptxas
 * compiles one module as one program, so a kernel calling the trace mode's
 * runtime takes that callee's registers plus what is live across the
 * call; compiled apart, the callee keeps the count it was compiled to and
 * spills on its own (rare) path. Text only: the driver's linker is the
 * caller's (cuda/cu_link.c).
 */
#include <stdlib.h>
#include <string.h>

#include "ptx/link.h"
#include "ptx/memplan.h"
#include "ptx/ptx.h"

struct name {
	const char *s;
	uint32_t len;
	uint32_t item;
};

struct names {
	struct name *v;
	size_t n;
};

struct split {
	const struct ptx_module *m;
	uint32_t begin, end; /* the linked block's bytes */
	struct names block;  /* its definitions */
	struct names app;    /* the application's */
	bool *used;          /* per item: a block definition the app uses */
};

static int name_cmp(const void *a, const void *b)
{
	const struct name *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->s, y->s, x->len);
}

/* The item defining token @t's name in @ns, or -1. */
static int64_t names_find(const struct names *ns, const struct ptx_module *m,
			  uint32_t t)
{
	struct name key = { tok_text(m, t), m->toks[t].len, 0 }, *hit;

	if (m->toks[t].kind != TOK_IDENT || !ns->n)
		return -1;
	hit = bsearch(&key, ns->v, ns->n, sizeof(key), name_cmp);
	return hit ? (int64_t)hit->item : -1;
}

static bool in_block(const struct split *sp, const struct ptx_item *it)
{
	uint32_t off = sp->m->toks[it->first].off;

	return off >= sp->begin && off < sp->end;
}

static bool is_def(const struct ptx_item *it)
{
	return (it->kind == IT_FUNC || it->kind == IT_VAR) && is_definition(it);
}

static int collect(struct split *sp)
{
	const struct ptx_module *m = sp->m;
	uint32_t i;

	sp->block.v = calloc(m->nitems + 1, sizeof(struct name));
	sp->app.v = calloc(m->nitems + 1, sizeof(struct name));
	sp->used = calloc(m->nitems + 1, sizeof(bool));
	if (!sp->block.v || !sp->app.v || !sp->used)
		return err_set(EGPU_ENOMEM, "splitting the runtime: out of memory");
	for (i = 0; i < m->nitems; i++) {
		const struct ptx_item *it = &m->items[i];
		struct names *ns = in_block(sp, it) ? &sp->block : &sp->app;

		if (is_def(it))
			ns->v[ns->n++] = (struct name){ tok_text(m, it->name),
							m->toks[it->name].len, i };
	}
	qsort(sp->block.v, sp->block.n, sizeof(struct name), name_cmp);
	qsort(sp->app.v, sp->app.n, sizeof(struct name), name_cmp);
	return 0;
}

static bool is_trace_call(const struct ptx_module *m, uint32_t t)
{
	return tok_is(m, t, TR_SITE_FUNC) || tok_is(m, t, TR_CLAIM_FUNC) ||
	       tok_is(m, t, TR_ALONE_FUNC);
}

/*
 * Mark the block's definitions the application's items name; whether one
 * is a trace-mode runtime function (else nothing to gain: EGPU_ENOENT).
 * The block naming an application symbol cannot be cut (EGPU_ENOTSUP).
 */
static int mark_uses(struct split *sp)
{
	const struct ptx_module *m = sp->m;
	bool traced = false;

	for (uint32_t i = 0; i < m->nitems; i++) {
		const struct ptx_item *it = &m->items[i];
		bool block = in_block(sp, it);

		for (uint32_t t = it->first; t < it->last; t++) {
			int64_t def = names_find(block ? &sp->app : &sp->block, m, t);

			if (def < 0)
				continue;
			if (block)
				return err_set(EGPU_ENOTSUP,
					       "splitting the runtime: the linked code uses the application's '%.*s'",
					       (int)m->toks[t].len, tok_text(m, t));
			sp->used[def] = true;
			traced |= is_trace_call(m, t);
		}
	}
	return traced ? 0 : err_set(EGPU_ENOENT,
				    "splitting the runtime: no traced site calls the runtime");
}

/* The token after @it's .visible/.weak/.common, if any. */
static uint32_t after_linkage(const struct ptx_item *it)
{
	return it->first + (it->linkage != LINK_NONE && it->linkage != LINK_EXTERN);
}

/* @it (a block definition) declared .extern, for the application. */
static void emit_extern(struct strbuf *sb, const struct ptx_module *m,
			const struct ptx_item *it)
{
	uint32_t from = after_linkage(it), to = it->last - 1; /* the ';' */

	if (it->kind == IT_FUNC) {
		to = it->func->body;
	} else {
		for (uint32_t t = from; t < it->last; t++)
			if (tok_is(m, t, "=")) {
				to = t;
				break;
			}
	}
	sb_adds(sb, ".extern ");
	sb_addn(sb, tok_text(m, from), m->toks[to - 1].off + m->toks[to - 1].len -
				       m->toks[from].off);
	sb_adds(sb, ";\n");
}

static void emit_app(const struct split *sp, struct strbuf *app)
{
	const struct ptx_module *m = sp->m;

	sb_addn(app, m->text, sp->begin);
	sb_adds(app, "// egpu: the linked code compiled apart, its symbols\n");
	for (uint32_t i = 0; i < m->nitems; i++)
		if (sp->used[i])
			emit_extern(app, m, &m->items[i]);
	sb_addn(app, m->text + sp->end, m->len - sp->end);
}

/* Whether the block's @it (definition or prototype) must be .visible. */
static bool to_publish(const struct split *sp, const struct ptx_item *it)
{
	int64_t def;

	if (it->kind != IT_FUNC && it->kind != IT_VAR)
		return false;
	def = names_find(&sp->block, sp->m, it->name);
	return def >= 0 && sp->used[def] && it->linkage == LINK_NONE;
}

static void emit_runtime(const struct split *sp, struct strbuf *rt)
{
	const struct ptx_module *m = sp->m;
	uint32_t pos = sp->begin;

	sb_addn(rt, m->text, m->header_end);
	sb_adds(rt, "\n");
	for (uint32_t i = 0; i < m->nitems; i++) {
		const struct ptx_item *it = &m->items[i];
		uint32_t at = m->toks[it->first].off;

		if (!in_block(sp, it) || !to_publish(sp, it))
			continue;
		sb_addn(rt, m->text + pos, at - pos);
		sb_adds(rt, ".visible ");
		pos = at;
	}
	sb_addn(rt, m->text + pos, sp->end - pos);
}

/*
 * The linked block's bytes [*begin, *end), or EGPU_ENOENT. Without a
 * trace function's name after it (where the application's functions
 * are), nothing calls one: said before parsing the module.
 */
static int find_block(const char *ptx, uint32_t *begin, uint32_t *end)
{
	const char *b = strstr(ptx, LINKED_BEGIN), *e;

	e = b ? strstr(b, LINKED_END) : NULL;
	if (!e)
		return err_set(EGPU_ENOENT, "splitting the runtime: no linked code");
	*begin = (uint32_t)(b - ptx);
	*end = (uint32_t)(e + strlen(LINKED_END) - ptx);
	if (!strstr(ptx + *end, TR_SITE_FUNC) && !strstr(ptx + *end, TR_CLAIM_FUNC) &&
	    !strstr(ptx + *end, TR_ALONE_FUNC))
		return err_set(EGPU_ENOENT, "splitting the runtime: no traced site calls the runtime");
	return 0;
}

int ptx_split_runtime(const char *ptx, size_t len, struct strbuf *app,
		      struct strbuf *rt)
{
	struct ptx_module *m = NULL;
	struct split sp = { 0 };
	int err;

	err = ptx_text_len(ptx, &len);
	if (!err)
		err = find_block(ptx, &sp.begin, &sp.end);
	if (!err)
		err = ptx_parse("instrumented module", ptx, len, &m);
	sp.m = m;
	if (!err)
		err = collect(&sp);
	if (!err)
		err = mark_uses(&sp);
	if (!err) {
		emit_app(&sp, app);
		emit_runtime(&sp, rt);
		if (!sb_ok(app) || !sb_ok(rt))
			err = err_set(EGPU_ENOMEM, "splitting the runtime: out of memory");
	}
	free(sp.block.v);
	free(sp.app.v);
	free(sp.used);
	ptx_module_free(m);
	return err;
}
