/* SPDX-License-Identifier: MIT */
/*
 * The lifter: one eBPF program -> one LLVM module, shared by the PTX and the
 * host back ends. Each subprogram becomes an LLVM function with its own
 * 512-byte frame and its own registers (allocas that mem2reg promotes).
 * A back end only says how helpers are lowered and how careful memory
 * accesses must be about alignment.
 */
#ifndef EGPU_JIT_LIFT_H
#define EGPU_JIT_LIFT_H

#include <stdbool.h>

#include <llvm-c/Core.h>

#include "core/core.h"
#include "core/helpers.h"
#include "jit/jit.h"

/* Longest program name accepted (it prefixes every PTX symbol we emit). */
#define JIT_NAME_MAX 512

struct lift;

struct lift_backend {
	/*
	 * Lower a call of helper @h with arguments @args (r1..r5, i64) and
	 * give its result in *@r0 (i64). Return 0 or a negative EGPU_E* code.
	 */
	int (*helper)(struct lift *l, const struct helper_info *h,
		      LLVMValueRef *args, LLVMValueRef *r0);
	/*
	 * Lower a call of user helper @u (egpu_helper_register) with
	 * arguments @args (r1..r5, i64); its result in *@r0 (i64).
	 */
	int (*user_helper)(struct lift *l, const struct user_helper *u,
			   LLVMValueRef *args, LLVMValueRef *r0);
	/* Whether helper @id (GPU abi) can be lowered; NULL: all can. */
	bool (*has_helper)(int32_t id);
	/* Helper (GPU abi) whose lowering ends the program, or 0 if none. */
	int32_t abort_helper;
	/*
	 * Loads and stores through pointers of unknown alignment test the
	 * address at run time and take a byte-wise path when it is misaligned
	 * (GPUs fault on misaligned accesses; CPUs do not).
	 */
	bool check_align;
	/*
	 * Emit atomic @op (add, or, and, xor) of @val (i32 or i64) at @addr
	 * in memory other threads share, sequentially consistent and
	 * returning the old value if @fetch (else relaxed, and the result is
	 * not used); NULL: a plain atomicrmw.
	 */
	LLVMValueRef (*atomic_rmw)(struct lift *l, LLVMAtomicRMWBinOp op,
				   LLVMValueRef addr, LLVMValueRef val,
				   bool fetch);
	/* Alignment promised for the context pointer r1 (1: none). */
	unsigned ctx_align;
	/*
	 * For atomics through pointers of unknown origin, where the target has
	 * thread-private memory that atomic instructions cannot address (the
	 * GPU's local window): hide *@addr's origin from LLVM and return an i1
	 * that is true when it points at such memory. NULL: no such memory.
	 */
	LLVMValueRef (*private_addr)(struct lift *l, LLVMValueRef *addr);
	/*
	 * @addr (generic) in the address space where atomics reach memory
	 * that other threads share, when the target has one that is cheaper
	 * to address than the generic one; NULL: @addr itself.
	 */
	LLVMValueRef (*shared_addr)(struct lift *l, LLVMValueRef addr);
	/* The SM the thread runs on (i64), for SM_ARRAY copies; NULL: 0. */
	LLVMValueRef (*sm_id)(struct lift *l);
};

/* One subprogram: instructions [start, end) and its LLVM function. */
struct lift_func {
	size_t start;
	size_t end;
	LLVMValueRef fn;
	LLVMValueRef regs[BPF_REG_COUNT]; /* i64 allocas */
	LLVMValueRef frame;               /* [512 x i8] alloca */
	LLVMValueRef value_bits;          /* i64 alloca: read_value's bytes */
	LLVMValueRef stop;                /* i8 flag: the program has ended */
	LLVMBasicBlockRef abort;          /* ends the program, r0 = 0 */
};

struct lift {
	const struct jit_input *in;
	const struct lift_backend *be;
	unsigned sm;          /* GPU target (70 for sm_70); 0 on the host */
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMBuilderRef b;
	LLVMTypeRef i1, i8, i32, i64, ptr, void_t;
	LLVMTypeRef sub_type; /* i64 (i64 r1, ..., i64 r5, ptr stop) */

