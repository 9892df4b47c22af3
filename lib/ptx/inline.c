/* SPDX-License-Identifier: MIT */
/*
 * Probe bodies copied into their sites (inlined) instead of called, so
 * that ptxas optimises them together with the kernel, and loads of the
 * ctx can become constants (inline_ctx.c).
 *
 * The body is copied statement by statement, its layout and comments kept:
 * - every register and label the function declares gets the site's name
 *   in front ("%rd5" -> "%egpu_0_x1_0_rd5"), so copies meet neither each
 *   other nor the kernel's names; its .local variable (its stack) becomes
 *   the kernel's depot, declared once for all its copies;
 * - `ld.param.b64 %rd1, [FUNC_param_0]` becomes `mov.b64 %rd1, ARG`, ARG
 *   being the site's register holding ctx (param 1: ctx_len);
 * - stores to the return value are dropped (it is ignored), or, where
 *   the site asks for it, moves into its register; `ret` becomes a
 *   branch, under the same guard, to a label ending the copy;
 * - `.uni` goes from call and guarded bra: at an exit the threads of a
 *   warp may have diverged;
 * - .loc lines go (their .file table is not linked); module symbols the
 *   linker renamed take their new name; call sequences to other functions,
 *   `exit` and everything else stay as they are.
 * A function that uses its parameters any other way, declares .shared,
 * .param or more than one .local variable at its top level, or calls
 * through a pointer is called instead.
 */
#include <stdlib.h>
#include <string.h>

#include "core/tlocal.h"
#include "ptx/inline.h"

static int add_name(struct scan *sc, uint32_t tok, bool family, uint32_t bytes)
{
	if (!ARRAY_GROW(sc->names, sc->cap, sc->n, 32))
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	sc->names[sc->n++] = (struct own_name){ tok, family, (uint8_t)bytes };
	return 0;
}

/* .reg .b64 %rd<8>, %SP; */
static int reg_names(struct scan *sc, const struct ptx_stmt *st)
{
	const struct ptx_module *m = sc->fn->m;
	uint32_t t = st->op + 1, bytes = 0;
	int err = 0;

	for (; m->toks[t].kind == TOK_DIR; t++)
		bytes = type_bytes(m, t);
	while (!err && m->toks[t].kind == TOK_IDENT) {
		bool family = tok_is(m, t + 1, "<");

		err = add_name(sc, t, family, bytes);
		t += family ? 4 : 1;
		if (!tok_is(m, t, ","))
			break;
		t++;
	}
	if (!err && t + 1 != st->last)
		sc->why = "a register declaration of an unknown form";
	return err;
}

/*
 * .local [.align A] .TYPE NAME[N];  (LLVM's stack: __local_depot0)
 * It becomes the kernel's depot, which every copy in the kernel shares:
 * a thread runs one probe at a time, and none expects what another left.
 */
static void local_depot(struct scan *sc, uint32_t i)
{
	struct inline_func *fn = sc->fn;
	const struct ptx_module *m = fn->m;
	const struct ptx_stmt *st = &fn->f->stmts[i];
	uint32_t t = st->op + 1, align = 1, elem, count = 1, name;

	if (tok_is(m, t, ".align") && m->toks[t + 1].kind == TOK_INT) {
		align = (uint32_t)strtoul(tok_text(m, t + 1), NULL, 0);
		t += 2;
	}
	elem = type_bytes(m, t++);
	name = t++;
	if (tok_is(m, t, "[") && m->toks[t + 1].kind == TOK_INT &&
	    tok_is(m, t + 2, "]")) {
		count = (uint32_t)strtoul(tok_text(m, t + 1), NULL, 0);
		t += 3;
	}
	if (fn->has_local)
		sc->why = "it declares more than one .local variable";
	else if (!elem || m->toks[name].kind != TOK_IDENT || t + 1 != st->last ||
		 !count || count > (1u << 20) || !align || align > 4096 ||
		 (align & (align - 1)))
		sc->why = "a .local declaration of an unknown form";
	fn->has_local = true;
	fn->local = name;
	fn->local_size = elem * count;
	fn->local_align = align > elem ? align : elem;
	fn->stmt[i] = S_DROP;
}

/* Thread-local register %egpu_tl_HEX at token @t: its word in *@w. */
static bool tl_reg(const struct ptx_module *m, uint32_t t, uint64_t *w)
{
	size_t n = sizeof(THREAD_LOCAL_REG_PREFIX) - 1;
	const char *s = tok_text(m, t);
	char *end;

	if (m->toks[t].kind != TOK_IDENT || m->toks[t].len <= n ||
	    memcmp(s, THREAD_LOCAL_REG_PREFIX, n))
		return false;
	*w = strtoull(s + n, &end, 16);
	return end == s + m->toks[t].len;
}

