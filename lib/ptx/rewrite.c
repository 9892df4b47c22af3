/* SPDX-License-Identifier: MIT */
/*
 * Where probes go in a kernel: entry probes before the first statement
 * that is not a declaration (or .loc), exit probes before every ret and
 * exit instruction at any depth (after its label, before its guard), and
 * before the closing brace when control can fall off the end of the body.
 */
#include <inttypes.h>
#include <stdio.h>

#include "core/tlocal.h"
#include "ptx/instr.h"

static bool is_op(const struct ptx_module *m, const struct ptx_stmt *st,
		  const char *name)
{
	return st->kind == ST_INSN && tok_is(m, st->op, name);
}

bool stmt_is_exit(const struct ptx_module *m, const struct ptx_stmt *st)
{
	return is_op(m, st, "ret") || is_op(m, st, "exit");
}

bool stmt_has_modifier(const struct ptx_module *m, const struct ptx_stmt *st,
		       const char *mod)
{
	for (uint32_t t = st->op + 1; t < st->last &&
	     m->toks[t].kind == TOK_DIR; t++)
		if (tok_is(m, t, mod))
			return true;
	return false;
}

const struct ptx_stmt *func_entry_stmt(const struct ptx_module *m,
				       const struct ptx_func *f)
{
	uint32_t i;

	for (i = 0; i + 1 < f->nstmts; i++) {
		const struct ptx_stmt *st = &f->stmts[i];

		if (st->kind == ST_DECL)
			continue;
		if (st->kind == ST_DIR && tok_is(m, st->op, ".loc"))
			continue;
		return st;
	}
	return &f->stmts[f->nstmts - 1];
}

bool func_falls_off_end(const struct ptx_module *m, const struct ptx_func *f)
{
	static const char *const ends[] = { "ret", "exit", "bra", "brx", "trap" };
	uint32_t i = f->nstmts;
	size_t j;

	while (i-- > 0) {
		const struct ptx_stmt *st = &f->stmts[i];

		if (st->kind != ST_INSN)
			continue;
		if (st->pred >= 0)
			return true;
		for (j = 0; j < ARRAY_SIZE(ends); j++)
			if (is_op(m, st, ends[j]))
				return false;
		return true;
	}
	return true;
}

static int insert_site(struct edits *e, const struct probe_site *s,
		       const struct ptx_stmt *at)
{
	struct strbuf *sb = edit_at(e, s->m->toks[at->first].off, 0);

	if (!sb)
		return err_set(EGPU_ENOMEM, "PTX: out of memory for edits");
	emit_probe_site(sb, s);
	return 0;
}

static int check_kernel(const struct ptx_module *m, const struct ptx_item *it)
{
	const struct ptx_func *f = it->func;
	int n = (int)m->toks[it->name].len;
	const char *name = tok_text(m, it->name);

	if (!f->params_known)
		return err_set(EGPU_ENOTSUP,
			       "kernel %.*s: a parameter's size is unknown, so ctx.params_size cannot be given",
			       n, name);
	/* cvta.param on kernel parameters needs sm_70. */
	if (f->nparams && m->sm < 70)
		return err_set(EGPU_ENOTSUP,
			       "kernel %.*s: probes need sm_70 or later to address kernel parameters; the module targets sm_%u",
			       n, name, m->sm);
	return 0;
}

static int add_exits(const struct ptx_module *m, struct kernel_plan *plan,
		     struct probe_site *s, struct edits *e)
{
	const struct ptx_func *f = s->kernel;
	uint32_t i;
	int err = 0;

