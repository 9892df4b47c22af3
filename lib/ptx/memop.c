/* SPDX-License-Identifier: MIT */
/*
 * Which instructions access memory, and how: ld, ldu, st, atom, red,
 * cp.async and cp.async.bulk in every state space and vector width, with
 * the kind, the state space, the bytes and the address operand
 * ([reg], [reg+imm], [sym], [sym+imm], [imm]) read from their tokens.
 * Instructions that access memory in other ways (ldmatrix, wgmma, tensor
 * copies, call-sequence .param ...) are recognised as skipped, with the
 * reason (docs/ptx.md, Memory-access probes). And the code that forms
 * an access's address in a register, for the probes and the checks.
 */
#include <stdlib.h>
#include <string.h>

#include "egpu/ctx.h"
#include "ptx/inline.h"

/* Opcodes that access memory but get no probe: no plain address. */
static const char *const skipped_ops[] = {
	"ldmatrix", "stmatrix", "wgmma", "mbarrier", "tex", "tld4",
	"suld", "sust", "sured", "multimem", "tcgen05",
};

struct mods {
	uint32_t spaces[2]; /* state-space modifier tokens, in order */
	uint32_t nspaces;
	uint32_t type;      /* last type modifier, 0 if none */
	uint32_t vec;       /* 1, 2, 4, 8 */
	bool async, bulk, tensor, reduce, prefetch, cluster[2];
	uint32_t end;       /* first operand token */
};

static int space_of(const struct ptx_module *m, uint32_t t)
{
	static const char *const names[] = {
		[EGPU_SPACE_GLOBAL] = ".global", [EGPU_SPACE_SHARED] = ".shared",
		[EGPU_SPACE_LOCAL] = ".local",   [EGPU_SPACE_CONST] = ".const",
		[EGPU_SPACE_PARAM] = ".param",
	};

	for (int i = EGPU_SPACE_GLOBAL; i <= EGPU_SPACE_PARAM; i++)
		if (tok_is(m, t, names[i]))
			return i;
	return -1;
}

/* Bytes of a data type modifier (.b8 ... .b128, .f16x2), 0 if not one. */
static uint32_t data_bytes(const struct ptx_module *m, uint32_t t)
{
	static const struct { const char *name; uint32_t bytes; } types[] = {
		{ ".f16", 2 },  { ".bf16", 2 },  { ".f32", 4 },
		{ ".f64", 8 },  { ".f16x2", 4 }, { ".bf16x2", 4 },
		{ ".b128", 16 },
	};
	uint32_t b = type_bytes(m, t);

	for (size_t i = 0; !b && i < ARRAY_SIZE(types); i++)
		if (tok_is(m, t, types[i].name))
			b = types[i].bytes;
	return b;
}

static void read_mod(const struct ptx_module *m, uint32_t t, uint32_t qual,
		     struct mods *md)
{
	const char *s = tok_text(m, t);
	uint32_t n = m->toks[t].len;

	if (space_of(m, t) >= 0 && md->nspaces < 2) {
		md->cluster[md->nspaces] = qual && tok_is(m, qual, "cluster");
		md->spaces[md->nspaces++] = t;
	} else if (data_bytes(m, t)) {
		md->type = t;
	} else if (n == 3 && s[1] == 'v' && strchr("248", s[2])) {
		md->vec = (uint32_t)(s[2] - '0');
	}
	md->async |= tok_is(m, t, ".async");
	md->bulk |= tok_is(m, t, ".bulk");
	md->tensor |= tok_is(m, t, ".tensor");
	md->reduce |= tok_is(m, t, ".reduce");
	md->prefetch |= tok_is(m, t, ".prefetch");
}

