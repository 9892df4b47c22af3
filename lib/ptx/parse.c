/* SPDX-License-Identifier: MIT */
/*
 * Module-level PTX grammar: the header directives, debug .file/.section,
 * variables, aliases, pragmas and functions (parse_func.c). Every item is
 * recorded as a token range; nothing is copied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/parse.h"

/* .version MAJOR.MINOR */
static int parse_version(struct parser *p)
{
	const struct tok *t = cur(p);
	unsigned major, minor;
	char buf[16];
	int n = 0;

	if (t->kind != TOK_FLOAT || t->len >= sizeof(buf))
		return expected(p, "a PTX ISA version like 8.0");
	memcpy(buf, tok_text(p->m, p->pos), t->len);
	buf[t->len] = '\0';
	if (sscanf(buf, "%3u.%3u%n", &major, &minor, &n) != 2 ||
	    (uint32_t)n != t->len)
		return expected(p, "a PTX ISA version like 8.0");
	p->m->version_major = major;
	p->m->version_minor = minor;
	p->m->version_tok = p->pos++;
	return 0;
}

/* sm_90, sm_90a, sm_100f ... -> 90, 90, 100; anything else -> 0. */
static unsigned sm_number(const struct ptx_module *m, uint32_t t)
{
	const char *s = tok_text(m, t);
	unsigned sm = 0;
	uint32_t i;

	if (m->toks[t].len < 4 || memcmp(s, "sm_", 3))
		return 0;
	for (i = 3; i < m->toks[t].len && s[i] >= '0' && s[i] <= '9'; i++)
		sm = sm * 10 + (unsigned)(s[i] - '0');
	return i > 3 ? sm : 0;
}

/* .target NAME {, NAME}: the first sm_NN names the architecture. */
static int parse_target(struct parser *p)
{
	do {
		if (!at_kind(p, TOK_IDENT))
			return expected(p, "a target name like sm_90");
		if (!p->m->sm)
			p->m->sm = sm_number(p->m, p->pos);
		p->pos++;
	} while (accept(p, ","));
	return 0;
}

static int parse_address_size(struct parser *p)
{
	uint64_t v = 0;
	int err = expect_int(p, &v, "32 or 64");

	if (err)
		return err;
	if (v != 32 && v != 64) {
		p->pos--;
		return expected(p, "32 or 64");
	}
	p->m->address_size = (unsigned)v;
	return 0;
}

/* .file N "name" [, timestamp, size] */
static int parse_file(struct parser *p)
{
	uint64_t v;
	int err = expect_int(p, &v, "a file number");

	if (err)
		return err;
	if (!at_kind(p, TOK_STRING))
		return expected(p, "a file name string");
	p->pos++;
	if (!accept(p, ","))
		return 0;
	err = expect_int(p, &v, "a timestamp");
	if (!err)
		err = expect(p, ",");
	if (!err)
		err = expect_int(p, &v, "a file size");
	return err;
}

/* .section NAME { ... }: debug data, labels and nested braces inside. */
static int parse_section(struct parser *p)
{
	uint32_t open;
	int depth = 0;

	if (!at_kind(p, TOK_DIR) && !at_kind(p, TOK_IDENT))
		return expected(p, "a section name");
	p->pos++;
	open = p->pos;
	if (!at(p, "{"))
		return expected(p, "'{' opening the section");
	for (;; p->pos++) {
		if (at_kind(p, TOK_EOF)) {
			p->pos = open;
			return expected(p, "a section closed by '}'");
		}
		if (at(p, "{"))
			depth++;
		else if (at(p, "}") && --depth == 0)
			break;
	}
	p->pos++;
	return 0;
}

/* .pragma "a" {, "b"} ; */
static int parse_pragma(struct parser *p)
{
	do {
		if (!at_kind(p, TOK_STRING))
			return expected(p, "a pragma string");
		p->pos++;
	} while (accept(p, ","));
	return expect(p, ";");
}

/* .alias NAME, TARGET ; */
static int parse_alias(struct parser *p, struct ptx_item *it)
{
	if (!at_kind(p, TOK_IDENT))
		return expected(p, "an alias name");
	it->name = p->pos++;
	if (accept(p, ",") && at_kind(p, TOK_IDENT)) {
		p->pos++;
		return expect(p, ";");
	}
	return expected(p, "', TARGET' naming the aliased function");
}

static bool is_state_space(const struct parser *p)
{
	static const char *const spaces[] = {
		".global", ".const", ".shared", ".local", ".tex",
		".texref", ".samplerref", ".surfref",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(spaces); i++)
		if (at(p, spaces[i]))
			return true;
	return false;
}

