/* SPDX-License-Identifier: MIT */
/* Instructions in the assembler syntax of Linux's verifier log. */
#include <inttypes.h>
#include <stdlib.h>

#include "core/core.h"
#include "core/helpers.h"
#include "vstate.h"

static const char *const alu_ops[16] = {
	[BPF_ADD >> 4] = "+=", [BPF_SUB >> 4] = "-=", [BPF_MUL >> 4] = "*=",
	[BPF_DIV >> 4] = "/=", [BPF_OR >> 4] = "|=", [BPF_AND >> 4] = "&=",
	[BPF_LSH >> 4] = "<<=", [BPF_RSH >> 4] = ">>=", [BPF_MOD >> 4] = "%=",
	[BPF_XOR >> 4] = "^=", [BPF_MOV >> 4] = "=", [BPF_ARSH >> 4] = "s>>=",
};

static const char *const jmp_ops[16] = {
	[BPF_JEQ >> 4] = "==", [BPF_JGT >> 4] = ">", [BPF_JGE >> 4] = ">=",
	[BPF_JSET >> 4] = "&", [BPF_JNE >> 4] = "!=", [BPF_JSGT >> 4] = "s>",
	[BPF_JSGE >> 4] = "s>=", [BPF_JLT >> 4] = "<", [BPF_JLE >> 4] = "<=",
	[BPF_JSLT >> 4] = "s<", [BPF_JSLE >> 4] = "s<=",
};

static const char *size_name(uint8_t code, bool sign)
{
	static const char *const u[] = { "u32", "u16", "u8", "u64" };
	static const char *const s[] = { "s32", "s16", "s8", "s64" };

	return (sign ? s : u)[BPF_SIZE(code) >> 3];
}

static void mem_operand(struct strbuf *sb, const struct bpf_insn *insn,
			bool sign)
{
	int base = BPF_CLASS(insn->code) == BPF_LDX ? insn->src_reg :
		   insn->dst_reg;

	sb_printf(sb, "*(%s *)(r%d %c %d)", size_name(insn->code, sign), base,
		  insn->off < 0 ? '-' : '+', abs(insn->off));
}

static void disasm_alu(struct strbuf *sb, const struct bpf_insn *insn)
{
	bool wide = BPF_CLASS(insn->code) == BPF_ALU64;
	char r = wide ? 'r' : 'w';
	uint8_t op = BPF_OP(insn->code);

	if (op == BPF_NEG) {
		sb_printf(sb, "%c%d = -%c%d", r, insn->dst_reg, r,
			  insn->dst_reg);
		return;
	}
	if (op == BPF_END) {
		const char *kind = wide ? "bswap" :
				   BPF_SRC(insn->code) == BPF_TO_BE ? "be" :
				   "le";

		sb_printf(sb, "r%d = %s%d r%d", insn->dst_reg, kind, insn->imm,
			  insn->dst_reg);
		return;
	}
	sb_printf(sb, "%c%d ", r, insn->dst_reg);
	if ((op == BPF_DIV || op == BPF_MOD) && insn->off == 1)
		sb_adds(sb, "s");
	sb_printf(sb, "%s ", alu_ops[op >> 4] ? alu_ops[op >> 4] : "?=");
	if (op == BPF_MOV && insn->off)
		sb_printf(sb, "(s%d)", insn->off);
	if (BPF_SRC(insn->code) == BPF_X)
		sb_printf(sb, "%c%d", r, insn->src_reg);
	else
		sb_printf(sb, "%" PRId32, insn->imm);
}

static void disasm_atomic(struct strbuf *sb, const struct bpf_insn *insn)
{
	char r = BPF_SIZE(insn->code) == BPF_DW ? 'r' : 'w';
	static const char *const names[16] = {
		[BPF_ADD >> 4] = "add", [BPF_OR >> 4] = "or",
		[BPF_AND >> 4] = "and", [BPF_XOR >> 4] = "xor",
	};
	const char *name = names[(insn->imm & 0xf0) >> 4];

	if (insn->imm == BPF_XCHG || insn->imm == BPF_CMPXCHG) {
		bool cmp = insn->imm == BPF_CMPXCHG;

		sb_printf(sb, "%c%d = %s((%s *)(r%d %c %d), ", r,
			  cmp ? 0 : insn->src_reg, cmp ? "cmpxchg" : "xchg",
			  size_name(insn->code, false), insn->dst_reg,
			  insn->off < 0 ? '-' : '+', abs(insn->off));
		if (cmp)
			sb_printf(sb, "%c0, ", r);
		sb_printf(sb, "%c%d)", r, insn->src_reg);
	} else if (insn->imm & BPF_FETCH) {
		sb_printf(sb, "%c%d = atomic_fetch_%s((%s *)(r%d %c %d), %c%d)",
			  r, insn->src_reg, name ? name : "?",
			  size_name(insn->code, false), insn->dst_reg,
			  insn->off < 0 ? '-' : '+', abs(insn->off), r,
			  insn->src_reg);
	} else {
		sb_adds(sb, "lock ");
		mem_operand(sb, insn, false);
		sb_printf(sb, " %s %c%d",
			  alu_ops[(insn->imm & 0xf0) >> 4] ?
			  alu_ops[(insn->imm & 0xf0) >> 4] : "?=",
			  r, insn->src_reg);
	}
}