int reg_bits(const struct ptx_module *m, const struct ptx_func *f, uint32_t t)
{
	for (uint32_t i = 0; i < f->nstmts; i++) {
		const struct ptx_stmt *st = &f->stmts[i];
		uint32_t u = st->op + 1, bits = 0;

		if (st->kind != ST_DECL || !tok_is(m, st->op, ".reg"))
			continue;
		for (; u < st->last && m->toks[u].kind == TOK_DIR; u++)
			bits = tok_is(m, u, ".pred") ? 1 : data_bytes(m, u) * 8;
		while (u < st->last && m->toks[u].kind == TOK_IDENT) {
			bool family = tok_is(m, u + 1, "<");

			if (reg_name_matches(m, u, family, t))
				return (int)bits;
			u += family ? 4 : 1;
			if (!tok_is(m, u, ","))
				break;
			u++;
		}
	}
	return -1;
}

/* .mod{::qual}* ... up to the first operand. */
static void read_mods(const struct ptx_module *m, const struct ptx_stmt *st,
		      struct mods *md)
{
	uint32_t t = st->op + 1;

	*md = (struct mods){ .vec = 1 };
	while (t < st->last && m->toks[t].kind == TOK_DIR) {
		uint32_t dir = t++, qual = 0;

		while (t + 2 < st->last && tok_is(m, t, ":") &&
		       tok_is(m, t + 1, ":")) {
			qual = qual ? qual : t + 2;
			t += 3;
		}
		read_mod(m, dir, qual, md);
	}
	md->end = t;
}

/* The @nth "[" operand of @st, 0 if there is none. */
static uint32_t bracket(const struct ptx_module *m, const struct ptx_stmt *st,
			uint32_t from, unsigned nth)
{
	for (uint32_t t = from; t < st->last; t++)
		if (tok_is(m, t, "[") && !nth--)
			return t;
	return 0;
}

/* An integer token's value; false if it is not one. */
static bool int_value(const struct ptx_module *m, uint32_t t, int64_t *v)
{
	if (m->toks[t].kind != TOK_INT)
		return false;
	*v = (int64_t)strtoull(tok_text(m, t), NULL, 0);
	return true;
}

/* [base], [base+imm], [base+-imm], [base-imm], [imm] from "[" at @t. */
static const char *read_address(const struct ptx_module *m,
				const struct ptx_func *f, uint32_t t,
				struct mem_op *op)
{
	int64_t v;
	int bits;

	op->base = t + 1;
	op->off = 0;
	t += 2;
	if (tok_is(m, t, "+") || tok_is(m, t, "-")) {
		bool neg = tok_is(m, t, "-");

		if (!neg && tok_is(m, t + 1, "-")) {
			neg = true;
			t++;
		}
		if (!int_value(m, t + 1, &v))
			return "an address of an unknown form";
		op->off = neg ? -v : v;
		t += 2;
	}
	if (!tok_is(m, t, "]"))
		return "an address of an unknown form";
	if (int_value(m, op->base, &v)) {
		op->base_is = BASE_IMM;
		op->off += v;
		return NULL;
	}
	if (m->toks[op->base].kind != TOK_IDENT)
		return "an address of an unknown form";
	bits = reg_bits(m, f, op->base);
	if (bits < 0) {
		op->base_is = BASE_SYM;
		return NULL;
	}
	if (bits != 32 && bits != 64)
		return "an address register that is not 32 or 64 bits";
	op->base_is = bits == 32 ? BASE_REG32 : BASE_REG64;
	return NULL;
}

static bool is_kernel_param(const struct ptx_module *m,
			    const struct ptx_func *f, uint32_t t)
{
	for (uint32_t i = 0; f->entry && i < f->nparams; i++)
		if (tok_same(m, t, f->params[i].name))
			return true;
	return false;
}

/*
 * A store's source operand, after "[address]," at @addr: one register or
 * immediate (a negative one is two tokens) or a { } vector, up to the ","
 * of a trailing operand (a cache policy) or the ";".
 */
static void store_value(const struct ptx_module *m, const struct ptx_stmt *st,
			uint32_t addr, const struct mods *md,
			struct mem_op *op)
{
	uint32_t t = addr, end;

