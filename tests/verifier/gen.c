/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "gen.h"
#include "insn.h"

/* Snippets end with a jump to the shared exit, fixed up at the end. */
#define EXIT_FIXUP 0x7fff

uint64_t gen_rand(struct gen *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

static uint32_t pick(struct gen *g, uint32_t n)
{
	return (uint32_t)(gen_rand(g) % n);
}

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static int32_t some_imm(struct gen *g)
{
	static const int32_t imms[] = {
		0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 255, 511, 512,
		-1, -8, -16, 0x7fffffff, (int32_t)0x80000000, 4096, 1 << 20,
	};

	return pick(g, 3) ? imms[pick(g, ARRAY_LEN(imms))] :
	       (int32_t)gen_rand(g);
}

static void emit(struct gen *g, struct bpf_insn insn)
{
	if (g->cnt < GEN_MAX_INSNS - 4)
		g->insns[g->cnt++] = insn;
}

static const struct bpf_insn nop = JA(0);

static int scratch_reg(struct gen *g)
{
	return 2 + (int)pick(g, 8); /* r2-r9 */
}

static uint8_t some_size(struct gen *g)
{
	static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };

	return sizes[pick(g, 4)];
}

static void snippet_alu(struct gen *g)
{
	static const uint8_t ops[] = {
		BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND, BPF_LSH,
		BPF_RSH, BPF_MOD, BPF_XOR, BPF_MOV, BPF_ARSH,
	};
	uint8_t cls = pick(g, 3) ? BPF_ALU64 : BPF_ALU;
	uint8_t op = ops[pick(g, ARRAY_LEN(ops))];
	int d = scratch_reg(g);
	struct bpf_insn i = INSN(0, 0, 0, 0, 0);

	if (pick(g, 2)) {
		i = (struct bpf_insn)INSN(cls | op | BPF_K, d, 0, 0,
					  some_imm(g));
	} else {
		i = (struct bpf_insn)INSN(cls | op | BPF_X, d,
					  scratch_reg(g), 0, 0);
	}
	if ((op == BPF_DIV || op == BPF_MOD) && pick(g, 3) == 0)
		i.off = 1;
	if (op == BPF_MOV && pick(g, 5) == 0 && BPF_SRC(i.code) == BPF_X)
		i.off = (int16_t)(8 << pick(g, cls == BPF_ALU64 ? 3 : 2));
	emit(g, i);
}

static void snippet_init(struct gen *g)
{
	int d = scratch_reg(g);

	switch (pick(g, 4)) {
	case 0:
		emit(g, (struct bpf_insn)MOV64_IMM(d, some_imm(g)));
		break;
	case 1: /* from the ctx */
		emit(g, (struct bpf_insn)LDX(some_size(g), d, 1,
					     (int16_t)(8 * pick(g, 3))));
		break;
	case 2:
		emit(g, (struct bpf_insn)CALL(509 + (int32_t)pick(g, 3)));
		emit(g, (struct bpf_insn)MOV64_REG(d, 0));
		break;
	default:
		emit(g, (struct bpf_insn)MOV64_REG(d, scratch_reg(g)));
		break;
	}
}

static void snippet_check(struct gen *g)
{
	static const uint8_t ops[] = {
		BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET, BPF_JNE, BPF_JSGT,
		BPF_JSGE, BPF_JLT, BPF_JLE, BPF_JSLT, BPF_JSLE,
	};
	uint8_t cls = pick(g, 3) ? BPF_JMP : BPF_JMP32;
	uint8_t op = ops[pick(g, ARRAY_LEN(ops))];

	if (pick(g, 3))
		emit(g, (struct bpf_insn)INSN(cls | op | BPF_K, scratch_reg(g),
					      0, EXIT_FIXUP,
					      (int32_t)pick(g, 64)));
	else
		emit(g, (struct bpf_insn)INSN(cls | op | BPF_X, scratch_reg(g),
					      scratch_reg(g), EXIT_FIXUP, 0));
}

/* Two paths that meet again with different values in a register. */
static void snippet_diamond(struct gen *g)
{
	int d = scratch_reg(g);

	emit(g, (struct bpf_insn)JMP_IMM(pick(g, 2) ? BPF_JGT : BPF_JEQ,
					 scratch_reg(g), (int32_t)pick(g, 16),
					 2));
	emit(g, (struct bpf_insn)MOV64_IMM(d, (int32_t)pick(g, 64)));
	emit(g, (struct bpf_insn)JA(1));
	if (pick(g, 3))
		emit(g, (struct bpf_insn)MOV64_IMM(d, (int32_t)pick(g, 64)));
	else
		emit(g, (struct bpf_insn)MOV64_REG(d, 10));
}