static void disasm_mem(struct strbuf *sb, const struct bpf_insn *insn)
{
	uint8_t cls = BPF_CLASS(insn->code);
	uint8_t mode = BPF_MODE(insn->code);

	if (cls == BPF_LDX) {
		sb_printf(sb, "r%d = ", insn->dst_reg);
		mem_operand(sb, insn, mode == BPF_MEMSX);
	} else if (mode == BPF_ATOMIC) {
		disasm_atomic(sb, insn);
	} else {
		mem_operand(sb, insn, false);
		if (cls == BPF_ST)
			sb_printf(sb, " = %" PRId32, insn->imm);
		else
			sb_printf(sb, " = r%d", insn->src_reg);
	}
}

static const char *map_name(const struct map_spec *maps, size_t map_cnt,
			    int32_t idx)
{
	if (maps && idx >= 0 && (size_t)idx < map_cnt && maps[idx].name)
		return maps[idx].name;
	return NULL;
}

static void disasm_lddw(struct strbuf *sb, const struct bpf_insn *insns,
			size_t cnt, size_t idx,
			const struct map_spec *maps, size_t map_cnt)
{
	const struct bpf_insn *insn = &insns[idx];
	int32_t next = idx + 1 < cnt ? insns[idx + 1].imm : 0;
	const char *name = map_name(maps, map_cnt, insn->imm);

	sb_printf(sb, "r%d = ", insn->dst_reg);
	switch (insn->src_reg) {
	case 0:
		sb_printf(sb, "%#" PRIx64 " ll", (uint64_t)(uint32_t)insn->imm |
			  (uint64_t)(uint32_t)next << 32);
		return;
	case BPF_PSEUDO_MAP_IDX:
	case BPF_PSEUDO_MAP_IDX_VALUE:
		sb_adds(sb, insn->src_reg == BPF_PSEUDO_MAP_IDX ? "map[" :
			"map_value[");
		if (name)
			sb_adds(sb, name);
		else
			sb_printf(sb, "#%" PRId32, insn->imm);
		sb_adds(sb, "]");
		if (insn->src_reg == BPF_PSEUDO_MAP_IDX_VALUE)
			sb_printf(sb, " + %" PRId32, next);
		return;
	default:
		sb_printf(sb, "lddw(src=%d, %" PRId32 ", %" PRId32 ")",
			  insn->src_reg, insn->imm, next);
	}
}

static void disasm_jmp(struct strbuf *sb, const struct bpf_insn *insn,
		       int abi)
{
	uint8_t op = BPF_OP(insn->code);
	bool j32 = BPF_CLASS(insn->code) == BPF_JMP32;
	char r = j32 ? 'w' : 'r';

	switch (op) {
	case BPF_JA:
		if (j32)
			sb_printf(sb, "gotol %+" PRId32, insn->imm);
		else
			sb_printf(sb, "goto %+d", insn->off);
		return;
	case BPF_EXIT:
		sb_adds(sb, "exit");
		return;
	case BPF_CALL: {
		const struct helper_info *h = helper_find(insn->imm, abi);

		if (BPF_SRC(insn->code) == BPF_X)
			sb_printf(sb, "callx r%d", insn->dst_reg);
		else if (insn->src_reg == BPF_PSEUDO_CALL)
			sb_printf(sb, "call pc%+" PRId32, insn->imm);
		else if (h)
			sb_printf(sb, "call %s#%" PRId32, h->name, insn->imm);
		else
			sb_printf(sb, "call #%" PRId32, insn->imm);
		return;
	}
	default:
		break;
	}
	sb_printf(sb, "if %c%d %s ", r, insn->dst_reg,
		  jmp_ops[op >> 4] ? jmp_ops[op >> 4] : "?");
	if (BPF_SRC(insn->code) == BPF_X)
		sb_printf(sb, "%c%d", r, insn->src_reg);
	else if (insn->imm >= 0)
		sb_printf(sb, "%#" PRIx32, (uint32_t)insn->imm);
	else
		sb_printf(sb, "%" PRId32, insn->imm);
	sb_printf(sb, " goto %+d", insn->off);
}

void verifier_disasm(struct strbuf *sb, const struct bpf_insn *insns,
		     size_t cnt, size_t idx, const struct map_spec *maps,
		     size_t map_cnt, int abi)
{
	const struct bpf_insn *insn = &insns[idx];

	switch (BPF_CLASS(insn->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		disasm_alu(sb, insn);
		break;
	case BPF_LDX:
	case BPF_ST:
	case BPF_STX:
		disasm_mem(sb, insn);
		break;
	case BPF_JMP:
	case BPF_JMP32:
		disasm_jmp(sb, insn, abi);
		break;
	default:
		if (bpf_is_lddw(insn))
			disasm_lddw(sb, insns, cnt, idx, maps, map_cnt);
		else
			sb_printf(sb, "ld_%s %#" PRIx32,
				  BPF_MODE(insn->code) == BPF_IND ? "ind" :
				  "abs", (uint32_t)insn->imm);
		break;
	}
}

void disasm_insn(struct strbuf *sb, const struct verifier *v, int idx)
{
	verifier_disasm(sb, v->insns, v->cnt, idx, v->maps, v->map_cnt,
			v->opts.abi);
}
