/* SPDX-License-Identifier: MIT */
/*
 * What the exploration needs to know before it starts: where functions
 * begin and end, which jumps are sane, where to store states (prune
 * points), and which registers are live at each instruction.
 */
#include <stdlib.h>

#include "core/helpers.h"
#include "core/map_types.h"
#include "vstate.h"

#define ARG_REGS 0x3e  /* r1-r5 */
#define CALL_DEFS 0x3f /* r0-r5 */

static bool is_jmp_class(uint8_t code)
{
	return BPF_CLASS(code) == BPF_JMP || BPF_CLASS(code) == BPF_JMP32;
}

static bool is_local_call(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_CALL) &&
	       insn->src_reg == BPF_PSEUDO_CALL;
}

bool cfg_is_cond_jmp(const struct bpf_insn *insn)
{
	uint8_t op = BPF_OP(insn->code);

	return is_jmp_class(insn->code) && op != BPF_JA && op != BPF_CALL &&
	       op != BPF_EXIT;
}

/* Whether the registers an instruction names exist (r0-r10). */
bool cfg_regs_valid(const struct bpf_insn *insn)
{
	bool src_is_reg = BPF_CLASS(insn->code) != BPF_LD &&
			  insn->code != (BPF_JMP | BPF_CALL);

	return insn->dst_reg < BPF_REG_COUNT &&
	       (!src_is_reg || insn->src_reg < BPF_REG_COUNT);
}

bool cfg_is_exit(const struct bpf_insn *insn)
{
	return is_jmp_class(insn->code) && BPF_OP(insn->code) == BPF_EXIT;
}

/* Target of a jump or local call, which may lie outside the program. */
static int64_t jump_target(const struct bpf_insn *insn, int idx)
{
	if (insn->code == (BPF_JMP32 | BPF_JA) || is_local_call(insn))
		return (int64_t)idx + 1 + insn->imm;
	return (int64_t)idx + 1 + insn->off;
}

static bool has_target(const struct bpf_insn *insn)
{
	return is_local_call(insn) || cfg_is_cond_jmp(insn) ||
	       (is_jmp_class(insn->code) && BPF_OP(insn->code) == BPF_JA);
}

static int fail_at(struct verifier *v, int idx, const char *why)
{
	v->cur->insn = idx;
	return vfail(v, "%s", why);
}

/* The second half of a lddw is not an instruction: subprog -1 marks it. */
static int mark_lddw_halves(struct verifier *v)
{
	for (size_t i = 0; i < v->cnt; i++) {
		if (!bpf_is_lddw(&v->insns[i]))
			continue;
		if (i + 1 >= v->cnt)
			return fail_at(v, i, "lddw has no second half");
		v->aux[++i].subprog = -1;
	}
	return 0;
}

static int check_targets(struct verifier *v)
{
	int err = mark_lddw_halves(v);

	for (size_t i = 0; !err && i < v->cnt; i++) {
		const struct bpf_insn *insn = &v->insns[i];
		int64_t t;

		if (v->aux[i].subprog == -1 || !has_target(insn))
			continue;
		t = jump_target(insn, (int)i);
		if (t < 0 || t >= (int64_t)v->cnt || v->aux[t].subprog == -1)
			return fail_at(v, i, "jump out of range or into a lddw");
		if (is_local_call(insn))
			v->aux[t].prune_point = 2; /* marks a function start */
	}
	return err;
}

static int find_subprogs(struct verifier *v)
{
	v->nsub = 0;
	for (size_t i = 0; i < v->cnt; i++) {
		if (i && v->aux[i].prune_point != 2)
			continue;
		if (v->nsub == MAX_SUBPROGS)
			return fail_at(v, i, "too many functions (limit 64)");
		v->subprogs[v->nsub].start = (int)i;
		if (v->nsub)
			v->subprogs[v->nsub - 1].end = (int)i;
		v->nsub++;
	}
	v->subprogs[v->nsub - 1].end = (int)v->cnt;
	for (int s = 0; s < v->nsub; s++)
		for (int i = v->subprogs[s].start; i < v->subprogs[s].end; i++)
			if (v->aux[i].subprog != -1)
				v->aux[i].subprog = s;
	return 0;
}

int insn_subprog(const struct verifier *v, int insn)
{
	return v->aux[insn].subprog;
}

static int mark_jumps(struct verifier *v)
{
	for (size_t i = 0; i < v->cnt; i++) {
		const struct bpf_insn *insn = &v->insns[i];
		int64_t t;

		if (v->aux[i].subprog == -1 || !has_target(insn))
			continue;
		t = jump_target(insn, (int)i);
		if (!is_local_call(insn)) {
			if (v->aux[t].subprog != v->aux[i].subprog)
				return fail_at(v, i,
					       "jump into another function");
			v->aux[t].prune_point = 1;
			if (t <= (int64_t)i) {
				v->aux[t].back_edge_target = 1;
				v->aux[t].back_edge_from = (int)i;
			}
		}
		if ((cfg_is_cond_jmp(insn) || is_local_call(insn)) &&
		    i + 1 < v->cnt)
			v->aux[i + 1].prune_point = 1;
	}
	return 0;
}

