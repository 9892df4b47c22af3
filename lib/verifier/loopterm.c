/* SPDX-License-Identifier: MIT */
/*
 * Termination of a loop whose bound the verifier cannot see (a value read
 * from a map), proven once per loop head H from the code alone:
 * - every path from H back to H (an iteration) is followed symbolically,
 *   each register and stack slot of the frame being "its value at H plus
 *   a constant", a zero-extended low half of that, a constant, or unknown;
 *   a path that leaves the loop's instructions ends, one that meets an
 *   instruction twice (an inner loop not through H) or too many paths
 *   give up;
 * - one location I steps by exactly +1 or -1 (mod 2^64, or mod 2^32 for a
 *   32-bit counter) on every iteration;
 * - every iteration passes one conditional jump E the same way, comparing
 *   I plus a constant (or its low half) with a bound B that is a constant
 *   or the value at H of a location no iteration changes.
 * So at E the counter takes consecutive values of its width, which must be
 * 32 bits (JMP32, or the zero-extended low half on 64: a 64-bit counter
 * could run 2^64 times, which is a hang, not an end): within 2^32
 * iterations it takes every one of them, and the loop ends unless
 * the condition that keeps it going holds for all of them, which
 * loop_bound_ok() rules out from B's range in the state at H (B is the
 * same in every iteration). The abstract interpreter then only needs an
 * invariant at H, not every iteration (widen.c).
 */
#include <stdlib.h>
#include <string.h>

#include "core/helpers.h"
#include "core/map_types.h"
#include "vstate.h"

#define MAX_SLOTS 64          /* the 512-byte frame */
#define NLOC (11 + MAX_SLOTS) /* r0-r10, then slots */
#define MAX_PATHS 256
#define MAX_STEPS 65536

enum sym_kind { SYM_UNKNOWN, SYM_CONST, SYM_INIT };
enum sym_view {
	VIEW_FULL,
	VIEW_ZEXT32, /* the low half, zero-extended */
	VIEW_SHL32,  /* shifted left by 32 */
	VIEW_LOW32,  /* the low half; the high one unknown */
};

/* INIT: view(value of @loc at H + @add); CONST: @add. */
struct sym {
	uint8_t kind, view;
	uint8_t loc;
	int64_t add;
};

struct path {
	int insn;
	uint32_t len;
	struct sym s[NLOC];
	/* the conditional jumps passed, in order */
	uint16_t ntests;
	struct test {
		int insn;
		uint8_t op; /* enum cmp_op of the side taken */
		struct sym a, b;
	} tests[32];
};

/* What the iterations did to each location, merged over all of them. */
enum loc_fate {
	FATE_NONE,
	FATE_SAME,  /* unchanged */
	FATE_SAME_LOW, /* its low half unchanged */
	FATE_STEP,  /* its value at H plus step[] (+1 or -1) */
	FATE_COPY,  /* the value at H of location step[] */
	FATE_OTHER,
};

struct analysis {
	struct verifier *v;
	int head;
	uint8_t *in_loop;
	int32_t (*sp)[BPF_REG_COUNT];
	struct path *stack;
	size_t nstack, cap;
	unsigned returns, steps;
	uint8_t fate[NLOC];
	int64_t step[NLOC];
	uint8_t step_view[NLOC];
	struct test common[32]; /* tests every iteration passed alike */
	int ncommon;
};

static const struct sym unknown_sym;

static struct sym init_sym(int loc)
{
	return (struct sym){ SYM_INIT, VIEW_FULL, (uint8_t)loc, 0 };
}

static struct sym const_sym(int64_t c)
{
	return (struct sym){ SYM_CONST, VIEW_FULL, 0, c };
}

static bool sym_same(const struct sym *a, const struct sym *b)
{
	return a->kind == b->kind && a->view == b->view && a->loc == b->loc &&
	       a->add == b->add;
}

/* The instructions on a cycle through @head: reachable from it and
 * reaching it, in its function. */
