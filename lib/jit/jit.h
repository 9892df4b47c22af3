/* SPDX-License-Identifier: MIT */
/*
 * eBPF -> LLVM IR (one lifter) -> PTX (NVPTX) or host code (ORC LLJIT).
 *
 * The input is a linked, verified program (lib/core/bpf.h). Map references
 * (lddw src BPF_PSEUDO_MAP_IDX / _IDX_VALUE) become constant addresses taken
 * from @maps, so the same program is translated once per address space.
 */
#ifndef EGPU_JIT_H
#define EGPU_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bpf.h"

/* What the translated code needs to know of map number i. */
struct jit_map {
	uint64_t addr;       /* runtime address of the map (its handle) */
	uint64_t value_addr; /* array-like maps: address of entry 0's value */
	uint32_t type;
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t slots;      /* SM_ARRAY: copies per key (a power of 2), else 0/1 */
	uint64_t copy_stride; /* SM_ARRAY: bytes from one SM's copy to the next */
};

struct jit_input {
	const char *name;              /* symbol of the emitted function */
	const struct bpf_insn *insns;
	size_t insn_cnt;
	const struct jit_map *maps;
	size_t map_cnt;
	int helpers;                   /* enum egpu_helper_abi */
	/* The context's user helpers (lib/core/helpers.h), NULL: none. */
	const struct user_helper *users;
	int attach;                    /* enum egpu_attach_point */
	/*
	 * Every memory access is known to be naturally aligned (the verifier
	 * proves it for programs at attach points); else accesses of unknown
	 * alignment are tested at run time on the GPU.
	 */
	bool aligned;
	/*
	 * NULL, or per instruction: true where the load, store or atomic's
	 * pointer never points into a stack (the verifier proves it for the
	 * program's every path). Atomics there need no run-time test for
	 * thread-private memory on the GPU.
	 */
	const bool *never_stack;
	/*
	 * Host code whose maps are in GPU memory (struct jit_map.addr a
	 * struct dev_map *, value_addr 0): map helpers copy values in and
	 * out (lib/jit/host_gpu_maps.c); run it with jit_host_call_gpu().
	 */
	bool gpu_maps;
	/*
	 * enum jit_warp_model: the CPU back end runs atomics through the
	 * GPU's warp aggregation on a 32-lane model (jit_host_call_warp), to
	 * check that code on the CPU; 0: plain atomics.
	 */
	int warp_model;
};

enum jit_warp_model {
	JIT_WARP_NONE,
	JIT_WARP_REDUX, /* sm_80 and later: redux.sync */
	JIT_WARP_SCAN,  /* sm_70 to sm_75: shuffles only */
};

/* What translated PTX calls in the device runtime (lib/device). */
enum jit_need {
	JIT_NEED_RUNTIME = 1 << 0, /* some egpu_dev_* function */
	JIT_NEED_PRINT = 1 << 1,   /* a print helper: the print ring */
	JIT_NEED_CALL = 1 << 2,    /* a user helper: the call ring */
};

/*
 * PTX text holding `.visible .func (.param .b64 r0) NAME(.param .b64 ctx,
 * .param .b64 ctx_len)`; with @kernel also `.visible .entry NAME_kernel(ctx,
 * ctx_len, r0_out)` that runs it once and stores r0. *ptx is malloc'ed.
 * Callers pass an 8-byte aligned ctx (or NULL): accesses at constant
 * offsets from it are emitted without alignment checks. *@needs (if not
 * NULL) gets the enum jit_need bits of what the PTX calls.
 */
int jit_ptx(const struct jit_input *in, const char *sm, bool kernel,
	    char **ptx, size_t *len, unsigned *needs);

/*
 * The GPU targets jit_ptx() generates code for, oldest first (70 for
 * sm_70), *@n of them; later targets get the newest one's code.
 */
const unsigned *jit_ptx_targets(size_t *n);

/* A program translated to host code, callable as a C function. */
struct jit_host;

int jit_host_new(const struct jit_input *in, struct jit_host **out);
uint64_t jit_host_call(const struct jit_host *jh, void *ctx, uint64_t ctx_len);
/*
 * Run code made with jit_input.gpu_maps: its clocks read the GPU's timer
 * (CLOCK_MONOTONIC + @timer_offset), and values it changed through
 * lookups are written back when it returns. r0 in *@r0; 0 or the first
 * write-back's error (negative errno, as dev_map.h).
 */
int jit_host_call_gpu(const struct jit_host *jh, void *ctx, uint64_t ctx_len,
		      int64_t timer_offset, uint64_t *r0);
void jit_host_free(struct jit_host *jh);
/*
 * Run @jh (translated with a warp model) as one warp: a thread per lane of
 * @lanes, lane i with ctx[i]; r0[i] gets its result. EGPU_EINVAL when a
 * warp primitive broke PTX's rules; one warp at a time in the process.
 */
int jit_host_call_warp(const struct jit_host *jh, void *const ctx[32],
		       uint64_t ctx_len, uint32_t lanes, uint64_t r0[32]);

#endif
