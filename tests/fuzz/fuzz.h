/* SPDX-License-Identifier: MIT */
/*
 * The fuzz targets' shared entry point: each fuzz_<input>.c defines
 * LLVMFuzzerTestOneInput. Built with libFuzzer (EGPU_FUZZ, clang) they
 * explore; built with replay.c (every build) they run the checked-in
 * corpus and the crashes found so far as a regression test.
 */
#ifndef EGPU_FUZZ_H
#define EGPU_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "egpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The offline context every input is loaded into, made at the first. */
static inline egpu_ctx *fuzz_ctx(void)
{
	static egpu_ctx *ctx;

	if (!ctx) {
		EGPU_OPTS(egpu_ctx_opts, co, .offline = true,
			  .log_level = EGPU_LOG_ERROR);
		ctx = egpu_ctx_new(&co);
		if (!ctx)
			abort();
	}
	return ctx;
}

#endif