	s->point = EGPU_ATTACH_EXIT;
	s->calls = plan->exit;
	s->ncalls = plan->nexit;
	s->need_ctx = plan->exit_ctx;
	for (i = 0; !err && i < f->nstmts; i++) {
		const struct ptx_stmt *st = &f->stmts[i];

		if (!stmt_is_exit(m, st))
			continue;
		s->guard = st->pred >= 0 ? st : NULL;
		err = insert_site(e, s, st);
		s->site++;
	}
	if (!err && func_falls_off_end(m, f)) {
		s->guard = NULL;
		err = insert_site(e, s, &f->stmts[f->nstmts - 1]);
		s->site++;
	}
	plan->exit_points = s->site;
	return err;
}

static int add_tl_word(struct func_locals *l, uint64_t w)
{
	for (uint32_t i = 0; i < l->ntl; i++)
		if (l->tl[i] == w)
			return 0;
	if (l->ntl == FUNC_TL_MAX)
		return err_set(EGPU_E2BIG,
			       "PTX: the probes of one function use more than %u thread-local registers",
			       FUNC_TL_MAX);
	l->tl[l->ntl++] = w;
	return 0;
}

int calls_local(const struct probe_call *calls, size_t n,
		struct func_locals *l)
{
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		const uint64_t *tl;
		uint32_t sz, al;
		size_t ntl;

		if (!calls[i].body)
			continue;
		inline_local(calls[i].body, &sz, &al);
		l->size = sz > l->size ? sz : l->size;
		l->align = al > l->align ? al : l->align;
		tl = inline_thread_local(calls[i].body, &ntl);
		for (size_t k = 0; !err && k < ntl; k++)
			err = add_tl_word(l, tl[k]);
	}
	return err;
}

/*
 * One .local variable serves as the stack of every body copied into a
 * function: a thread runs one probe at a time, so a depot per copy would
 * only multiply the stack frame by the sites.
 */
int declare_locals(const struct ptx_module *m, const struct ptx_func *f,
		   const struct func_locals *l, struct edits *e)
{
	const struct ptx_stmt *at = func_entry_stmt(m, f);
	struct strbuf *sb;

	if (!l->depot && !l->mctx && !l->ntl)
		return 0;
	sb = edit_at(e, m->toks[at->first].off, 0);
	if (!sb)
		return err_set(EGPU_ENOMEM, "PTX: out of memory for edits");
	sb_adds(sb, "// begin egpu probe stack\n");
	if (l->depot)
		sb_printf(sb, "\t.local .align %u .b8 \t%s[%u];\n", l->align,
			  l->depot, l->size);
	if (l->mctx)
		sb_printf(sb, "\t.local .align 16 .b8 \t%s[%u];\n", l->mctx,
			  l->mctx_size);
	/* Thread-local values: registers every copy in the function shares,
	 * zero when it starts. */
	for (uint32_t i = 0; i < l->ntl; i++)
		sb_printf(sb, "\t.reg .b64 \t%s%" PRIx64 ";\n\tmov.b64 \t%s%" PRIx64
			  ", 0;\n", THREAD_LOCAL_REG_PREFIX, l->tl[i],
			  THREAD_LOCAL_REG_PREFIX, l->tl[i]);
	sb_adds(sb, "\t// end egpu probe stack\n\t");
	return 0;
}

int rewrite_kernel(const struct ptx_module *m, struct kernel_plan *plan,
		   const char *prefix, const char *depot, struct edits *e)
{
	const struct ptx_item *it = &m->items[plan->item];
	struct probe_site s = {
		.m = m, .kernel = it->func, .kernel_id = plan->id,
		.prefix = prefix, .depot = depot,
	};
	int err;

	if (!plan->nentry && !plan->nexit)
		return 0;
	err = check_kernel(m, it);
	if (!err && plan->nentry) {
		s.point = EGPU_ATTACH_ENTRY;
		s.calls = plan->entry;
		s.ncalls = plan->nentry;
		s.need_ctx = plan->entry_ctx;
		err = insert_site(e, &s, func_entry_stmt(m, it->func));
		plan->entry_points = 1;
	}
	if (!err && plan->nexit)
		err = add_exits(m, plan, &s, e);
	return err;
}
