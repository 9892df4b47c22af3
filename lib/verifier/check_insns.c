/* SPDX-License-Identifier: MIT */
/*
 * Structural checks of a linked program against the RFC 9669 encoding (ISA
 * v4 included): every instruction decodes, fields the opcode does not use
 * are zero, registers exist and r10 is only read, lddw is whole and names a
 * real map, jumps stay inside their subprogram and never land in the second
 * slot of an lddw, calls reach a known helper or a subprogram, and no
 * subprogram can run off its end.
 *
 * Error codes: EGPU_EFORMAT for bytes that are not a valid instruction,
 * EGPU_EVERIFY for valid instructions that make an unsafe program,
 * EGPU_ENOTSUP for valid forms libegpu does not run (legacy packet loads,
 * kfunc calls, BTF ids, function addresses).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/core.h"
#include "core/helpers.h"
#include "object/object.h"
#include "verifier/verifier.h"

#define REG_FP 10

/* Fields an opcode uses; the others must be zero. */
enum {
	F_VALID = 1,    /* the opcode exists */
	F_DST = 2,      /* dst_reg is read (or is a memory base) */
	F_DST_W = 4,    /* dst_reg is written */
	F_SRC = 8,      /* src_reg is used */
	F_OFF = 16,
	F_IMM = 32,
	F_UNSUP = 64,   /* valid encoding that libegpu does not run */
};

/* Per-instruction marks built by the first pass. */
enum {
	M_LDDW_HI = 1,  /* second slot of an lddw */
	M_SUBPROG = 2,  /* first instruction of a subprogram */
};

struct checker {
	const struct prog_spec *prog;
	size_t map_cnt;
	int abi;
	uint8_t *marks;
	uint32_t *subprog; /* subprogram number of each instruction */
};

static const char *const alu_names[16] = {
	"add", "sub", "mul", "div", "or", "and", "lsh", "rsh",
	"neg", "mod", "xor", "mov", "arsh", "end", NULL, NULL,
};

static const char *const jmp_names[16] = {
	"ja", "jeq", "jgt", "jge", "jset", "jne", "jsgt", "jsge",
	"call", "exit", "jlt", "jle", "jslt", "jsle", NULL, NULL,
};

static const char *const size_names[4] = { "w", "h", "b", "dw" };

static bool is_alu(uint8_t code)
{
	return BPF_CLASS(code) == BPF_ALU || BPF_CLASS(code) == BPF_ALU64;
}

static bool is_jmp(uint8_t code)
{
	return BPF_CLASS(code) == BPF_JMP || BPF_CLASS(code) == BPF_JMP32;
}

static bool is_cond_jmp(uint8_t code)
{
	uint8_t op = BPF_OP(code);

	return is_jmp(code) && op != BPF_JA && op != BPF_CALL &&
	       op != BPF_EXIT && jmp_names[op >> 4];
}

/* Unconditional jumps: JA (offset in off) and JA32/gotol (offset in imm). */
static bool is_goto(uint8_t code)
{
	return code == (BPF_JMP | BPF_JA) || code == (BPF_JMP32 | BPF_JA);
}

static const char *atomic_name(int32_t imm)
{
	switch (imm) {
	case BPF_ADD: return "add";
	case BPF_OR: return "or";
	case BPF_AND: return "and";
	case BPF_XOR: return "xor";
	case BPF_ADD | BPF_FETCH: return "fetch_add";
	case BPF_OR | BPF_FETCH: return "fetch_or";
	case BPF_AND | BPF_FETCH: return "fetch_and";
	case BPF_XOR | BPF_FETCH: return "fetch_xor";
	case BPF_XCHG: return "xchg";
	case BPF_CMPXCHG: return "cmpxchg";
	}
	return NULL;
}

/* ---- short disassembly, for messages ---- */