static uint8_t *loop_body(const struct verifier *v, int head)
{
	uint8_t *in = calloc(v->cnt, 1), *fwd = calloc(v->cnt, 1);
	bool changed = true;

	if (!in || !fwd) {
		free(in);
		free(fwd);
		return NULL;
	}
	fwd[head] = 1;
	while (changed) {
		changed = false;
		for (size_t i = 0; i < v->cnt; i++) {
			size_t succ[2];
			int n = fwd[i] ? cfg_successors(v, i, succ) : 0;

			for (int k = 0; k < n; k++) {
				bool reach = succ[k] == (size_t)head || in[succ[k]];

				changed |= !fwd[succ[k]] || (reach && !in[i]);
				fwd[succ[k]] = 1;
				in[i] |= reach;
			}
		}
	}
	free(fwd);
	return in;
}

static void clobber_slots(struct path *p)
{
	for (int l = 11; l < NLOC; l++)
		p->s[l] = unknown_sym;
}

/* dst = dst OP src for the operations a counter and its views go through. */
static struct sym alu_sym(struct sym d, struct sym s, uint8_t op, bool is64)
{
	bool addable = s.kind == SYM_CONST && d.kind != SYM_UNKNOWN &&
		       (d.view == VIEW_FULL || !is64);

	if (op == BPF_MOV)
		d = s;
	else if ((op == BPF_ADD || op == BPF_SUB) && addable)
		d.add = (int64_t)(op == BPF_ADD ? (uint64_t)d.add + (uint64_t)s.add :
				  (uint64_t)d.add - (uint64_t)s.add);
	else if (op == BPF_LSH && is64 && s.kind == SYM_CONST && s.add == 32 &&
		 d.kind == SYM_INIT && d.view == VIEW_FULL)
		d.view = VIEW_SHL32;
	else if (op == BPF_RSH && is64 && s.kind == SYM_CONST && s.add == 32 &&
		 d.kind == SYM_INIT && d.view == VIEW_SHL32)
		d.view = VIEW_ZEXT32;
	else if (op == BPF_AND && is64 && s.kind == SYM_CONST &&
		 s.add == 0xffffffffLL && d.kind == SYM_INIT &&
		 (d.view == VIEW_FULL || d.view == VIEW_LOW32))
		d.view = VIEW_ZEXT32;
	else
		return unknown_sym;
	if (d.kind == SYM_UNKNOWN)
		return unknown_sym;
	if (d.kind == SYM_CONST)
		d.add = is64 ? d.add : (int64_t)(uint32_t)d.add;
	else if (!is64 && d.view != VIEW_SHL32)
		d.view = VIEW_ZEXT32; /* 32-bit results are zero-extended */
	else if (!is64)
		return unknown_sym;
	return d;
}

static void exec_alu(struct path *p, const struct bpf_insn *insn)
{
	uint8_t op = BPF_OP(insn->code);
	bool is64 = BPF_CLASS(insn->code) == BPF_ALU64;
	struct sym src = BPF_SRC(insn->code) == BPF_X ? p->s[insn->src_reg] :
			 const_sym(insn->imm);

	/* movsx and the sign-extending forms carry an offset */
	if (insn->off && (op == BPF_MOV || op == BPF_DIV || op == BPF_MOD))
		p->s[insn->dst_reg] = unknown_sym;
	else
		p->s[insn->dst_reg] = alu_sym(p->s[insn->dst_reg], src, op, is64);
}

/* What a 4-byte store of @src into the low (or high) half of a slot
 * holding @old leaves there. */
static struct sym half_store(struct sym old, struct sym src, bool low)
{
	struct sym s = low ? src : old;

	if (s.kind != SYM_INIT || s.view == VIEW_SHL32)
		return unknown_sym;
	s.view = VIEW_LOW32;
	return s;
}

/*
 * Loads from the frame read what the path left there (whole slots, or a
 * slot's low half); stores replace whole slots or halves; other partial
 * stores clobber the slot, and an access the stack analysis cannot place
 * may touch any slot.
 */
