/* SPDX-License-Identifier: MIT */
/*
 * Which registers' values may matter for safety from each instruction on.
 *
 * Pruning compares a new state with an explored one register by register;
 * a scalar whose value can never influence a safety decision (it is only
 * returned at the program's exit, stored into a map value or a record, or
 * passed where any number will do) need not match, or a register that
 * collects flags over many branches would multiply the paths. A value
 * matters when it may reach, through registers or the stack, a branch
 * condition, an address (pointer arithmetic, the base of an access), a
 * helper argument other than a plain number, a function's arguments or
 * return value, or the stack. Everything is computed statically, over all
 * paths: a sound over-approximation of Linux's precision tracking.
 *
 * What reaches the stack needs to know which stores may hit the stack: a
 * forward pass finds the registers that may hold a stack pointer.
 */
#include <stdlib.h>

#include "protos.h"
#include "vstate.h"

#define R0 0x1u
#define ARGS 0x3eu   /* r1-r5 */
#define R10 0x400u

static uint16_t bit(int r)
{
	return (uint16_t)(1u << r);
}

static bool is_call(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_CALL) ||
	       insn->code == (BPF_JMP | BPF_CALL | BPF_X);
}

/* Registers that may hold a stack pointer after @insn, given @in before. */
static uint16_t stack_transfer(const struct bpf_insn *insn, uint16_t in,
			       bool spilled)
{
	uint16_t dst = bit(insn->dst_reg), src = bit(insn->src_reg);
	uint8_t op = BPF_OP(insn->code);

	switch (BPF_CLASS(insn->code)) {
	case BPF_ALU64:
		if (op == BPF_MOV && BPF_SRC(insn->code) == BPF_X && !insn->off)
			return (uint16_t)((in & ~dst) | ((in & src) ? dst : 0));
		if ((op == BPF_ADD || op == BPF_SUB) &&
		    BPF_SRC(insn->code) == BPF_X && (in & src))
			return in | dst;
		if (op == BPF_ADD || op == BPF_SUB)
			return in;
		return in & ~dst;
	case BPF_ALU:
	case BPF_LD:
		return in & ~dst;
	case BPF_LDX: /* pointers are only ever spilled to the stack */
		return spilled ? in | dst : in & ~dst;
	case BPF_STX:
		if (BPF_MODE(insn->code) == BPF_ATOMIC &&
		    (insn->imm & BPF_FETCH))
			return in & ~(insn->imm == BPF_CMPXCHG ? R0 : src);
		return in;
	case BPF_JMP:
		if (!is_call(insn))
			return in;
		/* a function may return a pointer into its caller's stack */
		if (insn->src_reg == BPF_PSEUDO_CALL)
			return (uint16_t)((in & ~(ARGS | R0)) | R0);
		return in & ~(ARGS | R0);
	default:
		return in;
	}
}

static bool spills_stack_pointer(const struct bpf_insn *insn, uint16_t in)
{
	return BPF_CLASS(insn->code) == BPF_STX &&
	       BPF_MODE(insn->code) == BPF_MEM && (in & bit(insn->src_reg));
}

/* Forward to a fixed point; again while a new spill of one is found. */
static void find_stack_pointers(struct verifier *v, uint16_t *in)
{
	bool spilled = false, changed = true;

	while (changed) {
		changed = false;
		for (size_t i = 0; i < v->cnt; i++)
			in[i] = 0;
		for (int s = 0; s < v->nsub; s++)
			in[v->subprogs[s].start] = s ? R10 | ARGS : R10;
		for (bool again = true; again;) {
			again = false;
			for (size_t i = 0; i < v->cnt; i++) {
				size_t succ[2];
				int n;
				uint16_t out;

				if (v->aux[i].subprog == -1)
					continue;
				if (!spilled && spills_stack_pointer(&v->insns[i],
								     in[i]))
					spilled = changed = true;
				out = stack_transfer(&v->insns[i], in[i],
						     spilled);
				n = cfg_successors(v, i, succ);
				for (int k = 0; k < n; k++) {
					if ((in[succ[k]] | out) != in[succ[k]]) {
						in[succ[k]] |= out;
						again = true;
					}
				}
			}
		}
	}
}