static void disasm_alu(const struct bpf_insn *in, char *buf, size_t n)
{
	uint8_t op = BPF_OP(in->code);
	const char *w = BPF_CLASS(in->code) == BPF_ALU64 ? "64" : "32";
	const char *name = alu_names[op >> 4];
	char src[16];

	if (op == BPF_END) {
		if (BPF_CLASS(in->code) == BPF_ALU64)
			snprintf(buf, n, "bswap%d r%d", in->imm, in->dst_reg);
		else
			snprintf(buf, n, "%s%d r%d",
				 BPF_SRC(in->code) == BPF_TO_BE ? "be" : "le",
				 in->imm, in->dst_reg);
		return;
	}
	if (op == BPF_NEG) {
		snprintf(buf, n, "neg%s r%d", w, in->dst_reg);
		return;
	}
	if ((op == BPF_DIV || op == BPF_MOD) && in->off == 1)
		name = op == BPF_DIV ? "sdiv" : "smod";
	else if (op == BPF_MOV && in->off && BPF_SRC(in->code) == BPF_X)
		name = "movsx";
	if (BPF_SRC(in->code) == BPF_X)
		snprintf(src, sizeof(src), "r%d", in->src_reg);
	else
		snprintf(src, sizeof(src), "%d", in->imm);
	snprintf(buf, n, "%s%s r%d, %s", name, w, in->dst_reg, src);
}

static void disasm_lddw(const struct bpf_insn *in, const struct bpf_insn *hi,
			char *buf, size_t n)
{
	int32_t imm2 = hi ? hi->imm : 0;

	switch (in->src_reg) {
	case 0:
		snprintf(buf, n, "lddw r%d, 0x%llx", in->dst_reg,
			 ((unsigned long long)(uint32_t)imm2 << 32) |
				 (uint32_t)in->imm);
		break;
	case BPF_PSEUDO_MAP_IDX:
		snprintf(buf, n, "lddw r%d, map[%d]", in->dst_reg, in->imm);
		break;
	case BPF_PSEUDO_MAP_IDX_VALUE:
		snprintf(buf, n, "lddw r%d, map[%d]+%d", in->dst_reg, in->imm,
			 imm2);
		break;
	default:
		snprintf(buf, n, "lddw r%d, src %d imm %d", in->dst_reg,
			 in->src_reg, in->imm);
	}
}

static void disasm_mem(const struct bpf_insn *in, char *buf, size_t n)
{
	const char *sz = size_names[BPF_SIZE(in->code) >> 3];
	const char *w = BPF_SIZE(in->code) == BPF_DW ? "64" : "32";
	const char *aname;

	switch (BPF_CLASS(in->code)) {
	case BPF_LDX:
		snprintf(buf, n, "ldx%s%s r%d, [r%d%+d]",
			 BPF_MODE(in->code) == BPF_MEMSX ? "s" : "", sz,
			 in->dst_reg, in->src_reg, in->off);
		return;
	case BPF_ST:
		snprintf(buf, n, "st%s [r%d%+d], %d", sz, in->dst_reg, in->off,
			 in->imm);
		return;
	}
	if (BPF_MODE(in->code) != BPF_ATOMIC) {
		snprintf(buf, n, "stx%s [r%d%+d], r%d", sz, in->dst_reg,
			 in->off, in->src_reg);
		return;
	}
	aname = atomic_name(in->imm);
	if (aname)
		snprintf(buf, n, "atomic_%s%s [r%d%+d], r%d", aname, w,
			 in->dst_reg, in->off, in->src_reg);
	else
		snprintf(buf, n, "atomic%s imm 0x%x", w, (unsigned)in->imm);
}

