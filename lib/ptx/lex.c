/* SPDX-License-Identifier: MIT */
/*
 * PTX tokenizer. Comments and white space are skipped (they stay in the
 * text between tokens); every token keeps its byte range, line and column,
 * and whether it starts a line, which the parser needs for the directives
 * that end at the end of their line (.version, .loc, .file ...).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "ptx/module.h"

struct lexer {
	const char *s;
	size_t len;
	size_t pos;
	uint32_t line;
	size_t line_start;
	bool bol;
	struct tok *toks;
	uint32_t n;
	uint32_t cap;
};

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || ((c | 32) >= 'a' && (c | 32) <= 'f');
}

/* Characters that may follow the first one of an identifier. */
static bool is_follow(char c)
{
	return is_alpha(c) || is_digit(c) || c == '_' || c == '$';
}

static char peek(const struct lexer *lx, size_t ahead)
{
	return lx->pos + ahead < lx->len ? lx->s[lx->pos + ahead] : '\0';
}

static uint32_t col_of(const struct lexer *lx, size_t pos)
{
	return (uint32_t)(pos - lx->line_start + 1);
}

static int lex_error(const struct lexer *lx, size_t pos, const char *what)
{
	return err_set(EGPU_EFORMAT, "PTX line %u col %u: %s", lx->line,
		       col_of(lx, pos), what);
}

static void newline(struct lexer *lx)
{
	lx->pos++;
	lx->line++;
	lx->line_start = lx->pos;
	lx->bol = true;
}

static int skip_block_comment(struct lexer *lx)
{
	size_t start = lx->pos;
	uint32_t line = lx->line;
	size_t line_start = lx->line_start;

	lx->pos += 2;
	while (lx->pos < lx->len) {
		if (lx->s[lx->pos] == '*' && peek(lx, 1) == '/') {
			lx->pos += 2;
			return 0;
		}
		if (lx->s[lx->pos] == '\n')
			newline(lx);
		else
			lx->pos++;
	}
	return err_set(EGPU_EFORMAT,
		       "PTX line %u col %u: unterminated /* comment", line,
		       (uint32_t)(start - line_start + 1));
}

static int skip_space(struct lexer *lx)
{
	while (lx->pos < lx->len) {
		char c = lx->s[lx->pos];

		if (c == '\n') {
			newline(lx);
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' ||
			   c == '\v') {
			lx->pos++;
		} else if (c == '/' && peek(lx, 1) == '/') {
			while (lx->pos < lx->len && lx->s[lx->pos] != '\n')
				lx->pos++;
		} else if (c == '/' && peek(lx, 1) == '*') {
			int err = skip_block_comment(lx);

			if (err)
				return err;
		} else {
			break;
		}
	}
	return 0;
}

static size_t skip_while(const struct lexer *lx, size_t p, bool (*ok)(char))
{
	while (p < lx->len && ok(lx->s[p]))
		p++;
	return p;
}

static bool is_bin(char c)
{
	return c == '0' || c == '1';
}

/* Decimal digits, an optional fraction and an optional exponent. */
static size_t scan_decimal(const struct lexer *lx, size_t p, uint8_t *kind)
{
	p = skip_while(lx, p, is_digit);
	if (p + 1 < lx->len && lx->s[p] == '.' && is_digit(lx->s[p + 1])) {
		*kind = TOK_FLOAT;
		p = skip_while(lx, p + 1, is_digit);
	}
	if (p + 1 < lx->len && (lx->s[p] | 32) == 'e') {
		size_t q = p + 1;

		if (q < lx->len && (lx->s[q] == '+' || lx->s[q] == '-'))
			q++;
		if (q < lx->len && is_digit(lx->s[q])) {
			*kind = TOK_FLOAT;
			p = skip_while(lx, q, is_digit);
		}
	}
	return p;
}

/*
 * Integers (decimal, octal, 0x hex, 0b binary, optional U suffix) and
 * floats (decimal, 0f/0d hex images). Returns the end, or 0 if malformed.
 */
static size_t scan_number(const struct lexer *lx, uint8_t *kind)
{
	size_t p = lx->pos, digits;
	char x = (char)(peek(lx, 1) | 32);

	*kind = TOK_INT;
	if (lx->s[p] == '0' && (x == 'x' || x == 'b' || x == 'f' || x == 'd')) {
		digits = p + 2;
		p = skip_while(lx, digits, x == 'b' ? is_bin : is_hex);
		if (p == digits)
			return 0;
		if (x == 'f' || x == 'd')
			*kind = TOK_FLOAT;
	} else {
		p = scan_decimal(lx, p, kind);
	}
	if (*kind == TOK_INT && p < lx->len && lx->s[p] == 'U')
		p++;
	if (p < lx->len && is_follow(lx->s[p]))
		return 0;
	return p;
}

