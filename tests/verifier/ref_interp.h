/* SPDX-License-Identifier: MIT */
/*
 * A reference interpreter that checks, while it runs a program, every
 * promise the verifier makes: memory accesses inside a live region and
 * naturally aligned, stack bytes written before they are read, registers
 * written before they are read, at most 8 frames and 512 bytes of stack
 * per call chain, no reservation left at exit, and termination.
 */
#ifndef EGPU_TEST_REF_INTERP_H
#define EGPU_TEST_REF_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bpf.h"

struct ref_env;

/* Maps get random contents from @seed; ctx bytes too. */
struct ref_env *ref_env_new(const struct map_spec *maps, size_t map_cnt,
			    int attach, uint32_t ctx_size, bool ctx_writable,
			    int abi, uint64_t seed);
void ref_env_free(struct ref_env *env);
/* Steps a run may take before it is called a hang (default 20,000,000). */
void ref_env_set_step_limit(struct ref_env *env, uint64_t steps);

/*
 * Run @insns once with fresh random inputs. Returns 0 (r0 in *r0), or -1
 * with the broken promise in ref_env_violation().
 */
int ref_run(struct ref_env *env, const struct bpf_insn *insns, size_t cnt,
	    uint64_t *r0);
const char *ref_env_violation(const struct ref_env *env);
/* Whether the last run called a helper whose result is random. */
bool ref_env_random(const struct ref_env *env);
/* Whether @value is an address inside memory of the last run (a probe
 * may return a pointer; the back ends' addresses differ). */
bool ref_env_is_address(struct ref_env *env, uint64_t value);
/* The ctx bytes the last run started with (ctx_size bytes, or NULL). */
const uint8_t *ref_env_initial_ctx(const struct ref_env *env);

#endif
