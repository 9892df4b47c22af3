/* SPDX-License-Identifier: MIT */
/*
 * Memory: lddw (constants and map references), loads (ldx, ldsx) and
 * stores (st, stx).
 *
 * eBPF allows unaligned accesses. Accesses through r10 (or a register known
 * to hold r10 + k) have a known alignment: the frame is 8-aligned. Other
 * pointers are unknown: the host loads them with align 1, which costs
 * nothing on the CPU; a back end with check_align (the GPU, where a
 * misaligned access faults) tests the address and uses a natural-width
 * access when it is aligned and a byte-wise one otherwise. LLVM folds the
 * test away wherever it can prove the alignment.
 */
#include "lift.h"

static unsigned size_bytes(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_B:
		return 1;
	case BPF_H:
		return 2;
	case BPF_W:
		return 4;
	default:
		return 8;
	}
}

static LLVMTypeRef size_type(struct lift *l, uint8_t code)
{
	return LLVMIntTypeInContext(l->ctx, 8 * size_bytes(code));
}

bool lift_on_frame(const struct lift *l, unsigned reg, int64_t off,
		   unsigned size)
{
	int64_t pos = BPF_STACK_SIZE + l->fp_off[reg] + off;

	return l->fp_known[reg] && pos >= 0 && pos + size <= BPF_STACK_SIZE;
}

bool lift_never_stack(const struct lift *l)
{
	return l->in->never_stack && l->in->never_stack[l->pc];
}

LLVMValueRef lift_addr(struct lift *l, unsigned reg, int64_t off,
		       unsigned size, unsigned *align)
{
	int64_t pos = BPF_STACK_SIZE + l->fp_off[reg] + off;
	LLVMValueRef p;

	/* Inside the frame: address it directly, alignment known. */
	if (lift_on_frame(l, reg, off, size)) {
		*align = 8;
		while (*align > 1 && pos % *align)
			*align /= 2;
		return LLVMBuildGEP2(l->b, l->i8, l->fn->frame,
				     (LLVMValueRef[]){ lift_const(l->i64, pos) },
				     1, "");
	}
	*align = 1;
	p = LLVMBuildAdd(l->b, lift_reg(l, reg),
			 lift_const(l->i64, (uint64_t)off), "");
	return LLVMBuildIntToPtr(l->b, p, l->ptr, "");
}

/* i1: the address is not a multiple of the access width @size. */
static LLVMValueRef misaligned(struct lift *l, LLVMValueRef addr,
			       unsigned size)
{
	LLVMValueRef low = LLVMBuildAnd(l->b,
					LLVMBuildPtrToInt(l->b, addr, l->i64, ""),
					lift_const(l->i64, size - 1), "");

	return LLVMBuildICmp(l->b, LLVMIntNE, low, lift_const(l->i64, 0), "");
}

static LLVMValueRef build_load(struct lift *l, LLVMTypeRef t,
			       LLVMValueRef addr, unsigned align)
{
	LLVMValueRef v = LLVMBuildLoad2(l->b, t, addr, "");

	LLVMSetAlignment(v, align);
	return v;
}

static void build_store(struct lift *l, LLVMValueRef v, LLVMValueRef addr,
			unsigned align)
{
	LLVMSetAlignment(LLVMBuildStore(l->b, v, addr), align);
}

/*
 * Whether an access of @size bytes at known alignment @align needs a test.
 * Probes need none: the verifier proves every access of a program at an
 * attach point naturally aligned (stack, map values, records, ctx).
 */
static bool needs_check(struct lift *l, unsigned size, unsigned align)
{
	return l->be->check_align && !l->in->aligned && align < size;
}

LLVMValueRef lift_load(struct lift *l, LLVMValueRef addr, unsigned align,
		       LLVMTypeRef t)
{
	unsigned size = LLVMGetIntTypeWidth(t) / 8;
	LLVMBasicBlockRef fast, slow, join, in[2];
	LLVMValueRef v[2], phi;

	if (!needs_check(l, size, align))
		return build_load(l, t, addr, align < size ? align : size);
	fast = lift_block(l, "");
	slow = lift_block(l, "");
	join = lift_block(l, "");
	LLVMBuildCondBr(l->b, misaligned(l, addr, size), slow, fast);
	LLVMPositionBuilderAtEnd(l->b, fast);
	v[0] = build_load(l, t, addr, size);
	LLVMBuildBr(l->b, join);
	LLVMPositionBuilderAtEnd(l->b, slow);
	v[1] = build_load(l, t, addr, 1);
	LLVMBuildBr(l->b, join);
	LLVMPositionBuilderAtEnd(l->b, join);
	phi = LLVMBuildPhi(l->b, t, "");
	in[0] = fast;
	in[1] = slow;
	LLVMAddIncoming(phi, v, in, 2);
	return phi;
}

