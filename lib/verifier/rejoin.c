/* SPDX-License-Identifier: MIT */
/*
 * Branches whose two sides meet again: the immediate post-dominator J of
 * the branch (where every path from it goes, before any exit) exists, and
 * the branch cannot come back to itself without passing J. Such a branch
 * decides only what happens between it and J; it is not the exit test of
 * a loop around it, since the loop's paths back to the branch would avoid
 * J. For each, J and what the paths to J may write: demand.c lets pruning
 * ignore the operands of these branches where nothing after them needs
 * the values (the `if (x > max) max = x` of a loop).
 *
 * Post-dominators are the dominators of the reversed graph, rooted at a
 * virtual node every exit leads to; computed with the iterative algorithm
 * of Cooper, Harvey and Kennedy ("A Simple, Fast Dominance Algorithm").
 */
#include <stdlib.h>

#include "vstate.h"

/* Instructions explored between a branch and J before giving up. */
#define REGION_LIMIT 1024
#define ALL_CALL_REGS 0x3f /* r0-r5 */

struct rgraph {
	size_t n;          /* instructions, plus the virtual exit n */
	size_t *pred_at;   /* i: pred[pred_at[i] .. pred_at[i + 1]) */
	size_t *pred;
	int64_t *order;    /* postorder number of each node, -1 unreached */
	size_t *nodes;     /* nodes by postorder number */
	size_t nnodes;
	int64_t *ipdom;    /* immediate post-dominator, -1 none */
};

/* Count (@fill NULL) or record the predecessors of every instruction. */
static void add_edges(const struct verifier *v, struct rgraph *g,
		      size_t *fill)
{
	for (size_t i = 0; i < v->cnt; i++) {
		size_t succ[2];
		int k = v->aux[i].subprog == -1 ? 0 :
			cfg_successors(v, i, succ);

		while (k-- > 0) {
			if (fill)
				g->pred[fill[succ[k]]++] = i;
			else
				g->pred_at[succ[k] + 2]++;
		}
	}
}

static int build_preds(const struct verifier *v, struct rgraph *g)
{
	g->pred_at = calloc(g->n + 2, sizeof(*g->pred_at));
	if (!g->pred_at)
		return vnomem();
	add_edges(v, g, NULL);
	for (size_t i = 2; i < g->n + 2; i++)
		g->pred_at[i] += g->pred_at[i - 1];
	g->pred = malloc((g->pred_at[g->n + 1] + 1) * sizeof(*g->pred));
	if (!g->pred)
		return vnomem();
	/* pred_at[i + 1] is where i's predecessors start, until filled */
	add_edges(v, g, g->pred_at + 1);
	return 0;
}

/* Children of @node in the reversed graph: its predecessors, or the exits. */
static bool next_child(const struct verifier *v, const struct rgraph *g,
		       size_t node, size_t *pos, size_t *child)
{
	if (node == g->n) {
		while (*pos < v->cnt) {
			size_t i = (*pos)++;

			if (v->aux[i].subprog != -1 &&
			    cfg_is_exit(&v->insns[i])) {
				*child = i;
				return true;
			}
		}
		return false;
	}
	if (g->pred_at[node] + *pos >= g->pred_at[node + 1])
		return false;
	*child = g->pred[g->pred_at[node] + (*pos)++];
	return true;
}

/* Depth-first from the virtual exit over reversed edges: postorder. */
static int number_nodes(const struct verifier *v, struct rgraph *g)
{
	size_t *stack = malloc((g->n + 1) * sizeof(*stack));
	size_t *pos = calloc(g->n + 1, sizeof(*pos));
	size_t depth = 0;

	if (!stack || !pos) {
		free(stack);
		free(pos);
		return vnomem();
	}
	for (size_t i = 0; i <= g->n; i++)
		g->order[i] = -1;
	stack[depth++] = g->n;
	g->order[g->n] = -2; /* on the stack */
	while (depth) {
		size_t node = stack[depth - 1], child;

		if (next_child(v, g, node, &pos[node], &child)) {
			if (g->order[child] == -1) {
				g->order[child] = -2;
				stack[depth++] = child;
			}
			continue;
		}
		depth--;
		g->order[node] = (int64_t)g->nnodes;
		g->nodes[g->nnodes++] = node;
	}
	free(stack);
	free(pos);
	return 0;
}

static size_t intersect(const struct rgraph *g, size_t a, size_t b)
{
	while (a != b) {
		while (g->order[a] < g->order[b])
			a = (size_t)g->ipdom[a];
		while (g->order[b] < g->order[a])
			b = (size_t)g->ipdom[b];
	}
	return a;
}

/* A node's parents in the reversed graph: its successors, and the root. */
static int64_t meet_successors(const struct verifier *v,
			       const struct rgraph *g, size_t node)
{
	size_t succ[2];
	int n = cfg_successors(v, node, succ);
	int64_t best = cfg_is_exit(&v->insns[node]) ? (int64_t)g->n : -1;

	for (int k = 0; k < n; k++) {
		if (g->ipdom[succ[k]] < 0)
			continue;
		best = best < 0 ? (int64_t)succ[k] :
		       (int64_t)intersect(g, (size_t)best, succ[k]);
	}
	return best;
}