	while (t < st->last && !tok_is(m, t, "]"))
		t++;
	if (md->async || md->vec > 4 || !md->type || !tok_is(m, t + 1, ","))
		return;
	end = t += 2;
	if (tok_is(m, t, "{")) {
		while (end < st->last && !tok_is(m, end, "}"))
			end++;
		end++;
	} else {
		while (end < st->last && !tok_is(m, end, ",") &&
		       !tok_is(m, end, ";"))
			end++;
	}
	if (end <= t || end >= st->last)
		return;
	op->value = t;
	op->value_end = end;
	op->type = md->type;
	op->vec = (uint8_t)md->vec;
}

/* ld ldu st atom red: kind, space, size; the address is the first [ ]. */
static const char *access_op(const struct ptx_module *m,
			     const struct ptx_func *f,
			     const struct ptx_stmt *st, const struct mods *md,
			     struct mem_op *op)
{
	uint32_t addr = bracket(m, st, md->end, 0);
	const char *why;

	op->kind = tok_is(m, st->op, "st") ? EGPU_MEM_STORE :
		   tok_is(m, st->op, "atom") || tok_is(m, st->op, "red") ?
							EGPU_MEM_ATOMIC :
							EGPU_MEM_LOAD;
	op->space = md->nspaces ? (uint8_t)space_of(m, md->spaces[0]) :
				  EGPU_SPACE_GENERIC;
	op->cluster = md->cluster[0];
	op->size = md->vec * (md->type ? data_bytes(m, md->type) : 0);
	if (!addr || !op->size)
		return "an instruction of an unknown form";
	why = read_address(m, f, addr, op);
	if (why)
		return why;
	if (op->kind == EGPU_MEM_STORE)
		store_value(m, st, addr, md, op);
	/* Call sequences and .func parameters are the ABI's, not memory
	 * an address can reach (taking one would move them to .local). */
	if (op->space == EGPU_SPACE_PARAM &&
	    (op->base_is == BASE_SYM ? !is_kernel_param(m, f, op->base) :
				       !f->entry))
		return "a .param access outside kernel parameters";
	/* cvta.param on kernel parameters needs sm_70. */
	if (op->space == EGPU_SPACE_PARAM && m->sm && m->sm < 70)
		return "a kernel parameter access below sm_70";
	return NULL;
}

/* cp.async [dst], [src], size...; cp.async.bulk [dst], [src], size, ... */
static const char *async_copy(const struct ptx_module *m,
			      const struct ptx_func *f,
			      const struct ptx_stmt *st, const struct mods *md,
			      struct mem_op *op)
{
	uint32_t src = bracket(m, st, md->end, 1), t;
	int64_t size;
	const char *why;

	if (md->tensor || md->reduce || md->prefetch)
		return "a tensor, reduction or prefetch copy (no plain source address)";
	if (!src || md->nspaces != 2)
		return "an instruction of an unknown form";
	op->kind = EGPU_MEM_ASYNC;
	op->space = (uint8_t)space_of(m, md->spaces[1]);
	op->cluster = md->cluster[1];
	why = read_address(m, f, src, op);
	if (why)
		return why;
	/* The size follows the source operand: [ base (+ imm) ] , size */
	for (t = src; t < st->last && !tok_is(m, t, "]"); t++)
		;
	if (!tok_is(m, t + 1, ","))
		return "an instruction of an unknown form";
	t += 2;
	op->size_reg = -1;
	if (int_value(m, t, &size) && size > 0 && size <= UINT32_MAX)
		op->size = (uint32_t)size;
	else if (md->bulk && reg_bits(m, f, t) == 32)
		op->size_reg = (int32_t)t;
	else
		return "a copy size of an unknown form";
	return NULL;
}

static bool op_in(const struct ptx_module *m, uint32_t t,
		  const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (tok_is(m, t, names[i]))
			return true;
	return false;
}

