/* SPDX-License-Identifier: MIT */
/*
 * Which registers and stack slots hold values that may matter for safety
 * from each instruction on.
 *
 * Pruning compares a new state with an explored one register by register
 * and slot by slot; a scalar whose value can never influence a safety
 * decision (it is only returned at the program's exit, stored into a map
 * value or a record, passed where any number will do, or compared by a
 * branch that decides nothing else) need not match, or a register that
 * collects flags or a running maximum would multiply the paths. A value
 * matters when it may reach, through registers or stack slots, a branch
 * condition, an address (pointer arithmetic, the base of an access, a
 * helper's memory argument), a helper argument other than a plain number,
 * a function's arguments or return value. Everything is computed
 * statically, over all paths: a sound over-approximation of Linux's
 * precision tracking.
 *
 * Stack slots of the function's own frame are followed one by one where
 * the address is r10 plus a constant (stackoff.c); an access through a
 * pointer of unknown offset may read every slot and write none for sure.
 * The bytes helpers read (keys, values, data) are checked for being
 * initialised, never for their values, so they demand nothing.
 *
 * Two answers are kept. DEMAND_FULL counts every branch's operands.
 * DEMAND_RELAXED leaves out the operands of branches whose sides rejoin
 * (rejoin.c) when no operand is needed after the branch: the exploration
 * follows both sides of such a branch without narrowing anything when both
 * are possible (jmp.c), so the paths below do not depend on those values.
 * When the values do decide such a branch on a path, the states stored
 * above it are compared with DEMAND_FULL (prune.c).
 */
#include <stdlib.h>

#include "core/helpers.h"
#include "core/map_types.h"
#include "vstate.h"

#define R0 0x1u
#define ARGS 0x3eu   /* r1-r5 */
#define ALL_SLOTS (~0ULL)

struct demand_ctx {
	struct verifier *v;
	const int32_t (*sp)[BPF_REG_COUNT]; /* stack_offsets() */
	const struct rejoin *rj;            /* find_rejoining_branches() */
	enum demand_mode mode;
};

static uint16_t bit(int r)
{
	return (uint16_t)(1u << r);
}

/* Whether a write through @ref may change a slot that matters. */
static bool hits(const struct stack_ref *ref, uint64_t slots)
{
	return ref->stack && (!ref->exact || (slots & ref->touched));
}

/* The slots a read through @ref may take its value from. */
static uint64_t read_slots(const struct stack_ref *ref)
{
	if (!ref->stack)
		return 0;
	return ref->exact ? ref->touched : ALL_SLOTS;
}

static struct demand load_demand(const struct demand_ctx *c, size_t i,
				 struct demand out)
{
	const struct bpf_insn *insn = &c->v->insns[i];
	struct stack_ref ref = insn_stack_ref(insn, c->sp[i]);

	if (out.regs & bit(insn->dst_reg))
		out.slots |= read_slots(&ref);
	out.regs = (uint16_t)((out.regs & ~bit(insn->dst_reg)) |
			      bit(insn->src_reg));
	return out;
}

static struct demand store_demand(const struct demand_ctx *c, size_t i,
				  struct demand out)
{
	const struct bpf_insn *insn = &c->v->insns[i];
	struct stack_ref ref = insn_stack_ref(insn, c->sp[i]);

	if (BPF_CLASS(insn->code) == BPF_STX && hits(&ref, out.slots))
		out.regs |= bit(insn->src_reg);
	if (ref.exact)
		out.slots &= ~ref.covered;
	out.regs |= bit(insn->dst_reg);
	return out;
}

/* Read, combine, write back; a fetch gives the old value. */
static struct demand atomic_demand(const struct demand_ctx *c, size_t i,
				   struct demand out)
{
	const struct bpf_insn *insn = &c->v->insns[i];
	struct stack_ref ref = insn_stack_ref(insn, c->sp[i]);
	bool cmpxchg = insn->imm == BPF_CMPXCHG;
	uint16_t result = !(insn->imm & BPF_FETCH) ? 0 :
			  cmpxchg ? R0 : bit(insn->src_reg);
	bool hit = hits(&ref, out.slots);