static void snippet_stack(struct gen *g)
{
	int16_t off = (int16_t)(-8 * (int)(1 + pick(g, 8)) + (pick(g, 6) ?
				0 : (int)pick(g, 8) - 4));
	uint8_t size = some_size(g);

	switch (pick(g, 4)) {
	case 0:
		emit(g, (struct bpf_insn)ST(size, 10, off, some_imm(g)));
		break;
	case 1:
		emit(g, (struct bpf_insn)STX(size, 10, scratch_reg(g), off));
		break;
	case 2:
		emit(g, (struct bpf_insn)LDX(size, scratch_reg(g), 10, off));
		break;
	default: /* a pointer into the stack, moved by a register */
		emit(g, (struct bpf_insn)MOV64_REG(9, 10));
		emit(g, (struct bpf_insn)ALU64_IMM(BPF_ADD, 9, off));
		if (pick(g, 2))
			emit(g, (struct bpf_insn)ALU64_REG(BPF_ADD, 9,
							   scratch_reg(g)));
		if (pick(g, 2))
			emit(g, (struct bpf_insn)LDX(size, scratch_reg(g), 9,
						     (int16_t)(pick(g, 2) ?
							       0 : -4)));
		else
			emit(g, (struct bpf_insn)STX(size, 9, scratch_reg(g),
						     (int16_t)(pick(g, 2) ?
							       0 : -4)));
		break;
	}
}

/* r0 = lookup; maybe a NULL check; an access through r0. */
static void snippet_lookup(struct gen *g)
{
	int m = g->nkv ? g->kv_maps[pick(g, (uint32_t)g->nkv)] : 0;
	int idx = scratch_reg(g);

	if (!g->nkv)
		return;
	emit(g, (struct bpf_insn)ST(BPF_W, 10, -4, (int32_t)pick(g, 4)));
	emit(g, (struct bpf_insn)INSN(BPF_LD | BPF_DW | BPF_IMM, 1,
				      BPF_PSEUDO_MAP_IDX, 0, m));
	emit(g, (struct bpf_insn)INSN(0, 0, 0, 0, 0));
	emit(g, (struct bpf_insn)MOV64_REG(2, 10));
	emit(g, (struct bpf_insn)ALU64_IMM(BPF_ADD, 2, -4));
	emit(g, (struct bpf_insn)CALL(1));
	if (pick(g, 8))
		emit(g, (struct bpf_insn)JMP_IMM(BPF_JEQ, 0, 0, EXIT_FIXUP));
	if (pick(g, 2)) {
		emit(g, (struct bpf_insn)ALU64_IMM(BPF_AND, idx,
						   (int32_t)pick(g, 64)));
		emit(g, (struct bpf_insn)ALU64_REG(BPF_ADD, 0, idx));
	}
	if (pick(g, 2))
		emit(g, (struct bpf_insn)LDX(some_size(g), scratch_reg(g), 0,
					     (int16_t)pick(g, 24)));
	else
		emit(g, (struct bpf_insn)STX(some_size(g), 0, scratch_reg(g),
					     (int16_t)pick(g, 24)));
}

static void snippet_loop(struct gen *g)
{
	int c = scratch_reg(g);
	int32_t bound = (int32_t)pick(g, 40);

	emit(g, (struct bpf_insn)MOV64_IMM(c, 0));
	snippet_alu(g);
	emit(g, (struct bpf_insn)ALU64_IMM(BPF_ADD, c, 1 + (int32_t)pick(g, 3)));
	emit(g, (struct bpf_insn)JMP_IMM(pick(g, 4) ? BPF_JLT : BPF_JNE, c,
					 bound, -3));
}

static void snippet_ring(struct gen *g)
{
	if (g->ring_map < 0)
		return;
	emit(g, (struct bpf_insn)INSN(BPF_LD | BPF_DW | BPF_IMM, 1,
				      BPF_PSEUDO_MAP_IDX, 0, g->ring_map));
	emit(g, (struct bpf_insn)INSN(0, 0, 0, 0, 0));
	emit(g, (struct bpf_insn)MOV64_IMM(2, 8 * (1 + (int32_t)pick(g, 4))));
	emit(g, (struct bpf_insn)MOV64_IMM(3, 0));
	emit(g, (struct bpf_insn)CALL(131));
	emit(g, (struct bpf_insn)JMP_IMM(BPF_JEQ, 0, 0, 4));
	emit(g, (struct bpf_insn)ST(some_size(g), 0, (int16_t)(8 * pick(g, 4)),
				    1));
	emit(g, (struct bpf_insn)MOV64_REG(1, 0));
	emit(g, (struct bpf_insn)MOV64_IMM(2, 0));
	emit(g, (struct bpf_insn)CALL(132 + (int32_t)pick(g, 2)));
}

