/* SPDX-License-Identifier: MIT */
/* Recursive-descent parser state shared by parse.c and parse_func.c. */
#ifndef EGPU_PTX_PARSE_H
#define EGPU_PTX_PARSE_H

#include "core/core.h"
#include "ptx/module.h"

struct parser {
	struct ptx_module *m;
	uint32_t pos; /* current token */
};

static inline const struct tok *cur(const struct parser *p)
{
	return &p->m->toks[p->pos];
}

static inline bool at_kind(const struct parser *p, enum tok_kind kind)
{
	return cur(p)->kind == kind;
}

/* The current token is exactly @s (and not the end). */
static inline bool at(const struct parser *p, const char *s)
{
	return tok_is(p->m, p->pos, s);
}

/* parse_tok.c. Consume the current token if it is exactly @s. */
bool accept(struct parser *p, const char *s);
/* "PTX line L col C: expected WHAT, found 'TOKEN'", EGPU_EFORMAT. */
int expected(const struct parser *p, const char *what);
/* Consume @s or fail with expected(). */
int expect(struct parser *p, const char *s);
/* Consume an integer token into *v or fail with expected(@what). */
int expect_int(struct parser *p, uint64_t *v, const char *what);
/*
 * Skip to the ';' that ends the current statement (consuming it), keeping
 * (), [] and {} balanced. @what names the statement for messages.
 */
int skip_statement(struct parser *p, const char *what);

/* .entry or .func at the current token; fills it->func and it->name. */
int parse_func(struct parser *p, struct ptx_item *it);
/* .loc FILE LINE COL [, function_name L [+ N]] [, inlined_at F L C] */
int parse_loc(struct parser *p);

#endif
