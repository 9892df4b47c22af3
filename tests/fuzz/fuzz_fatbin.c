/* SPDX-License-Identifier: MIT */
/*
 * Module images (fatbins, the runtime's wrapper, cubins): the PTX a fatbin
 * carries for a target, found and decompressed (image_ptx). Any input must
 * give NUL-terminated PTX of the length it says, or an error with a
 * message.
 */
#include <string.h>

#include "fuzz.h"
#include "image/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the newest PTX entry not newer than each */
	static const char *const targets[] = { "sm_80", "sm_90" };

	/* Length 0 means "find the size in the headers" (the driver's
	 * contract), for images known to be whole: not a fuzzer's input. */
	if (!size)
		return 0;
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		struct image_info info;
		char *ptx = NULL;
		size_t len = 0;
		int err = image_ptx(data, size, targets[i], &ptx, &len, &info);

		if (err && !*egpu_errmsg())
			abort(); /* every failure says why */
		if (!err && ptx[len])
			abort(); /* the text ends where its length says */
		free(ptx);
	}
	return 0;
}
