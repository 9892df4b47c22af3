/* SPDX-License-Identifier: MIT */
/*
 * PTX text: parse and instrument it with probes at every kernel's entry
 * and exit and at every memory access (egpu_instrument_ptx, offline), and
 * again with egpu memcheck's check at every access (with containment for
 * inputs of odd length). Any input must give PTX or an error with a
 * message.
 */
#include <stdbool.h>

#include "fuzz.h"

/* r0 = 0; exit: valid at every attach point. */
static const uint8_t probe[] = { 0xb7, 0, 0, 0, 0, 0, 0, 0,
				 0x95, 0, 0, 0, 0, 0, 0, 0 };

/* The probe attached at every entry, exit and memory access, once. */
static void attach_probe(egpu_ctx *ctx)
{
	static const enum egpu_attach_point at[] = {
		EGPU_ATTACH_ENTRY, EGPU_ATTACH_EXIT, EGPU_ATTACH_MEM };
	egpu_obj *obj = egpu_load_insns(ctx, probe, sizeof(probe), NULL);

	if (!obj)
		abort();
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		if (!egpu_attach_kernel(egpu_obj_next_prog(obj, NULL), "*", at[i], NULL))
			abort();
}

/* An offline context whose instrumentation adds egpu memcheck's check,
 * against buffers at made-up addresses (nothing runs). */
static egpu_ctx *memcheck_ctx(bool contain)
{
	static egpu_ctx *ctx[2];

	if (!ctx[contain]) {
		EGPU_OPTS(egpu_ctx_opts, co, .offline = true, .sm = "sm_90",
			  .log_level = EGPU_LOG_ERROR);
		EGPU_OPTS(egpu_memcheck_opts, mo, .index_cell = 0x7f0000001000ull,
			  .states = 0x7f0000002000ull, .counts = 0x7f0000003000ull,
			  .log = 0x7f0000004000ull, .hints = 0x7f0000005000ull,
			  .contain = contain);

		ctx[contain] = egpu_ctx_new(&co);
		if (!ctx[contain] || egpu_memcheck_enable(ctx[contain], &mo))
			abort();
	}
	return ctx[contain];
}

/* @data instrumented by @ctx: PTX, or an error that says why. */
static void instrument(egpu_ctx *ctx, const uint8_t *data, size_t size)
{
	char *out = NULL;
	size_t len;

	/* Length 0 means "up to the NUL" (the API's contract): the empty
	 * input is then the empty string, not bytes past the fuzzer's. */
	if (egpu_instrument_ptx(ctx, size ? (const char *)data : "", size, &out,
				&len, NULL) &&
	    !*egpu_errmsg())
		abort(); /* every failure says why */
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool attached;
	egpu_ctx *ctx = fuzz_ctx();

	if (!attached)
		attach_probe(ctx);
	attached = true;
	instrument(ctx, data, size);
	instrument(memcheck_ctx(size & 1), data, size);
	return 0;
}