/* The argument registers a helper reads (all five if it is unknown). */
static uint16_t helper_uses(const struct verifier *v, int32_t id)
{
	const struct helper_info *p = helper_lookup(id, v->opts.abi,
						    v->opts.users);
	uint16_t use = 0;

	if (!p)
		return ARG_REGS;
	for (int i = 0; i < 5 && p->args[i] != ARG_NONE; i++)
		use |= (uint16_t)(1u << (i + 1));
	return use;
}

static void uses_defs(const struct verifier *v, const struct bpf_insn *insn,
		      uint16_t *use, uint16_t *def)
{
	uint16_t dst = 1u << insn->dst_reg, src = 1u << insn->src_reg;
	uint8_t op = BPF_OP(insn->code);

	*use = *def = 0;
	switch (BPF_CLASS(insn->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		*use = op == BPF_MOV ? 0 : dst;
		if (BPF_SRC(insn->code) == BPF_X && op != BPF_NEG &&
		    op != BPF_END)
			*use |= src;
		*def = dst;
		break;
	case BPF_LDX:
		*use = src;
		*def = dst;
		break;
	case BPF_ST:
		*use = dst;
		break;
	case BPF_STX:
		*use = dst | src;
		if (BPF_MODE(insn->code) == BPF_ATOMIC &&
		    (insn->imm & BPF_FETCH)) {
			*def = insn->imm == BPF_CMPXCHG ? 1 : src;
			*use |= insn->imm == BPF_CMPXCHG ? 1 : 0;
		}
		break;
	case BPF_LD:
		*def = bpf_is_lddw(insn) ? dst : CALL_DEFS;
		break;
	default:
		if (op == BPF_EXIT) {
			*use = 1;
		} else if (op == BPF_CALL) {
			*use = ARG_REGS;
			if (insn->src_reg == 0 && BPF_SRC(insn->code) == BPF_K)
				*use = helper_uses(v, insn->imm);
			if (BPF_SRC(insn->code) == BPF_X)
				*use |= dst;
			*def = CALL_DEFS;
		} else if (op != BPF_JA) {
			*use = dst | (BPF_SRC(insn->code) == BPF_X ? src : 0);
		}
		break;
	}
	*use &= 0x3ff;
	*def &= 0x3ff;
}

/* Where control goes after instruction @i within its function. */
int cfg_successors(const struct verifier *v, size_t i, size_t succ[2])
{
	const struct bpf_insn *insn = &v->insns[i];
	int n = 0;

	if (cfg_is_exit(insn))
		return 0;
	if (has_target(insn) && !is_local_call(insn))
		succ[n++] = (size_t)jump_target(insn, (int)i);
	if (!(is_jmp_class(insn->code) && BPF_OP(insn->code) == BPF_JA)) {
		size_t next = i + (bpf_is_lddw(insn) ? 2 : 1);

		if (next < v->cnt)
			succ[n++] = next;
	}
	return n;
}

static uint16_t live_out(const struct verifier *v, size_t i)
{
	size_t succ[2];
	int n = cfg_successors(v, i, succ);
	uint16_t out = 0;

	for (int k = 0; k < n; k++)
		out |= v->aux[succ[k]].live_in;
	return out;
}

/* Backward data flow to a fixed point; calls keep the caller's r6-r9. */
static void compute_liveness(struct verifier *v)
{
	bool changed = true;

	while (changed) {
		changed = false;
		for (size_t i = v->cnt; i-- > 0;) {
			uint16_t use, def, in;

			if (v->aux[i].subprog == -1)
				continue;
			uses_defs(v, &v->insns[i], &use, &def);
			in = use | (live_out(v, i) & ~def);
			if (in != v->aux[i].live_in) {
				v->aux[i].live_in = in;
				changed = true;
			}
		}
	}
}

int cfg_build(struct verifier *v)
{
	int err;

	v->aux = calloc(v->cnt, sizeof(*v->aux));
	if (!v->aux)
		return vnomem();
	err = check_targets(v);
	if (!err)
		err = find_subprogs(v);
	if (!err)
		err = mark_jumps(v);
	if (err)
		return err;
	for (int s = 0; s < v->nsub; s++)
		v->aux[v->subprogs[s].start].prune_point = 1;
	compute_liveness(v);
	return 0;
}

enum cmp_op jmp_cmp(uint8_t op)
{
	switch (op) {
	case BPF_JEQ: return CMP_EQ;
	case BPF_JNE: return CMP_NE;
	case BPF_JGT: return CMP_GT;
	case BPF_JGE: return CMP_GE;
	case BPF_JLT: return CMP_LT;
	case BPF_JLE: return CMP_LE;
	case BPF_JSGT: return CMP_SGT;
	case BPF_JSGE: return CMP_SGE;
	case BPF_JSLT: return CMP_SLT;
	case BPF_JSLE: return CMP_SLE;
	default: return CMP_SET;
	}
}
