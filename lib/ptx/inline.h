/* SPDX-License-Identifier: MIT */
/* A probe body prepared for copying: shared by inline.c and inline_ctx.c. */
#ifndef EGPU_PTX_INLINE_H
#define EGPU_PTX_INLINE_H

#include "ptx/instr.h"

/* What a copy does with each statement of the body. */
enum stmt_act {
	S_COPY,
	S_DROP,
	S_ARG0, /* ld.param of ctx: a move from the site's register */
	S_ARG1, /* ld.param of ctx_len */
	S_RET,  /* ret: a branch to the end of the copy */
	S_CTX,  /* ld from ctx at a constant offset: a constant, or copied */
	S_CTX_PTR, /* ctx plus a constant for S_CTX loads: copied, or dropped */
	S_RETVAL, /* st.param.b64 [RET], X: a move into the site's register */
};

/* What a copy writes for each token of a copied statement. */
enum tok_act { T_KEEP, T_OWN, T_DROP, T_DEPOT };

struct inline_func {
	const struct ptx_module *m;
	const struct ptx_func *f;
	const struct renames *rn;
	uint8_t *stmt;       /* enum stmt_act per statement */
	const struct ctx_layout *layout;
	uint8_t *width;      /* S_CTX: bytes of the destination register */
	uint8_t *off;        /* S_CTX: offset of the load in the ctx */
	uint8_t *tok;        /* enum tok_act per token, from the body's '{' */
	bool has_local;      /* declares a .local variable (its stack) */
	uint32_t local;      /* its name token */
	uint32_t local_size; /* bytes */
	uint32_t local_align;
	bool folds_ctx;      /* every use of ctx is an S_CTX load */
	bool ret_whole;      /* every store of the result is S_RETVAL */
	uint64_t *tl;        /* thread-local words its body names, each once */
	size_t ntl;
};

/* A name the body declares: "%SP", a label, or a family "%rd<8>". */
struct own_name {
	uint32_t tok;
	bool family;
	uint8_t bytes; /* registers: width of an integer type, else 0 */
};

/* Analysis state of inline_prepare(). */
struct scan {
	struct inline_func *fn;
	struct own_name *names;
	size_t n;
	size_t cap;
	const char *why; /* set when the body cannot be copied */
};

/* inline_tok.c: */
/* Bytes of integer type token @t (.b8 .u16 .s64 ...), 0 if not one. */
uint32_t type_bytes(const struct ptx_module *m, uint32_t t);
/* The declaration of register or label token @t of the body, or NULL. */
const struct own_name *own_name_of(const struct scan *sc, uint32_t t);

/* Mark the loads of ctx that constants can replace (inline_ctx.c). */
void ctx_scan(struct scan *sc);
/* Load @i (S_CTX) as copy @at writes it. */
void put_ctx_load(struct strbuf *sb, const struct inline_func *fn, uint32_t i,
		  const struct inline_site *at);

/* Token @t, and the tokens [first, last) with the text between them
 * (inline_tok.c). */
void put_tok(struct strbuf *sb, const struct inline_func *fn, uint32_t t,
	     const struct inline_site *at);
void put_toks(struct strbuf *sb, const struct inline_func *fn, uint32_t first,
	      uint32_t last, const struct inline_site *at);

#endif
