/* SPDX-License-Identifier: MIT */
/*
 * Where registers may point into the stack, before each instruction: a
 * forward analysis over all paths giving, for each register, "never a
 * stack pointer" (SP_NONE), "r10 + c of its own frame on every path"
 * (c), or "may point anywhere in any frame's stack" (SP_ANY: a variable
 * offset, a pointer passed in by a caller, one filled back from the stack,
 * or a stack pointer on some paths only). demand.c uses it to follow
 * values through individual stack slots; the translator learns from it
 * which memory accesses never reach a stack (verifier_opts.never_stack).
 */
#include <stdlib.h>
#include <string.h>

#include "vstate.h"

/* Offsets beyond this are out of any frame: treated as unknown. */
#define FAR (1 << 20)

static int32_t sp_join(int32_t a, int32_t b)
{
	if (a == b || b == SP_UNSEEN)
		return a;
	return a == SP_UNSEEN ? b : SP_ANY;
}

static int32_t sp_add(int32_t a, int64_t delta)
{
	int64_t c;

	if (a == SP_NONE || a == SP_ANY)
		return a;
	c = (int64_t)a + delta;
	return c < -FAR || c > FAR ? SP_ANY : (int32_t)c;
}

static void sp_alu64(const struct bpf_insn *insn, int32_t *r)
{
	int32_t *dst = &r[insn->dst_reg], src;
	uint8_t op = BPF_OP(insn->code);

	if (BPF_SRC(insn->code) == BPF_K) {
		if (op == BPF_ADD)
			*dst = sp_add(*dst, insn->imm);
		else if (op == BPF_SUB)
			*dst = sp_add(*dst, -(int64_t)insn->imm);
		else
			*dst = SP_NONE;
		return;
	}
	src = r[insn->src_reg];
	if (op == BPF_MOV)
		*dst = insn->off ? SP_NONE : src; /* off: movsx, a number */
	else if (op == BPF_ADD || op == BPF_SUB)
		*dst = *dst == SP_NONE && src == SP_NONE ? SP_NONE : SP_ANY;
	else
		*dst = SP_NONE;
}

static void sp_call(const struct bpf_insn *insn, int32_t *r)
{
	for (int i = 0; i <= 5; i++)
		r[i] = SP_NONE;
	/* a function may return a pointer into its caller's stack */
	if (insn->src_reg == BPF_PSEUDO_CALL && BPF_SRC(insn->code) == BPF_K)
		r[0] = SP_ANY;
}

/*
 * @r: the registers before @insn, changed into those after it. Pointers
 * are only ever stored on the stack; *spilled records that one was, after
 * which any load may give one back.
 */
static void sp_transfer(const struct bpf_insn *insn, int32_t *r,
			bool *spilled)
{
	switch (BPF_CLASS(insn->code)) {
	case BPF_ALU64:
		sp_alu64(insn, r);
		break;
	case BPF_ALU:
		r[insn->dst_reg] = SP_NONE;
		break;
	case BPF_LD:
		if (bpf_is_lddw(insn))
			r[insn->dst_reg] = SP_NONE;
		else
			sp_call(insn, r);
		break;
	case BPF_LDX:
		r[insn->dst_reg] = *spilled ? SP_ANY : SP_NONE;
		break;
	case BPF_STX:
		if (BPF_MODE(insn->code) != BPF_ATOMIC) {
			if (r[insn->src_reg] != SP_NONE)
				*spilled = true;
		} else if (insn->imm & BPF_FETCH) { /* fetches a number */
			r[insn->imm == BPF_CMPXCHG ? 0 : insn->src_reg] =
				SP_NONE;
		}
		break;
	case BPF_JMP:
		if (BPF_OP(insn->code) == BPF_CALL)
			sp_call(insn, r);
		break;
	default:
		break;
	}
}

/* r10 of every function; the arguments of a called one may be anything. */
static void sp_entry(bool called, int32_t *r)
{
	for (int i = 0; i < BPF_REG_COUNT; i++)
		r[i] = called && i >= 1 && i <= 5 ? SP_ANY : SP_NONE;
	r[BPF_REG_COUNT - 1] = 0;
}

