/* SPDX-License-Identifier: MIT */
/*
 * ALU instructions and lddw: scalar arithmetic through lib/verifier/scalar.c,
 * and the few operations allowed on pointers (adding or subtracting a
 * bounded scalar, subtracting two pointers into one region, copying).
 */
#include <inttypes.h>

#include "core/map_types.h"
#include "vstate.h"

static const char *op_name(uint8_t op)
{
	static const char *const names[16] = {
		"add", "sub", "mul", "div", "or", "and", "lsh", "rsh", "neg",
		"mod", "xor", "mov", "arsh", "end",
	};
	const char *n = names[op >> 4];

	return n ? n : "?";
}

static bool may_move(const struct reg *r)
{
	switch (r->type) {
	case REG_PTR_CTX:
	case REG_PTR_STACK:
	case REG_PTR_MAP_VALUE:
	case REG_PTR_RECORD:
	case REG_PTR_PARAMS:
		return true;
	default:
		return false;
	}
}

static int check_movable(struct verifier *v, const struct reg *r, int regno)
{
	if (may_move(r))
		return 0;
	if (reg_is_nullable(r))
		return vfail(v, "pointer arithmetic on r%d (%s) prohibited: "
			     "check it against NULL first", regno,
			     reg_type_name(r));
	return vfail(v, "pointer arithmetic on r%d (%s) prohibited", regno,
		     reg_type_name(r));
}

/* ptr + s or ptr - s: the offset stays bounded, or the program is refused. */
static int move_pointer(struct verifier *v, struct reg *ptr,
			const struct reg *s, int sregno, bool sub)
{
	uint64_t c;

	if (reg_const_value(s, &c)) {
		int64_t off = (int64_t)ptr->off + (sub ? -(int64_t)c : (int64_t)c);

		if ((int64_t)c < -MAX_OFFSET || (int64_t)c > MAX_OFFSET ||
		    off < -MAX_OFFSET || off > MAX_OFFSET)
			return vfail(v, "pointer offset %" PRId64 " out of "
				     "range", (int64_t)c);
		ptr->off = (int32_t)off;
		return 0;
	}
	if (s->v.smin < -MAX_OFFSET || s->v.smax > MAX_OFFSET)
		return vfail(v, "pointer arithmetic with unbounded r%d (smin=%"
			     PRId64 ", smax=%" PRId64 "): clamp it first",
			     sregno, s->v.smin, s->v.smax);
	if (!sc_alu64(&ptr->v, &s->v, sub ? BPF_SUB : BPF_ADD, false))
		return vfail(v, "internal error: empty pointer offset");
	if (ptr->v.smin < -MAX_OFFSET || ptr->v.smax > MAX_OFFSET)
		return vfail(v, "pointer offset out of range after adding r%d",
			     sregno);
	return 0;
}

static bool same_region(const struct reg *a, const struct reg *b)
{
	if (a->type != b->type || !may_move(a))
		return false;
	switch (a->type) {
	case REG_PTR_STACK:
		return a->frameno == b->frameno;
	case REG_PTR_MAP_VALUE:
		return a->map == b->map;
	case REG_PTR_RECORD:
		return a->ref == b->ref;
	default:
		return true;
	}
}

/* Memory a pointer may point into (perhaps NULL): not a map handle. */
static bool may_measure(const struct reg *r)
{
	return may_move(r) || reg_is_nullable(r);
}

/*
 * p - q is a scalar: a known distance within one region, any number
 * between regions or where one may be NULL, not yet checked (addresses
 * are no secret from the host, and a number can never be used as a
 * pointer again).
 */
static int pointer_distance(struct verifier *v, struct reg *dst,
			    const struct reg *src)
{
	struct scalar d, c;

	if (!may_measure(dst) || !may_measure(src))
		return vfail(v, "subtracting pointers (%s, %s): both must be "
			     "pointers into memory",
			     reg_type_name(dst), reg_type_name(src));
	if (!same_region(dst, src)) {
		reg_unknown(dst);
		return 0;
	}
	sc_const(&d, (uint64_t)((int64_t)dst->off - src->off));
	c = dst->v;
	if (!sc_alu64(&d, &c, BPF_ADD, false) ||
	    !sc_alu64(&d, &src->v, BPF_SUB, false))
		return vfail(v, "internal error: empty pointer distance");
	reg_scalar(dst, &d);
	return 0;
}