static void snippet_atomic(struct gen *g)
{
	static const int32_t ops[] = {
		BPF_ADD, BPF_OR, BPF_AND, BPF_XOR, BPF_ADD | BPF_FETCH,
		BPF_XCHG, BPF_CMPXCHG,
	};

	emit(g, (struct bpf_insn)ST(BPF_DW, 10, -16, some_imm(g)));
	emit(g, (struct bpf_insn)MOV64_IMM(0, 1));
	emit(g, (struct bpf_insn)ATOMIC(pick(g, 2) ? BPF_DW : BPF_W,
					ops[pick(g, ARRAY_LEN(ops))], 10,
					scratch_reg(g), -16));
}

/* if (a > m) m = a, the maximum in a register or in a stack slot. */
static void snippet_max(struct gen *g)
{
	int a = scratch_reg(g), m = scratch_reg(g);
	int16_t slot = (int16_t)(-8 * (int)(1 + pick(g, 8)));

	if (pick(g, 2)) {
		emit(g, (struct bpf_insn)JMP_REG(BPF_JLE, a, m, 1));
		emit(g, (struct bpf_insn)MOV64_REG(m, a));
		return;
	}
	emit(g, (struct bpf_insn)LDX(BPF_DW, m, 10, slot));
	emit(g, (struct bpf_insn)JMP_REG(BPF_JLE, a, m, 1));
	emit(g, (struct bpf_insn)STX(BPF_DW, 10, a, slot));
}

static void fix_exits(struct gen *g, size_t exit_at)
{
	for (size_t i = 0; i < g->cnt; i++)
		if ((BPF_CLASS(g->insns[i].code) == BPF_JMP ||
		     BPF_CLASS(g->insns[i].code) == BPF_JMP32) &&
		    g->insns[i].off == EXIT_FIXUP)
			g->insns[i].off = (int16_t)(exit_at - i - 1);
}

void gen_program(struct gen *g)
{
	int n = 2 + (int)pick(g, 12);

	g->cnt = 0;
	/* r2-r9 start as small numbers, r9 may turn into a pointer */
	for (int r = 2; r <= 9; r++)
		emit(g, (struct bpf_insn)MOV64_IMM(r, (int32_t)pick(g, 16)));
	for (int i = 0; i < n; i++) {
		switch (pick(g, 11)) {
		case 0: snippet_init(g); break;
		case 1: snippet_alu(g); break;
		case 2: snippet_check(g); break;
		case 3: snippet_stack(g); break;
		case 4: snippet_lookup(g); break;
		case 5: snippet_loop(g); break;
		case 6: snippet_ring(g); break;
		case 7: snippet_atomic(g); break;
		case 8:
		case 9: snippet_diamond(g); break;
		default: snippet_alu(g); snippet_check(g); break;
		}
	}
	emit(g, (struct bpf_insn)MOV64_REG(0, scratch_reg(g)));
	emit(g, (struct bpf_insn)EXIT());
	fix_exits(g, g->cnt);
	g->insns[g->cnt++] = (struct bpf_insn)MOV64_IMM(0, 0);
	g->insns[g->cnt++] = (struct bpf_insn)EXIT();
}

/*
 * A branch around a snippet that may be unsafe (an unwritten slot, an
 * unchecked lookup): its sides rejoin, and which one runs matters.
 */
static void snippet_guarded(struct gen *g)
{
	int d = scratch_reg(g);
	int32_t skip = (int32_t)pick(g, 4);
	size_t at;

	if (pick(g, 3)) {
		/* d set on two paths, skipping on the one explored first */
		emit(g, (struct bpf_insn)CALL(509));
		emit(g, (struct bpf_insn)JMP_IMM(BPF_JGT, 0,
						 (int32_t)pick(g, 16), 2));
		emit(g, (struct bpf_insn)MOV64_IMM(d, skip));
		emit(g, (struct bpf_insn)JA(1));
		emit(g, (struct bpf_insn)MOV64_IMM(d, (int32_t)pick(g, 4)));
	}
	at = g->cnt;
	emit(g, (struct bpf_insn)JMP_IMM(pick(g, 3) ? BPF_JEQ : BPF_JGT, d,
					 skip, 0));
	if (pick(g, 2))
		snippet_stack(g);
	else
		snippet_lookup(g);
	g->insns[at].off = (int16_t)(g->cnt - at - 1);
}

