/* SPDX-License-Identifier: MIT */
/*
 * Loads of the ctx in copied bodies become constants. Everything in a
 * site's struct egpu_kernel_ctx is known when the kernel is instrumented
 * (kernel id, parameter size, attach point, site; the parameters' address
 * is cvta.param of the first one), and a probe only reads it. Where a body
 * reads its ctx only by loads at constant offsets from the register its
 * ld.param set, each load becomes a move of the value and the site builds
 * no ctx at all: no shared-memory stores, nothing for ptxas to keep.
 */
#include <stdlib.h>

#include "egpu/ctx.h"
#include "ptx/inline.h"

#define CTX_SIZE sizeof(struct egpu_kernel_ctx)
#define CTX_PARAMS offsetof(struct egpu_kernel_ctx, params)

/* ld.TYPE %dst, [%ctx(+OFF)?] with OFF and the type's size. */
struct ctx_load {
	uint32_t off;
	uint32_t size;
	uint32_t width; /* bytes of %dst */
	bool sign;
};

/* Whether @st is `ld.TYPE %dst, [CTX(+OFF)?];` reading the ctx whole fields. */
static bool ctx_load(const struct scan *sc, const struct ptx_stmt *st,
		     uint32_t ctx, struct ctx_load *ld)
{
	const struct ptx_module *m = sc->fn->m;
	uint32_t t = st->op, e = st->op + 6;
	const struct own_name *dst;

	if (st->kind != ST_INSN || !tok_is(m, t, "ld") ||
	    !(ld->size = type_bytes(m, t + 1)) ||
	    !(dst = own_name_of(sc, t + 2)) || dst->bytes < ld->size ||
	    !tok_is(m, t + 3, ",") || !tok_is(m, t + 4, "[") ||
	    !tok_same(m, t + 5, ctx))
		return false;
	ld->width = dst->bytes;
	ld->sign = tok_text(m, t + 1)[1] == 's';
	/* Only .u and .s define what fills a wider register. */
	if (tok_text(m, t + 1)[1] == 'b' && ld->width != ld->size)
		return false;
	ld->off = 0;
	if (tok_is(m, e, "+") && m->toks[e + 1].kind == TOK_INT) {
		ld->off = (uint32_t)strtoul(tok_text(m, e + 1), NULL, 0);
		e += 2;
	}
	if (!tok_is(m, e, "]") || !tok_is(m, e + 1, ";") || e + 2 != st->last ||
	    ld->off >= CTX_SIZE || ld->size > CTX_SIZE - ld->off)
		return false;
	/* The parameters' address is known only as a whole. */
	return ld->off >= CTX_PARAMS + 8 || ld->off + ld->size <= CTX_PARAMS ||
	       (ld->off == CTX_PARAMS && ld->size == 8);
}

/* The statement loading ctx from its parameter, if there is one. */
static bool ctx_register(const struct inline_func *fn, uint32_t *reg,
			 uint32_t *at)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < fn->f->nstmts; i++) {
		if (fn->stmt[i] == S_ARG0) {
			*at = i;
			*reg = fn->f->stmts[i].op + 3;
			n++;
		}
	}
	return n == 1;
}

/* Whether every use of @reg but its load and declarations is a ctx load. */
static bool only_loads(const struct scan *sc, uint32_t reg, uint32_t def,
		       bool mark)
{
	struct inline_func *fn = sc->fn;

	for (uint32_t i = 0; i < fn->f->nstmts; i++) {
		const struct ptx_stmt *st = &fn->f->stmts[i];
		struct ctx_load ld;
		bool used = false;

		for (uint32_t t = st->first; t < st->last; t++)
			used |= tok_same(fn->m, t, reg);
		if (!used || i == def || st->kind == ST_DECL)
			continue;
		if (!ctx_load(sc, st, reg, &ld))
			return false;
		if (mark) {
			fn->stmt[i] = S_CTX;
			fn->width[i] = (uint8_t)ld.width;
		}
	}
	return true;
}

void ctx_scan(struct scan *sc)
{
	uint32_t reg, def;

	if (!ctx_register(sc->fn, &reg, &def) || !only_loads(sc, reg, def, false))
		return;
	only_loads(sc, reg, def, true);
	sc->fn->folds_ctx = true;
}

static uint64_t ctx_value(const uint8_t *image, const struct ctx_load *ld)
{
	uint64_t v = 0;
	uint32_t bits = ld->size * 8;

	for (uint32_t i = ld->size; i-- > 0;)
		v = v << 8 | image[ld->off + i];
	if (ld->sign && bits < 64 && (v >> (bits - 1) & 1))
		v |= ~0ull << bits;
	return ld->width < 8 ? v & ((1ull << ld->width * 8) - 1) : v;
}

static void put_guard(struct strbuf *sb, const struct inline_func *fn,
		      const struct ptx_stmt *st, const struct inline_site *at)
{
	if (st->pred < 0)
		return;
	sb_adds(sb, st->pred_neg ? "@!" : "@");
	put_tok(sb, fn, (uint32_t)st->pred, at);
	sb_adds(sb, " ");
}

void put_ctx_load(struct strbuf *sb, const struct inline_func *fn, uint32_t i,
		  const struct inline_site *at)
{
	const struct ptx_stmt *st = &fn->f->stmts[i];
	const struct ptx_module *m = fn->m;
	uint32_t t = st->op;
	struct ctx_load ld = {
		.size = type_bytes(m, t + 1), .width = fn->width[i],
		.sign = tok_text(m, t + 1)[1] == 's',
	};

	if (!at->image) {
		put_toks(sb, fn, st->first, st->last, at);
		return;
	}
	if (tok_is(m, t + 6, "+"))
		ld.off = (uint32_t)strtoul(tok_text(m, t + 7), NULL, 0);
	put_guard(sb, fn, st, at);
	if (ld.off == CTX_PARAMS && at->params) {
		sb_adds(sb, "mov.u64 \t");
		put_tok(sb, fn, t + 2, at);
		sb_printf(sb, ", %.*s;\n\t", at->params_len, at->params);
		put_guard(sb, fn, st, at);
		sb_adds(sb, "cvta.param.u64 \t");
		put_tok(sb, fn, t + 2, at);
		sb_adds(sb, ", ");
		put_tok(sb, fn, t + 2, at);
		sb_adds(sb, ";");
		return;
	}
	sb_printf(sb, "mov.b%u \t", ld.width * 8);
	put_tok(sb, fn, t + 2, at);
	sb_printf(sb, ", %llu;", (unsigned long long)ctx_value(at->image, &ld));
}