static int pointer_alu(struct verifier *v, const struct bpf_insn *insn,
		       struct reg *dst, const struct reg *src)
{
	uint8_t op = BPF_OP(insn->code);
	int sregno = BPF_SRC(insn->code) == BPF_X ? insn->src_reg : -1;
	int err;

	if (BPF_CLASS(insn->code) != BPF_ALU64)
		return vfail(v, "32-bit %s on a pointer prohibited",
			     op_name(op));
	if (op == BPF_SUB && reg_is_ptr(dst) && reg_is_ptr(src))
		return pointer_distance(v, dst, src);
	if (op != BPF_ADD && !(op == BPF_SUB && !reg_is_ptr(src)))
		return vfail(v, "pointer arithmetic with %s prohibited",
			     op_name(op));
	if (reg_is_ptr(dst) && reg_is_ptr(src))
		return vfail(v, "adding two pointers prohibited");
	if (reg_is_ptr(dst)) {
		err = check_movable(v, dst, insn->dst_reg);
		return err ? err : move_pointer(v, dst, src, sregno,
						op == BPF_SUB);
	}
	/* scalar + pointer */
	err = check_movable(v, src, sregno);
	if (!err) {
		struct reg s = *dst;

		*dst = *src;
		err = move_pointer(v, dst, &s, insn->dst_reg, false);
	}
	return err;
}

/*
 * The pointer to the kernel's parameters was a number to probes before it
 * could be dereferenced (ctx->params + ctx->params_size, a hash of its
 * bits, a 32-bit half), and stays one to them: an operation other than a
 * 64-bit move, a bounded += / -=, or the distance between two of them
 * makes that copy an unknown number, never dereferenced again.
 */
static void params_to_number(const struct bpf_insn *insn, struct reg *dst,
			     struct reg *src)
{
	uint8_t op = BPF_OP(insn->code);
	bool wide = BPF_CLASS(insn->code) == BPF_ALU64;
	bool moves = wide && (op == BPF_ADD || op == BPF_SUB) &&
		     dst->type == REG_PTR_PARAMS && src->type == REG_SCALAR &&
		     src->v.smin >= -MAX_OFFSET && src->v.smax <= MAX_OFFSET;
	bool distance = wide && op == BPF_SUB && dst->type == REG_PTR_PARAMS &&
			src->type == REG_PTR_PARAMS;

	if (op == BPF_MOV && wide && !insn->off)
		return;
	if (moves || distance)
		return;
	if (dst->type == REG_PTR_PARAMS)
		reg_unknown(dst);
	if (src->type == REG_PTR_PARAMS)
		reg_unknown(src);
}

/* Copies of one scalar share an id, so a branch on one narrows all. */
static void link_copy(struct verifier *v, struct reg *dst, struct reg *src)
{
	if (src->type != REG_SCALAR || sc_is_const(&src->v))
		return;
	if (!src->id)
		src->id = new_id(v);
	dst->id = src->id;
}

static int check_mov(struct verifier *v, const struct bpf_insn *insn,
		     struct reg *dst, struct reg *src)
{
	bool wide = BPF_CLASS(insn->code) == BPF_ALU64;
	struct reg val = *src;

	params_to_number(insn, dst, &val);
	if (insn->off) {
		if (reg_is_ptr(src))
			return vfail(v, "sign-extending move of a pointer");
		if (insn->off != 8 && insn->off != 16 &&
		    !(wide && insn->off == 32))
			return vfail(v, "invalid sign-extension width %d",
				     insn->off);
		sc_sext(&val.v, (unsigned int)insn->off);
		if (!wide)
			sc_trunc(&val.v, 32);
		val.id = 0;
	} else if (!wide) {
		if (reg_is_ptr(src))
			return vfail(v, "32-bit move of a pointer (r%d, %s) "
				     "prohibited", insn->src_reg,
				     reg_type_name(src));
		sc_trunc(&val.v, 32);
		/* The copy is the same value if the upper half was zero. */
		if (BPF_SRC(insn->code) == BPF_X && src->v.umax <= UINT32_MAX)
			link_copy(v, &val, src);
		else
			val.id = 0;
	} else if (BPF_SRC(insn->code) == BPF_X) {
		link_copy(v, &val, src);
	}
	*dst = val;
	dst->origin = v->cur->insn;
	return 0;
}

static int check_unary(struct verifier *v, const struct bpf_insn *insn,
		       struct reg *dst)
{
	bool wide = BPF_CLASS(insn->code) == BPF_ALU64;
	struct scalar zero;
	int bits = insn->imm;