void lift_store(struct lift *l, LLVMValueRef addr, unsigned align,
		LLVMValueRef v)
{
	unsigned size = LLVMGetIntTypeWidth(LLVMTypeOf(v)) / 8;
	LLVMBasicBlockRef fast, slow, join;

	if (!needs_check(l, size, align)) {
		build_store(l, v, addr, align < size ? align : size);
		return;
	}
	fast = lift_block(l, "");
	slow = lift_block(l, "");
	join = lift_block(l, "");
	LLVMBuildCondBr(l->b, misaligned(l, addr, size), slow, fast);
	LLVMPositionBuilderAtEnd(l->b, fast);
	build_store(l, v, addr, size);
	LLVMBuildBr(l->b, join);
	LLVMPositionBuilderAtEnd(l->b, slow);
	build_store(l, v, addr, 1);
	LLVMBuildBr(l->b, join);
	LLVMPositionBuilderAtEnd(l->b, join);
}

/* The map an lddw refers to by index, or NULL (with the error set). */
static const struct jit_map *lddw_map(struct lift *l, int32_t idx)
{
	if (idx < 0 || (size_t)idx >= l->in->map_cnt) {
		lift_err(l, "lddw refers to map %d; the program has %zu maps",
			 idx, l->in->map_cnt);
		return NULL;
	}
	return &l->in->maps[idx];
}

int lift_ld(struct lift *l, const struct bpf_insn *insn)
{
	const struct bpf_insn *next = insn + 1;
	const struct jit_map *map;
	uint64_t v;

	if (BPF_MODE(insn->code) == BPF_ABS || BPF_MODE(insn->code) == BPF_IND)
		return lift_err(l, "legacy packet access (ld_abs/ld_ind) is not supported");
	if (!bpf_is_lddw(insn))
		return lift_err(l, "unknown load opcode 0x%02x", insn->code);
	switch (insn->src_reg) {
	case 0:
		v = (uint32_t)insn->imm | (uint64_t)(uint32_t)next->imm << 32;
		break;
	case BPF_PSEUDO_MAP_IDX:
		map = lddw_map(l, insn->imm);
		if (!map)
			return EGPU_EJIT;
		v = map->addr;
		break;
	case BPF_PSEUDO_MAP_IDX_VALUE:
		map = lddw_map(l, insn->imm);
		if (!map)
			return EGPU_EJIT;
		if (!map->value_addr)
			return lift_err(l, "map %d has no directly addressable value",
					insn->imm);
		v = map->value_addr + (uint32_t)next->imm;
		break;
	case BPF_PSEUDO_MAP_FD:
	case BPF_PSEUDO_MAP_VALUE:
	case BPF_PSEUDO_BTF_ID:
	case BPF_PSEUDO_FUNC:
		return lift_err(l, "lddw with src %u (map fd, map value, BTF id or function) must be resolved by the loader",
				insn->src_reg);
	default:
		return lift_err(l, "lddw with unknown src %u", insn->src_reg);
	}
	lift_set_reg(l, insn->dst_reg, lift_const(l->i64, v));
	return 0;
}

int lift_ldx(struct lift *l, const struct bpf_insn *insn)
{
	bool sx = BPF_MODE(insn->code) == BPF_MEMSX;
	LLVMTypeRef t = size_type(l, insn->code);
	LLVMValueRef addr, v;
	unsigned align;

	if (BPF_MODE(insn->code) != BPF_MEM && !sx)
		return lift_err(l, "unknown load opcode 0x%02x", insn->code);
	if (sx && BPF_SIZE(insn->code) == BPF_DW)
		return lift_err(l, "ldsx of 8 bytes does not exist");
	addr = lift_addr(l, insn->src_reg, insn->off, size_bytes(insn->code),
			 &align);
	v = lift_load(l, addr, align, t);
	if (t != l->i64)
		v = sx ? LLVMBuildSExt(l->b, v, l->i64, "") :
			 LLVMBuildZExt(l->b, v, l->i64, "");
	lift_set_reg(l, insn->dst_reg, v);
	return 0;
}

int lift_st(struct lift *l, const struct bpf_insn *insn)
{
	LLVMTypeRef t = size_type(l, insn->code);
	LLVMValueRef addr, v;
	unsigned align;

	if (BPF_MODE(insn->code) != BPF_MEM)
		return lift_err(l, "unknown store opcode 0x%02x", insn->code);
	if (BPF_CLASS(insn->code) == BPF_ST)
		v = lift_const(t, (uint64_t)(int64_t)insn->imm);
	else
		v = lift_narrow(l, lift_reg(l, insn->src_reg), t);
	addr = lift_addr(l, insn->dst_reg, insn->off, size_bytes(insn->code),
			 &align);
	lift_store(l, addr, align, v);
	return 0;
}