static void disasm_jmp(const struct bpf_insn *in, char *buf, size_t n)
{
	uint8_t op = BPF_OP(in->code);
	const char *w = BPF_CLASS(in->code) == BPF_JMP32 ? "32" : "";
	char src[16];

	if (in->code == (BPF_JMP32 | BPF_JA)) {
		snprintf(buf, n, "gotol %+d", in->imm);
	} else if (op == BPF_JA) {
		snprintf(buf, n, "ja%s %+d", w, in->off);
	} else if (op == BPF_EXIT) {
		snprintf(buf, n, "exit%s", w);
	} else if (op == BPF_CALL && BPF_SRC(in->code) == BPF_X) {
		snprintf(buf, n, "callx r%d", in->dst_reg);
	} else if (op == BPF_CALL) {
		snprintf(buf, n, in->src_reg == BPF_PSEUDO_CALL ?
			 "call pc%+d" : "call %d", in->imm);
	} else {
		if (BPF_SRC(in->code) == BPF_X)
			snprintf(src, sizeof(src), "r%d", in->src_reg);
		else
			snprintf(src, sizeof(src), "%d", in->imm);
		snprintf(buf, n, "%s%s r%d, %s, %+d", jmp_names[op >> 4], w,
			 in->dst_reg, src, in->off);
	}
}

static unsigned int insn_fields(uint8_t code);

static void disasm(const struct checker *c, size_t pc, char *buf, size_t n)
{
	const struct bpf_insn *in = &c->prog->insns[pc];
	unsigned int f = insn_fields(in->code);

	if (!(f & F_VALID) || (f & F_UNSUP))
		snprintf(buf, n, "opcode 0x%02x", in->code);
	else if (is_alu(in->code))
		disasm_alu(in, buf, n);
	else if (is_jmp(in->code))
		disasm_jmp(in, buf, n);
	else if (bpf_is_lddw(in))
		disasm_lddw(in, pc + 1 < c->prog->insn_cnt ? in + 1 : NULL,
			    buf, n);
	else
		disasm_mem(in, buf, n);
}

static int reject(const struct checker *c, size_t pc, int code,
		  const char *fmt, ...) EGPU_PRINTF(4, 5);

