/* SPDX-License-Identifier: MIT */
/*
 * Raw instructions: byte 0 is the context's size (0 to 255 bytes), byte 1
 * the value of its bytes, bytes 2-7 are unused (the program stays 8-byte
 * aligned) and the rest is the program. A program the
 * verifier accepts is run on the CPU (translated by LLVM): under
 * AddressSanitizer an unsafe program the verifier let through shows as a
 * crash in the JIT's code or its helpers.
 */
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t mem[256];
	size_t mem_len;
	egpu_obj *obj;

	if (size < 8)
		return 0;
	mem_len = data[0];
	memset(mem, data[1], sizeof(mem));
	obj = egpu_load_insns(fuzz_ctx(), data + 8, size - 8, NULL);
	if (obj) {
		/* heap memory of exactly mem_len bytes: ASan sees overruns */
		uint8_t *heap = mem_len ? malloc(mem_len) : NULL;
		EGPU_OPTS(egpu_run_opts, ro, .ctx = heap, .ctx_len = mem_len);

		if (heap)
			memcpy(heap, mem, mem_len);
		egpu_prog_run(egpu_obj_next_prog(obj, NULL), &ro);
		free(heap);
	}
	egpu_obj_close(obj);
	return 0;
}