	if (hit || (out.regs & result))
		out.slots |= read_slots(&ref);
	out.regs = (uint16_t)((out.regs & ~result) | bit(insn->dst_reg));
	if (hit)
		out.regs |= bit(insn->src_reg) | (cmpxchg ? R0 : 0);
	return out;
}

/*
 * Argument registers whose values a helper's checks look at: all but
 * plain numbers. A memory argument's address matters (its bounds are
 * checked), the bytes it points to do not: the helper reads them as data.
 */
static uint16_t helper_arg_demand(const struct helper_info *p,
				  bool r0_wanted)
{
	uint16_t d = 0;

	for (int i = 0; i < 5; i++)
		if (p->args[i] != ARG_NONE && p->args[i] != ARG_SCALAR &&
		    p->args[i] != ARG_ANY_OR_UNINIT)
			d |= bit(i + 1);
	if (p->ret == RET_ARG1 && r0_wanted)
		d |= bit(1);
	return d;
}

/* The slots a helper surely overwrites lose their old values. */
static struct demand helper_demand(const struct demand_ctx *c, size_t i,
				   struct demand out)
{
	const struct helper_info *p = helper_lookup(c->v->insns[i].imm,
						    c->v->opts.abi,
						    c->v->opts.users);
	bool r0_wanted = out.regs & R0;

	out.regs &= (uint16_t)~(ARGS | R0);
	if (!p) {
		out.regs |= ARGS;
		return out;
	}
	for (int a = 0; a < 5; a++) {
		if (p->args[a] == ARG_U64_OUT) {
			struct stack_ref ref = stack_ref(c->sp[i][a + 1], 0, 8);

			if (ref.exact)
				out.slots &= ~ref.covered;
		}
	}
	out.regs |= helper_arg_demand(p, r0_wanted);
	return out;
}

static uint16_t branch_operands(const struct bpf_insn *insn)
{
	return bit(insn->dst_reg) |
	       (BPF_SRC(insn->code) == BPF_X ? bit(insn->src_reg) : 0);
}

/*
 * A branch whose sides rejoin decides nothing that matters when no operand
 * is needed after it (a clamp `if (n > 64) n = 64` keeps narrowing n) and
 * the paths to the join write nothing that matters there (`if (x & 1)
 * i++` decides when a loop on i ends).
 */
static bool is_free(const struct demand_ctx *c, size_t i, struct demand out)
{
	const struct rejoin *rj = &c->rj[i];
	const struct demand *at_join;

	if (rj->join < 0 || (out.regs & branch_operands(&c->v->insns[i])))
		return false;
	at_join = &c->v->aux[rj->join].demand[DEMAND_RELAXED];
	return !(rj->writes.regs & at_join->regs) &&
	       !(rj->writes.slots & at_join->slots);
}

static struct demand jmp_demand(const struct demand_ctx *c, size_t i,
				struct demand out)
{
	const struct verifier *v = c->v;
	const struct bpf_insn *insn = &v->insns[i];
	uint8_t op = BPF_OP(insn->code);

	if (op == BPF_JA)
		return out;
	if (op == BPF_EXIT) /* the program's own result is just a number */
		return (struct demand){ 0, v->aux[i].subprog ? R0 : 0 };
	if (op == BPF_CALL && BPF_SRC(insn->code) == BPF_X) {
		out.regs = (uint16_t)((out.regs & ~(ARGS | R0)) | ARGS |
				      bit(insn->dst_reg));
		return out;
	}
	if (op == BPF_CALL && insn->src_reg == BPF_PSEUDO_CALL) {
		out.regs = (uint16_t)((out.regs & ~(ARGS | R0)) | ARGS);
		/* the function may read this stack through its arguments */
		if (stack_passed(c->sp[i]))
			out.slots = ALL_SLOTS;
		return out;
	}
	if (op == BPF_CALL)
		return helper_demand(c, i, out);
	if (c->mode == DEMAND_RELAXED && is_free(c, i, out))
		return out;
	out.regs |= branch_operands(insn);
	return out;
}