static int reject(const struct checker *c, size_t pc, int code,
		  const char *fmt, ...)
{
	char what[64], reason[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	disasm(c, pc, what, sizeof(what));
	return err_set(code, "prog '%s': insn %zu (%s): %s", c->prog->name, pc,
		       what, reason);
}

/* ---- which fields each opcode uses ---- */

static unsigned int alu_fields(uint8_t code)
{
	unsigned int rw = F_VALID | F_DST | F_DST_W;
	unsigned int operand = BPF_SRC(code) == BPF_X ? F_SRC : F_IMM;
	bool is64 = BPF_CLASS(code) == BPF_ALU64;

	switch (BPF_OP(code)) {
	case BPF_ADD: case BPF_SUB: case BPF_MUL: case BPF_OR: case BPF_AND:
	case BPF_LSH: case BPF_RSH: case BPF_XOR: case BPF_ARSH:
		return rw | operand;
	case BPF_DIV: case BPF_MOD:
		return rw | operand | F_OFF;  /* off 1: signed */
	case BPF_MOV:
		/* dst is only written; off selects movsx (register form) */
		return F_VALID | F_DST_W | operand |
		       (BPF_SRC(code) == BPF_X ? F_OFF : 0);
	case BPF_NEG:
		return BPF_SRC(code) == BPF_K ? rw : 0;
	case BPF_END:
		/* ALU64 has only bswap, encoded with the K bit */
		return is64 && BPF_SRC(code) == BPF_X ? 0 : rw | F_IMM;
	}
	return 0;
}

static unsigned int jmp_fields(uint8_t code)
{
	bool is32 = BPF_CLASS(code) == BPF_JMP32;
	bool reg = BPF_SRC(code) == BPF_X;

	switch (BPF_OP(code)) {
	case BPF_JA:
		if (reg)
			return 0;
		return F_VALID | (is32 ? F_IMM : F_OFF);  /* JA32 is gotol */
	case BPF_CALL:
		if (is32)
			return 0;
		/* callx names its register in dst, as the conformance suite */
		return F_VALID | (reg ? F_DST : F_SRC | F_IMM);
	case BPF_EXIT:
		return !is32 && !reg ? F_VALID : 0;
	}
	if (!is_cond_jmp(code))
		return 0;
	return F_VALID | F_DST | F_OFF | (reg ? F_SRC : F_IMM);
}

static unsigned int mem_fields(uint8_t code)
{
	uint8_t mode = BPF_MODE(code), size = BPF_SIZE(code);

	switch (BPF_CLASS(code)) {
	case BPF_LD:
		if (code == (BPF_LD | BPF_IMM | BPF_DW))
			return F_VALID | F_DST | F_DST_W | F_SRC | F_IMM;
		if ((mode == BPF_ABS || mode == BPF_IND) && size != BPF_DW)
			return F_VALID | F_UNSUP;
		return 0;
	case BPF_LDX:
		if (mode == BPF_MEM || (mode == BPF_MEMSX && size != BPF_DW))
			return F_VALID | F_DST | F_DST_W | F_SRC | F_OFF;
		return 0;
	case BPF_ST:
		return mode == BPF_MEM ? F_VALID | F_DST | F_OFF | F_IMM : 0;
	case BPF_STX:
		if (mode == BPF_MEM)
			return F_VALID | F_DST | F_SRC | F_OFF;
		if (mode == BPF_ATOMIC && (size == BPF_W || size == BPF_DW))
			return F_VALID | F_DST | F_SRC | F_OFF | F_IMM;
		return 0;
	}
	return 0;
}

static unsigned int insn_fields(uint8_t code)
{
	if (is_alu(code))
		return alu_fields(code);
	if (is_jmp(code))
		return jmp_fields(code);
	return mem_fields(code);
}

/* ---- first pass: each instruction on its own ---- */

static int check_unused(const struct checker *c, size_t pc, unsigned int f)
{
	const struct bpf_insn *in = &c->prog->insns[pc];

	if (!(f & (F_DST | F_DST_W)) && in->dst_reg)
		return reject(c, pc, EGPU_EFORMAT,
			      "reserved field dst_reg is %d, must be 0",
			      in->dst_reg);
	if (!(f & F_SRC) && in->src_reg)
		return reject(c, pc, EGPU_EFORMAT,
			      "reserved field src_reg is %d, must be 0",
			      in->src_reg);
	if (!(f & F_OFF) && in->off)
		return reject(c, pc, EGPU_EFORMAT,
			      "reserved field offset is %d, must be 0",
			      in->off);
	if (!(f & F_IMM) && in->imm)
		return reject(c, pc, EGPU_EFORMAT,
			      "reserved field imm is %d, must be 0", in->imm);
	return 0;
}

/*
 * The frame pointer may be copied, offset, compared, stored and used as a
 * base; any other arithmetic on it yields no usable address.
 */
static bool fp_read_ok(uint8_t code)
{
	switch (BPF_CLASS(code)) {
	case BPF_ALU64:
		return BPF_OP(code) == BPF_MOV || BPF_OP(code) == BPF_ADD;
	case BPF_JMP:
	case BPF_JMP32:
		return is_cond_jmp(code);
	case BPF_LDX:
		return true;
	case BPF_STX:
		return BPF_MODE(code) == BPF_MEM;
	}
	return false;
}

/* lddw and call use src_reg to select a form, not a register. */
static bool src_is_form(const struct bpf_insn *in)
{
	return bpf_is_lddw(in) || in->code == (BPF_JMP | BPF_CALL);
}

static int check_regs(const struct checker *c, size_t pc, unsigned int f)
{
	const struct bpf_insn *in = &c->prog->insns[pc];
	bool src_reg = (f & F_SRC) && !src_is_form(in);

	if ((f & (F_DST | F_DST_W)) && in->dst_reg > REG_FP)
		return reject(c, pc, EGPU_EFORMAT, "no register r%d",
			      in->dst_reg);
	if (src_reg && in->src_reg > REG_FP)
		return reject(c, pc, EGPU_EFORMAT, "no register r%d",
			      in->src_reg);
	if ((f & F_DST_W) && in->dst_reg == REG_FP)
		return reject(c, pc, EGPU_EVERIFY,
			      "writes r10, the read-only frame pointer");
	if (src_reg && in->src_reg == REG_FP && !fp_read_ok(in->code))
		return reject(c, pc, EGPU_EVERIFY,
			      "the frame pointer r10 cannot be an operand here");
	return 0;
}

static int check_alu(const struct checker *c, size_t pc)
{
	const struct bpf_insn *in = &c->prog->insns[pc];
	uint8_t op = BPF_OP(in->code);
	bool is64 = BPF_CLASS(in->code) == BPF_ALU64;

	if (op == BPF_END && in->imm != 16 && in->imm != 32 && in->imm != 64)
		return reject(c, pc, EGPU_EFORMAT,
			      "byte swap width %d is not 16, 32 or 64",
			      in->imm);
	if ((op == BPF_DIV || op == BPF_MOD) && in->off != 0 && in->off != 1)
		return reject(c, pc, EGPU_EFORMAT,
			      "offset %d: must be 0 (unsigned) or 1 (signed)",
			      in->off);
	if (op == BPF_MOV && in->off != 0 && in->off != 8 && in->off != 16 &&
	    !(is64 && in->off == 32))
		return reject(c, pc, EGPU_EFORMAT,
			      "sign extension from %d bits: must be 8, 16%s",
			      in->off, is64 ? " or 32" : "");
	if (op == BPF_MOV && in->off && in->src_reg == REG_FP)
		return reject(c, pc, EGPU_EVERIFY,
			      "sign-extending the frame pointer r10");
	return 0;
}

static int check_lddw(const struct checker *c, size_t pc)
{
	const struct bpf_insn *in = &c->prog->insns[pc], *hi = in + 1;

	if (pc + 1 >= c->prog->insn_cnt)
		return reject(c, pc, EGPU_EFORMAT,
			      "lddw is truncated: the program ends before its second slot");
	if (hi->code || hi->dst_reg || hi->src_reg || hi->off)
		return reject(c, pc, EGPU_EFORMAT,
			      "second slot of lddw must have zero opcode, registers and offset");
	switch (in->src_reg) {
	case 0:
		return 0;
	case BPF_PSEUDO_MAP_IDX:
	case BPF_PSEUDO_MAP_IDX_VALUE:
		if (in->imm < 0 || (size_t)in->imm >= c->map_cnt)
			return reject(c, pc, EGPU_EVERIFY,
				      "map index %d out of range (%zu maps)",
				      in->imm, c->map_cnt);
		if (in->src_reg == BPF_PSEUDO_MAP_IDX && hi->imm)
			return reject(c, pc, EGPU_EFORMAT,
				      "map reference with non-zero upper imm %d",
				      hi->imm);
		return 0;
	case BPF_PSEUDO_MAP_FD:
	case BPF_PSEUDO_MAP_VALUE:
		return reject(c, pc, EGPU_EFORMAT,
			      "map file descriptor form (src %d) must be resolved by the loader",
			      in->src_reg);
	case BPF_PSEUDO_BTF_ID:
		return reject(c, pc, EGPU_ENOTSUP,
			      "kernel symbol (BTF id) references are not supported");
	case BPF_PSEUDO_FUNC:
		return reject(c, pc, EGPU_ENOTSUP,
			      "function addresses (callbacks) are not supported");
	}
	return reject(c, pc, EGPU_EFORMAT, "invalid lddw source form %d",
		      in->src_reg);
}

static int check_atomic(const struct checker *c, size_t pc)
{
	const struct bpf_insn *in = &c->prog->insns[pc];

	if (!atomic_name(in->imm))
		return reject(c, pc, EGPU_EFORMAT,
			      "invalid atomic operation 0x%x", (unsigned)in->imm);
	return 0;
}

static const char *abi_name(int abi)
{
	return abi == EGPU_HELPERS_CONFORMANCE ? "conformance" : "GPU";
}

/* Target of a local call or jump; out of range values stay out of range. */
static long long branch_target(size_t pc, int32_t delta)
{
	return (long long)pc + delta + 1;
}

static int check_call(const struct checker *c, size_t pc)
{
	const struct bpf_insn *in = &c->prog->insns[pc];
	long long t;

	if (BPF_SRC(in->code) == BPF_X) {
		if (in->dst_reg == REG_FP)
			return reject(c, pc, EGPU_EVERIFY,
				      "callx through the frame pointer r10");
		return 0;
	}
	switch (in->src_reg) {
	case 0:
		/* User helpers are checked against the context's later. */
		if (!helper_find(in->imm, c->abi) &&
		    !(c->abi == EGPU_HELPERS_GPU && helper_id_is_user(in->imm)))
			return reject(c, pc, EGPU_EVERIFY,
				      "unknown helper %d (%s helpers)%s",
				      in->imm, abi_name(c->abi),
				      in->imm > 0 && in->imm < HELPER_PUTS ?
				      ": a Linux kernel helper; probes run on the GPU or, as uprobes, in the application's process, which have no kernel to call (docs/helpers.md lists what they have)" : "");
		return 0;
	case BPF_PSEUDO_CALL:
		t = branch_target(pc, in->imm);
		if (t < 0 || t >= (long long)c->prog->insn_cnt)
			return reject(c, pc, EGPU_EVERIFY,
				      "call to insn %lld outside the program (%zu insns)",
				      t, c->prog->insn_cnt);
		c->marks[t] |= M_SUBPROG;
		return 0;
	case BPF_PSEUDO_KFUNC_CALL:
		return reject(c, pc, EGPU_ENOTSUP,
			      "kernel function (kfunc) calls are not supported");
	}
	return reject(c, pc, EGPU_EFORMAT, "invalid call source form %d",
		      in->src_reg);
}

static int check_insn(const struct checker *c, size_t pc)
{
	const struct bpf_insn *in = &c->prog->insns[pc];
	unsigned int f = insn_fields(in->code);
	int err;

	if (!(f & F_VALID))
		return reject(c, pc, EGPU_EFORMAT, "invalid opcode 0x%02x",
			      in->code);
	if (f & F_UNSUP)
		return reject(c, pc, EGPU_ENOTSUP,
			      "legacy packet loads (BPF_ABS/BPF_IND) are not supported");
	err = check_unused(c, pc, f);
	if (!err)
		err = check_regs(c, pc, f);
	if (err)
		return err;
	if (is_alu(in->code))
		return check_alu(c, pc);
	if (bpf_is_lddw(in))
		return check_lddw(c, pc);
	if (BPF_CLASS(in->code) == BPF_STX && BPF_MODE(in->code) == BPF_ATOMIC)
		return check_atomic(c, pc);
	if (is_jmp(in->code) && BPF_OP(in->code) == BPF_CALL)
		return check_call(c, pc);
	return 0;
}

static int check_each_insn(struct checker *c)
{
	for (size_t pc = 0; pc < c->prog->insn_cnt; pc++) {
		int err = check_insn(c, pc);

		if (err)
			return err;
		if (bpf_is_lddw(&c->prog->insns[pc]))
			c->marks[++pc] |= M_LDDW_HI;
	}
	return 0;
}

/* ---- second pass: control flow ---- */

static void number_subprogs(struct checker *c)
{
	uint32_t n = 0;

	c->marks[0] |= M_SUBPROG;
	for (size_t pc = 0; pc < c->prog->insn_cnt; pc++) {
		if (c->marks[pc] & M_SUBPROG)
			n++;
		c->subprog[pc] = n;
	}
}

static int check_target(const struct checker *c, size_t pc, long long t,
			bool is_call)
{
	if (t < 0 || t >= (long long)c->prog->insn_cnt)
		return reject(c, pc, EGPU_EVERIFY,
			      "jump to insn %lld outside the program (%zu insns)",
			      t, c->prog->insn_cnt);
	if (c->marks[t] & M_LDDW_HI)
		return reject(c, pc, EGPU_EVERIFY,
			      "%s to insn %lld, the second slot of the lddw at insn %lld",
			      is_call ? "call" : "jump", t, t - 1);
	if (!is_call && c->subprog[t] != c->subprog[pc])
		return reject(c, pc, EGPU_EVERIFY,
			      "jump to insn %lld leaves its subprogram", t);
	return 0;
}

static int check_branch(const struct checker *c, size_t pc)
{
	const struct bpf_insn *in = &c->prog->insns[pc];

	if (in->code == (BPF_JMP32 | BPF_JA))
		return check_target(c, pc, branch_target(pc, in->imm), false);
	if (is_goto(in->code) || is_cond_jmp(in->code))
		return check_target(c, pc, branch_target(pc, in->off), false);
	if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL)
		return check_target(c, pc, branch_target(pc, in->imm), true);
	return 0;
}