/* The loop counter, in a register or in a stack slot. */
static void count_up(struct gen *g, int c, int16_t slot)
{
	if (slot)
		emit(g, (struct bpf_insn)LDX(BPF_DW, c, 10, slot));
	emit(g, (struct bpf_insn)ALU64_IMM(BPF_ADD, c, 1));
	if (slot)
		emit(g, (struct bpf_insn)STX(BPF_DW, 10, c, slot));
}

void gen_loop_program(struct gen *g)
{
	int c = scratch_reg(g), n = 1 + (int)pick(g, 6);
	int16_t slot = pick(g, 2) ? (int16_t)(-8 * (int)(1 + pick(g, 8))) : 0;
	int32_t bound = 1 + (int32_t)pick(g, 24);
	size_t head;

	g->cnt = 0;
	for (int r = 2; r <= 9; r++)
		emit(g, (struct bpf_insn)MOV64_IMM(r, (int32_t)pick(g, 16)));
	for (int i = (int)pick(g, 4); i > 0; i--)
		emit(g, (struct bpf_insn)ST(BPF_DW, 10,
					    (int16_t)(-8 * (int)(1 + pick(g, 8))),
					    (int32_t)pick(g, 16)));
	emit(g, (struct bpf_insn)MOV64_IMM(c, 0));
	if (slot)
		emit(g, (struct bpf_insn)STX(BPF_DW, 10, c, slot));
	head = g->cnt;
	for (int i = 0; i < n; i++) {
		switch (pick(g, 10)) {
		case 0: snippet_init(g); break;
		case 1: snippet_alu(g); break;
		case 2: snippet_check(g); break;
		case 3: snippet_stack(g); break;
		case 4: snippet_lookup(g); break;
		case 5: snippet_diamond(g); break;
		case 6:
		case 7: snippet_max(g); break;
		default: snippet_guarded(g); break;
		}
	}
	count_up(g, c, slot);
	emit(g, (struct bpf_insn)JMP_IMM(BPF_JLT, c, bound,
					 (int16_t)((int)head - (int)g->cnt - 1)));
	emit(g, (struct bpf_insn)MOV64_REG(0, scratch_reg(g)));
	emit(g, (struct bpf_insn)EXIT());
	fix_exits(g, g->cnt);
	g->insns[g->cnt++] = (struct bpf_insn)MOV64_IMM(0, 0);
	g->insns[g->cnt++] = (struct bpf_insn)EXIT();
}

static void mutate_one(struct gen *g, struct bpf_insn *insn)
{
	static const int16_t deltas[] = { -8, -4, -2, -1, 1, 2, 4, 8 };

	switch (pick(g, 7)) {
	case 0:
		insn->imm = some_imm(g);
		break;
	case 1:
		insn->off = (int16_t)(insn->off + deltas[pick(g, 8)]);
		break;
	case 2:
		insn->dst_reg = (uint8_t)pick(g, 11);
		break;
	case 3:
		insn->src_reg = (uint8_t)pick(g, 11);
		break;
	case 4: /* another operation of the same class */
		insn->code = (uint8_t)((insn->code & 0x0f) | (pick(g, 14) << 4));
		break;
	case 5: /* another access size */
		insn->code = (uint8_t)((insn->code & ~0x18) | (pick(g, 4) << 3));
		break;
	default:
		*insn = nop;
		break;
	}
}

void gen_mutate(struct gen *g, const struct bpf_insn *src, size_t cnt)
{
	int n = 1 + (int)pick(g, 3);

	g->cnt = cnt < GEN_MAX_INSNS ? cnt : GEN_MAX_INSNS;
	memcpy(g->insns, src, g->cnt * sizeof(*src));
	for (int i = 0; i < n && g->cnt; i++) {
		size_t at = pick(g, (uint32_t)g->cnt);

		/* keep lddw pairs whole: mutate their first half only */
		if (at && bpf_is_lddw(&g->insns[at - 1]))
			at--;
		mutate_one(g, &g->insns[at]);
	}
}
