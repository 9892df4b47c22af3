/* SPDX-License-Identifier: MIT */
/*
 * .entry and .func: return and input parameters (with their ABI layout),
 * performance attributes, and the body as a flat list of statements with
 * their scope depth.
 */
#include <stdlib.h>
#include <string.h>

#include "ptx/parse.h"

/* Size in bytes of a parameter type directive, 0 if not a type. */
static unsigned type_size(const struct parser *p)
{
	static const struct {
		const char *name;
		unsigned size;
	} types[] = {
		{ ".b8", 1 },	  { ".u8", 1 },		{ ".s8", 1 },
		{ ".pred", 1 },	  { ".b16", 2 },	{ ".u16", 2 },
		{ ".s16", 2 },	  { ".f16", 2 },	{ ".bf16", 2 },
		{ ".b32", 4 },	  { ".u32", 4 },	{ ".s32", 4 },
		{ ".f32", 4 },	  { ".f16x2", 4 },	{ ".bf16x2", 4 },
		{ ".b64", 8 },	  { ".u64", 8 },	{ ".s64", 8 },
		{ ".f64", 8 },	  { ".b128", 16 },	{ ".texref", 8 },
		{ ".samplerref", 8 }, { ".surfref", 8 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(types); i++)
		if (at(p, types[i].name))
			return types[i].size;
	return 0;
}

struct param_type {
	uint64_t elem;  /* element size, 0 if unknown */
	uint64_t vec;   /* .v2/.v4 */
	uint64_t count; /* array length */
	uint64_t align; /* explicit .align of the parameter itself */
	bool ptr;       /* after .ptr, .align is the pointee's */
};

/* One modifier, the name or the array size of a parameter. */
static int param_part(struct parser *p, struct ptx_param *prm,
		      struct param_type *ty)
{
	uint64_t v;
	int err;

	if (accept(p, ".align")) {
		err = expect_int(p, &v, "an alignment");
		if (!err && !ty->ptr)
			ty->align = v;
		return err;
	}
	if (accept(p, ".ptr")) {
		ty->ptr = true;
	} else if (accept(p, ".v2")) {
		ty->vec = 2;
	} else if (accept(p, ".v4")) {
		ty->vec = 4;
	} else if (at_kind(p, TOK_DIR)) {
		if (type_size(p))
			ty->elem = type_size(p);
		p->pos++;
	} else if (at_kind(p, TOK_IDENT) && !prm->name) {
		prm->name = p->pos++;
	} else if (accept(p, "[")) {
		if (accept(p, "]")) {
			ty->count = 0;
			return 0;
		}
		err = expect_int(p, &ty->count, "an array length");
		return err ? err : expect(p, "]");
	} else {
		return expected(p, "a parameter type, name, ',' or ')'");
	}
	return 0;
}

static int parse_param(struct parser *p, struct ptx_param *prm)
{
	struct param_type ty = { .vec = 1, .count = 1 };
	uint64_t size;
	int err = 0;

	if (!accept(p, ".param") && !accept(p, ".reg"))
		return expected(p, ".param");
	while (!err && !at(p, ",") && !at(p, ")"))
		err = param_part(p, prm, &ty);
	if (err)
		return err;
	if (!prm->name)
		return expected(p, "a parameter name");
	size = ty.elem * ty.vec * ty.count;
	prm->size = size < (1u << 24) ? (uint32_t)size : 0;
	prm->align = (uint32_t)(ty.align && ty.align < (1u << 16) ?
				ty.align : ty.elem * ty.vec);
	if (!ty.elem)
		prm->size = 0;
	return 0;
}

static int add_param(struct ptx_func *f, const struct ptx_param *prm,
		     size_t *cap)
{
	if (!ARRAY_GROW(f->params, *cap, f->nparams, 8))
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	f->params[f->nparams++] = *prm;
	return 0;
}

/* Offsets as the kernel ABI places parameters: each at its alignment. */
static void layout_params(struct ptx_func *f)
{
	uint32_t off = 0, i;

	f->params_known = true;
	for (i = 0; i < f->nparams; i++) {
		struct ptx_param *prm = &f->params[i];
		uint32_t a = prm->align ? prm->align : 1;

		if (!prm->size)
			f->params_known = false;
		off = (off + a - 1) / a * a;
		prm->offset = off;
		off += prm->size;
	}
	f->param_bytes = off;
}

/* ( [param {, param}] ): input parameters are kept, return ones counted. */
static int parse_params(struct parser *p, struct ptx_func *f, bool ret)
{
	size_t cap = 0;
	int err;

	err = expect(p, "(");
	if (!err && !accept(p, ")")) {
		do {
			struct ptx_param prm = { 0 };

			err = parse_param(p, &prm);
			if (!err && ret && !f->nret++)
				f->ret = prm.name;
			else if (!err)
				err = add_param(f, &prm, &cap);
		} while (!err && accept(p, ","));
		if (!err)
			err = expect(p, ")");
	}
	if (!err && !ret)
		layout_params(f);
	return err;
}

static int skip_parens(struct parser *p)
{
	uint32_t open = p->pos;
	int depth = 0;

	do {
		if (at_kind(p, TOK_EOF)) {
			p->pos = open;
			return expected(p, "'(' closed by ')'");
		}
		if (at(p, "("))
			depth++;
		else if (at(p, ")"))
			depth--;
		p->pos++;
	} while (depth > 0);
	return 0;
}

/* .maxntid 256, 1, 1  .minnctapersm 2  .noreturn  .pragma "x";  ... */
static int parse_attributes(struct parser *p)
{
	int err = 0;

	while (!err && at_kind(p, TOK_DIR)) {
		bool pragma = at(p, ".pragma");

		p->pos++;
		while (!err) {
			if (at_kind(p, TOK_INT) || at_kind(p, TOK_STRING) ||
			    at(p, ","))
				p->pos++;
			else if (at(p, "("))
				err = skip_parens(p);
			else
				break;
		}
		if (!err && pragma)
			err = expect(p, ";");
	}
	return err;
}

int parse_loc(struct parser *p)
{
	static const char *const what[] = {
		"a file number", "a line number", "a column number",
	};
	uint64_t v;
	int err = 0, i;

	for (i = 0; !err && i < 3; i++)
		err = expect_int(p, &v, what[i]);
	while (!err && accept(p, ",")) {
		if (accept(p, "function_name")) {
			if (!at_kind(p, TOK_IDENT))
				return expected(p, "a label after function_name");
			p->pos++;
			if (accept(p, "+"))
				err = expect_int(p, &v, "an offset");
		} else if (accept(p, "inlined_at")) {
			for (i = 0; !err && i < 3; i++)
				err = expect_int(p, &v, what[i]);
		} else {
			return expected(p, "function_name or inlined_at");
		}
	}
	return err;
}

static bool at_decl(const struct parser *p)
{
	static const char *const decls[] = {
		".reg", ".local", ".shared", ".param", ".const", ".global",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(decls); i++)
		if (at(p, decls[i]))
			return true;
	return false;
}

/* A label, a directive or a (guarded) instruction. */
static int parse_stmt(struct parser *p, struct ptx_stmt *st)
{
	if (at_kind(p, TOK_IDENT) && tok_is(p->m, p->pos + 1, ":")) {
		st->kind = ST_LABEL;
		p->pos += 2;
		return 0;
	}
	if (at_kind(p, TOK_DIR)) {
		st->op = p->pos;
		st->kind = at_decl(p) ? ST_DECL : ST_DIR;
		if (accept(p, ".loc"))
			return parse_loc(p);
		return skip_statement(p, "';' ending the directive");
	}
	if (accept(p, "@")) {
		st->pred_neg = accept(p, "!");
		if (!at_kind(p, TOK_IDENT))
			return expected(p, "a predicate register after '@'");
		st->pred = (int32_t)p->pos++;
	}
	if (!at_kind(p, TOK_IDENT))
		return expected(p, "an instruction, label, directive, '{' or '}'");
	st->kind = ST_INSN;
	st->op = p->pos++;
	return skip_statement(p, "';' ending the instruction");
}

static int add_stmt(struct ptx_func *f, const struct ptx_stmt *st,
		    size_t *cap)
{
	if (!ARRAY_GROW(f->stmts, *cap, f->nstmts, 64))
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	f->stmts[f->nstmts++] = *st;
	return 0;
}

/* { statements } with nested scopes; the last '}' is a statement too. */
static int parse_body(struct parser *p, struct ptx_func *f)
{
	size_t cap = 0;
	uint16_t depth = 1;
	int err = 0;

	f->body = p->pos++;
	while (!err && depth) {
		struct ptx_stmt st = {
			.first = p->pos, .pred = -1, .depth = depth,
		};

		if (at_kind(p, TOK_EOF)) {
			p->pos = f->body;
			return expected(p, "a function body closed by '}'");
		}
		if (accept(p, "{")) {
			st.kind = ST_OPEN;
			if (depth == UINT16_MAX)
				return expected(p, "fewer nested scopes");
			depth++;
		} else if (accept(p, "}")) {
			st.kind = ST_CLOSE;
			depth--;
		} else {
			err = parse_stmt(p, &st);
		}
		st.last = p->pos;
		if (!err)
			err = add_stmt(f, &st, &cap);
	}
	return err;
}

int parse_func(struct parser *p, struct ptx_item *it)
{
	struct ptx_func *f = calloc(1, sizeof(*f));
	int err = 0;

	if (!f)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	it->func = f;
	f->entry = at(p, ".entry");
	p->pos++;
	if (!f->entry && at(p, "("))
		err = parse_params(p, f, true);
	if (err)
		return err;
	if (!at_kind(p, TOK_IDENT))
		return expected(p, "a function name");
	it->name = p->pos++;
	if (at(p, "("))
		err = parse_params(p, f, false);
	else
		layout_params(f);
	if (!err)
		err = parse_attributes(p);
	if (err || accept(p, ";"))
		return err;
	if (!at(p, "{"))
		return expected(p, "'{' or ';' after the function header");
	f->defined = true;
	return parse_body(p, f);
}
