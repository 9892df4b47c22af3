/* SPDX-License-Identifier: MIT */
/*
 * Checks every program before it is translated.
 *
 * verifier_check_insns() is the structural pass (valid opcodes, reserved
 * fields zero, jumps land on instructions and not inside lddw, known
 * helpers, calls into the program); egpu_load() runs it on every program
 * of an object the loader read, refusing a program alone where it fails
 * (verifier_check_object: on all, failing on the first).
 * verifier_run() is the abstract interpreter that proves a program safe.
 */
#ifndef EGPU_VERIFIER_H
#define EGPU_VERIFIER_H

#include <stddef.h>

#include "core/bpf.h"

struct object_spec;

int verifier_check_insns(const struct prog_spec *prog, size_t map_cnt,
			 int abi);
/* verifier_check_insns() on every program of @spec. */
int verifier_check_object(const struct object_spec *spec, int abi);


/*
 * The abstract interpreter. Every path of the program is followed with
 * precise register and stack contents (lib/verifier/vstate.h), states are
 * compared at jump targets to prune paths already proven safe, and a loop
 * whose state repeats exactly is refused. docs/verifier.md lists the rules.
 */
#include <stdbool.h>
#include <stdint.h>

struct strbuf;
struct user_helper;

/* Instructions processed over all paths before a program is refused. */
#define VERIFIER_MAX_INSNS 1000000
/* Bytes the states queued and stored may take: what bounds the verifier's
 * memory whatever the program (a loop over a full stack queues a
 * few KiB per branch). */
#define VERIFIER_MAX_STATE_BYTES (128u << 20)

/* Most kernel parameter bytes a probe may read (CUDA 12.1's limit) */
#define VERIFIER_PARAMS_MAX 32764

struct verifier_opts {
	int abi;            /* enum egpu_helper_abi */
	int attach;         /* enum egpu_attach_point */
	uint32_t ctx_size;  /* EGPU_ATTACH_NONE: bytes r1 points to (r2 = this) */
	bool ctx_writable;  /* EGPU_ATTACH_NONE: the program may write them */
	int verbose;        /* 0: quiet; 1: the failing path; 2: every step */
	struct strbuf *log; /* receives verbose output; NULL: none */
	uint64_t max_insns; /* complexity limit; 0: VERIFIER_MAX_INSNS */
	/* tests: store a state at every prune point (and so without the
	 * states' memory budget, which that can exceed at the insn budget) */
	bool all_states;
	/* The context's user helpers (lib/core/helpers.h), NULL: none. */
	const struct user_helper *users;
	/*
	 * Out, NULL or prog->insn_cnt entries: once the program is accepted,
	 * true at each load, store and atomic whose pointer never points
	 * into a stack on any path through the program, false elsewhere
	 * (a translator may then skip its test for thread-private memory).
	 */
	bool *never_stack;
};

struct verifier_stats {
	uint64_t insns_processed; /* over all paths */
	uint64_t states;          /* states stored for pruning */
	uint64_t peak_states;     /* most stored at once */
	uint64_t pruned;          /* paths cut short by an equivalent state */
	/* loop heads reached where a counter proof let the state be covered
	 * by, or widened with, the previous iteration's (docs/verifier.md) */
	uint64_t loop_widenings;
	uint32_t stack_depth;     /* bytes, deepest chain of bpf-to-bpf calls */
	/* entry/exit probes: ctx->params bytes [0, params_reach) may be read
	 * through the pointer; each kernel probed must have as many */
	uint32_t params_reach;
	double ms;
};

/*
 * Prove @prog safe: 0, or EGPU_EVERIFY with a message naming the program,
 * the instruction (index and text) and the reason; EGPU_ENOMEM, EGPU_EINVAL.
 * @opts may be NULL (GPU helpers, attach point EGPU_ATTACH_NONE, no ctx);
 * @stats may be NULL. Thread-safe: all state is local to the call.
 */
int verifier_run(const struct prog_spec *prog,
		 const struct map_spec *maps, size_t map_cnt,
		 const struct verifier_opts *opts,
		 struct verifier_stats *stats);

/*
 * Append instruction @idx of @insns in assembler syntax, e.g.
 * "r0 = *(u64 *)(r1 + 8)" or "call map_lookup_elem#1"; map references are
 * named after @maps when given (may be NULL).
 */
void verifier_disasm(struct strbuf *sb, const struct bpf_insn *insns,
		     size_t cnt, size_t idx, const struct map_spec *maps,
		     size_t map_cnt, int abi);
/*
 * One line for a command-line tool after verifier_run() returned @rc:
 * "prog 'x': accepted (N insns processed, S states, peak P, stack B, T ms)"
 * or "prog 'x': refused: <message>" (the message without its own "prog 'x': "),
 * in place of the message if @sb's last line is it (a failing path's log).
 */
void verifier_report(struct strbuf *sb, const struct prog_spec *prog,
		     int rc, const struct verifier_stats *stats);

#endif
