/* SPDX-License-Identifier: MIT */
/*
 * A small JSON reader for values people type (egpu attach --set and
 * --set-file): a tree of nodes, numbers kept as text so that the reader of
 * a node decides their width and sign. The relaxed form also takes what a
 * command line makes easy: bare words (unquoted keys and enumerator names),
 * hex numbers, and '=' for ':'.
 */
#ifndef EGPU_CORE_JSON_H
#define EGPU_CORE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum json_kind {
	JSON_NULL,
	JSON_BOOL,  /* text "true" or "false" */
	JSON_NUM,   /* text as written */
	JSON_STR,   /* text unescaped */
	JSON_WORD,  /* relaxed: a bare word */
	JSON_ARR,
	JSON_OBJ,
};

struct json {
	enum json_kind kind;
	char *text;          /* BOOL, NUM, STR, WORD */
	struct json *items;  /* ARR, OBJ: n values */
	char **keys;         /* OBJ: n keys */
	size_t n;
};

/*
 * Parse all of @text into @out (json_free() it). EGPU_EFORMAT naming the
 * offset and what was expected; EGPU_ENOMEM.
 */
int json_parse(const char *text, bool relaxed, struct json *out);
void json_free(struct json *j);
/* The value under @key of object @j, or NULL. */
const struct json *json_get(const struct json *j, const char *key);

/*
 * Number (or boolean) @v as an integer of @bits bits (1..64), signed or
 * not, into *@out (two's complement, within @bits). NULL, or why not:
 * "an integer expected", "not an integer", "out of range".
 */
const char *json_integer(const struct json *v, unsigned bits, bool is_signed,
			 uint64_t *out);

#endif
