/* SPDX-License-Identifier: MIT */
/*
 * May an entry probe end threads (helper 507) before this kernel's body
 * runs? A thread that exits counts as arrived at every barrier that waits
 * for all threads of the block (bar.sync 0, __syncthreads): PTX releases
 * such a barrier when only exited threads are missing. Barriers that wait
 * for a count of arrivals never learn of the exit, so the threads still
 * running would wait for ever: barriers with a thread count (bar.sync a, b;
 * bar.arrive, named barriers of warp-specialised kernels) and mbarrier
 * objects (cp.async.bulk and TMA pipelines). Such kernels are refused.
 * docs/ptx.md ("Ending threads at entry") says what remains the probe's
 * business: warp-synchronous instructions whose mask names exited lanes.
 */
#include <stdlib.h>
#include <string.h>

#include "ptx/instr.h"

/* Operand commas of the instruction @st (its predicate guard excluded). */
static unsigned operand_commas(const struct ptx_module *m,
			       const struct ptx_stmt *st)
{
	unsigned n = 0;

	for (uint32_t t = st->op + 1; t < st->last; t++)
		n += tok_is(m, t, ",");
	return n;
}

/* Whether @st waits for arrivals that an exited thread never makes. */
static bool counts_arrivals(const struct ptx_module *m,
			    const struct ptx_stmt *st)
{
	if (tok_is(m, st->op, "mbarrier"))
		return true;
	if (!tok_is(m, st->op, "bar") && !tok_is(m, st->op, "barrier"))
		return false;
	if (stmt_has_modifier(m, st, ".cluster"))
		return false; /* released by exits, as the CTA barrier */
	if (stmt_has_modifier(m, st, ".arrive"))
		return true;
	/* bar.red has d, a, [b,] c; bar.sync a[, b]: b is the count */
	return operand_commas(m, st) >= (stmt_has_modifier(m, st, ".red") ? 3u : 1u);
}

static const struct ptx_stmt *find_counted(const struct ptx_func *f,
					   const struct ptx_module *m)
{
	for (uint32_t i = 0; f->defined && i < f->nstmts; i++)
		if (f->stmts[i].kind == ST_INSN &&
		    counts_arrivals(m, &f->stmts[i]))
			return &f->stmts[i];
	return NULL;
}

static int refuse(const struct ptx_module *m, const struct ptx_item *kernel,
		  const struct ptx_item *holder, const struct ptx_stmt *st,
		  const char *probe)
{
	const struct tok *op = &m->toks[st->op];

	return err_set(EGPU_ENOTSUP,
		       "probe '%s' may end threads (exit_thread) at the entry of kernel '%.*s', but '%.*s' (PTX line %u, in %.*s) waits for a count of arrivals that exited threads never make: the other threads would hang",
		       probe, (int)m->toks[kernel->name].len,
		       tok_text(m, kernel->name),
		       (int)(m->toks[st->last - 1].off - op->off), m->text + op->off,
		       op->line, (int)m->toks[holder->name].len,
		       tok_text(m, holder->name));
}

/* The function item named by token @t, or -1. */
static int32_t func_named(const struct ptx_module *m, uint32_t t)
{
	for (uint32_t i = 0; i < m->nitems; i++)
		if (m->items[i].kind == IT_FUNC && !m->items[i].func->entry &&
		    tok_same(m, m->items[i].name, t))
			return (int32_t)i;
	return -1;
}

/*
 * Mark in @reach the functions item @i calls, transitively. An indirect
 * call (through a register) may reach any function: all are marked.
 */
static void mark_callees(const struct ptx_module *m, uint32_t i, bool *reach)
{
	const struct ptx_func *f = m->items[i].func;

	reach[i] = true;
	for (uint32_t s = 0; f->defined && s < f->nstmts; s++) {
		const struct ptx_stmt *st = &f->stmts[s];
		int32_t callee = -1;

		if (st->kind != ST_INSN || !tok_is(m, st->op, "call"))
			continue;
		for (uint32_t t = st->op + 1; t < st->last && callee < 0; t++)
			if (m->toks[t].kind == TOK_IDENT && *tok_text(m, t) != '%')
				callee = func_named(m, t);
		for (uint32_t k = 0; k < m->nitems; k++)
			if ((callee < 0 ? m->items[k].kind == IT_FUNC &&
				  !m->items[k].func->entry : k == (uint32_t)callee) &&
			    !reach[k])
				mark_callees(m, k, reach);
	}
}

int check_early_exit(const struct ptx_module *m, uint32_t kernel_item,
		     const char *probe)
{
	bool *reach = calloc(m->nitems + 1, sizeof(*reach));
	int err = 0;

	if (!reach)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	mark_callees(m, kernel_item, reach);
	for (uint32_t i = 0; i < m->nitems && !err; i++) {
		const struct ptx_stmt *st =
			reach[i] ? find_counted(m->items[i].func, m) : NULL;

		if (st)
			err = refuse(m, &m->items[kernel_item], &m->items[i], st,
				     probe);
	}
	free(reach);
	return err;
}