	if (dst->type == REG_PTR_PARAMS)
		reg_unknown(dst);
	if (reg_is_ptr(dst))
		return vfail(v, "%s of a pointer prohibited",
			     op_name(BPF_OP(insn->code)));
	dst->id = 0;
	if (BPF_OP(insn->code) == BPF_NEG) {
		sc_const(&zero, 0);
		if (!(wide ? sc_alu64 : sc_alu32)(&zero, &dst->v, BPF_SUB,
						  false))
			return vfail(v, "internal error: empty negation");
		dst->v = zero;
		return 0;
	}
	if (bits != 16 && bits != 32 && bits != 64)
		return vfail(v, "invalid byte swap width %d", bits);
	/* to_le is a truncation on this little-endian ISA */
	if (!wide && BPF_SRC(insn->code) == BPF_TO_LE) {
		if (bits < 64)
			sc_trunc(&dst->v, (unsigned int)bits);
		return 0;
	}
	sc_bswap(&dst->v, (unsigned int)bits);
	return 0;
}

int check_alu(struct verifier *v, const struct bpf_insn *insn)
{
	bool wide = BPF_CLASS(insn->code) == BPF_ALU64;
	uint8_t op = BPF_OP(insn->code);
	struct reg *regs = cur_regs(v);
	struct reg *dst = &regs[insn->dst_reg];
	struct reg imm, *src = &imm;
	int err = reg_writable(v, insn->dst_reg);

	if (err)
		return err;
	if (op == BPF_NEG || op == BPF_END) {
		err = reg_readable(v, insn->dst_reg);
		return err ? err : check_unary(v, insn, dst);
	}
	if (BPF_SRC(insn->code) == BPF_X) {
		err = reg_readable(v, insn->src_reg);
		if (err)
			return err;
		src = &regs[insn->src_reg];
	} else {
		reg_const(&imm, (uint64_t)(int64_t)insn->imm);
	}
	if (op == BPF_MOV)
		return check_mov(v, insn, dst, src);
	err = reg_readable(v, insn->dst_reg);
	if (err)
		return err;
	if (src != &imm)
		imm = *src; /* the source register itself stays as it is */
	src = &imm;
	params_to_number(insn, dst, src);
	if (reg_is_ptr(dst) || reg_is_ptr(src))
		return pointer_alu(v, insn, dst, src);
	dst->id = 0;
	dst->origin = v->cur->insn;
	if (!(wide ? sc_alu64 : sc_alu32)(&dst->v, &src->v, op,
					  insn->off == 1))
		return vfail(v, "internal error: empty result");
	return 0;
}

int check_lddw(struct verifier *v, const struct bpf_insn *insn)
{
	struct reg *dst = &cur_regs(v)[insn->dst_reg];
	int32_t hi = insn[1].imm;
	const struct map_spec *m;
	int err = reg_writable(v, insn->dst_reg);

	if (err)
		return err;
	if (insn->src_reg == 0) {
		reg_const(dst, (uint64_t)(uint32_t)insn->imm |
			  (uint64_t)(uint32_t)hi << 32);
		dst->origin = v->cur->insn;
		return 0;
	}
	if (insn->src_reg != BPF_PSEUDO_MAP_IDX &&
	    insn->src_reg != BPF_PSEUDO_MAP_IDX_VALUE)
		return vfail(v, "unsupported lddw source %d (the loader must "
			     "link map references)", insn->src_reg);
	if (insn->imm < 0 || (size_t)insn->imm >= v->map_cnt)
		return vfail(v, "map index %" PRId32 " out of range (%zu maps)",
			     insn->imm, v->map_cnt);
	m = &v->maps[insn->imm];
	reg_not_init(dst);
	dst->map = (uint32_t)insn->imm;
	dst->origin = v->cur->insn;
	if (insn->src_reg == BPF_PSEUDO_MAP_IDX) {
		dst->type = REG_MAP_HANDLE;
		return 0;
	}
	if (!map_type_has(m->type, MAP_T_DIRECT_VALUE) || m->max_entries < 1)
		return vfail(v, "direct value access needs an array map; '%s' "
			     "is a %s map", m->name ? m->name : "?",
			     map_type_name(m->type));
	if (hi < 0 || (uint32_t)hi >= m->value_size)
		return vfail(v, "direct value offset %" PRId32 " outside map "
			     "'%s' (value_size %" PRIu32 ")", hi,
			     m->name ? m->name : "?", m->value_size);
	dst->type = REG_PTR_MAP_VALUE;
	dst->off = hi;
	return 0;
}
