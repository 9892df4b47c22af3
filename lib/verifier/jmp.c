/* SPDX-License-Identifier: MIT */
/*
 * Conditional jumps: each side that can happen is explored with the
 * registers narrowed to what the condition implies. Comparing a pointer
 * that may be NULL against 0 is the NULL check that makes it usable.
 */
#include "vstate.h"

struct narrow {
	uint32_t id;
	struct scalar v;
};

static void narrow_one(struct reg *r, void *arg)
{
	const struct narrow *n = arg;

	if (r->type == REG_SCALAR && r->id == n->id)
		r->v = n->v;
}

/* Give register @regno of the top frame, and every copy of it, value @s. */
static void narrow_reg(struct vstate *st, int regno, const struct scalar *s)
{
	struct reg *r = &cur_frame(st)->regs[regno];
	struct narrow n = { r->id, *s };

	r->v = *s;
	if (r->id)
		state_for_each_reg(st, narrow_one, &n);
}

struct null_mark {
	uint32_t id;
	bool is_null;
	uint32_t ref;
};

static void mark_one(struct reg *r, void *arg)
{
	struct null_mark *m = arg;

	if (!reg_is_nullable(r) || r->id != m->id)
		return;
	if (m->is_null) {
		if (r->type == REG_PTR_RECORD_OR_NULL)
			m->ref = r->ref;
		reg_const(r, 0);
		return;
	}
	r->type = r->type == REG_PTR_MAP_VALUE_OR_NULL ? REG_PTR_MAP_VALUE :
		  REG_PTR_RECORD;
}

/* On the NULL side nothing was reserved, so nothing is to be released. */
static void mark_null(struct vstate *st, uint32_t id, bool is_null)
{
	struct null_mark m = { id, is_null, 0 };

	state_for_each_reg(st, mark_one, &m);
	if (m.ref)
		ref_release(st, m.ref);
}

static bool is_zero(const struct reg *r)
{
	uint64_t c;

	return reg_const_value(r, &c) && c == 0;
}

/*
 * Both sides are possible: returns 1 if the current path takes the jump
 * (replaying a recorded path), else 0 with *other the state queued for
 * the jump target (NULL when replaying).
 */
static int fork_paths(struct verifier *v, int target, struct vstate **other)
{
	*other = NULL;
	if (v->replaying) {
		if (v->replay_pos < v->replay_len)
			return v->replay_hist[v->replay_pos++];
		return 0;
	}
	return push_branch(v, target, other);
}

/* Both sides, nothing narrowed. */
static int fork_unnarrowed(struct verifier *v, int target)
{
	struct vstate *jumped;
	int r = fork_paths(v, target, &jumped);

	return r < 0 ? r : r ? target : v->cur->insn + 1;
}

/* Pointers that cannot be NULL (a direct run may get a NULL ctx; a
 * kernel without parameters has NULL ctx->params). */
static bool never_null(const struct reg *r)
{
	return reg_is_ptr(r) && !reg_is_nullable(r) &&
	       r->type != REG_PTR_CTX && r->type != REG_PTR_PARAMS;
}

/* p == NULL holds on the jump side iff @jeq. */
static int null_check(struct verifier *v, uint32_t id, bool jeq, int target)
{
	struct vstate *jumped;
	int r = fork_paths(v, target, &jumped);

	if (r < 0)
		return r;
	if (r) {
		mark_null(v->cur, id, jeq);
		return target;
	}
	if (jumped)
		mark_null(jumped, id, jeq);
	mark_null(v->cur, id, !jeq);
	return v->cur->insn + 1;
}

/*
 * Pointer comparisons are allowed (they reveal nothing the host does not
 * know) but narrow nothing, except the NULL checks.
 */
static int pointer_jmp(struct verifier *v, const struct bpf_insn *insn,
		       const struct reg *a, const struct reg *b, int target)
{
	uint8_t op = BPF_OP(insn->code);

	if (BPF_CLASS(insn->code) == BPF_JMP32)
		return vfail(v, "32-bit comparison of a pointer");
	if (op == BPF_JEQ || op == BPF_JNE) {
		if (reg_is_nullable(a) && is_zero(b))
			return null_check(v, a->id, op == BPF_JEQ, target);
		if (reg_is_nullable(b) && is_zero(a))
			return null_check(v, b->id, op == BPF_JEQ, target);
		if ((never_null(a) && is_zero(b)) ||
		    (never_null(b) && is_zero(a)))
			return op == BPF_JEQ ? v->cur->insn + 1 : target;
	}
	return fork_unnarrowed(v, target);
}

