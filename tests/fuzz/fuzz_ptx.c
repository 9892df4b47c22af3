/* SPDX-License-Identifier: MIT */
/*
 * PTX text: parse and instrument it with probes at every kernel's entry
 * and exit and at every memory access (egpu_instrument_ptx, offline). Any
 * input must give PTX or an error with a message.
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool attached;
	egpu_ctx *ctx = fuzz_ctx();
	char *out = NULL;
	size_t len;

	if (!attached)
		attach_probe(ctx);
	attached = true;
	/* Length 0 means "up to the NUL" (the API's contract): the empty
	 * input is then the empty string, not bytes past the fuzzer's. */
	if (egpu_instrument_ptx(ctx, size ? (const char *)data : "", size, &out,
				&len, NULL) &&
	    !*egpu_errmsg())
		abort(); /* every failure says why */
	free(out);
	return 0;
}