static void exec_mem(const struct analysis *a, struct path *p,
		     const struct bpf_insn *insn)
{
	const int32_t *regs = a->sp[p->insn];
	struct stack_ref ref = insn_stack_ref(insn, regs);
	int cls = BPF_CLASS(insn->code);
	int base = cls == BPF_LDX ? insn->src_reg : insn->dst_reg;
	bool word = BPF_SIZE(insn->code) == BPF_W;
	int loc = -1, at = 0;

	if (ref.exact && ref.touched && !(ref.touched & (ref.touched - 1))) {
		for (loc = 11; !(ref.touched & (1ULL << (loc - 11))); loc++)
			;
		/* byte of the slot the access starts at */
		at = regs[base] + insn->off + 8 * (loc - 10);
	}
	if (cls == BPF_LDX) {
		/* sign-extending loads give no view tracked here */
		struct sym s = loc >= 0 && BPF_MODE(insn->code) == BPF_MEM ?
			       p->s[loc] : unknown_sym;

		if (loc >= 0 && !ref.covered && word && !at &&
		    s.kind == SYM_INIT && s.view != VIEW_SHL32)
			s.view = VIEW_ZEXT32; /* the low half, little-endian */
		else if (!ref.covered)
			s = unknown_sym;
		p->s[insn->dst_reg] = s;
		return;
	}
	if (!ref.stack)
		return; /* memory outside the stack: no slot changes */
	if (!ref.exact) {
		clobber_slots(p);
	} else if (loc >= 0 && cls == BPF_STX &&
		   BPF_MODE(insn->code) != BPF_ATOMIC &&
		   (ref.covered || (word && (at == 0 || at == 4)))) {
		p->s[loc] = ref.covered ? p->s[insn->src_reg] :
			    half_store(p->s[loc], p->s[insn->src_reg], !at);
	} else if (loc >= 0 && cls == BPF_ST && ref.covered) {
		p->s[loc] = const_sym(insn->imm);
	} else {
		for (int l = 11; l < NLOC; l++)
			if (ref.touched & (1ULL << (l - 11)))
				p->s[l] = unknown_sym;
	}
	if (cls == BPF_STX && BPF_MODE(insn->code) == BPF_ATOMIC &&
	    (insn->imm & BPF_FETCH))
		p->s[insn->imm == BPF_CMPXCHG ? 0 : insn->src_reg] = unknown_sym;
}

/* A helper may write the stack through a pointer argument. */
static bool helper_writes_memory(const struct verifier *v, int32_t id)
{
	const struct helper_info *h = helper_lookup(id, v->opts.abi,
						    v->opts.users);

	for (int i = 0; h && i < 5; i++)
		if (h->args[i] == ARG_MEM_OUT || h->args[i] == ARG_U64_OUT ||
		    h->args[i] == ARG_USER_BUF)
			return true;
	return !h;
}

static void exec_call(const struct analysis *a, struct path *p,
		      const struct bpf_insn *insn)
{
	bool local = insn->src_reg == BPF_PSEUDO_CALL;

	if ((local || BPF_SRC(insn->code) == BPF_X ||
	     helper_writes_memory(a->v, insn->imm)) &&
	    stack_passed(a->sp[p->insn]))
		clobber_slots(p);
	for (int r = 0; r <= 5; r++)
		p->s[r] = unknown_sym;
}