/* The last instruction of every subprogram must leave it. */
static int check_subprog_end(const struct checker *c, size_t last)
{
	const struct bpf_insn *in = &c->prog->insns[last];

	if (!(c->marks[last] & M_LDDW_HI) &&
	    (in->code == (BPF_JMP | BPF_EXIT) || is_goto(in->code)))
		return 0;
	if (last + 1 == c->prog->insn_cnt)
		return reject(c, last, EGPU_EVERIFY,
			      "execution can fall off the end of the program: the last instruction must be exit or ja");
	return reject(c, last, EGPU_EVERIFY,
		      "execution can fall into the subprogram at insn %zu: its predecessor must be exit or ja",
		      last + 1);
}

static int check_control_flow(struct checker *c)
{
	size_t n = c->prog->insn_cnt;
	int err;

	number_subprogs(c);
	for (size_t pc = 0; pc < n; pc++) {
		if (c->marks[pc] & M_LDDW_HI)
			continue;
		err = check_branch(c, pc);
		if (err)
			return err;
	}
	for (size_t pc = 1; pc <= n; pc++) {
		if (pc == n || (c->marks[pc] & M_SUBPROG)) {
			err = check_subprog_end(c, pc - 1);
			if (err)
				return err;
		}
	}
	return 0;
}

int verifier_check_insns(const struct prog_spec *prog, size_t map_cnt,
			 int abi)
{
	struct checker c = { .prog = prog, .map_cnt = map_cnt, .abi = abi };
	int err;

	if (!prog->insn_cnt)
		return err_set(EGPU_EFORMAT, "prog '%s': has no instructions",
			       prog->name);
	c.marks = calloc(prog->insn_cnt, sizeof(*c.marks));
	c.subprog = calloc(prog->insn_cnt, sizeof(*c.subprog));
	if (!c.marks || !c.subprog) {
		err = err_set(EGPU_ENOMEM, "prog '%s': out of memory",
			      prog->name);
	} else {
		err = check_each_insn(&c);
		if (!err)
			err = check_control_flow(&c);
	}
	free(c.marks);
	free(c.subprog);
	return err;
}

int verifier_check_object(const struct object_spec *spec, int abi)
{
	for (size_t i = 0; i < spec->prog_cnt; i++) {
		int err = verifier_check_insns(&spec->progs[i], spec->map_cnt,
					       abi);

		if (err)
			return err;
	}
	return 0;
}