static void narrow_both(struct vstate *st, const struct bpf_insn *insn,
			const struct scalar *a, const struct scalar *b)
{
	narrow_reg(st, insn->dst_reg, a);
	if (BPF_SRC(insn->code) == BPF_X)
		narrow_reg(st, insn->src_reg, b);
}

static bool copy_needed(const struct frame *f, uint32_t id,
			const struct demand *after)
{
	for (int r = 0; r < BPF_REG_COUNT - 1; r++)
		if (f->regs[r].type == REG_SCALAR && f->regs[r].id == id &&
		    (after->regs & (1u << r)))
			return true;
	for (uint32_t s = 0; s < f->nslots; s++)
		for (int b = 0; b < 8; b++)
			if (f->slots[s].spill_size[b] &&
			    f->slots[s].spill[b].type == REG_SCALAR &&
			    f->slots[s].spill[b].id == id &&
			    (s >= 64 || (after->slots & (1ULL << s))))
				return true;
	return false;
}

/*
 * Whether an operand of the branch at @idx has a copy whose value matters
 * after it: the copy would be narrowed with the operand. Copies in callers'
 * frames are taken to matter.
 */
static bool copies_matter(const struct verifier *v, int idx, int target,
			  const struct reg *a, const struct reg *b)
{
	const struct vstate *st = v->cur;
	struct demand after;
	const struct demand all = { ~0ULL, 0x3ff };

	/* A side leaving the program is refused when taken: no shortcut. */
	if ((size_t)idx + 1 >= v->cnt || target < 0 || (size_t)target >= v->cnt)
		return true;
	after = v->aux[idx + 1].demand[DEMAND_RELAXED];

	after.regs |= v->aux[target].demand[DEMAND_RELAXED].regs;
	after.slots |= v->aux[target].demand[DEMAND_RELAXED].slots;
	for (int f = 0; f < st->depth; f++) {
		const struct demand *d = f == st->depth - 1 ? &after : &all;

		if ((a->id && copy_needed(st->frames[f], a->id, d)) ||
		    (b->id && copy_needed(st->frames[f], b->id, d)))
			return true;
	}
	return false;
}

/*
 * A free branch (lib/verifier/demand.c) has sides that rejoin and operands
 * that matter nowhere after it. When both sides are possible, both are
 * explored without narrowing anything, so what follows does not depend on
 * the operands' values and pruning may ignore them. When the values decide
 * the side (or an operand is a pointer, or has a copy that matters), the
 * branch is taken as usual and the states stored above learn that the path
 * depends on them.
 */
int check_cond_jmp(struct verifier *v, const struct bpf_insn *insn)
{
	bool j32 = BPF_CLASS(insn->code) == BPF_JMP32;
	enum cmp_op op = jmp_cmp(BPF_OP(insn->code));
	struct reg *regs = cur_regs(v), imm, *a, *b = &imm;
	struct scalar ta, tb, fa, fb;
	int idx = v->cur->insn, target = idx + 1 + insn->off;
	struct vstate *jumped;
	bool can_jump, can_fall;
	int err = reg_readable(v, insn->dst_reg), r;

	if (err)
		return err;
	a = &regs[insn->dst_reg];
	if (BPF_SRC(insn->code) == BPF_X) {
		err = reg_readable(v, insn->src_reg);
		if (err)
			return err;
		b = &regs[insn->src_reg];
	} else {
		reg_const(&imm, (uint64_t)(int64_t)insn->imm);
	}
	if (reg_is_ptr(a) || reg_is_ptr(b)) {
		if (v->aux[idx].free_branch)
			path_depends_on_values(v);
		return pointer_jmp(v, insn, a, b, target);
	}
	ta = fa = a->v;
	tb = fb = b->v;
	can_jump = sc_refine(&ta, &tb, op, j32);
	can_fall = sc_refine(&fa, &fb, cmp_negate(op), j32);
	if (v->aux[idx].free_branch) {
		if (can_jump && can_fall &&
		    !copies_matter(v, idx, target, a, b))
			return fork_unnarrowed(v, target);
		path_depends_on_values(v);
	}
	if (can_jump && can_fall) {
		r = fork_paths(v, target, &jumped);
		if (r < 0)
			return r;
		if (r) {
			narrow_both(v->cur, insn, &ta, &tb);
			return target;
		}
		if (jumped)
			narrow_both(jumped, insn, &ta, &tb);
		narrow_both(v->cur, insn, &fa, &fb);
		return idx + 1;
	}
	if (can_jump) {
		narrow_both(v->cur, insn, &ta, &tb);
		return target;
	}
	if (!can_fall)
		return vfail(v, "internal error: neither side of the branch "
			     "is possible");
	narrow_both(v->cur, insn, &fa, &fb);
	return idx + 1;
}
