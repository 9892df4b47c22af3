/* SPDX-License-Identifier: MIT */
/* JSON text into a tree of nodes (json.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/json.h"

#define JSON_DEPTH 64 /* nesting allowed: no recursion without a bound */

struct reader {
	const char *s, *p;
	bool relaxed;
	int depth;
};

static int bad(const struct reader *r, const char *what)
{
	return err_set(EGPU_EFORMAT, "JSON at offset %zu: %s", (size_t)(r->p - r->s),
		       what);
}

static void skip_space(struct reader *r)
{
	while (isspace((unsigned char)*r->p))
		r->p++;
}

static int dup_text(struct json *j, const char *s, size_t n)
{
	j->text = strndup(s, n);
	return j->text ? 0 : err_set(EGPU_ENOMEM, "out of memory reading JSON");
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '+' ||
	       c == '.';
}

/* A number, true/false/null, or (relaxed) a bare word. */
static int read_word(struct reader *r, struct json *j)
{
	const char *start = r->p;
	size_t n;

	while (word_char(*r->p))
		r->p++;
	n = r->p - start;
	if (!n)
		return bad(r, "a value expected");
	if ((n == 4 && !strncmp(start, "true", 4)) ||
	    (n == 5 && !strncmp(start, "false", 5)))
		j->kind = JSON_BOOL;
	else if (n == 4 && !strncmp(start, "null", 4))
		return 0;
	else if (isdigit((unsigned char)*start) || *start == '-' || *start == '+')
		j->kind = JSON_NUM;
	else if (r->relaxed)
		j->kind = JSON_WORD;
	else
		return r->p = start, bad(r, "a value expected");
	return dup_text(j, start, n);
}

/* \u00XX below 0x80 at @h (after the u) into *@c. */
static bool ascii_escape(const char *h, char *c)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		if (!isxdigit((unsigned char)h[i]))
			return false;
		v = v * 16 + (isdigit((unsigned char)h[i]) ? h[i] - '0' :
			      (tolower((unsigned char)h[i]) - 'a' + 10));
	}
	*c = (char)v;
	return v && v < 0x80;
}

/* A quoted string (\" \\ \/ \b \f \n \r \t; \u for ASCII only). */
static int read_string(struct reader *r, char **out)
{
	struct strbuf sb;

	sb_init(&sb);
	for (r->p++; *r->p && *r->p != '"'; r->p++) {
		char c = *r->p;

		if (c == '\\') {
			const char *esc = "\"\"\\\\//b\bf\fn\nr\rt\t", *e;

			c = *++r->p;
			for (e = esc; *e && *e != c; e += 2)
				;
			if (*e) {
				c = e[1];
			} else if (c == 'u' && ascii_escape(r->p + 1, &c)) {
				r->p += 4;
			} else {
				sb_free(&sb);
				return bad(r, "unknown escape in a string");
			}
		}
		sb_addn(&sb, &c, 1);
	}
	if (*r->p != '"') {
		sb_free(&sb);
		return bad(r, "unterminated string");
	}
	r->p++;
	*out = sb_detach(&sb, NULL);
	return *out ? 0 : err_set(EGPU_ENOMEM, "out of memory reading JSON");
}

static int read_value(struct reader *r, struct json *j);

static int read_key(struct reader *r, char **key)
{
	const char *start = r->p;

	skip_space(r);
	if (*r->p == '"')
		return read_string(r, key);
	if (!r->relaxed)
		return bad(r, "a quoted key expected");
	start = r->p;
	while (word_char(*r->p))
		r->p++;
	if (r->p == start)
		return bad(r, "a key expected");
	*key = strndup(start, r->p - start);
	return *key ? 0 : err_set(EGPU_ENOMEM, "out of memory reading JSON");
}

static bool key_separator(struct reader *r)
{
	skip_space(r);
	if (*r->p == ':' || (r->relaxed && *r->p == '=')) {
		r->p++;
		return true;
	}
	return false;
}

/* The items of an array or object after its opening bracket. */
static int read_items(struct reader *r, struct json *j, char close)
{
	size_t cap = 0, kcap = 0;
	int err;

	r->p++;
	skip_space(r);
	if (*r->p == close)
		return r->p++, 0;
	for (;;) {
		if (!ARRAY_GROW(j->items, cap, j->n, 4) ||
		    (j->kind == JSON_OBJ && !ARRAY_GROW(j->keys, kcap, j->n, 4)))
			return err_set(EGPU_ENOMEM, "out of memory reading JSON");
		j->items[j->n] = (struct json){ 0 };
		if (j->kind == JSON_OBJ) {
			j->keys[j->n] = NULL;
			err = read_key(r, &j->keys[j->n]);
			if (err)
				return err;
			if (!key_separator(r)) {
				j->n++;
				return bad(r, "':' expected after a key");
			}
		}
		err = read_value(r, &j->items[j->n++]);
		if (err)
			return err;
		skip_space(r);
		if (*r->p == close)
			return r->p++, 0;
		if (*r->p != ',')
			return bad(r, close == ']' ? "',' or ']' expected" :
				       "',' or '}' expected");
		r->p++;
	}
}

static int read_value(struct reader *r, struct json *j)
{
	int err;

	skip_space(r);
	if (*r->p == '"') {
		j->kind = JSON_STR;
		return read_string(r, &j->text);
	}
	if (*r->p != '[' && *r->p != '{')
		return read_word(r, j);
	if (++r->depth > JSON_DEPTH)
		return bad(r, "nested too deep");
	j->kind = *r->p == '[' ? JSON_ARR : JSON_OBJ;
	err = read_items(r, j, *r->p == '[' ? ']' : '}');
	r->depth--;
	return err;
}

int json_parse(const char *text, bool relaxed, struct json *out)
{
	struct reader r = { text, text, relaxed, 0 };
	int err;

	*out = (struct json){ 0 };
	err = read_value(&r, out);
	if (!err) {
		skip_space(&r);
		if (*r.p)
			err = bad(&r, "text after the value");
	}
	if (err)
		json_free(out);
	return err;
}

void json_free(struct json *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++) {
		json_free(&j->items[i]);
		if (j->keys)
			free(j->keys[i]);
	}
	free(j->items);
	free(j->keys);
	free(j->text);
	*j = (struct json){ 0 };
}

const struct json *json_get(const struct json *j, const char *key)
{
	for (size_t i = 0; j->kind == JSON_OBJ && i < j->n; i++)
		if (!strcmp(j->keys[i], key))
			return &j->items[i];
	return NULL;
}

const char *json_integer(const struct json *v, unsigned bits, bool is_signed,
			 uint64_t *out)
{
	char *end;

	if (v->kind == JSON_BOOL) {
		*out = v->text[0] == 't';
		return NULL;
	}
	if (v->kind != JSON_NUM || !bits || bits > 64)
		return "an integer expected";
	errno = 0;
	if (v->text[0] == '-') {
		long long s = strtoll(v->text, &end, 0);

		if (*end)
			return "not an integer";
		if (errno || !is_signed || (bits < 64 && s < -(1ll << (bits - 1))))
			return "out of range";
		*out = (uint64_t)s & (bits < 64 ? (1ull << bits) - 1 : ~0ull);
		return NULL;
	}
	*out = strtoull(v->text, &end, 0);
	if (*end)
		return "not an integer";
	if (errno || (bits < 64 && *out >> (bits - is_signed)) ||
	    (bits == 64 && is_signed && *out >> 63))
		return "out of range";
	return NULL;
}
