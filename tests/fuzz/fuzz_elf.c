/* SPDX-License-Identifier: MIT */
/*
 * ELF objects: parse, check BTF, link, verify every program and create the
 * host maps (egpu_load_mem). Any input must end in an object or an error
 * with a message; never a crash, a leak or an allocation beyond the
 * fuzzer's limits.
 */
#include <stdlib.h>

#include "egpu.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static egpu_ctx *ctx;
	egpu_obj *obj;

	if (!ctx) {
		EGPU_OPTS(egpu_ctx_opts, co, .offline = true,
			  .log_level = EGPU_LOG_ERROR);
		ctx = egpu_ctx_new(&co);
		if (!ctx)
			abort();
	}
	obj = egpu_load_mem(ctx, data, size, NULL);
	if (!obj && !*egpu_errmsg())
		abort(); /* every failure says why */
	egpu_obj_close(obj);
	return 0;
}
