/* SPDX-License-Identifier: MIT */
/*
 * Tokens of a probe body being inlined, below the analysis (inline.c)
 * and the ctx folding (inline_ctx.c): integer widths, which names the
 * body declares, and how a copy writes a token (its site's name in front
 * of the body's own names, the linker's new names).
 */
#include <string.h>

#include "ptx/inline.h"

uint32_t type_bytes(const struct ptx_module *m, uint32_t t)
{
	static const char *const types[][3] = {
		{ ".b8", ".u8", ".s8" },    { ".b16", ".u16", ".s16" },
		{ ".b32", ".u32", ".s32" }, { ".b64", ".u64", ".s64" },
	};

	for (uint32_t i = 0; i < ARRAY_SIZE(types); i++)
		for (uint32_t j = 0; j < 3; j++)
			if (tok_is(m, t, types[i][j]))
				return 1u << i;
	return 0;
}

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

bool reg_name_matches(const struct ptx_module *m, uint32_t decl, bool family,
		      uint32_t t)
{
	uint32_t nl = m->toks[decl].len, len = m->toks[t].len;
	const char *s = tok_text(m, t);

	if (tok_same(m, t, decl))
		return true;
	return family && len > nl && !memcmp(s, tok_text(m, decl), nl) &&
	       all_digits(s + nl, len - nl);
}

const struct own_name *own_name_of(const struct scan *sc, uint32_t t)
{
	const struct ptx_module *m = sc->fn->m;

	if (m->toks[t].kind != TOK_IDENT)
		return NULL;
	for (size_t i = 0; i < sc->n; i++)
		if (reg_name_matches(m, sc->names[i].tok, sc->names[i].family, t))
			return &sc->names[i];
	return NULL;
}

void put_tok(struct strbuf *sb, const struct inline_func *fn, uint32_t t,
	     const struct inline_site *at)
{
	const struct ptx_module *m = fn->m;
	const char *s = tok_text(m, t), *linked;
	int len = (int)m->toks[t].len;

	switch (fn->tok[t - fn->f->body]) {
	case T_DROP:
		return;
	case T_DEPOT:
		sb_adds(sb, at->depot);
		return;
	case T_OWN:
		/* Keep the sigil; labels without one get '$'. */
		if (*s == '%' || *s == '$')
			sb_printf(sb, "%c%s_%.*s", *s, at->name, len - 1, s + 1);
		else
			sb_printf(sb, "$%s_%.*s", at->name, len, s);
		return;
	default:
		linked = m->toks[t].kind == TOK_IDENT ? renames_find(fn->rn, m, t) :
							NULL;
		if (linked)
			sb_adds(sb, linked);
		else
			sb_addn(sb, s, (size_t)len);
	}
}

void put_toks(struct strbuf *sb, const struct inline_func *fn, uint32_t first,
	      uint32_t last, const struct inline_site *at)
{
	const struct ptx_module *m = fn->m;
	uint32_t pos = m->toks[first].off;

	for (uint32_t t = first; t < last; t++) {
		sb_addn(sb, m->text + pos, m->toks[t].off - pos);
		put_tok(sb, fn, t, at);
		pos = tok_end(m, t);
	}
}