static void exec_insn(const struct analysis *a, struct path *p,
		      const struct bpf_insn *insn)
{
	switch (BPF_CLASS(insn->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		exec_alu(p, insn);
		break;
	case BPF_LDX:
	case BPF_ST:
	case BPF_STX:
		exec_mem(a, p, insn);
		break;
	case BPF_LD:
		p->s[insn->dst_reg] = insn->src_reg ? unknown_sym :
			const_sym((int64_t)((uint64_t)(uint32_t)insn->imm |
					    (uint64_t)insn[1].imm << 32));
		break;
	default:
		if (BPF_OP(insn->code) == BPF_CALL)
			exec_call(a, p, insn);
		break;
	}
}

static int push(struct analysis *a, const struct path *p)
{
	if (a->nstack == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		struct path *s = realloc(a->stack, cap * sizeof(*s));

		if (!s)
			return vnomem();
		a->stack = s;
		a->cap = cap;
	}
	a->stack[a->nstack++] = *p;
	return 0;
}

/* Merge what one iteration did into a->fate and a->common. */
static void iteration_done(struct analysis *a, const struct path *p)
{
	for (int l = 0; l < NLOC; l++) {
		const struct sym *s = &p->s[l];
		uint8_t f = FATE_OTHER;

		if (s->kind == SYM_INIT && s->loc == l && s->view == VIEW_FULL &&
		    !s->add)
			f = FATE_SAME;
		else if (s->kind == SYM_INIT && s->loc == l &&
			 s->view == VIEW_LOW32 && !s->add)
			f = FATE_SAME_LOW;
		else if (s->kind == SYM_INIT && s->loc == l &&
			 (s->view == VIEW_FULL || s->view == VIEW_ZEXT32) &&
			 (s->add == 1 || s->add == -1))
			f = FATE_STEP;
		else if (s->kind == SYM_INIT && s->view != VIEW_SHL32 && !s->add)
			f = FATE_COPY;
		int64_t step = f == FATE_COPY ? s->loc : s->add;

		if (a->fate[l] == FATE_NONE)
			a->fate[l] = f, a->step[l] = step,
			a->step_view[l] = s->view;
		else if (a->fate[l] != f ||
			 ((f == FATE_STEP || f == FATE_COPY) &&
			  (a->step[l] != step || a->step_view[l] != s->view)))
			a->fate[l] = FATE_OTHER;
	}
	if (!a->returns++) {
		a->ncommon = p->ntests;
		memcpy(a->common, p->tests, p->ntests * sizeof(p->tests[0]));
		return;
	}
	for (int i = 0; i < a->ncommon; i++) {
		bool seen = false;

		for (int k = 0; k < p->ntests && !seen; k++)
			seen = p->tests[k].insn == a->common[i].insn &&
			       p->tests[k].op == a->common[i].op &&
			       sym_same(&p->tests[k].a, &a->common[i].a) &&
			       sym_same(&p->tests[k].b, &a->common[i].b);
		if (!seen)
			a->common[i--] = a->common[--a->ncommon];
	}
}

static void note_test(struct path *p, const struct bpf_insn *insn, bool taken)
{
	enum cmp_op op = jmp_cmp(BPF_OP(insn->code));
	struct test *t;

	if (p->ntests == ARRAY_SIZE(p->tests) ||
	    (BPF_OP(insn->code) == BPF_JSET))
		return;
	t = &p->tests[p->ntests++];
	t->insn = p->insn;
	t->op = (uint8_t)(taken ? op : cmp_negate(op));
	t->a = p->s[insn->dst_reg];
	t->b = BPF_SRC(insn->code) == BPF_X ? p->s[insn->src_reg] :
	       const_sym(BPF_CLASS(insn->code) == BPF_JMP32 ?
			 (int64_t)(uint32_t)insn->imm : insn->imm);
}

/* The path goes on at @next: 1 when that ends it (it left the loop, or
 * came back to the head: one iteration), 0 to go on, < 0 to give up. */
static int arrive(struct analysis *a, struct path *p, size_t next)
{
	p->insn = (int)next;
	if (p->insn != a->head)
		return a->in_loop[next] ? 0 : 1;
	if (a->returns == MAX_PATHS)
		return -1;
	iteration_done(a, p);
	return 1;
}

/* Follow one path one step: 1 when it has ended, 0 to go on, < 0 give up. */
static int advance(struct analysis *a, struct path *p)
{
	const struct bpf_insn *insn = &a->v->insns[p->insn];
	size_t succ[2];
	int n, r;

	if (++a->steps > MAX_STEPS || ++p->len > a->v->cnt)
		return -1; /* too much work, or an instruction met twice */
	exec_insn(a, p, insn);
	n = cfg_successors(a->v, (size_t)p->insn, succ);
	if (!n)
		return 1; /* exit */
	if (n == 2 && succ[0] != succ[1]) {
		struct path *other;

		if (push(a, p))
			return -1;
		other = &a->stack[a->nstack - 1];
		note_test(other, insn, true);
		r = arrive(a, other, succ[0]);
		if (r)
			a->nstack--;
		if (r < 0)
			return r;
		note_test(p, insn, false);
		succ[0] = succ[1];
	}
	return arrive(a, p, succ[0]);
}

static int follow_iterations(struct analysis *a)
{
	struct path p = { .insn = a->head };
	int r = 0;

	for (int l = 0; l < NLOC; l++)
		p.s[l] = init_sym(l);
	if (push(a, &p))
		return -1;
	while (a->nstack && r >= 0) {
		p = a->stack[--a->nstack];
		do
			r = advance(a, &p);
		while (r == 0);
	}
	return r < 0 || !a->returns ? -1 : 0;
}

/*
 * The location whose value a bound read from @loc at H is, the same in
 * every iteration (from the second on, for a copy made in the previous
 * one of a location no iteration changes); @low: only its low half is
 * (or the copy was of the low half). -1: none.
 */
static int invariant_loc(const struct analysis *a, int loc, bool *low)
{
	int src;

	*low = a->fate[loc] == FATE_SAME_LOW;
	if (a->fate[loc] == FATE_SAME || *low)
		return loc;
	if (a->fate[loc] != FATE_COPY)
		return -1;
	src = (int)a->step[loc];
	if (a->fate[src] != FATE_SAME && a->fate[src] != FATE_SAME_LOW)
		return -1;
	*low = a->step_view[loc] != VIEW_FULL || a->fate[src] == FATE_SAME_LOW;
	return src;
}

/*
 * Where the bound @b of a test (@jmp32: on 32 bits) is the same in every
 * iteration, -1 if not; @low: only its low half matters.
 */
static int bound_loc(const struct analysis *a, const struct sym *b,
		     bool jmp32, bool *low)
{
	int loc;

	if (b->kind != SYM_INIT || b->add || b->view == VIEW_SHL32)
		return -1;
	loc = invariant_loc(a, b->loc, low);
	*low = *low || b->view != VIEW_FULL;
	/* compared on 64 bits, the whole bound must be known */
	if (loc < 0 || (!jmp32 && (b->view == VIEW_LOW32 ||
				   (b->view == VIEW_FULL && *low))))
		return -1;
	*low = *low || jmp32;
	return loc;
}

/* The counter's side of test @t, or -1: I + delta, viewed as it may be. */
static int counter_side(const struct analysis *a, const struct test *t,
			bool jmp32)
{
	const struct sym *s[2] = { &t->a, &t->b };

	for (int k = 0; k < 2; k++) {
		const struct sym *c = s[k], *b = s[!k];
		bool low;

		if (c->kind != SYM_INIT || c->view == VIEW_SHL32 ||
		    a->fate[c->loc] != FATE_STEP)
			continue;
		if (b->kind == SYM_CONST || bound_loc(a, b, jmp32, &low) >= 0)
			return k;
	}
	return -1;
}

static enum cmp_op mirror(enum cmp_op op)
{
	static const uint8_t m[] = {
		[CMP_EQ] = CMP_EQ, [CMP_NE] = CMP_NE, [CMP_GT] = CMP_LT,
		[CMP_GE] = CMP_LE, [CMP_LT] = CMP_GT, [CMP_LE] = CMP_GE,
		[CMP_SGT] = CMP_SLT, [CMP_SGE] = CMP_SLE, [CMP_SLT] = CMP_SGT,
		[CMP_SLE] = CMP_SGE,
	};

	return (enum cmp_op)m[op];
}

/* A test that ends the loop, turned into the proof; false: none. */
static bool choose_test(const struct analysis *a, struct loop_proof *lp)
{
	for (int i = 0; i < a->ncommon; i++) {
		const struct test *t = &a->common[i];
		bool jmp32 = BPF_CLASS(a->v->insns[t->insn].code) == BPF_JMP32;
		int k = counter_side(a, t, jmp32);
		const struct sym *c, *b;
		bool low = false;
		int loc;

		if (k < 0 || t->op >= CMP_SET)
			continue;
		c = k ? &t->b : &t->a;
		b = k ? &t->a : &t->b;
		/* compared on 32 bits: at most 2^32 iterations (a 64-bit
		 * counter could take 2^64, which is a hang, not an end) */
		if (!jmp32 && c->view != VIEW_ZEXT32)
			continue;
		loc = b->kind == SYM_CONST ? 0 : bound_loc(a, b, jmp32, &low);
		*lp = (struct loop_proof){
			.proven = true, .insn = t->insn, .jmp32 = jmp32,
			.stay = (uint8_t)(k ? mirror((enum cmp_op)t->op) : t->op),
			.bound_const = b->kind == SYM_CONST, .bound = b->add,
			.bound_loc = (uint8_t)loc, .bound_zext = low,
			.counter_loc = c->loc,
		};
		return true;
	}
	return false;
}

int loop_prove(struct verifier *v, int head, struct loop_proof *lp)
{
	struct analysis a = { .v = v, .head = head };
	int err = 0;

	memset(lp, 0, sizeof(*lp));
	a.in_loop = loop_body(v, head);
	a.sp = calloc(v->cnt, sizeof(*a.sp));
	if (!a.in_loop || !a.sp) {
		err = vnomem();
	} else {
		stack_offsets(v, a.sp);
		if (!follow_iterations(&a))
			choose_test(&a, lp);
	}
	free(a.stack);
	free(a.in_loop);
	free(a.sp);
	return err;
}

bool loop_loc_value(const struct vstate *st, int loc, bool low_half,
		    struct scalar *out)
{
	static const struct reg unknown_reg = {
		.type = REG_SCALAR,
		.v = { .t = { 0, UINT64_MAX }, .umax = UINT64_MAX,
		       .smin = INT64_MIN, .smax = INT64_MAX,
		       .u32max = UINT32_MAX, .s32min = INT32_MIN,
		       .s32max = INT32_MAX },
	};
	const struct frame *f = cur_frame(st);
	const struct reg *r = NULL;

	if (loc < 11) {
		r = &f->regs[loc];
	} else if ((uint32_t)(loc - 11) < f->nslots) {
		const struct slot *s = &f->slots[loc - 11];

		/* a 4-byte spill at byte 0 holds the low half */
		if (s->spill_size[0] == 8 ||
		    (s->spill_size[0] == 4 && low_half))
			r = &s->spill[0];
		else
			r = &unknown_reg; /* data: some number */
	}
	if (!r || r->type != REG_SCALAR)
		return false;
	*out = r->v;
	if (low_half)
		sc_trunc(out, 32);
	return true;
}

static bool bound_value(const struct loop_proof *lp, const struct vstate *st,
			struct scalar *b)
{
	if (!lp->bound_const)
		return loop_loc_value(st, lp->bound_loc, lp->bound_zext, b);
	sc_const(b, (uint64_t)lp->bound);
	return true;
}

/*
 * The counter takes every value of its range V in turn; the loop ends
 * unless "v stay B" holds for all v in V, so for every B the bound may be
 * some v must break it.
 */
bool loop_bound_ok(const struct loop_proof *lp, const struct vstate *st)
{
	struct scalar b;
	uint64_t bumin, bumax, vumax;
	int64_t bsmin, bsmax, vsmin, vsmax;

	if (!lp->proven || !bound_value(lp, st, &b))
		return false;
	if (lp->jmp32) {
		bumin = b.u32min, bumax = b.u32max;
		bsmin = b.s32min, bsmax = b.s32max;
		vumax = UINT32_MAX, vsmin = INT32_MIN, vsmax = INT32_MAX;
	} else { /* the zero-extended low half, compared on 64 bits */
		bumin = b.umin, bumax = b.umax, bsmin = b.smin, bsmax = b.smax;
		vumax = UINT32_MAX, vsmin = 0, vsmax = UINT32_MAX;
	}
	switch (lp->stay) {
	case CMP_EQ: return true;                 /* some v != B */
	case CMP_NE: return bumax <= vumax;       /* B is one of them */
	case CMP_LT: return bumax <= vumax;       /* some v >= B */
	case CMP_LE: return bumax < vumax;        /* some v > B */
	case CMP_GT: return true;                 /* v = 0 <= B */
	case CMP_GE: return bumin > 0;            /* v = 0 < B */
	case CMP_SLT: return bsmax <= vsmax;
	case CMP_SLE: return bsmax < vsmax;
	case CMP_SGT: return bsmin >= vsmin;
	case CMP_SGE: return bsmin > vsmin;
	default: return false;
	}
}