static struct demand alu_demand(const struct bpf_insn *insn,
				struct demand out)
{
	uint16_t dst = bit(insn->dst_reg), src = bit(insn->src_reg);
	uint8_t op = BPF_OP(insn->code);
	bool wanted = out.regs & dst;

	out.regs &= (uint16_t)~dst;
	if (!wanted)
		return out;
	if (op != BPF_MOV)
		out.regs |= dst;
	if (BPF_SRC(insn->code) == BPF_X && op != BPF_NEG && op != BPF_END)
		out.regs |= src;
	return out;
}

/* What matters before instruction @i, given what matters after it. */
static struct demand demand_transfer(const struct demand_ctx *c, size_t i,
				     struct demand out)
{
	const struct bpf_insn *insn = &c->v->insns[i];

	/* refused when reached: what comes after it does not matter */
	if (!cfg_regs_valid(insn))
		return out;
	switch (BPF_CLASS(insn->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		return alu_demand(insn, out);
	case BPF_LDX:
		return load_demand(c, i, out);
	case BPF_ST:
		return store_demand(c, i, out);
	case BPF_STX:
		return BPF_MODE(insn->code) == BPF_ATOMIC ?
		       atomic_demand(c, i, out) : store_demand(c, i, out);
	case BPF_LD:
		out.regs &= (uint16_t)~bit(insn->dst_reg);
		return out;
	default:
		return jmp_demand(c, i, out);
	}
}

/* Backward to a fixed point, from what aux holds already. */
static void solve(const struct demand_ctx *c)
{
	struct verifier *v = c->v;
	bool changed = true;

	while (changed) {
		changed = false;
		for (size_t i = v->cnt; i-- > 0;) {
			struct demand out = { 0, 0 }, in, *old;
			size_t succ[2];
			int n;

			if (v->aux[i].subprog == -1)
				continue;
			n = cfg_successors(v, i, succ);
			for (int k = 0; k < n; k++) {
				const struct demand *d =
					&v->aux[succ[k]].demand[c->mode];

				out.regs |= d->regs;
				out.slots |= d->slots;
			}
			in = demand_transfer(c, i, out);
			in.regs &= 0x3ff;
			old = &v->aux[i].demand[c->mode];
			if (in.regs != old->regs || in.slots != old->slots) {
				*old = in;
				changed = true;
			}
		}
	}
}

/* What jmp.c explores freely: the branches free at the fixed point. */
static void mark_free_branches(const struct demand_ctx *c)
{
	struct verifier *v = c->v;

	for (size_t i = 0; i < v->cnt; i++) {
		size_t succ[2];
		int n = v->aux[i].subprog == -1 ? 0 :
			cfg_successors(v, i, succ);
		struct demand out = { 0, 0 };

		for (int k = 0; k < n; k++)
			out.regs |= v->aux[succ[k]].demand[DEMAND_RELAXED].regs;
		v->aux[i].free_branch = is_free(c, i, out);
	}
}

int demand_build(struct verifier *v)
{
	int32_t (*sp)[BPF_REG_COUNT] = malloc(v->cnt * sizeof(*sp));
	struct rejoin *rj = malloc(v->cnt * sizeof(*rj));
	struct demand_ctx c = { v, (const int32_t (*)[BPF_REG_COUNT])sp, rj,
				DEMAND_FULL };
	int err = sp && rj ? 0 : vnomem();

	if (!err) {
		stack_offsets(v, sp);
		err = find_rejoining_branches(v, c.sp, rj);
	}
	if (!err) {
		solve(&c);
		c.mode = DEMAND_RELAXED;
		solve(&c);
		mark_free_branches(&c);
	}
	free(sp);
	free(rj);
	return err;
}
