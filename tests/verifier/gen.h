/* SPDX-License-Identifier: MIT */
/*
 * Random programs for the soundness test: built from small snippets that
 * a verifier must reason about (bounds checks, pointer arithmetic, stack
 * traffic, lookups, loops, calls), and mutations of existing programs.
 * Deterministic for a seed.
 */
#ifndef EGPU_TEST_GEN_H
#define EGPU_TEST_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "core/bpf.h"

#define GEN_MAX_INSNS 256

struct gen {
	uint64_t rng;
	struct bpf_insn insns[GEN_MAX_INSNS];
	size_t cnt;
	size_t map_cnt;
	int ring_map;  /* index of a ring buffer map, -1 if none */
	int kv_maps[8];
	int nkv;
};

uint64_t gen_rand(struct gen *g);
/* A fresh program into g->insns. */
void gen_program(struct gen *g);
/*
 * A fresh loop that accumulates: running maxima in registers and stack
 * slots, diamonds, stack traffic, lookups and checks in its body, so that
 * values pruning may ignore meet values it must compare.
 */
void gen_loop_program(struct gen *g);
/* Copy @src (at most GEN_MAX_INSNS) and change 1-3 instructions. */
void gen_mutate(struct gen *g, const struct bpf_insn *src, size_t cnt);

#endif