/*
 * The body's own declaration of a thread-local register and its zeroing
 * (`mov.u64 REG, 0`, ptx_tlocal.c) serve it when called; copies share
 * the registers the rewriter declares in the kernel instead.
 */
static bool own_tl_setup(const struct ptx_module *m, const struct ptx_stmt *st)
{
	uint64_t w;

	if (st->kind == ST_DECL)
		return tok_is(m, st->op, ".reg") && tl_reg(m, st->last - 2, &w);
	return st->kind == ST_INSN && st->pred < 0 && tok_is(m, st->op, "mov") &&
	       tok_is(m, st->op + 1, ".u64") && tl_reg(m, st->op + 2, &w) &&
	       tok_is(m, st->op + 4, "0") && st->op + 6 == st->last;
}

/* What the body declares at its top level, and every label. */
static int collect_names(struct scan *sc)
{
	const struct ptx_module *m = sc->fn->m;
	const struct ptx_func *f = sc->fn->f;
	int err = 0;

	for (uint32_t i = 0; !err && !sc->why && i < f->nstmts; i++) {
		const struct ptx_stmt *st = &f->stmts[i];

		if (own_tl_setup(m, st))
			sc->fn->stmt[i] = S_DROP;
		else if (st->kind == ST_LABEL)
			err = add_name(sc, st->first, false, 0);
		else if (st->kind == ST_DIR && (tok_is(m, st->op, ".callprototype") ||
						tok_is(m, st->op, ".calltargets")))
			sc->why = "it calls through a pointer";
		else if (st->kind != ST_DECL || st->depth > 1)
			continue;
		else if (tok_is(m, st->op, ".reg"))
			err = reg_names(sc, st);
		else if (tok_is(m, st->op, ".local"))
			local_depot(sc, i);
		else
			sc->why = "it declares .shared, .param, .const or .global data in its body";
	}
	return err;
}

bool func_uses_thread_local(const struct ptx_module *m,
			    const struct ptx_item *it)
{
	const struct ptx_func *f = it ? it->func : NULL;
	uint64_t w;

	if (!f || !f->defined || !f->nstmts)
		return false;
	for (uint32_t t = f->body; t < f->stmts[f->nstmts - 1].last; t++)
		if (tl_reg(m, t, &w))
			return true;
	return false;
}

/* The thread-local words the body names, each once. */
static int collect_tl(struct inline_func *fn)
{
	const struct ptx_func *f = fn->f;
	uint64_t w;

	for (uint32_t t = f->body; t < f->stmts[f->nstmts - 1].last; t++) {
		uint64_t *v;
		size_t k = 0;

		if (!tl_reg(fn->m, t, &w))
			continue;
		while (k < fn->ntl && fn->tl[k] != w)
			k++;
		if (k < fn->ntl)
			continue;
		v = realloc(fn->tl, (fn->ntl + 1) * sizeof(*v));
		if (!v)
			return err_set(EGPU_ENOMEM, "PTX: out of memory");
		fn->tl = v;
		fn->tl[fn->ntl++] = w;
	}
	return 0;
}

const uint64_t *inline_thread_local(const struct inline_func *fn, size_t *n)
{
	*n = fn->ntl;
	return fn->tl;
}

/* Which tokens are the body's own names (opcodes never are). */
static void mark_own(struct scan *sc)
{
	struct inline_func *fn = sc->fn;
	const struct ptx_func *f = fn->f;

	for (uint32_t i = 0; i < f->nstmts; i++) {
		const struct ptx_stmt *st = &f->stmts[i];

		for (uint32_t t = st->first; t < st->last; t++)
			if (!(st->kind == ST_INSN && t == st->op) &&
			    own_name_of(sc, t))
				fn->tok[t - f->body] = T_OWN;
			else if (fn->has_local && tok_same(fn->m, t, fn->local))
				fn->tok[t - f->body] = T_DEPOT;
	}
}

/* The parameter (0, 1) or return value (2) token @t names, or -1. */
static int param_of(const struct inline_func *fn, uint32_t t)
{
	const struct ptx_module *m = fn->m;
	const uint32_t names[] = { fn->f->params[0].name,
				   fn->f->params[1].name, fn->f->ret };

	if (m->toks[t].kind != TOK_IDENT)
		return -1;
	for (int i = 0; i < 3; i++)
		if (tok_same(m, t, names[i]))
			return i;
	return -1;
}