static bool sp_merge(int32_t *into, const int32_t *from)
{
	bool changed = false;

	for (int i = 0; i < BPF_REG_COUNT; i++) {
		int32_t j = sp_join(into[i], from[i]);

		changed |= j != into[i];
		into[i] = j;
	}
	return changed;
}

void stack_offsets(const struct verifier *v, int32_t (*sp)[BPF_REG_COUNT])
{
	bool spilled = false, again = true;

	for (size_t i = 0; i < v->cnt; i++)
		for (int r = 0; r < BPF_REG_COUNT; r++)
			sp[i][r] = SP_UNSEEN;
	for (int s = 0; s < v->nsub; s++)
		sp_entry(s > 0, sp[v->subprogs[s].start]);
	while (again) {
		again = false;
		for (size_t i = 0; i < v->cnt; i++) {
			int32_t out[BPF_REG_COUNT];
			bool was_spilled = spilled;
			size_t succ[2];
			int n;

			/* r10 is known wherever a path has reached */
			if (v->aux[i].subprog == -1 ||
			    sp[i][BPF_REG_COUNT - 1] == SP_UNSEEN ||
			    !cfg_regs_valid(&v->insns[i]))
				continue;
			memcpy(out, sp[i], sizeof(out));
			sp_transfer(&v->insns[i], out, &spilled);
			again |= spilled != was_spilled;
			n = cfg_successors(v, i, succ);
			for (int k = 0; k < n; k++)
				again |= sp_merge(sp[succ[k]], out);
		}
	}
}

static bool may_be_stack(int32_t sp)
{
	return sp != SP_NONE && sp != SP_UNSEEN;
}

struct stack_ref stack_ref(int32_t base, int32_t off, uint32_t size)
{
	struct stack_ref ref = { .stack = may_be_stack(base) };
	int64_t lo = (int64_t)base + off, hi = lo + size;

	if (!ref.stack || base == SP_ANY || lo < -BPF_STACK_SIZE || hi > 0 ||
	    !size)
		return ref;
	ref.exact = true;
	/* slot k holds bytes r10 - 8 * (k + 1) .. r10 - 8 * k - 1 */
	for (int64_t k = -hi / 8; k <= (-lo - 1) / 8; k++) {
		ref.touched |= 1ULL << k;
		if (lo <= -8 * (k + 1) && hi >= -8 * k)
			ref.covered |= 1ULL << k;
	}
	return ref;
}

/* The register holding the pointer of a load, store or atomic. */
static int access_base(const struct bpf_insn *insn)
{
	return BPF_CLASS(insn->code) == BPF_LDX ? insn->src_reg :
	       insn->dst_reg;
}

struct stack_ref insn_stack_ref(const struct bpf_insn *insn,
				const int32_t *regs)
{
	static const uint32_t bytes[] = { 4, 2, 1, 8 };

	return stack_ref(regs[access_base(insn)], insn->off,
			 bytes[BPF_SIZE(insn->code) >> 3]);
}

/*
 * Only SP_NONE counts: an instruction no path reaches (SP_UNSEEN) is
 * still translated, and its pointer may well be r10's.
 */
int mark_never_stack(const struct verifier *v, bool *out)
{
	int32_t (*sp)[BPF_REG_COUNT] = malloc(v->cnt * sizeof(*sp));

	if (!sp)
		return vnomem();
	stack_offsets(v, sp);
	for (size_t i = 0; i < v->cnt; i++) {
		uint8_t cls = BPF_CLASS(v->insns[i].code);

		out[i] = (cls == BPF_LDX || cls == BPF_ST || cls == BPF_STX) &&
			 sp[i][access_base(&v->insns[i])] == SP_NONE;
	}
	free(sp);
	return 0;
}

bool stack_passed(const int32_t *regs)
{
	for (int r = 1; r <= 5; r++)
		if (may_be_stack(regs[r]))
			return true;
	return false;
}
