/* SPDX-License-Identifier: MIT */
/*
 * ELF objects: parse, check BTF, link, verify every program and create the
 * host maps (egpu_load_mem). Any input must end in an object or an error
 * with a message; never a crash, a leak or an allocation beyond the
 * fuzzer's limits.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	egpu_obj *obj = egpu_load_mem(fuzz_ctx(), data, size, NULL);

	if (!obj && !*egpu_errmsg())
		abort(); /* every failure says why */
	egpu_obj_close(obj);
	return 0;
}
