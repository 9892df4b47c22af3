/* SPDX-License-Identifier: MIT */
/*
 * Loops whose end loopterm.c proves from the code, and whose bound may be
 * so large that following them one iteration at a time would exceed the
 * complexity limit (a bound read from a map): at the loop head, a path
 * that its previous iteration's state there covers ends (what that state
 * leads to is being explored, and the loop ends by the proof); one that
 * it does not cover continues from the two states joined, the scalar
 * bounds that moved widened to their limits, so that within a few
 * iterations the state at the head stops growing. Loops with a constant
 * or narrow bound are still followed iteration by iteration, with exact
 * values.
 */
#include <stdlib.h>

#include "vstate.h"

/* Bounds with fewer values than this are followed exactly. */
#define WIDE_BOUND (1ULL << 16)

static void reg_widen(struct reg *cur, const struct reg *old)
{
	if (cur->type == REG_SCALAR && old->type == REG_SCALAR)
		sc_widen(&cur->v, &old->v);
}

/* Scalars in registers and spilled alike become the join of both; the
 * rest stays as @cur has it, which the next iteration must then match. */
static void frame_widen(struct frame *cur, const struct frame *old)
{
	uint32_t n = cur->nslots < old->nslots ? cur->nslots : old->nslots;

	for (int r = 0; r < BPF_REG_COUNT - 1; r++)
		reg_widen(&cur->regs[r], &old->regs[r]);
	for (uint32_t s = 0; s < n; s++)
		for (int b = 0; b < 8; b++)
			if (cur->slots[s].spill_size[b] &&
			    cur->slots[s].spill_size[b] == old->slots[s].spill_size[b])
				reg_widen(&cur->slots[s].spill[b],
					  &old->slots[s].spill[b]);
}

/* The last state stored at this instruction on the current path. */
static struct checkpoint *previous_iteration(const struct verifier *v)
{
	for (struct checkpoint *c = v->cur->parent; c; c = c->parent)
		if (c->st.insn == v->cur->insn)
			return c;
	return NULL;
}

/* Whether the counter's start or its bound may take so many values that
 * exact iterations would not end within the complexity limit (all loops
 * compare 32 bits, loopterm.c). */
static bool wide_loop(const struct loop_proof *lp, const struct vstate *st)
{
	struct scalar s;

	if (loop_loc_value(st, lp->counter_loc, true, &s) &&
	    s.u32max - s.u32min >= WIDE_BOUND)
		return true;
	return !lp->bound_const &&
	       loop_loc_value(st, lp->bound_loc, true, &s) &&
	       s.u32max - s.u32min >= WIDE_BOUND;
}

static const struct loop_proof *proof_at(struct verifier *v, int insn)
{
	struct insn_aux *aux = &v->aux[insn];

	if (!aux->back_edge_target)
		return NULL;
	if (!aux->loop) {
		aux->loop = calloc(1, sizeof(*aux->loop));
		if (!aux->loop || loop_prove(v, insn, aux->loop))
			return NULL;
	}
	return aux->loop->proven ? aux->loop : NULL;
}

int loop_widen(struct verifier *v)
{
	struct vstate *cur = v->cur;
	const struct loop_proof *lp = proof_at(v, cur->insn);
	struct checkpoint *prev;

	/* loop_bound_ok() also checks that the bound is a number */
	if (!lp || !loop_bound_ok(lp, cur) || !wide_loop(lp, cur))
		return 0;
	prev = previous_iteration(v);
	if (prev && prev->st.depth == cur->depth) {
		v->stats.loop_widenings++;
		if (state_covers(v, &prev->st, cur, DEMAND_FULL))
			return LOOP_COVERED;
		for (int i = 0; i < cur->depth; i++)
			frame_widen(cur->frames[i], prev->st.frames[i]);
	}
	return LOOP_STORE;
}