	uint8_t *flags;                /* LIFT_* per instruction */
	LLVMBasicBlockRef *blocks;     /* per instruction that starts a block */
	size_t *func_at;               /* subprogram index + 1 where one starts */
	struct lift_func *funcs;
	size_t func_cnt;
	bool may_abort;                /* a helper can end the whole program */

	struct lift_func *fn; /* being lifted */
	size_t pc;            /* instruction being lifted */

	/*
	 * Registers known, within the current basic block, to hold r10 + fp_off
	 * (copies of r10 and constant adjustments of them). Their memory
	 * accesses address the frame directly, which lets LLVM keep the stack
	 * in registers and fold stack-held map keys.
	 */
	bool fp_known[BPF_REG_COUNT];
	int64_t fp_off[BPF_REG_COUNT];
};

/*
 * Build the functions of @in into @mod (whose context is @ctx) for GPU
 * target @sm (70 for sm_70), or 0 for the host.
 */
int lift_program(const struct jit_input *in, const struct lift_backend *be,
		 unsigned sm, LLVMContextRef ctx, LLVMModuleRef mod);

/* lift_util.c. An EGPU_EJIT message naming the program and the instruction. */
int lift_err(struct lift *l, const char *fmt, ...) EGPU_PRINTF(2, 3);

/* Registers and constants. */
LLVMValueRef lift_reg(struct lift *l, unsigned reg);
void lift_set_reg(struct lift *l, unsigned reg, LLVMValueRef v);
LLVMValueRef lift_const(LLVMTypeRef t, uint64_t v);
/* @v (i64) truncated to @t if narrower. */
LLVMValueRef lift_narrow(struct lift *l, LLVMValueRef v, LLVMTypeRef t);
/* The source operand of an ALU or jump: src_reg or the sign-extended imm. */
LLVMValueRef lift_src(struct lift *l, const struct bpf_insn *insn,
		      LLVMTypeRef t);
/* Declare (once) and return function @name of type @type in the module. */
LLVMValueRef lift_function(struct lift *l, const char *name, LLVMTypeRef type);
/* A call of function @name with the @n (at most 8) @args. */
LLVMValueRef lift_call(struct lift *l, const char *name, LLVMTypeRef ret,
		       LLVMValueRef *args, unsigned n);
/* Start a fresh block named @name in the current function. */
LLVMBasicBlockRef lift_block(struct lift *l, const char *name);

/* Instruction classes, one file each. */
int lift_alu(struct lift *l, const struct bpf_insn *insn);
int lift_jmp(struct lift *l, const struct bpf_insn *insn);
int lift_ld(struct lift *l, const struct bpf_insn *insn);
int lift_ldx(struct lift *l, const struct bpf_insn *insn);
int lift_st(struct lift *l, const struct bpf_insn *insn);
int lift_atomic(struct lift *l, const struct bpf_insn *insn);
int lift_call_insn(struct lift *l, const struct bpf_insn *insn);

/* r10-relative register tracking (see struct lift). */
void lift_fp_reset(struct lift *l);
void lift_fp_set(struct lift *l, unsigned reg, int64_t off);

/*
 * Memory: the address reg + off for an access of @size bytes, with the
 * alignment known at translation time, and accesses through it.
 */
LLVMValueRef lift_addr(struct lift *l, unsigned reg, int64_t off,
		       unsigned size, unsigned *align);
/* Whether that access is known to lie inside the current frame. */
bool lift_on_frame(const struct lift *l, unsigned reg, int64_t off,
		   unsigned size);
/* Whether the access being lifted is known never to reach a stack. */
bool lift_never_stack(const struct lift *l);
LLVMValueRef lift_load(struct lift *l, LLVMValueRef addr, unsigned align,
		       LLVMTypeRef t);
void lift_store(struct lift *l, LLVMValueRef addr, unsigned align,
		LLVMValueRef v);

/* End the whole program with r0 = 0 (from any subprogram), when @cond. */
void lift_abort_if(struct lift *l, LLVMValueRef cond);
/* Whether calling helper @id may end the program (see lift_abort_if). */
bool lift_helper_may_abort(const struct lift *l, int32_t id);
/* Whether lift_helper() can lower @h for this program's back end. */
bool lift_helper_exists(const struct lift *l, const struct helper_info *h);
/* Helpers lowered the same way by every back end; see lift_helper.c. */
int lift_helper(struct lift *l, const struct helper_info *h, LLVMValueRef *r0);

#endif