static void find_ipdoms(const struct verifier *v, struct rgraph *g)
{
	bool changed = true;

	for (size_t i = 0; i <= g->n; i++)
		g->ipdom[i] = -1;
	g->ipdom[g->n] = (int64_t)g->n;
	while (changed) {
		changed = false;
		for (size_t k = g->nnodes - 1; k-- > 0;) {
			size_t node = g->nodes[k];
			int64_t d = meet_successors(v, g, node);

			if (d != g->ipdom[node]) {
				g->ipdom[node] = d;
				changed = true;
			}
		}
	}
}

/* Registers and own stack slots instruction @i may write. */
static struct demand insn_writes(const struct verifier *v,
				 const int32_t *regs, size_t i)
{
	const struct bpf_insn *insn = &v->insns[i];
	struct demand w = { 0, 0 };
	struct stack_ref ref;

	switch (BPF_CLASS(insn->code)) {
	case BPF_ALU:
	case BPF_ALU64:
	case BPF_LDX:
		w.regs = (uint16_t)(1u << insn->dst_reg);
		return w;
	case BPF_LD:
		w.regs = bpf_is_lddw(insn) ? (uint16_t)(1u << insn->dst_reg) :
			 ALL_CALL_REGS;
		return w;
	case BPF_ST:
	case BPF_STX:
		ref = insn_stack_ref(insn, regs);
		w.slots = ref.exact ? ref.touched : ref.stack ? ~0ULL : 0;
		if (BPF_MODE(insn->code) == BPF_ATOMIC &&
		    (insn->imm & BPF_FETCH))
			w.regs = insn->imm == BPF_CMPXCHG ? 1 :
				 (uint16_t)(1u << insn->src_reg);
		return w;
	default:
		if (BPF_OP(insn->code) != BPF_CALL)
			return w;
		/* helpers write through pointer arguments, functions too */
		w.regs = ALL_CALL_REGS;
		w.slots = stack_passed(regs) ? ~0ULL : 0;
		return w;
	}
}

/*
 * The paths from the branch at @b to @join: whether they all reach it
 * without coming back to @b (nor growing too many to tell), and what they
 * may write on the way.
 */
static bool walk_region(const struct verifier *v,
			const int32_t (*sp)[BPF_REG_COUNT], size_t b,
			size_t join, struct demand *writes, uint32_t *seen,
			size_t *work)
{
	size_t top = 0, visited = 0;
	size_t succ[2];
	int n = cfg_successors(v, b, succ);

	*writes = (struct demand){ 0, 0 };
	for (int k = 0; k < n; k++)
		work[top++] = succ[k];
	while (top) {
		size_t i = work[--top];
		struct demand w;

		if (i == join || seen[i] == b + 1)
			continue;
		if (i == b || ++visited > REGION_LIMIT ||
		    !cfg_regs_valid(&v->insns[i]))
			return false;
		seen[i] = (uint32_t)b + 1;
		w = insn_writes(v, sp[i], i);
		writes->regs |= w.regs;
		writes->slots |= w.slots;
		n = cfg_successors(v, i, succ);
		for (int k = 0; k < n; k++)
			work[top++] = succ[k];
	}
	return true;
}

static void find_joins(const struct verifier *v, const struct rgraph *g,
		       const int32_t (*sp)[BPF_REG_COUNT], struct rejoin *rj,
		       uint32_t *seen, size_t *work)
{
	for (size_t b = 0; b < v->cnt; b++) {
		int64_t join = g->ipdom[b];

		rj[b].join = -1;
		if (v->aux[b].subprog != -1 && cfg_is_cond_jmp(&v->insns[b]) &&
		    join >= 0 && (size_t)join < v->cnt &&
		    walk_region(v, sp, b, (size_t)join, &rj[b].writes, seen,
				work))
			rj[b].join = join;
	}
}

int find_rejoining_branches(const struct verifier *v,
			    const int32_t (*sp)[BPF_REG_COUNT],
			    struct rejoin *rj)
{
	struct rgraph g = { .n = v->cnt };
	uint32_t *seen = calloc(v->cnt, sizeof(*seen));
	/* each instruction pushes at most 2 successors once per branch */
	size_t *work = malloc((2 * v->cnt + 2) * sizeof(*work));
	int err = 0;

	g.order = malloc((g.n + 1) * sizeof(*g.order));
	g.nodes = malloc((g.n + 1) * sizeof(*g.nodes));
	g.ipdom = malloc((g.n + 1) * sizeof(*g.ipdom));
	if (!seen || !work || !g.order || !g.nodes || !g.ipdom)
		err = vnomem();
	if (!err)
		err = build_preds(v, &g);
	if (!err)
		err = number_nodes(v, &g);
	if (!err) {
		find_ipdoms(v, &g);
		find_joins(v, &g, sp, rj, seen, work);
	}
	free(g.pred_at);
	free(g.pred);
	free(g.order);
	free(g.nodes);
	free(g.ipdom);
	free(seen);
	free(work);
	return err;
}
