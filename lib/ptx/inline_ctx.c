/* SPDX-License-Identifier: MIT */
/*
 * Loads of the ctx in copied bodies become constants. Everything in a
 * site's ctx is known when the kernel is instrumented or is one register
 * or symbol away (struct egpu_kernel_ctx: kernel id, parameter size,
 * attach point, site, and the parameters' address, cvta.param of the
 * first one; struct egpu_mem_ctx: all but the accessed address, a
 * register, the text's address, a symbol, a bulk copy's size, and a
 * store's value, the address of a .local copy or, in the tail only
 * read_value's lowering reads, the value in a register), and a
 * probe only reads it. Where a body reads its ctx only by loads at
 * constant offsets from the register its ld.param set, each load becomes
 * a move of the value and the site builds no ctx at all: no stores,
 * nothing for ptxas to keep.
 */
#include <stddef.h>
#include <stdlib.h>

#include "core/mem_ctx.h"
#include "core/memcheck_layout.h"
#include "egpu/ctx.h"
#include "ptx/inline.h"

const struct ctx_layout ctx_layout_kernel = {
	.size = sizeof(struct egpu_kernel_ctx), .ndyn = 1,
	.dyn = { { .off = offsetof(struct egpu_kernel_ctx, params), .size = 8 } },
};

/* With the tail only the GPU lowering of read_value reads (core/mem_ctx.h). */
const struct ctx_layout ctx_layout_mem = {
	.size = sizeof(struct mem_site_ctx), .ndyn = 6,
	.dyn = { { .off = offsetof(struct egpu_mem_ctx, addr), .size = 8 },
		 { .off = offsetof(struct egpu_mem_ctx, text), .size = 8 },
		 { .off = offsetof(struct egpu_mem_ctx, size), .size = 4 },
		 { .off = offsetof(struct egpu_mem_ctx, value), .size = 8 },
		 { .off = offsetof(struct mem_site_ctx, value_bits), .size = 8,
		   .low = true },
		 { .off = offsetof(struct mem_site_ctx, value_at), .size = 8 } },
};

/* egpu memcheck's (core/memcheck_layout.h). */
const struct ctx_layout ctx_layout_mc = {
	.size = sizeof(struct mc_site_ctx), .ndyn = 4,
	.dyn = { { .off = offsetof(struct mc_site_ctx, addr), .size = 8 },
		 { .off = offsetof(struct mc_site_ctx, site), .size = 4 },
		 { .off = offsetof(struct mc_site_ctx, size), .size = 4 },
		 { .off = offsetof(struct mc_site_ctx, bound), .size = 4 } },
};

/* ld.TYPE %dst, [%ctx(+OFF)?] with OFF and the type's size. */
struct ctx_load {
	uint32_t off;
	uint32_t size;
	uint32_t width; /* bytes of %dst */
	bool sign;
};

/*
 * The run-time field of @lay that bytes [@off, @off + @size) read whole
 * (or the low part of, where the field allows it), -1 if they touch none,
 * -2 if they read part of one.
 */
static int dyn_field(const struct ctx_layout *lay, uint32_t off, uint32_t size)
{
	for (uint32_t i = 0; i < lay->ndyn; i++) {
		uint32_t lo = lay->dyn[i].off, hi = lo + lay->dyn[i].size;

		if (off == lo && (size == lay->dyn[i].size ||
				  (size < lay->dyn[i].size && lay->dyn[i].low)))
			return (int)i;
		if (off < hi && off + size > lo)
			return -2;
	}
	return -1;
}

/*
 * Whether @st is `ld.TYPE %dst, [CTX(+OFF)?];` reading whole fields of
 * the ctx, CTX pointing @base bytes into it.
 */