int mem_op_read(const struct ptx_module *m, const struct ptx_func *f,
		const struct ptx_stmt *st, struct mem_op *op, const char **why)
{
	static const char *const access[] = { "ld", "ldu", "st", "atom", "red" };
	struct mods md;

	*why = NULL;
	memset(op, 0, sizeof(*op));
	op->size_reg = -1;
	if (st->kind != ST_INSN)
		return MEM_NONE;
	if (op_in(m, st->op, skipped_ops, ARRAY_SIZE(skipped_ops))) {
		*why = "an instruction without a plain address (ldmatrix, wgmma, mbarrier, texture ...)";
		return MEM_SKIP;
	}
	read_mods(m, st, &md);
	if (op_in(m, st->op, access, ARRAY_SIZE(access)))
		*why = access_op(m, f, st, &md, op);
	else if (tok_is(m, st->op, "cp") && md.async &&
		 bracket(m, st, md.end, 1))
		*why = async_copy(m, f, st, &md, op);
	else
		return MEM_NONE;
	if (!*why && op->space == EGPU_SPACE_GENERIC && op->base_is == BASE_SYM)
		*why = "a generic access to a named variable";
	if (!*why && op->space == EGPU_SPACE_GENERIC && op->base_is == BASE_REG32)
		*why = "a 32-bit generic address";
	return *why ? MEM_SKIP : MEM_PROBE;
}

int mem_value_bits(const struct ptx_module *m, const struct ptx_func *f,
		   const struct mem_op *op)
{
	const char *t = tok_text(m, op->value);

	if (m->toks[op->value].kind == TOK_INT)
		return 64;
	return t[0] == '%' ? reg_bits(m, f, op->value) : 0;
}

bool mem_value_in_reg(const struct ptx_module *m, const struct ptx_func *f,
		      const struct mem_op *op)
{
	int bits;

	if (!op->value || op->vec != 1 || !op->size || op->size > 8 ||
	    op->value_end != op->value + 1)
		return false;
	bits = mem_value_bits(m, f, op);
	return (bits == 16 || bits == 32 || bits == 64) &&
	       (uint32_t)bits >= op->size * 8;
}

static const char *cvta_space(const struct mem_op *op)
{
	static const char *const names[] = {
		[EGPU_SPACE_GLOBAL] = "global", [EGPU_SPACE_SHARED] = "shared",
		[EGPU_SPACE_LOCAL] = "local",   [EGPU_SPACE_CONST] = "const",
		[EGPU_SPACE_PARAM] = "param",
	};

	if (op->space == EGPU_SPACE_SHARED && op->cluster)
		return "shared::cluster";
	return op->space == EGPU_SPACE_GENERIC ? NULL : names[op->space];
}

void mem_op_address(struct strbuf *sb, const struct ptx_module *m,
		    const struct mem_op *op, const char *reg)
{
	const char *space = cvta_space(op);
	int n = (int)m->toks[op->base].len;
	const char *base = tok_text(m, op->base);

	switch (op->base_is) {
	case BASE_REG64:
		sb_printf(sb, "\tmov.b64 \t%s, %.*s;\n", reg, n, base);
		break;
	case BASE_REG32:
		sb_printf(sb, "\tcvt.u64.u32 \t%s, %.*s;\n", reg, n, base);
		break;
	case BASE_SYM:
		sb_printf(sb, "\tmov.u64 \t%s, %.*s;\n", reg, n, base);
		break;
	default:
		sb_printf(sb, "\tmov.u64 \t%s, %llu;\n", reg,
			  (unsigned long long)op->off);
	}
	if (op->off && op->base_is != BASE_IMM)
		sb_printf(sb, "\tadd.s64 \t%s, %s, %lld;\n", reg, reg,
			  (long long)op->off);
	if (space)
		sb_printf(sb, "\tcvta.%s.u64 \t%s, %s;\n", space, reg, reg);
}
