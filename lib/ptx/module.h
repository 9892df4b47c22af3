/* SPDX-License-Identifier: MIT */
/*
 * The PTX module model inside lib/ptx: tokens with source positions, the
 * module's top-level items and the statements of every function body.
 *
 * Nothing here copies or rewrites text: every item and statement is a range
 * of tokens, and every token a byte range of the caller's text, so edits
 * are splices and the bytes outside them stay exactly as they were.
 */
#ifndef EGPU_PTX_MODULE_H
#define EGPU_PTX_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tok_kind {
	TOK_EOF,
	TOK_IDENT,  /* name, register (%r1), label ($L__BB0_1), opcode */
	TOK_DIR,    /* .name: directive, type, state space or modifier */
	TOK_INT,
	TOK_FLOAT,  /* 1.5, 1e3, 0f3F800000, 0d..., and versions like 8.0 */
	TOK_STRING, /* with its quotes */
	TOK_PUNCT,  /* one character: { } ( ) [ ] ; , : @ ! + - < > = | ... */
};

struct tok {
	uint32_t off;  /* byte offset in the module text */
	uint32_t len;
	uint32_t line; /* 1-based */
	uint32_t col;  /* 1-based, in bytes */
	uint8_t kind;  /* enum tok_kind */
	bool bol;      /* first token on its line */
};

enum stmt_kind {
	ST_INSN,   /* [@[!]pred] opcode{.mod} operands ; */
	ST_LABEL,  /* name : */
	ST_DECL,   /* .reg .local .shared .param .const .global declarations */
	ST_DIR,    /* any other directive: .loc, .pragma, .callprototype ... */
	ST_OPEN,   /* { opening a nested scope */
	ST_CLOSE,  /* } closing a scope (the last one closes the body) */
};

struct ptx_stmt {
	uint32_t first;  /* token range [first, last) */
	uint32_t last;
	uint32_t op;     /* ST_INSN: opcode token; ST_DIR/ST_DECL: directive */
	int32_t pred;    /* ST_INSN: guard register token, -1 if unguarded */
	uint16_t depth;  /* scope depth: 1 is the body's own scope */
	uint8_t kind;    /* enum stmt_kind */
	bool pred_neg;   /* guard is @!pred */
};

/* One input parameter of an .entry or .func, laid out as the ABI does. */
struct ptx_param {
	uint32_t name;   /* token */
	uint32_t size;   /* bytes; 0 if the type's size is unknown */
	uint32_t align;
	uint32_t offset; /* from the first parameter */
};

enum ptx_linkage {
	LINK_NONE,    /* module-local */
	LINK_EXTERN,
	LINK_VISIBLE,
	LINK_WEAK,
	LINK_COMMON,
};

struct ptx_func {
	bool entry;              /* .entry, otherwise .func */
	bool defined;            /* has a body (not just a prototype) */
	uint32_t nret;           /* return parameters */
	uint32_t ret;            /* name token of the first one */
	struct ptx_param *params;
	uint32_t nparams;
	uint32_t param_bytes;    /* end of the last parameter */
	bool params_known;       /* every parameter's size is known */
	uint32_t body;           /* token of the body's '{' */
	struct ptx_stmt *stmts;  /* body statements, the final '}' included */
	uint32_t nstmts;
};

enum item_kind {
	IT_VERSION,
	IT_TARGET,
	IT_ADDRESS_SIZE,
	IT_FILE,
	IT_SECTION,
	IT_PRAGMA,
	IT_ALIAS,
	IT_VAR,
	IT_FUNC,
};

struct ptx_item {
	uint32_t first;  /* token range [first, last) */
	uint32_t last;
	uint32_t name;   /* IT_VAR, IT_FUNC: name token */
	uint8_t kind;    /* enum item_kind */
	uint8_t linkage; /* enum ptx_linkage */
	struct ptx_func *func; /* IT_FUNC */
};

struct ptx_module {
	const char *name;       /* for messages: "application", "module 2" ... */
	const char *text;       /* not owned */
	size_t len;
	struct tok *toks;       /* ends with a TOK_EOF token */
	uint32_t ntoks;
	struct ptx_item *items;
	uint32_t nitems;
	unsigned version_major;
	unsigned version_minor;
	uint32_t version_tok;   /* the "8.0" token of .version */
	unsigned sm;            /* 90 for sm_90 and sm_90a; 0 if none named */
	unsigned address_size;  /* 64 unless .address_size says otherwise */
	uint32_t header_end;    /* byte offset after .version/.target/.address_size */
};

/* Tokenize @text; *toks is malloc'ed and ends with TOK_EOF. */
int ptx_lex(const char *text, size_t len, struct tok **toks, uint32_t *ntoks);
/*
 * Drop the NULs that end @text (images for cuModuleLoadData carry one)
 * from *@len. A NUL before the end is EGPU_EFORMAT naming its line: the
 * driver would stop reading there and silently drop the rest.
 */
int ptx_text_len(const char *text, size_t *len);

/*
 * Parse a whole module. @name labels messages; @text must outlive the
 * module. Errors: EGPU_EFORMAT "NAME: PTX line L col C: expected X, found Y".
 */
int ptx_parse(const char *name, const char *text, size_t len,
	      struct ptx_module **out);
void ptx_module_free(struct ptx_module *m);

/* Token helpers. */
static inline const char *tok_text(const struct ptx_module *m, uint32_t t)
{
	return m->text + m->toks[t].off;
}

static inline uint32_t tok_end(const struct ptx_module *m, uint32_t t)
{
	return m->toks[t].off + m->toks[t].len;
}

/* Whether token @t is exactly @s. */
bool tok_is(const struct ptx_module *m, uint32_t t, const char *s);
/* Whether tokens @a and @b have the same text. */
bool tok_same(const struct ptx_module *m, uint32_t a, uint32_t b);

#endif