static bool ctx_load(const struct scan *sc, const struct ptx_stmt *st,
		     uint32_t ctx, uint32_t base, struct ctx_load *ld)
{
	const struct ptx_module *m = sc->fn->m;
	const struct ctx_layout *lay = sc->fn->layout;
	uint32_t t = st->op, e = st->op + 6;
	const struct own_name *dst;
	int64_t off;
	int d;

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
	off = base;
	/* [PTR+N], or [PTR+-N] where PTR points past the field (LLVM) */
	if (tok_is(m, e, "+") && tok_is(m, e + 1, "-") &&
	    m->toks[e + 2].kind == TOK_INT) {
		off -= strtoll(tok_text(m, e + 2), NULL, 0);
		e += 3;
	} else if (tok_is(m, e, "+") && m->toks[e + 1].kind == TOK_INT) {
		off += strtoll(tok_text(m, e + 1), NULL, 0);
		e += 2;
	}
	if (!tok_is(m, e, "]") || !tok_is(m, e + 1, ";") || e + 2 != st->last ||
	    off < 0 || off >= lay->size || ld->size > lay->size - off)
		return false;
	ld->off = (uint32_t)off;
	/* Run-time fields are known only as a whole, or by a low part the
	 * width of its register (a cvt truncates). */
	d = dyn_field(lay, ld->off, ld->size);
	return d == -1 ||
	       (d >= 0 && (ld->size == lay->dyn[d].size || ld->width == ld->size));
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

/* A register pointing into the ctx: ctx itself or ctx plus a constant. */
struct ctx_ptr {
	uint32_t reg; /* its token */
	uint32_t off;
	uint32_t def; /* the statement setting it */
};

/* Pointers into the ctx a body may derive before its loads. */
#define MAX_CTX_PTRS 16

/*
 * `add.{s,u}64 %dst, PTR, IMM;` or `mov.{u,b}64 %dst, PTR;` (LLVM copies
 * r1 where the program keeps its ctx in another register): a pointer
 * @off + IMM into the ctx.
 */
static bool ctx_add(const struct scan *sc, const struct ptx_stmt *st,
		    const struct ctx_ptr *p, struct ctx_ptr *out)
{
	const struct ptx_module *m = sc->fn->m;
	uint32_t t = st->op;
	bool mov = tok_is(m, t, "mov");
	const struct own_name *dst;
	int64_t imm = 0;

	if (st->kind != ST_INSN || st->pred >= 0 ||
	    st->last != t + (mov ? 6 : 8) ||
	    !(mov || tok_is(m, t, "add")) ||
	    !(tok_is(m, t + 1, ".s64") || tok_is(m, t + 1, ".u64") ||
	      (mov && tok_is(m, t + 1, ".b64"))) ||
	    !(dst = own_name_of(sc, t + 2)) || dst->bytes != 8 ||
	    !tok_is(m, t + 3, ",") || !tok_same(m, t + 4, p->reg))
		return false;
	if (!mov && (!tok_is(m, t + 5, ",") || m->toks[t + 6].kind != TOK_INT))
		return false;
	if (!mov)
		imm = strtoll(tok_text(m, t + 6), NULL, 0);
	if (imm < 0 || imm >= (int64_t)sc->fn->layout->size)
		return false;
	*out = (struct ctx_ptr){ t + 2, p->off + (uint32_t)imm,
				 (uint32_t)(st - sc->fn->f->stmts) };
	return true;
}

/*
 * Whether every statement naming pointer @p (but the one setting it and
 * declarations) is a ctx load or derives another pointer; appends those.
 */
static bool ptr_uses(const struct scan *sc, const struct ctx_ptr *p,
		     struct ctx_ptr *ptrs, uint32_t *n, bool mark)
{
	struct inline_func *fn = sc->fn;

	for (uint32_t i = 0; i < fn->f->nstmts; i++) {
		const struct ptx_stmt *st = &fn->f->stmts[i];
		struct ctx_load ld;
		bool used = false;

		for (uint32_t t = st->first; t < st->last; t++)
			used |= tok_same(fn->m, t, p->reg);
		if (!used || i == p->def || st->kind == ST_DECL)
			continue;
		if (*n < MAX_CTX_PTRS && ctx_add(sc, st, p, &ptrs[*n])) {
			(*n)++;
			if (mark)
				fn->stmt[i] = S_CTX_PTR;
			continue;
		}
		if (!ctx_load(sc, st, p->reg, p->off, &ld))
			return false;
		if (mark) {
			fn->stmt[i] = S_CTX;
			fn->width[i] = (uint8_t)ld.width;
			fn->off[i] = (uint8_t)ld.off;
		}
	}
	return true;
}

/*
 * Whether the ctx register @reg, set by statement @def, and every pointer
 * derived from it serve only as addresses of ctx loads.
 */
static bool only_loads(const struct scan *sc, uint32_t reg, uint32_t def,
		       bool mark)
{
	struct ctx_ptr ptrs[MAX_CTX_PTRS] = { { reg, 0, def } };
	uint32_t n = 1;

	for (uint32_t k = 0; k < n; k++)
		if (!ptr_uses(sc, &ptrs[k], ptrs, &n, mark))
			return false;
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

bool inline_reads_ctx(const struct inline_func *fn, uint32_t off,
		      uint32_t size)
{
	for (uint32_t i = 0; i < fn->f->nstmts; i++) {
		uint32_t lo = fn->off[i];

		if (fn->stmt[i] == S_CTX &&
		    lo < off + size &&
		    off < lo + type_bytes(fn->m, fn->f->stmts[i].op + 1))
			return true;
	}
	return false;
}

/* %dst = run-time field @d, as load @ld reads it. */
static void put_dyn(struct strbuf *sb, const struct inline_func *fn,
		    const struct ptx_stmt *st, const struct ctx_load *ld,
		    const struct ctx_dyn *d, const struct inline_site *at)
{
	uint32_t dst = st->op + 2;

	if (d->cvta) {
		sb_adds(sb, "mov.u64 \t");
		put_tok(sb, fn, dst, at);
		sb_printf(sb, ", %.*s;\n\t", d->len, d->name);
		put_guard(sb, fn, st, at);
		sb_printf(sb, "cvta.%s.u64 \t", d->cvta);
		put_tok(sb, fn, dst, at);
		sb_adds(sb, ", ");
		put_tok(sb, fn, dst, at);
		sb_adds(sb, ";");
		return;
	}
	/* The whole field: only a wider %dst needs a cvt; a low part, one of
	 * its width (ctx_load), a truncating one. */
	if (ld->size * 8 < d->bits)
		sb_printf(sb, "cvt.u%u.u%u \t", ld->size * 8, d->bits);
	else if (ld->width * 8 > d->bits)
		sb_printf(sb, "cvt.%c64.%c%u \t", ld->sign ? 's' : 'u',
			  ld->sign ? 's' : 'u', d->bits);
	else
		sb_printf(sb, "mov.b%u \t", d->bits);
	put_tok(sb, fn, dst, at);
	sb_printf(sb, ", %.*s;", d->len, d->name);
}

void put_ctx_load(struct strbuf *sb, const struct inline_func *fn, uint32_t i,
		  const struct inline_site *at)
{
	const struct ptx_stmt *st = &fn->f->stmts[i];
	const struct ptx_module *m = fn->m;
	uint32_t t = st->op;
	struct ctx_load ld = {
		.size = type_bytes(m, t + 1), .width = fn->width[i],
		.sign = tok_text(m, t + 1)[1] == 's', .off = fn->off[i],
	};
	int d;

	if (!at->image) {
		put_toks(sb, fn, st->first, st->last, at);
		return;
	}
	put_guard(sb, fn, st, at);
	d = dyn_field(at->layout, ld.off, ld.size);
	if (d >= 0 && at->dyn[d].name) {
		put_dyn(sb, fn, st, &ld, &at->dyn[d], at);
		return;
	}
	sb_printf(sb, "mov.b%u \t", ld.width * 8);
	put_tok(sb, fn, t + 2, at);
	sb_printf(sb, ", %llu;", (unsigned long long)ctx_value(at->image, &ld));
}