static size_t scan_string(const struct lexer *lx)
{
	size_t p = lx->pos + 1;

	while (p < lx->len && lx->s[p] != '"' && lx->s[p] != '\n') {
		if (lx->s[p] == '\\' && p + 1 < lx->len && lx->s[p + 1] != '\n')
			p++;
		p++;
	}
	return p < lx->len && lx->s[p] == '"' ? p + 1 : 0;
}

static bool is_punct(char c)
{
	return c && strchr("{}()[];,:@!+-*/%<>=|&^~?", c);
}

/* Scan the token at lx->pos; returns its end (0 on error, message set). */
static size_t scan_token(const struct lexer *lx, uint8_t *kind)
{
	char c = lx->s[lx->pos];
	/* Qualifiers may start with a digit: .L2::128B, .L2::256B. */
	bool qualifier = lx->pos >= 2 && lx->s[lx->pos - 1] == ':' &&
			 lx->s[lx->pos - 2] == ':';
	char msg[40];
	size_t end;

	if (is_alpha(c) || c == '_' || c == '$' || (qualifier && is_digit(c)) ||
	    (c == '%' && is_follow(peek(lx, 1)))) {
		*kind = TOK_IDENT;
		return skip_while(lx, lx->pos + 1, is_follow);
	}
	if (c == '.' && is_follow(peek(lx, 1))) {
		*kind = TOK_DIR;
		return skip_while(lx, lx->pos + 1, is_follow);
	}
	if (is_digit(c)) {
		end = scan_number(lx, kind);
		if (!end)
			lex_error(lx, lx->pos, "malformed number");
		return end;
	}
	if (c == '"') {
		*kind = TOK_STRING;
		end = scan_string(lx);
		if (!end)
			lex_error(lx, lx->pos, "unterminated string");
		return end;
	}
	if (is_punct(c)) {
		*kind = TOK_PUNCT;
		return lx->pos + 1;
	}
	if (c >= 0x20 && c < 0x7f)
		snprintf(msg, sizeof(msg), "unexpected character '%c'", c);
	else
		snprintf(msg, sizeof(msg), "unexpected byte 0x%02x",
			 (unsigned char)c);
	lex_error(lx, lx->pos, msg);
	return 0;
}

static int push(struct lexer *lx, uint8_t kind, size_t end)
{
	struct tok *t;

	if (lx->n == lx->cap) {
		uint32_t cap = lx->cap ? lx->cap * 2 : 256;

		t = realloc(lx->toks, (size_t)cap * sizeof(*t));
		if (!t)
			return err_set(EGPU_ENOMEM, "PTX: out of memory for tokens");
		lx->toks = t;
		lx->cap = cap;
	}
	t = &lx->toks[lx->n++];
	t->off = (uint32_t)lx->pos;
	t->len = (uint32_t)(end - lx->pos);
	t->line = lx->line;
	t->col = col_of(lx, lx->pos);
	t->kind = kind;
	t->bol = lx->bol;
	lx->bol = false;
	lx->pos = end;
	return 0;
}

static bool all_nul(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p)
			return false;
	return true;
}

int ptx_text_len(const char *text, size_t *len)
{
	const char *nul = memchr(text, '\0', *len), *line = text;
	uint32_t n = 1;

	if (!nul)
		return 0;
	if (all_nul(nul, text + *len)) {
		*len = (size_t)(nul - text);
		return 0;
	}
	for (const char *c = text; c < nul; c++)
		if (*c == '\n') {
			n++;
			line = c + 1;
		}
	return err_set(EGPU_EFORMAT,
		       "PTX line %u col %u: a NUL byte inside the text (PTX is text; the driver would stop reading there)",
		       n, (uint32_t)(nul - line + 1));
}

int ptx_lex(const char *text, size_t len, struct tok **toks, uint32_t *ntoks)
{
	struct lexer lx = { .s = text, .len = len, .line = 1, .bol = true };
	int err = 0;

	if (len >= UINT32_MAX / 2)
		return err_set(EGPU_E2BIG, "PTX: %zu bytes is too large", len);
	while (!err) {
		uint8_t kind = TOK_EOF;
		size_t end;

		err = skip_space(&lx);
		if (err || lx.pos >= len)
			break;
		end = scan_token(&lx, &kind);
		err = end ? push(&lx, kind, end) : EGPU_EFORMAT;
	}
	if (!err)
		err = push(&lx, TOK_EOF, lx.pos);
	if (err) {
		free(lx.toks);
		return err;
	}
	*toks = lx.toks;
	*ntoks = lx.n;
	return 0;
}
