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

static bool has_modifier(const struct ptx_module *m, const struct ptx_stmt *st,
			 const char *mod)
{
	for (uint32_t t = st->op + 1; t < st->last &&
	     m->toks[t].kind == TOK_DIR; t++)
		if (tok_is(m, t, mod))
			return true;
	return false;
}

/* Whether @st waits for arrivals that an exited thread never makes. */
static bool counts_arrivals(const struct ptx_module *m,
			    const struct ptx_stmt *st)
{
	if (tok_is(m, st->op, "mbarrier"))
		return true;
	if (!tok_is(m, st->op, "bar") && !tok_is(m, st->op, "barrier"))
		return false;
	if (has_modifier(m, st, ".cluster"))
		return false; /* released by exits, as the CTA barrier */
	if (has_modifier(m, st, ".arrive"))
		return true;
	/* bar.red has d, a, [b,] c; bar.sync a[, b]: b is the count */
	return operand_commas(m, st) >= (has_modifier(m, st, ".red") ? 3u : 1u);
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

int check_early_exit(const struct ptx_module *m, uint32_t kernel_item,
		     const char *probe)
{
	/* The kernel, and every .func it might call. */
	for (uint32_t i = 0; i < m->nitems; i++) {
		const struct ptx_item *it = &m->items[i];
		const struct ptx_stmt *st;

		if (it->kind != IT_FUNC || (it->func->entry && i != kernel_item))
			continue;
		st = find_counted(it->func, m);
		if (st)
			return refuse(m, &m->items[kernel_item], it, st, probe);
	}
	return 0;
}
