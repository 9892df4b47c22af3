/* SPDX-License-Identifier: MIT */
/*
 * eBPF instruction encoding (RFC 9669) and the linked program model that the
 * object loader produces and the verifier and JIT consume.
 */
#ifndef EGPU_BPF_H
#define EGPU_BPF_H

#include <stddef.h>
#include <stdint.h>

/* Same layout as the kernel's struct bpf_insn. */
struct bpf_insn {
	uint8_t code;
	uint8_t dst_reg : 4;
	uint8_t src_reg : 4;
	int16_t off;
	int32_t imm;
};

/* Instruction classes. */
#define BPF_CLASS(code) ((code) & 0x07)
#define BPF_LD 0x00
#define BPF_LDX 0x01
#define BPF_ST 0x02
#define BPF_STX 0x03
#define BPF_ALU 0x04
#define BPF_JMP 0x05
#define BPF_JMP32 0x06
#define BPF_ALU64 0x07

/* Load/store: size and mode. */
#define BPF_SIZE(code) ((code) & 0x18)
#define BPF_W 0x00
#define BPF_H 0x08
#define BPF_B 0x10
#define BPF_DW 0x18
#define BPF_MODE(code) ((code) & 0xe0)
#define BPF_IMM 0x00
#define BPF_ABS 0x20
#define BPF_IND 0x40
#define BPF_MEM 0x60
#define BPF_MEMSX 0x80
#define BPF_ATOMIC 0xc0

/* ALU/JMP: source and operation. */
#define BPF_SRC(code) ((code) & 0x08)
#define BPF_K 0x00
#define BPF_X 0x08
#define BPF_OP(code) ((code) & 0xf0)
#define BPF_ADD 0x00
#define BPF_SUB 0x10
#define BPF_MUL 0x20
#define BPF_DIV 0x30
#define BPF_OR 0x40
#define BPF_AND 0x50
#define BPF_LSH 0x60
#define BPF_RSH 0x70
#define BPF_NEG 0x80
#define BPF_MOD 0x90
#define BPF_XOR 0xa0
#define BPF_MOV 0xb0
#define BPF_ARSH 0xc0
#define BPF_END 0xd0
#define BPF_TO_LE 0x00
#define BPF_TO_BE 0x08

#define BPF_JA 0x00
#define BPF_JEQ 0x10
#define BPF_JGT 0x20
#define BPF_JGE 0x30
#define BPF_JSET 0x40
#define BPF_JNE 0x50
#define BPF_JSGT 0x60
#define BPF_JSGE 0x70
#define BPF_CALL 0x80
#define BPF_EXIT 0x90
#define BPF_JLT 0xa0
#define BPF_JLE 0xb0
#define BPF_JSLT 0xc0
#define BPF_JSLE 0xd0

/* Atomic operations (imm of BPF_ATOMIC). */
#define BPF_FETCH 0x01
#define BPF_XCHG (0xe0 | BPF_FETCH)
#define BPF_CMPXCHG (0xf0 | BPF_FETCH)

/* src_reg of lddw (first slot). */
#define BPF_PSEUDO_MAP_FD 1
#define BPF_PSEUDO_MAP_VALUE 2
#define BPF_PSEUDO_BTF_ID 3
#define BPF_PSEUDO_FUNC 4
#define BPF_PSEUDO_MAP_IDX 5
#define BPF_PSEUDO_MAP_IDX_VALUE 6

/* src_reg of call. */
#define BPF_PSEUDO_CALL 1
#define BPF_PSEUDO_KFUNC_CALL 2

#define BPF_REG_COUNT 11 /* r0..r10 */
#define BPF_STACK_SIZE 512
#define BPF_MAX_CALL_DEPTH 8

static inline int bpf_is_lddw(const struct bpf_insn *insn)
{
	return insn->code == (BPF_LD | BPF_IMM | BPF_DW);
}

/*
 * A map as the object file declares it. Global data sections (.data,
 * .rodata, .bss and their .name variants) are ARRAY maps with one entry whose
 * initial bytes are @init.
 */
struct map_spec {
	char *name;
	uint32_t type;
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t flags;
	void *init;       /* initial value bytes, or NULL */
	size_t init_len;
	int readonly;     /* .rodata: programs may not write it */
	/*
	 * bpftime's aliases: @type is the libegpu type that implements the
	 * map, @declared_type the type the object declared when it differs
	 * (1501 GPU hash, 1504 kernel-shared array, 1512/1513 host-memory
	 * arrays), else 0; @host_memory puts the data in page-locked host
	 * memory mapped into the GPU (1512, 1513).
	 */
	uint32_t declared_type;
	int host_memory;
};

/*
 * A program after linking: subprograms it calls are appended, calls use
 * BPF_PSEUDO_CALL with pc-relative imm, and every map reference is an lddw
 * with src_reg BPF_PSEUDO_MAP_IDX (imm = map index) or
 * BPF_PSEUDO_MAP_IDX_VALUE (imm = map index, second imm = byte offset).
 */
struct prog_spec {
	char *name;
	char *section;
	int attach;        /* enum egpu_attach_point */
	char *kernel;      /* kernel name or glob, "" if none */
	uint32_t mem_spaces; /* memory probes: spaces and kinds the section */
	uint32_t mem_kinds;  /* names, masks of egpu_attach_opts; 0: all */
	struct bpf_insn *insns;
	size_t insn_cnt;
	/* Source lines from BTF line info (clang -g), by instruction; none
	 * without it. They cover the program's own body, [0, line_insns),
	 * not the subprograms appended after it. */
	struct bpf_line_info *lines;
	size_t line_cnt;
	size_t line_insns;
	char *line_strs;   /* the strings lines point into */
};

/* Instructions from @insn on (up to the next entry) come from this line. */
struct bpf_line_info {
	uint32_t insn;
	uint32_t line;
	uint32_t file;     /* offset of the file name in line_strs */
	uint32_t text;     /* offset of the line's source text */
};

#endif
