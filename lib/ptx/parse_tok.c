/* SPDX-License-Identifier: MIT */
/*
 * The parser's steps over tokens, below both grammars (parse.c: the
 * module, parse_func.c: functions): comparing, accepting, expecting, and
 * skipping a statement, with the messages that name line and column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/parse.h"

bool tok_is(const struct ptx_module *m, uint32_t t, const char *s)
{
	const struct tok *k = &m->toks[t];
	size_t n = strlen(s);

	return k->kind != TOK_EOF && k->len == n && !memcmp(m->text + k->off, s, n);
}

bool tok_same(const struct ptx_module *m, uint32_t a, uint32_t b)
{
	return m->toks[a].len == m->toks[b].len &&
	       !memcmp(tok_text(m, a), tok_text(m, b), m->toks[a].len);
}

bool accept(struct parser *p, const char *s)
{
	if (!at(p, s))
		return false;
	p->pos++;
	return true;
}

int expected(const struct parser *p, const char *what)
{
	const struct tok *t = cur(p);

	if (t->kind == TOK_EOF)
		return err_set(EGPU_EFORMAT,
			       "PTX line %u col %u: expected %s, found the end of the text",
			       t->line, t->col, what);
	return err_set(EGPU_EFORMAT,
		       "PTX line %u col %u: expected %s, found '%.*s'", t->line,
		       t->col, what, (int)(t->len < 40 ? t->len : 40),
		       tok_text(p->m, p->pos));
}

int expect(struct parser *p, const char *s)
{
	char what[16];

	if (accept(p, s))
		return 0;
	snprintf(what, sizeof(what), "'%s'", s);
	return expected(p, what);
}

int expect_int(struct parser *p, uint64_t *v, const char *what)
{
	char buf[32];
	const struct tok *t = cur(p);

	*v = 0;
	if (t->kind != TOK_INT || t->len >= sizeof(buf))
		return expected(p, what);
	memcpy(buf, tok_text(p->m, p->pos), t->len);
	buf[t->len] = '\0';
	*v = strtoull(buf, NULL, 0);
	p->pos++;
	return 0;
}

/* The bracket that closes @open. */
static char closer(char open)
{
	return open == '[' ? ']' : open == '(' ? ')' : '}';
}

int skip_statement(struct parser *p, const char *what)
{
	/* Open brackets, innermost last (deeper ones are only counted). */
	uint32_t open[32];
	int depth = 0;

	for (;; p->pos++) {
		const struct tok *t = cur(p);
		char c = t->kind == TOK_PUNCT ? tok_text(p->m, p->pos)[0] : 0;
		char inner = depth && depth <= 32 ?
				     tok_text(p->m, open[depth - 1])[0] : 0;

		if (t->kind == TOK_EOF || (depth == 0 && (c == '}' || c == ')' ||
							  c == ']')))
			return expected(p, what);
		/* No statement has a ';' inside [] or (): a missing ']'
		 * is reported here, not at the end of the text. */
		if (c == ';' && (inner == '[' || inner == '(')) {
			char want[64];

			snprintf(want, sizeof(want), "'%c' closing the '%c' of col %u",
				 closer(inner), inner, p->m->toks[open[depth - 1]].col);
			return expected(p, want);
		}
		if (c == '{' || c == '(' || c == '[') {
			if (depth < 32)
				open[depth] = p->pos;
			depth++;
		} else if (c == '}' || c == ')' || c == ']') {
			depth--;
		} else if (c == ';' && depth == 0) {
			break;
		}
	}
	p->pos++;
	return 0;
}