/* [NAME] or [NAME+0] at @t; the token after it in *end. */
static bool whole_param(const struct ptx_module *m, uint32_t t, uint32_t *end)
{
	if (!tok_is(m, t, "["))
		return false;
	if (tok_is(m, t + 2, "+") && tok_is(m, t + 3, "0"))
		t += 2;
	*end = t + 3;
	return tok_is(m, t + 2, "]");
}

/* ld.param.b64 %dst, [PARAM]; (also .u64, .s64, [PARAM+0]) */
static int param_load(const struct inline_func *fn, const struct ptx_stmt *st)
{
	const struct ptx_module *m = fn->m;
	uint32_t t = st->op, end;
	int which;

	/* ld .param .TYPE %dst , [ PARAM ] ; */
	if (st->last < t + 9)
		return -1;
	which = param_of(fn, t + 6);
	if (st->pred >= 0 || !tok_is(m, t, "ld") || !tok_is(m, t + 1, ".param") ||
	    !(tok_is(m, t + 2, ".b64") || tok_is(m, t + 2, ".u64") ||
	      tok_is(m, t + 2, ".s64")) ||
	    m->toks[t + 3].kind != TOK_IDENT || !tok_is(m, t + 4, ",") ||
	    (which != 0 && which != 1) || !whole_param(m, t + 5, &end) ||
	    !tok_is(m, end, ";") || end + 1 != st->last)
		return -1;
	return which;
}

/* st.param.T [RET(+N)?], value; */
static bool retval_store(const struct inline_func *fn,
			 const struct ptx_stmt *st)
{
	const struct ptx_module *m = fn->m;
	uint32_t t = st->op + 1;

	if (!tok_is(m, st->op, "st") || !tok_is(m, t, ".param"))
		return false;
	while (m->toks[t].kind == TOK_DIR)
		t++;
	return tok_is(m, t, "[") && param_of(fn, t + 1) == 2;
}

/* st.param.b64 [RET(+0)?], X; (also .u64, .s64): the whole result. */
static bool whole_retval(const struct inline_func *fn,
			 const struct ptx_stmt *st)
{
	const struct ptx_module *m = fn->m;
	uint32_t t = st->op, end;

	return st->pred < 0 &&
	       (tok_is(m, t + 2, ".b64") || tok_is(m, t + 2, ".u64") ||
		tok_is(m, t + 2, ".s64")) &&
	       whole_param(m, t + 3, &end) && tok_is(m, end, ",") &&
	       end + 3 == st->last;
}

static bool uses_params(const struct inline_func *fn, const struct ptx_stmt *st)
{
	for (uint32_t t = st->first; t < st->last; t++)
		if (param_of(fn, t) >= 0)
			return true;
	return false;
}

/* What to do with instruction @st, or sc->why. */
static void classify_insn(struct scan *sc, uint32_t i)
{
	struct inline_func *fn = sc->fn;
	const struct ptx_stmt *st = &fn->f->stmts[i];
	const struct ptx_module *m = fn->m;
	uint32_t uni = st->op + 1 - fn->f->body;
	int arg;

	if (tok_is(m, st->op, "ret")) {
		fn->stmt[i] = S_RET;
	} else if (!uses_params(fn, st)) {
		fn->stmt[i] = S_COPY;
		if (tok_is(m, st->op + 1, ".uni") &&
		    (tok_is(m, st->op, "call") ||
		     (tok_is(m, st->op, "bra") && st->pred >= 0)))
			fn->tok[uni] = T_DROP;
	} else if ((arg = param_load(fn, st)) >= 0) {
		fn->stmt[i] = arg ? S_ARG1 : S_ARG0;
	} else if (retval_store(fn, st)) {
		fn->stmt[i] = whole_retval(fn, st) ? S_RETVAL : S_DROP;
		fn->ret_whole &= fn->stmt[i] == S_RETVAL;
	} else {
		sc->why = "it uses a parameter other than by ld.param";
	}
}

static void classify(struct scan *sc)
{
	struct inline_func *fn = sc->fn;
	const struct ptx_func *f = fn->f;

	for (uint32_t i = 0; !sc->why && i + 1 < f->nstmts; i++) {
		const struct ptx_stmt *st = &f->stmts[i];

		if (fn->stmt[i] == S_DROP)
			continue;
		if (st->kind == ST_INSN)
			classify_insn(sc, i);
		else if (uses_params(fn, st))
			sc->why = "it uses a parameter other than by ld.param";
		else if (st->kind == ST_DIR && tok_is(fn->m, st->op, ".loc"))
			fn->stmt[i] = S_DROP;
	}
}

int inline_prepare(const struct ptx_module *m, const struct ptx_item *it,
		   const struct renames *rn, const struct ctx_layout *layout,
		   struct inline_func **out, const char **why)
{
	const struct ptx_func *f = it->func;
	struct inline_func *fn = calloc(1, sizeof(*fn));
	struct scan sc = { .fn = fn };
	int err;