/* Argument registers whose values a helper's checks look at. */
static uint16_t helper_demand(const struct verifier *v, int32_t id,
			      uint16_t out)
{
	const struct helper_proto *p = proto_find(id, v->opts.abi);
	uint16_t d = 0;

	if (!p)
		return ARGS;
	for (int i = 0; i < 5; i++)
		if (p->args[i] != ARG_NONE && p->args[i] != ARG_SCALAR &&
		    p->args[i] != ARG_ANY_OR_UNINIT)
			d |= bit(i + 1);
	if (p->ret == RET_ARG1 && (out & R0))
		d |= bit(1);
	return d;
}

static uint16_t jmp_demand(const struct verifier *v, size_t i, uint16_t out)
{
	const struct bpf_insn *insn = &v->insns[i];
	uint8_t op = BPF_OP(insn->code);

	if (op == BPF_JA)
		return out;
	if (op == BPF_EXIT) /* the program's own result is just a number */
		return v->aux[i].subprog ? R0 : 0;
	if (op == BPF_CALL) {
		uint16_t d = insn->src_reg == BPF_PSEUDO_CALL ? ARGS :
			     BPF_SRC(insn->code) == BPF_X ?
			     ARGS | bit(insn->dst_reg) :
			     helper_demand(v, insn->imm, out);

		return (uint16_t)((out & ~(ARGS | R0)) | d);
	}
	return out | bit(insn->dst_reg) |
	       (BPF_SRC(insn->code) == BPF_X ? bit(insn->src_reg) : 0);
}

static uint16_t store_demand(const struct bpf_insn *insn, uint16_t out,
			     uint16_t stack_ptrs)
{
	uint16_t dst = bit(insn->dst_reg), src = bit(insn->src_reg);
	bool to_stack = stack_ptrs & dst;

	if (BPF_CLASS(insn->code) == BPF_ST)
		return out | dst;
	if (BPF_MODE(insn->code) != BPF_ATOMIC)
		return out | dst | (to_stack ? src : 0);
	if (insn->imm == BPF_CMPXCHG)
		out &= (uint16_t)~R0;
	else if (insn->imm & BPF_FETCH)
		out &= (uint16_t)~src;
	return out | dst | (to_stack ? src : 0) |
	       (to_stack && insn->imm == BPF_CMPXCHG ? R0 : 0);
}

/* Registers whose value may matter before @i, given those after it. */
static uint16_t demand_transfer(const struct verifier *v, size_t i,
				uint16_t out, uint16_t stack_ptrs)
{
	const struct bpf_insn *insn = &v->insns[i];
	uint16_t dst = bit(insn->dst_reg), src = bit(insn->src_reg);
	uint8_t op = BPF_OP(insn->code);
	bool wanted = out & dst;

	switch (BPF_CLASS(insn->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		out &= (uint16_t)~dst;
		if (!wanted)
			return out;
		if (op != BPF_MOV)
			out |= dst;
		if (BPF_SRC(insn->code) == BPF_X && op != BPF_NEG &&
		    op != BPF_END)
			out |= src;
		return out;
	case BPF_LDX:
		return (uint16_t)((out & ~dst) | src);
	case BPF_ST:
	case BPF_STX:
		return store_demand(insn, out, stack_ptrs);
	case BPF_LD:
		return out & (uint16_t)~dst;
	default:
		return jmp_demand(v, i, out);
	}
}

static void compute_demand(struct verifier *v, const uint16_t *stack_ptrs)
{
	bool changed = true;

	while (changed) {
		changed = false;
		for (size_t i = v->cnt; i-- > 0;) {
			size_t succ[2];
			int n;
			uint16_t out = 0, in;

			if (v->aux[i].subprog == -1)
				continue;
			n = cfg_successors(v, i, succ);
			for (int k = 0; k < n; k++)
				out |= v->aux[succ[k]].demand_in;
			in = demand_transfer(v, i, out, stack_ptrs[i]) & 0x3ff;
			if (in != v->aux[i].demand_in) {
				v->aux[i].demand_in = in;
				changed = true;
			}
		}
	}
}

int demand_build(struct verifier *v)
{
	uint16_t *stack_ptrs = calloc(v->cnt, sizeof(*stack_ptrs));

	if (!stack_ptrs)
		return vnomem();
	find_stack_pointers(v, stack_ptrs);
	compute_demand(v, stack_ptrs);
	free(stack_ptrs);
	return 0;
}