/* SPACE {attributes, type} NAME [dims] [= initializer] ; */
static int parse_var(struct parser *p, struct ptx_item *it)
{
	uint32_t start = p->pos;
	int depth = 0;

	it->name = 0;
	for (;; p->pos++) {
		const struct tok *t = cur(p);
		char c = t->kind == TOK_PUNCT ? tok_text(p->m, p->pos)[0] : 0;

		if (t->kind == TOK_EOF)
			break;
		if (c == '=' && depth == 0)
			break;
		if (c == ';' && depth == 0)
			break;
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}')
			depth--;
		else if (t->kind == TOK_IDENT && depth == 0 && !it->name)
			it->name = p->pos;
	}
	if (!it->name) {
		p->pos = start;
		return expected(p, "a variable declaration with a name");
	}
	p->pos = start;
	return skip_statement(p, "';' ending the variable declaration");
}

static const char *const linkages[] = {
	[LINK_EXTERN] = ".extern",
	[LINK_VISIBLE] = ".visible",
	[LINK_WEAK] = ".weak",
	[LINK_COMMON] = ".common",
};

static uint8_t parse_linkage(struct parser *p)
{
	uint8_t link = LINK_NONE, i;
	bool more = true;

	while (more) {
		more = false;
		for (i = LINK_EXTERN; i <= LINK_COMMON; i++) {
			if (accept(p, linkages[i])) {
				link = i;
				more = true;
			}
		}
	}
	return link;
}

static int parse_directive(struct parser *p, struct ptx_item *it)
{
	static const struct {
		const char *name;
		uint8_t kind;
		int (*parse)(struct parser *p);
	} table[] = {
		{ ".version", IT_VERSION, parse_version },
		{ ".target", IT_TARGET, parse_target },
		{ ".address_size", IT_ADDRESS_SIZE, parse_address_size },
		{ ".file", IT_FILE, parse_file },
		{ ".section", IT_SECTION, parse_section },
		{ ".pragma", IT_PRAGMA, parse_pragma },
	};
	size_t i;

	if (accept(p, ".alias")) {
		it->kind = IT_ALIAS;
		return parse_alias(p, it);
	}
	for (i = 0; i < ARRAY_SIZE(table); i++) {
		if (accept(p, table[i].name)) {
			it->kind = table[i].kind;
			return table[i].parse(p);
		}
	}
	return expected(p, "a module-level directive");
}

static int parse_item(struct parser *p, struct ptx_item *it)
{
	it->first = p->pos;
	it->linkage = parse_linkage(p);
	if (at(p, ".entry") || at(p, ".func")) {
		it->kind = IT_FUNC;
		return parse_func(p, it);
	}
	if (is_state_space(p)) {
		it->kind = IT_VAR;
		return parse_var(p, it);
	}
	if (it->linkage != LINK_NONE)
		return expected(p, ".entry, .func or a variable after the linkage");
	return parse_directive(p, it);
}

static int add_item(struct ptx_module *m, const struct ptx_item *it,
		    size_t *cap)
{
	if (!ARRAY_GROW(m->items, *cap, m->nitems, 64))
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	m->items[m->nitems++] = *it;
	return 0;
}

static int parse_items(struct parser *p)
{
	size_t cap = 0;
	int err = 0;

	while (!err && !at_kind(p, TOK_EOF)) {
		struct ptx_item it = { 0 };

		err = parse_item(p, &it);
		it.last = p->pos;
		/* A failed function is kept so that its parts are freed. */
		if (!err || it.func) {
			int e = add_item(p->m, &it, &cap);

			if (e) {
				free(it.func ? it.func->params : NULL);
				free(it.func ? it.func->stmts : NULL);
				free(it.func);
				return e;
			}
		}
	}
	return err;
}

/* Where linked code may go: after the leading header directives. */
static int check_header(struct ptx_module *m)
{
	uint32_t i;

	if (!m->version_tok)
		return err_set(EGPU_EFORMAT, "PTX: no .version directive");
	if (!m->sm)
		return err_set(EGPU_EFORMAT, "PTX: no .target sm_NN directive");
	for (i = 0; i < m->nitems; i++) {
		uint8_t k = m->items[i].kind;

		if (k != IT_VERSION && k != IT_TARGET && k != IT_ADDRESS_SIZE)
			break;
		m->header_end = tok_end(m, m->items[i].last - 1);
	}
	return 0;
}

void ptx_module_free(struct ptx_module *m)
{
	uint32_t i;

	if (!m)
		return;
	for (i = 0; i < m->nitems; i++) {
		struct ptx_func *f = m->items[i].func;

		if (f) {
			free(f->params);
			free(f->stmts);
			free(f);
		}
	}
	free(m->items);
	free(m->toks);
	free(m);
}

int ptx_parse(const char *name, const char *text, size_t len,
	      struct ptx_module **out)
{
	struct ptx_module *m = calloc(1, sizeof(*m));
	struct parser p = { .m = m };
	int err;

	if (!m)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	m->name = name;
	m->text = text;
	m->address_size = 64;
	err = ptx_text_len(text, &len);
	m->len = len;
	if (!err)
		err = ptx_lex(text, len, &m->toks, &m->ntoks);
	if (!err)
		err = parse_items(&p);
	if (!err)
		err = check_header(m);
	if (err) {
		err_prefix("%s", name);
		ptx_module_free(m);
		return err;
	}
	*out = m;
	return 0;
}
