/* SPDX-License-Identifier: MIT */
/*
 * Checks every program before it is translated.
 *
 * verifier_check_insns() is the structural pass (valid opcodes, reserved
 * fields zero, jumps land on instructions and not inside lddw, known
 * helpers, calls into the program); the loader runs it on every program.
 * verifier_run() is the abstract interpreter that proves a program safe.
 */
#ifndef EGPU_VERIFIER_H
#define EGPU_VERIFIER_H

#include <stddef.h>

#include "core/bpf.h"

int verifier_check_insns(const struct bpf_prog_spec *prog, size_t map_cnt,
			 int abi);

#endif