	*out = NULL;
	if (!fn)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	if (it->kind != IT_FUNC || !f->defined || f->nparams != 2 || f->nret != 1) {
		free(fn);
		if (why)
			*why = "it is not a defined function of two parameters and one result";
		return 0;
	}
	*fn = (struct inline_func){ .m = m, .f = f, .rn = rn, .layout = layout,
				    .ret_whole = true };
	fn->stmt = calloc(f->nstmts, 1);
	fn->width = calloc(f->nstmts, 1);
	fn->off = calloc(f->nstmts, 1);
	fn->tok = calloc(f->stmts[f->nstmts - 1].last - f->body, 1);
	err = fn->stmt && fn->width && fn->off && fn->tok ?
		      collect_names(&sc) :
		      err_set(EGPU_ENOMEM, "PTX: out of memory");
	if (!err && !sc.why) {
		mark_own(&sc);
		classify(&sc);
	}
	if (!err && !sc.why)
		ctx_scan(&sc);
	if (!err && !sc.why)
		err = collect_tl(fn);
	free(sc.names);
	if (why)
		*why = sc.why;
	if (err || sc.why) {
		inline_free(fn);
		return err;
	}
	*out = fn;
	return 0;
}

void inline_local(const struct inline_func *fn, uint32_t *size,
		  uint32_t *align)
{
	*size = fn->has_local ? fn->local_size : 0;
	*align = fn->has_local ? fn->local_align : 1;
}

bool inline_folds_ctx(const struct inline_func *fn)
{
	return fn->folds_ctx;
}

bool inline_gives_result(const struct inline_func *fn)
{
	return fn->ret_whole;
}

void inline_free(struct inline_func *fn)
{
	if (!fn)
		return;
	free(fn->stmt);
	free(fn->width);
	free(fn->off);
	free(fn->tok);
	free(fn->tl);
	free(fn);
}

/* ld.param.T %dst, [...]  ->  mov.T %dst, ARG */
static void put_arg(struct strbuf *sb, const struct inline_func *fn,
		    uint32_t i, const struct inline_site *at)
{
	const struct ptx_stmt *st = &fn->f->stmts[i];

	if (at->image && fn->stmt[i] == S_ARG0)
		return; /* every load of ctx became a constant */
	sb_adds(sb, "mov");
	put_toks(sb, fn, st->op + 2, st->op + 4, at);
	if (at->image)
		sb_printf(sb, ", %u;", at->layout->size);
	else
		sb_printf(sb, ", %s;", fn->stmt[i] == S_ARG0 ? at->ctx : at->len);
}

/* Statement @i of the body, as copy @at writes it. */
static void put_stmt(struct strbuf *sb, const struct inline_func *fn,
		     uint32_t i, const struct inline_site *at)
{
	const struct ptx_stmt *st = &fn->f->stmts[i];

	switch (fn->stmt[i]) {
	case S_COPY:
		put_toks(sb, fn, st->first, st->last, at);
		break;
	case S_ARG0:
	case S_ARG1:
		put_arg(sb, fn, i, at);
		break;
	case S_CTX:
		put_ctx_load(sb, fn, i, at);
		break;
	case S_CTX_PTR:
		if (!at->image)
			put_toks(sb, fn, st->first, st->last, at);
		break;
	case S_RETVAL:
		if (at->ret) {
			sb_printf(sb, "mov.b64 \t%s, ", at->ret);
			put_tok(sb, fn, st->last - 2, at);
			sb_adds(sb, ";");
		}
		break;
	case S_RET:
		if (st->pred >= 0) {
			sb_adds(sb, st->pred_neg ? "@!" : "@");
			put_tok(sb, fn, (uint32_t)st->pred, at);
			sb_adds(sb, " ");
		}
		sb_printf(sb, "bra \t$%s;", at->name);
		break;
	default:
		break;
	}
}

void emit_inlined(struct strbuf *sb, const struct inline_func *fn,
		  const struct inline_site *at)
{
	const struct ptx_module *m = fn->m;
	const struct ptx_func *f = fn->f;
	uint32_t pos = tok_end(m, f->body);

	for (uint32_t i = 0; i < f->nstmts; i++) {
		const struct ptx_stmt *st = &f->stmts[i];

		sb_addn(sb, m->text + pos, m->toks[st->first].off - pos);
		pos = tok_end(m, st->last - 1);
		if (i + 1 < f->nstmts)
			put_stmt(sb, fn, i, at);
	}
	/* The end of the copy, where its rets lead. */
	sb_printf(sb, "$%s:\n", at->name);
}
